//! Names: absolute, with `..`, in the forms tools normalise differently, and renamed by a
//! PAX global header.

use super::encode::Enc;
use super::member::{choose, distinct, one_in, Seq};
use super::target::{
    aim, aim_decoy, aim_decoy_relative, aim_dir_relative, decoy, decoy_beside, join, spell, ups,
    view_dir, Form,
};
use crate::jail::view_layout::VIEW_DECOYS;
use snapconf_tarbytes::Rng;

/// `absolute-name`: 1–3 members named by absolute decoy paths: `/etc/passwd`,
/// `////etc/passwd` (node-tar CVE-2021-32804 stripped one `/` and left the rest absolute),
/// `/./etc/passwd`, `/etc//passwd`. Mostly files (sometimes setuid), sometimes a symlink
/// planted at the decoy; one time in three a new directory in a view directory too.
pub(super) fn absolute_name(rng: &mut Rng, seq: &mut Seq) {
    let n = 1 + rng.below(3);
    for file in distinct(rng, &VIEW_DECOYS, n) {
        let name = match rng.below(5) {
            0 | 1 => spell(Form::Absolute, 0, file),
            2 => spell(Form::Slashes(2 + rng.below(4)), 0, file),
            3 => format!("/.{file}").into_bytes(),
            _ => format!("/{}", file.replace('/', "//").trim_start_matches('/')).into_bytes(),
        };
        if one_in(rng, 6) {
            seq.symlink(name, spell(Form::Absolute, 0, decoy(rng)));
        } else {
            let mode = if one_in(rng, 4) { 0o4755 } else { 0o644 };
            seq.file(name).mode(mode);
        }
    }
    if one_in(rng, 3) {
        let dir = view_dir(rng).trim_end_matches('/');
        seq.dir(format!("{dir}/snapconf-new/")).mode(0o777);
    }
}

/// `dotdot-name`: 1–2 members named with `..`: up to a decoy in exactly as many steps as
/// reach `/`, in the fewest, or in more (GNU tar CVE-2001-1267, Python CVE-2007-4559);
/// inside first, then out, `x/y/../../../decoy` (GNU tar's `safer_name_suffix` strips up
/// to the last `..`; CVE-2016-6321 was a name that starts like a wanted member and then
/// climbs); `s/../rest` after `s -> <view
/// dir>`, which a lexical cleaner (Go `filepath.Clean`, Node `path.normalize`) reads as
/// `rest` while the kernel climbs from the link's target; a directory member that is `..`
/// (or climbs to a view directory) with mode 0777; a symlink planted at a decoy by `..`.
pub(super) fn dotdot_name(rng: &mut Rng, seq: &mut Seq) {
    for _ in 0..1 + rng.below(2) {
        match rng.below(6) {
            0 | 1 => {
                seq.file(aim_decoy_relative(rng, 0));
            }
            2 => {
                let k = 1 + rng.below(3);
                let inner = ["x", "y", "z"][..k].join("/");
                let out = aim_decoy_relative(rng, 0);
                seq.file(join(join(inner, ups(k)), out));
            }
            3 => {
                let (x, rest) = decoy_beside(rng);
                seq.symlink("s", aim(rng, 0, x));
                seq.file(format!("s/../{rest}"));
            }
            4 => {
                let mut name = aim_dir_relative(rng, 0);
                name.push(b'/');
                seq.dir(name).mode(0o777);
            }
            _ => {
                let target = spell(Form::Absolute, 0, decoy(rng));
                seq.symlink(aim_decoy_relative(rng, 0), target);
            }
        }
    }
}

/// Lengths at the edges of the ustar fields: the 100-byte name field, the 155-byte prefix,
/// their 256-byte sum, and one past each.
const EDGE_LENGTHS: [usize; 9] = [99, 100, 101, 154, 155, 156, 255, 256, 257];

/// A name of exactly `len` bytes. Up to 100 bytes it is one component; longer names end in
/// a 99- or 100-byte component after a `/`, so that up to 256 bytes the ustar prefix can
/// carry the rest and past that only the long forms can.
fn name_of_len(len: usize, fill: u8) -> Vec<u8> {
    if len <= 100 {
        return vec![fill; len];
    }
    let last = if len <= 255 { 99 } else { 100 };
    let mut v = vec![fill; len - last - 1];
    v.push(b'/');
    v.extend(std::iter::repeat_n(fill, last));
    v
}

/// `name-forms`: 1–4 members, each one name form where parsers and normalisers part ways.
/// Not an escape by itself (the NUL form hides a climb behind the NUL, for a reader that
/// does not stop there).
pub(super) fn name_forms(rng: &mut Rng, seq: &mut Seq) {
    for i in 0..1 + rng.below(4) {
        let fill = b"mnopqrstuv"[i % 10];
        match rng.below(12) {
            0 => {
                seq.file("").enc(Enc::Ustar);
            }
            1 => {
                seq.dir(choose(rng, &[".", "./", ".//", "./."])).mode(0o777);
            }
            2 => {
                seq.file(choose(rng, &[".", "./"]));
            }
            3 => {
                seq.file(choose(rng, &["x//y", ".//x//y", "x/./y", "./x"]));
            }
            4 => {
                seq.file(choose(rng, &["x/", "y//"]));
            }
            5 => {
                let mut name = b"x\0/../".to_vec();
                name.extend(aim_decoy_relative(rng, 0));
                let enc = if one_in(rng, 2) { Enc::Ustar } else { Enc::Pax };
                seq.file(name).enc(enc);
            }
            6 | 7 => {
                let len = choose(rng, &EDGE_LENGTHS);
                match rng.below(3) {
                    0 => seq.file(name_of_len(len, fill)),
                    1 => seq.dir([name_of_len(len - 1, fill), b"/".to_vec()].concat()),
                    _ => seq.symlink(name_of_len(len, fill), "target"),
                };
            }
            8 => {
                seq.file(vec![fill; choose(rng, &[255, 256])]);
            }
            9 => {
                let odd: [&[u8]; 4] = [b"\xff\xfe-x", b"\x1b[2Jx", b"a\nb", b"tab\tname"];
                seq.file(choose(rng, &odd));
            }
            10 => {
                seq.file(choose(rng, &["..\\..\\x", "d\\f", "\\x"]));
            }
            _ => {
                let len = choose(rng, &[99, 100, 101]);
                seq.symlink(format!("t{len}"), vec![fill; len]);
            }
        }
    }
}

/// `pax-global`: a PAX `g` header whose `path` names a decoy (or whose `linkpath` does),
/// then 1–3 plain members. POSIX says a global record applies to every later member;
/// Python `tarfile` applies it (each member is then named the decoy), tar-rs ignores it,
/// the reference refuses the archive.
pub(super) fn pax_global(rng: &mut Rng, seq: &mut Seq) {
    let by_path = !one_in(rng, 3);
    let records = if by_path {
        vec![("path", aim_decoy(rng, 0))]
    } else {
        vec![("linkpath", aim_decoy(rng, 0))]
    };
    let first = if by_path {
        seq.file("log.txt")
    } else {
        seq.symlink("current", "log.txt")
    };
    first.global(records);
    for _ in 0..rng.below(3) {
        if one_in(rng, 2) {
            seq.file("data.bin");
        } else {
            seq.symlink("latest", "data.bin");
        }
    }
}
