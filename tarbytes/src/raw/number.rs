//! Numeric header fields: octal as POSIX writes them ([`parse_octal`], [`put_octal`]) and
//! the lenient reading with GNU base-256 ([`parse_numeric`]).

/// An octal header field (mode, uid, size, ...) as a number: leading spaces skipped, then
/// octal digits up to the first other byte (NUL or space); `None` if there is no digit.
pub fn parse_octal(field: &[u8]) -> Option<u64> {
    let digits: Vec<u8> = field
        .iter()
        .copied()
        .skip_while(|b| *b == b' ')
        .take_while(|b| (b'0'..=b'7').contains(b))
        .collect();
    if digits.is_empty() {
        return None;
    }
    u64::from_str_radix(std::str::from_utf8(&digits).ok()?, 8).ok()
}

/// A numeric header field as a lenient reader takes it: GNU base-256 (big-endian, the first
/// byte's high bit set and the rest of it part of the number) or octal as in
/// [`parse_octal`], a field without an octal digit being 0. `None` if it overflows `u64`.
pub fn parse_numeric(field: &[u8]) -> Option<u64> {
    if let Some((&first, rest)) = field.split_first() {
        if first & 0x80 != 0 {
            let mut v = u64::from(first & 0x7f);
            for &b in rest {
                v = v.checked_mul(256)?.checked_add(u64::from(b))?;
            }
            return Some(v);
        }
    }
    let digits = field
        .iter()
        .skip_while(|b| **b == b' ')
        .take_while(|b| (b'0'..=b'7').contains(*b))
        .count();
    if digits == 0 {
        return Some(0);
    }
    parse_octal(field)
}

/// Write `v` as zero-padded octal with a trailing NUL into `field`; values too large for the
/// field are cut to its width (the caller wanted a damaged field then).
pub fn put_octal(field: &mut [u8], v: u64) {
    // An empty field (of a short buffer) takes nothing.
    let Some(w) = field.len().checked_sub(1) else {
        return;
    };
    let s = format!("{v:0w$o}");
    let s = &s.as_bytes()[s.len().saturating_sub(w)..];
    field[..w].copy_from_slice(s);
    field[w] = 0;
}
