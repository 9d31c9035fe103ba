//! The cause signature of a shrunk fuzz finding: what its archive is made of, with names
//! abstracted, so that two findings of one check are kept apart only when their causes
//! differ (as ClusterFuzz and syzkaller group crashes by a crash state).
//!
//! Each record contributes its type flag and, for its name and link target, the shape of
//! the path: absolute or not, how many `..` it climbs, how deep it goes. Two archives that
//! differ only in the words they use for names share a signature; a symlink to `/etc` and
//! one to `../..` do not.

use snapconf_tarbytes::Records;

/// The signature of `bytes` (one line, records separated by spaces), e.g.
/// `5:d1 2:d1->/d1 0:d2` for a directory, a symlink over it to an absolute directory, and
/// a file written through it.
pub fn signature(bytes: &[u8]) -> String {
    let recs = Records::parse(bytes);
    let mut parts = Vec::new();
    for r in &recs.records {
        let flag = char::from(r.flag());
        let flag = if flag == '\0' { '0' } else { flag };
        if r.is_extension() {
            parts.push(format!("{flag}:ext"));
            continue;
        }
        let mut p = format!("{flag}:{}", shape(&r.name()));
        if matches!(r.flag(), b'1' | b'2') {
            p.push_str("->");
            p.push_str(&shape(&r.link()));
        }
        parts.push(p);
    }
    parts.join(" ")
}

/// The shape of one path: `/` when absolute, `..N` for N `..` components, `dN` for the
/// number of other components (`.` and empty ones dropped); `empty` for no components.
pub fn shape(path: &[u8]) -> String {
    let mut s = String::new();
    if path.starts_with(b"/") {
        s.push('/');
    }
    let comps: Vec<&[u8]> = path
        .split(|&b| b == b'/')
        .filter(|c| !c.is_empty() && *c != b".")
        .collect();
    let ups = comps.iter().filter(|c| **c == b"..").count();
    let depth = comps.len() - ups;
    if ups > 0 {
        s.push_str(&format!("..{ups}"));
    }
    if depth > 0 || ups == 0 {
        s.push_str(&format!("d{depth}"));
    }
    if comps.is_empty() && !path.starts_with(b"/") {
        return "empty".to_string();
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use snapconf_tarbytes::raw::header;

    #[test]
    fn shapes_abstract_names_but_keep_climbs_and_roots() {
        assert_eq!(shape(b"a/b"), shape(b"x/y"));
        assert_eq!(shape(b"a/b"), "d2");
        assert_eq!(shape(b"/etc/passwd"), "/d2");
        assert_eq!(shape(b"../../x"), "..2d1");
        assert_eq!(shape(b".."), "..1");
        assert_eq!(shape(b"./a//b/"), "d2");
        assert_eq!(shape(b""), "empty");
        assert_eq!(shape(b"/"), "/d0");
        assert_ne!(shape(b"../x"), shape(b"/x"));
    }

    #[test]
    fn signatures_tell_causes_apart_not_names() {
        let tar = |members: &[(u8, &[u8], &[u8])]| {
            let mut b = Vec::new();
            for (flag, name, link) in members {
                b.extend_from_slice(&header(*flag, name, link, 0, 0o644));
            }
            b.extend_from_slice(&[0u8; 1024]);
            b
        };
        let a = tar(&[(b'2', b"d", b"/etc"), (b'0', b"d/passwd", b"")]);
        let b = tar(&[(b'2', b"x", b"/tmp"), (b'0', b"x/evil", b"")]);
        let c = tar(&[(b'2', b"d", b"../.."), (b'0', b"d/passwd", b"")]);
        assert_eq!(signature(&a), signature(&b));
        assert_ne!(signature(&a), signature(&c));
        assert_eq!(signature(&a), "2:d1->/d1 0:d2");
    }
}
