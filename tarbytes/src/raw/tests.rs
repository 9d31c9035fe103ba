//! The raw writer and reader against the `tar` crate and the documented readings.

use super::*;

/// Numeric fields as GNU tar writes them (octal with NUL or space, base-256 for large
/// values) read back; damaged fields give 0 or `None` as documented.
#[test]
fn numeric_fields_read_back() {
    let mut f = [0u8; 12];
    put_octal(&mut f, 0o755);
    assert_eq!(
        (parse_octal(&f), parse_numeric(&f)),
        (Some(0o755), Some(0o755))
    );
    assert_eq!(parse_numeric(b"  644 \0"), Some(0o644));
    let big = 1u64 << 40;
    let mut b = [0u8; 12];
    b[0] = 0x80;
    b[4..].copy_from_slice(&big.to_be_bytes());
    assert_eq!(parse_numeric(&b), Some(big));
    assert_eq!(parse_numeric(&[0xff; 12]), None, "base-256 overflow");
    assert_eq!(
        (parse_octal(b"xyz"), parse_numeric(b"xyz")),
        (None, Some(0))
    );
    assert_eq!(
        (parse_octal(&[0; 8]), parse_numeric(&[0; 8])),
        (None, Some(0))
    );
    assert_eq!(parse_numeric(&[b'7'; 40]), None, "octal overflow");
}

/// The checksum agrees with the `tar` crate's, and a short slice is left alone.
#[test]
fn checksum_matches_the_tar_crate() {
    let mut h = tar::Header::new_ustar();
    h.set_path("some/file").expect("path");
    h.set_size(1234);
    h.set_cksum();
    let mut ours = RawHeader(*h.as_bytes());
    ours.field_mut(CHKSUM).fill(b'9');
    ours.set_checksum();
    assert_eq!(ours.chksum(), RawHeader(h.as_bytes()).chksum());
    let mut short = [1u8; 100];
    set_checksum(&mut short);
    assert_eq!(short, [1u8; 100]);
}

/// The sum is what [`set_checksum`] writes, counts the field as spaces whatever it holds,
/// and needs a whole block.
#[test]
fn checksum_sum_is_the_written_checksum() {
    let h = header(b'0', b"f", b"", 3, 0o644);
    assert_eq!(checksum_sum(&h), RawHeader(&h).chksum());
    let mut damaged = h;
    damaged[CHKSUM.range()].fill(0xff);
    assert_eq!(checksum_sum(&damaged), checksum_sum(&h));
    assert_eq!(checksum_sum(&h[..511]), None);
    assert_eq!(checksum_sum(&[0xff; 600]), Some(255 * 504 + 8 * 32));
    let (mut a, mut b) = (RawTar::new(), RawTar::new());
    a.dir_mode("d/", 0o755);
    b.dir("d/");
    assert_eq!(a.bytes, b.bytes, "dir is dir_mode 0755");
}

/// A written checksum matches; so does the signed sum old tars wrote and Python's
/// `0o`-prefixed reading; a changed digit or a cut block does not.
#[test]
fn checksum_matches_takes_the_documented_readings() {
    let mut h = RawHeader(header(b'0', &[0xe9; 20], b"", 3, 0o644));
    assert!(h.checksum_matches());
    let unsigned = checksum_sum(&h.0).expect("block");
    let signed = unsigned - 20 * 256;
    h.set_raw(CHKSUM, format!("{signed:06o}\0 ").as_bytes());
    assert!(h.checksum_matches(), "the signed sum");
    h.set_raw(CHKSUM, format!(" 0o{unsigned:o}\0").as_bytes());
    assert!(h.checksum_matches(), "Python's reading");
    h.set_checksum().field_mut(CHKSUM)[5] ^= 1;
    assert!(!h.checksum_matches(), "a changed digit");
    assert!(!RawHeader(&h.0[..511]).checksum_matches(), "a cut block");
}

/// Every named field lies where POSIX puts it: a header the `tar` crate writes reads
/// back field by field, and ours reads back in the `tar` crate.
#[test]
fn fields_agree_with_the_tar_crate() {
    let mut t = tar::Header::new_ustar();
    t.set_path("d/some-name").expect("path");
    t.set_link_name("target").expect("link");
    t.set_mode(0o4755);
    t.set_size(1234);
    t.set_mtime(99);
    t.set_entry_type(tar::EntryType::Symlink);
    t.set_username("me").expect("uname");
    t.set_groupname("us").expect("gname");
    t.set_device_major(1).expect("major");
    t.set_device_minor(3).expect("minor");
    t.set_cksum();
    let h = RawHeader(t.as_bytes());
    assert_eq!(h.name(), b"d/some-name");
    assert_eq!(h.linkname(), b"target");
    assert_eq!(
        (h.mode(), h.size(), h.mtime()),
        (Some(0o4755), Some(1234), Some(99))
    );
    assert_eq!(
        (h.typeflag(), h.uname(), h.gname()),
        (b'2', &b"me"[..], &b"us"[..])
    );
    assert_eq!((h.devmajor(), h.devminor()), (Some(1), Some(3)));
    assert_eq!((h.magic(), h.version()), (&b"ustar\0"[..], &b"00"[..]));

    let mut ours = RawHeader(header(b'0', b"name", b"", 7, 0o644));
    ours.set_prefix(b"pre/fix").set_checksum();
    let back = tar::Header::from_byte_slice(&ours.0);
    assert_eq!(back.path_bytes().as_ref(), b"pre/fix/name");
    assert_eq!(back.size().expect("size"), 7);
    assert_eq!(
        back.cksum().expect("cksum"),
        ours.chksum().expect("ours") as u32
    );
    let cut = RawHeader(&ours.0[..120]);
    assert_eq!(
        (cut.name(), cut.size(), cut.typeflag()),
        (&b"name"[..], Some(0), 0)
    );
}
