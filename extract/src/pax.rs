//! PAX extended header records (POSIX.1-2017 `pax`, "pax Extended Header"):
//! `"%d %s=%s\n"`, length first and counting itself.
//!
//! Only the keywords that change what a member *is* are kept: `path`, `linkpath`, `size`.
//! `GNU.sparse.*` keywords (GNU tar manual, "Storing Sparse Files", formats 0.0, 0.1 and 1.0)
//! are flagged so the member is refused rather than restored under its placeholder name
//! `GNUSparseFile.N/...` with the sparse map as content. Everything else (times, ids, names of
//! users, `SCHILY.xattr.*`, `comment`, `charset`) is ignored: it does not affect the tree.

/// What a PAX header says about the member that follows it.
#[derive(Debug, Default)]
pub(crate) struct PaxFields {
    pub(crate) path: Option<Vec<u8>>,
    pub(crate) linkpath: Option<Vec<u8>>,
    pub(crate) size: Option<u64>,
    /// A `GNU.sparse.*` keyword was present (its name, for the refusal detail).
    pub(crate) sparse: Option<String>,
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
            k if k.starts_with(b"GNU.sparse.") => {
                fields.sparse = Some(String::from_utf8_lossy(k).into_owned());
            }
            _ => {}
        }
    }
    Ok(fields)
}

/// Parses a non-empty run of ASCII digits into a `u64` (no sign, no spaces, no overflow).
fn parse_decimal(v: &[u8]) -> Option<u64> {
    if v.is_empty() || v.len() > 20 || !v.iter().all(u8::is_ascii_digit) {
        return None;
    }
    std::str::from_utf8(v).ok()?.parse().ok()
}
