//! Coverage ids an extractor's persistent worker may send with each answer, for
//! coverage-guided fuzzing (`snapconf fuzz --coverage`).
//!
//! A worker asked for coverage ([`COVERAGE_VAR`]`=1` in its environment) adds to each
//! answer the code of the extraction library that the request ran, as one string of ids:
//! 8 lower-case hex digits per id, each a 32-bit hash of one place in the code (a line of
//! `tarfile.py`, a block of a JavaScript file). Only equality of ids matters: the same path
//! through the code gives the same ids. The built-in Python server sends it as
//! `cov=IDS` after its `exit N` ([`crate::process::server`]); a backend worker as the
//! `"coverage"` field of its JSON answer (`Response` in `backend/protocol.rs`).

/// The environment variable that asks a worker for coverage: `1` turns it on.
pub const COVERAGE_VAR: &str = "SNAPCONF_COVERAGE";

/// The ids of a coverage string (see the module docs); `None` when it is not one (a length
/// not a multiple of 8, or a character not a hex digit).
pub fn parse_ids(text: &str) -> Option<Vec<u32>> {
    let bytes = text.as_bytes();
    if !bytes.len().is_multiple_of(8) || !bytes.iter().all(u8::is_ascii_hexdigit) {
        return None;
    }
    bytes
        .chunks(8)
        .map(|c| {
            std::str::from_utf8(c)
                .ok()
                .and_then(|s| u32::from_str_radix(s, 16).ok())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_parse_and_garbage_does_not() {
        assert_eq!(parse_ids("0000000aFFFFFFFF"), Some(vec![10, u32::MAX]));
        assert_eq!(parse_ids(""), Some(vec![]));
        assert_eq!(parse_ids("0000000"), None);
        assert_eq!(parse_ids("0000000g"), None);
        assert_eq!(parse_ids("+0000001"), None);
    }
}
