//! PAX extended header records (POSIX.1-2017 `pax`, "pax Extended Header"):
//! `"%d %s=%s\n"`, length first and counting itself.
//!
//! Only the keywords that change what a member *is* are kept: `path`, `linkpath`, `size`,
//! and the `GNU.sparse.*` keywords of GNU tar's PAX sparse formats 0.0, 0.1 and 1.0 (GNU tar
//! manual, "Storing Sparse Files"), collected in [`SparseKeys`] and judged by
//! [`crate::sparse`]. Everything else (times, ids, names of users, `SCHILY.xattr.*`,
//! `comment`, `charset`) is ignored: it does not affect the tree.

/// What a PAX header says about the member that follows it.
#[derive(Debug, Default)]
pub(crate) struct PaxFields {
    pub(crate) path: Option<Vec<u8>>,
    pub(crate) linkpath: Option<Vec<u8>>,
    pub(crate) size: Option<u64>,
    /// The `GNU.sparse.*` keywords, if any was present.
    pub(crate) sparse: Option<SparseKeys>,
}

/// The `GNU.sparse.*` keywords of one PAX header, as read (decimal values parsed, nothing
/// judged yet: [`crate::sparse`] decides which format they make). A keyword given twice is
/// refused here (GNU tar keeps the last, other readers the first), except the repeated
/// `offset`/`numbytes` pairs of format 0.0.
#[derive(Debug, Default)]
pub(crate) struct SparseKeys {
    /// `GNU.sparse.major` (1.0).
    pub(crate) major: Option<u64>,
    /// `GNU.sparse.minor` (1.0).
    pub(crate) minor: Option<u64>,
    /// `GNU.sparse.name`: the member's real name (0.1, 1.0).
    pub(crate) name: Option<Vec<u8>>,
    /// `GNU.sparse.realsize`: the file's size (1.0).
    pub(crate) realsize: Option<u64>,
    /// `GNU.sparse.size`: the file's size (0.0, 0.1).
    pub(crate) size: Option<u64>,
    /// `GNU.sparse.numblocks`: the number of map entries (0.0, 0.1).
    pub(crate) numblocks: Option<u64>,
    /// `GNU.sparse.map`: offset, size, offset, size, ... (0.1).
    pub(crate) map: Option<Vec<u64>>,
    /// `GNU.sparse.offset` / `GNU.sparse.numbytes` pairs in order (0.0); a pair still
    /// waiting for its `numbytes` has `None`.
    pub(crate) pairs: Vec<(u64, Option<u64>)>,
    /// The first `GNU.sparse.*` keyword this reader does not know.
    pub(crate) unknown: Option<String>,
}

impl SparseKeys {
    /// Records one `GNU.sparse.<key>` record; `Err` is a `malformed` detail.
    fn record(&mut self, key: &[u8], value: &[u8]) -> Result<(), String> {
        let shown = || format!("pax `GNU.sparse.{}`", String::from_utf8_lossy(key));
        let number =
            || parse_decimal(value).ok_or_else(|| format!("{} is not a decimal number", shown()));
        let once = |slot_full: bool| {
            if slot_full {
                Err(format!(
                    "{} given twice (readers keep the first or the last)",
                    shown()
                ))
            } else {
                Ok(())
            }
        };
        let number_slot = match key {
            b"major" => Some(&mut self.major),
            b"minor" => Some(&mut self.minor),
            b"realsize" => Some(&mut self.realsize),
            b"size" => Some(&mut self.size),
            b"numblocks" => Some(&mut self.numblocks),
            _ => None,
        };
        if let Some(slot) = number_slot {
            once(slot.is_some())?;
            *slot = Some(number()?);
            return Ok(());
        }
        match key {
            b"name" => {
                once(self.name.is_some())?;
                if value.is_empty() {
                    return Err(format!("{} with an empty value", shown()));
                }
                self.name = Some(value.to_vec());
            }
            b"map" => {
                once(self.map.is_some())?;
                let numbers = value
                    .split(|&b| b == b',')
                    .map(parse_decimal)
                    .collect::<Option<Vec<u64>>>()
                    .ok_or_else(|| {
                        format!(
                            "{} is not a comma-separated list of decimal numbers",
                            shown()
                        )
                    })?;
                self.map = Some(numbers);
            }
            b"offset" => {
                // GNU tar sizes the 0.0 map from `numblocks` and rejects offsets beyond it
                // ("excess GNU.sparse.offset"); other readers grow the map.
                if self.numblocks.is_none_or(|n| self.pairs.len() as u64 >= n) {
                    return Err(format!(
                        "{} beyond `GNU.sparse.numblocks` (or before it)",
                        shown()
                    ));
                }
                if matches!(self.pairs.last(), Some((_, None))) {
                    return Err(format!(
                        "{} follows an offset without its numbytes",
                        shown()
                    ));
                }
                self.pairs.push((number()?, None));
            }
            b"numbytes" => {
                let n = number()?;
                match self.pairs.last_mut() {
                    Some((_, slot @ None)) => *slot = Some(n),
                    _ => {
                        return Err(format!(
                            "{} without a `GNU.sparse.offset` before it",
                            shown()
                        ))
                    }
                }
            }
            _ => {
                if self.unknown.is_none() {
                    self.unknown = Some(format!("GNU.sparse.{}", String::from_utf8_lossy(key)));
                }
            }
        }
        Ok(())
    }
}

/// Parses PAX records; `Err` carries a description for a `malformed` refusal.
///
/// Strict on purpose: a record whose length does not match, a missing `=` or newline, or a
/// non-decimal `size` is refused, because parsers that "recover" differently from such records
/// read different member lists from the same bytes (the PAX smuggling class, e.g. the
/// tar-rs / astral-tokio-tar PAX `size` desynchronisation, CVE-2025-62518).
pub(crate) fn parse(mut data: &[u8]) -> Result<PaxFields, String> {
    let mut fields = PaxFields::default();
    while !data.is_empty() {
        // Some writers pad the extended header payload with NULs after the last record.
        if data.iter().all(|&b| b == 0) {
            break;
        }
        let space = data
            .iter()
            .position(|&b| b == b' ')
            .ok_or("pax record without a length")?;
        let digits = &data[..space];
        if digits.is_empty() || digits.len() > 20 || !digits.iter().all(u8::is_ascii_digit) {
            return Err("pax record length is not a decimal number".into());
        }
        let len: usize = std::str::from_utf8(digits)
            .ok()
            .and_then(|s| s.parse().ok())
            .ok_or("pax record length out of range")?;
        if len <= space + 1 || len > data.len() {
            return Err("pax record length does not fit the header".into());
        }
        let record = &data[space + 1..len];
        data = &data[len..];
        let record = record
            .strip_suffix(b"\n")
            .ok_or("pax record does not end with a newline")?;
        let eq = record
            .iter()
            .position(|&b| b == b'=')
            .ok_or("pax record without `=`")?;
        let (key, value) = (&record[..eq], &record[eq + 1..]);
        if let Some(sparse_key) = key.strip_prefix(b"GNU.sparse.") {
            fields
                .sparse
                .get_or_insert_with(SparseKeys::default)
                .record(sparse_key, value)?;
            continue;
        }
        // An empty `path` or `linkpath` deletes the keyword in POSIX, so the ustar name
        // stands; GNU tar, bsdtar and Python disagree on that (some read an empty name), so
        // parsers list different members from the same bytes: refused.
        if value.is_empty() && (key == b"path" || key == b"linkpath") {
            return Err(format!(
                "pax `{}` with an empty value",
                String::from_utf8_lossy(key)
            ));
        }
        // An empty value means "no override" (POSIX: the keyword is deleted).
        let value = if value.is_empty() {
            None
        } else {
            Some(value.to_vec())
        };
        match key {
            b"path" => fields.path = value,
            b"linkpath" => fields.linkpath = value,
            b"size" => {
                fields.size = match value {
                    None => None,
                    Some(v) => Some(parse_decimal(&v).ok_or("pax `size` is not a decimal number")?),
                }
            }
            _ => {}
        }
    }
    Ok(fields)
}

/// Parses a non-empty run of ASCII digits into a `u64` (no sign, no spaces, no overflow).
///
/// Leading zeros are allowed in any number (a PAX `size` of `000000000000000000000999`, 24
/// digits, is 999 to GNU tar, bsdtar, BusyBox, Python and Go: *observed* with the first
/// four, `corpora/fields/pax-size-zeros.tar`); at most 20 significant digits.
pub(crate) fn parse_decimal(v: &[u8]) -> Option<u64> {
    if v.is_empty() || !v.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let first = v.iter().position(|&b| b != b'0').unwrap_or(v.len() - 1);
    let significant = &v[first..];
    if significant.len() > 20 {
        return None;
    }
    std::str::from_utf8(significant).ok()?.parse().ok()
}
