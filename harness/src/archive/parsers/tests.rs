//! Tests of the listing parsers: escapes, columns, type letters, known limits, errors.

use super::*;

#[test]
fn escapes_are_undone() {
    assert_eq!(unescape(br"p\377\376"), b"p\xff\xfe");
    assert_eq!(unescape(br"nl\nname"), b"nl\nname");
    assert_eq!(unescape(br"a\\b"), b"a\\b");
    // Every C escape GNU tar and bsdtar print, and a backslash before anything else.
    assert_eq!(
        unescape(br"\a\b\f\n\r\t\v\\\033\q"),
        b"\x07\x08\x0c\n\r\t\x0b\\\x1b\\q"
    );
}

/// bsdtar's `+` after the mode of a member with an ACL is part of the mode column, and
/// its BEL escape is a BEL; BusyBox's raw backslash stays a backslash.
#[test]
fn bsdtar_acl_mark_and_escapes_are_read() {
    let l = parse_text(
        "bsdtar",
        b"-rwxrw-r--+ 0 0      0           3 Nov 14  2023 run\n\
          -rw-r--r--  0 0      0           3 Nov 14  2023 a\\ab\n",
    );
    let names: Vec<_> = l.iter().map(|m| (m.name.clone(), m.size)).collect();
    assert_eq!(
        names,
        [(b"run".to_vec(), Some(3)), (b"a\x07b".to_vec(), Some(3))]
    );
    let l = parse_text(
        "busybox",
        b"-rw-r--r-- 0/0         3 2023-11-14 22:13:20 e\\f\n",
    );
    assert_eq!(l[0].name, b"e\\f");
}

/// A BusyBox failure ending in one of its known limits is that limit; the same words
/// from another tool, or another BusyBox failure, are not.
#[test]
fn known_limits_are_matched_by_tool_and_last_line() {
    let v7 = "`busybox tar -tvf x` exited with status 1: tar: invalid tar magic\n";
    assert!(known_limit("busybox", v7).is_some());
    assert!(known_limit("busybox", &printable(v7)).is_some());
    assert!(known_limit("gnu-tar", v7).is_none());
    assert!(known_limit("busybox", "exited with status 1: tar: short read").is_none());
    let sparse = "exited with status 1: tar: unknown typeflag: 0x53";
    assert!(known_limit("busybox", sparse).is_some());
    assert!(known_limit("busybox", "tar: unknown typeflag: 0x5a").is_none());
}

/// No control character survives [`printable`]; backslashes and UTF-8 do.
#[test]
fn printable_escapes_every_control_character() {
    let text = printable("a\x1b[31mb\x07\n\t\u{9b}c\\x07 café");
    assert_eq!(text, "a\\x1b[31mb\\x07\\n\\t\\x9bc\\x07 café");
    assert!(!text.chars().any(char::is_control), "{text}");
}

#[test]
fn gnu_columns_are_split() {
    let l = parse_text(
        "gnu-tar",
        b"lrwxrwxrwx 0/0               0 2023-11-14 22:13 ./a b -> /x y\n\
         -rw-r--r-- 0/0              13 2023-11-14 22:13 f\n",
    );
    assert_eq!(l[0].name, b"a b");
    assert_eq!(l[0].link_target.as_deref(), Some(&b"/x y"[..]));
    assert_eq!(l[1].size, Some(13));
}

/// Every first letter GNU tar's listing gives a member type is read as that type: a
/// contiguous file (`C`, type `7`) is a file, not the continuation of the name before,
/// and a member of a type GNU tar does not know (`?`, followed by its annotation) is
/// one member of its own name.
#[test]
fn gnu_type_letters_are_read() {
    let l = parse_text(
        "gnu-tar",
        b"Crw-r--r-- 0/0               3 1970-01-01 00:00 c7\n\
          hrw-r--r-- 0/0               0 1970-01-01 00:00 h link to c7\n\
          drwxr-xr-x 0/0               0 1970-01-01 00:00 d/\n\
          prw-r--r-- 0/0               0 1970-01-01 00:00 p\n\
          -rw-r--r-- 0/0               1 1970-01-01 00:00 f\n\
          ?rw-r--r-- 0/0               0 1970-01-01 00:00 z unknown file type 'Z'\n",
    );
    let kinds: Vec<_> = l.iter().map(|m| (m.name.clone(), m.kind)).collect();
    assert_eq!(
        kinds,
        [
            (b"c7".to_vec(), MemberKind::File),
            (b"h".to_vec(), MemberKind::Hardlink),
            (b"d".to_vec(), MemberKind::Dir),
            (b"p".to_vec(), MemberKind::Fifo),
            (b"f".to_vec(), MemberKind::File),
            (b"z".to_vec(), MemberKind::File),
        ]
    );
}

/// A hex field that does not decode is an error naming the tool and the line, never an
/// empty name.
#[test]
fn a_bad_hex_name_is_an_error_naming_the_tool_and_line() {
    let good = br#"{"name": "61", "type": "30", "link": "", "size": 1}"#;
    let bad = br#"{"name": "zz", "type": "30", "link": "", "size": 1}"#;
    let out = [&good[..], b"\n", bad, b"\n"].concat();
    let err = parse_python("python-tarfile", &out).expect_err("bad hex");
    let text = err.to_string();
    assert!(
        text.contains("python-tarfile") && text.contains("line 2") && text.contains("`name`"),
        "{text}"
    );
    let ParserListing::Members(ms) =
        parse_python("python-tarfile", &[&good[..], b"\n"].concat()).expect("reads")
    else {
        panic!("a good record lists");
    };
    assert_eq!((ms[0].name.as_slice(), ms[0].size), (&b"a"[..], Some(1)));
    // A negative size (GNU base-256 -1, as Python reads it) is the archive's doing: a
    // failed listing for that parser, not an error of the run.
    let negative = br#"{"name": "61", "type": "30", "link": "", "size": -1}"#;
    match parse_python("python-tarfile", &[&negative[..], b"\n"].concat()) {
        Ok(ParserListing::Failed(why)) => assert!(why.contains("negative size -1"), "{why}"),
        other => panic!("a negative size is a failed listing: {other:?}"),
    }
    let not_json = parse_python("python-tarfile", b"[1, 2]\n").expect_err("not a record");
    assert!(not_json.to_string().contains("line 1"), "{not_json}");
}

/// A tool that ran and failed is a failed listing with its status; a missing one is
/// no listing.
#[test]
fn failed_and_missing_tools_are_told_apart() {
    let path = Path::new("/dev/null");
    match run("false", "false", &[], path).expect("runs") {
        Some(Err(why)) => assert!(why.contains("status 1"), "{why}"),
        other => panic!("`false` fails: {other:?}"),
    }
    assert_eq!(
        run("none", "snapconf-no-such-tool", &[], path).expect("runs"),
        None
    );
}
