//! Shrinking a fuzz finding's archive: whole members first, then single records, then the
//! tail.
//!
//! A member is its header record and the extension records before it (PAX `x`/`g`, GNU
//! `L`/`K`: POSIX.1-2001 pax and the GNU tar manual's long-name headers). Removing one of
//! those alone changes what the next header means (its name falls back to the 100-byte
//! ustar field, or the extension applies to the member after), so a member with a long
//! name could not be dropped by removing records one at a time. Runs of members are
//! removed by delta debugging ([`remove_runs`], the one used for workspaces too); a
//! single-record pass then drops extension records that do not matter on their own.

use crate::engine::shrink::remove_runs;
use snapconf_tarbytes::Records;
use std::ops::Range;

/// The records of each member of `recs`, in order: the extension records before a header
/// and that header. Extension records at the end with no header after them are one member
/// of their own.
pub fn members(recs: &Records) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut start = 0;
    for (i, r) in recs.records.iter().enumerate() {
        if !r.is_extension() {
            out.push(start..i + 1);
            start = i + 1;
        }
    }
    if start < recs.records.len() {
        out.push(start..recs.records.len());
    }
    out
}

/// `recs` without members `i..i + n` (as [`members`] counts them); `None` when that removes
/// nothing.
fn without_members(recs: &Records, i: usize, n: usize) -> Option<Records> {
    let m = members(recs);
    let end = (i + n).min(m.len());
    if i >= end {
        return None;
    }
    let drop = m[i].start..m[end - 1].end;
    let mut c = recs.clone();
    c.records.drain(drop);
    Some(c)
}

/// `recs` without records `i..i + n`; `None` when that removes nothing.
fn without_records(recs: &Records, i: usize, n: usize) -> Option<Records> {
    let end = (i + n).min(recs.records.len());
    if i >= end {
        return None;
    }
    let mut c = recs.clone();
    c.records.drain(i..end);
    Some(c)
}

/// The smallest archive found that `test` says still reproduces, starting from `bytes`
/// (which does): runs of members removed, then runs of records, then the tail (end blocks,
/// garbage) cut to two zero blocks. `test` gets each candidate's bytes and returns
/// `Ok(Some(reproduces))`, or `Ok(None)` when its budget (runs, time, a stop) allows no
/// more: the smallest so far is returned then.
///
/// # Errors
/// The first `Err` of `test`.
pub fn shrink_archive<E>(
    bytes: &[u8],
    mut test: impl FnMut(&[u8]) -> Result<Option<bool>, E>,
) -> Result<Vec<u8>, E> {
    let mut spent = false;
    let mut offer = |c: &Records| -> Result<Option<bool>, E> {
        if spent {
            return Ok(None);
        }
        let r = test(&c.to_bytes())?;
        spent = r.is_none();
        Ok(r)
    };
    let recs = Records::parse(bytes);
    let recs = remove_runs(recs, |r| members(r).len(), without_members, 1, &mut offer)?;
    // Single records only where a member has more than one (extension records): otherwise
    // they are the candidates the member pass just tried.
    let mut recs = if members(&recs).len() < recs.records.len() {
        remove_runs(recs, |r| r.records.len(), without_records, 1, &mut offer)?
    } else {
        recs
    };
    if recs.tail.len() > 1024 {
        let mut cand = recs.clone();
        cand.tail = vec![0; 1024];
        if offer(&cand)? == Some(true) {
            recs = cand;
        }
    }
    Ok(recs.to_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;
    use snapconf_tarbytes::raw::RawTar;

    /// The names of the non-extension records of `bytes`, in order.
    fn names(bytes: &[u8]) -> Vec<String> {
        Records::parse(bytes)
            .records
            .iter()
            .filter(|r| !r.is_extension())
            .map(|r| String::from_utf8_lossy(&r.name()).into_owned())
            .collect()
    }

    #[test]
    fn a_member_goes_with_its_extension_records() {
        let long = "l".repeat(150);
        let mut t = RawTar::new();
        t.file("a", b"1");
        t.pax(&[("path", long.as_bytes())]);
        t.file("ignored-by-pax", b"2");
        t.long_name(b"g/".repeat(60).as_slice());
        t.file("cut", b"3");
        t.file("b", b"4");
        let bytes = t.finish();
        let recs = Records::parse(&bytes);
        let m = members(&recs);
        assert_eq!(m.len(), 4, "four members in {} records", recs.records.len());
        assert_eq!(m[1].len(), 2, "a PAX header and its member are one member");
        assert_eq!(
            m[2].len(),
            2,
            "a GNU L record and its member are one member"
        );
    }

    #[test]
    fn members_with_long_names_are_removed_whole() {
        // Reproduces while members `a` and `b` are both there; the two long-named members
        // between them (a PAX path, a GNU long name) do not matter. Record-by-record
        // removal would turn each long name into its short ustar field and keep it.
        let mut t = RawTar::new();
        t.file("a", b"1");
        t.pax(&[("path", "p".repeat(150).as_bytes())]);
        t.file("short-p", b"2");
        t.long_name("g".repeat(150).as_bytes());
        t.file("short-g", b"3");
        t.file("b", b"4");
        let bytes = t.finish();
        let mut runs = 0;
        let out = shrink_archive(&bytes, |c| {
            runs += 1;
            let n = names(c);
            Ok::<_, ()>(Some(n.contains(&"a".into()) && n.contains(&"b".into())))
        })
        .expect("no error");
        assert_eq!(
            names(&out),
            ["a", "b"],
            "both long-named members gone whole"
        );
        assert_eq!(
            Records::parse(&out).records.len(),
            2,
            "and their extension records"
        );
        assert!(runs < 20, "{runs} runs for 4 members");
    }

    #[test]
    fn the_budget_stops_the_shrink_with_the_smallest_so_far() {
        let mut t = RawTar::new();
        for n in ["a", "b", "c", "d", "e", "f", "g", "h"] {
            t.file(n, b"x");
        }
        let bytes = t.finish();
        let mut runs = 0;
        let out = shrink_archive(&bytes, |c| {
            runs += 1;
            if runs > 1 {
                return Ok::<_, ()>(None);
            }
            Ok(Some(names(c).contains(&"h".into())))
        })
        .expect("no error");
        assert_eq!(runs, 2, "no run after the budget said stop");
        assert_eq!(
            names(&out),
            ["e", "f", "g", "h"],
            "the first half went, nothing more"
        );
    }
}
