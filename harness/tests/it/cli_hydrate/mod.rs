//! `snapconf hydrate`, `snapconf recover` and `snapconf check-archive`: the reference
//! extractor on the command line. Exit 0 hydrated/accepted/recovered, 1 refused with the
//! root untouched (reason code printed), 2 bad usage, 3 an I/O failure (a leftover that
//! could not be removed; every class: `hydrate_exit`). Hydrate keeps the root's owner,
//! group and mode.
//!
//! One file a topic: `verdicts` (refusals, check-archive, usage, names, empty archives),
//! `stdin` (an archive on standard input), `formats` (compression, limits, a plain GNU tar),
//! `recover` (staging directories a killed hydration left) and `owner` (the root keeps its
//! owner, group and mode). The helpers they share are here.

mod formats;
mod owner;
mod recover;
mod stdin;
mod verdicts;

use crate::support;

use std::io::Write;
use std::process::{Command, Stdio};

fn snapconf(args: &[&std::ffi::OsStr]) -> (i32, String, String) {
    support::snapconf(args, &[])
}

/// A two-member archive: `a` (regular, "new") and `b` as an LNK member to `a` (H1/H14 shape).
fn archive_with_hardlink(path: &std::path::Path) {
    let mut b = tar::Builder::new(std::fs::File::create(path).expect("create"));
    let mut h = tar::Header::new_gnu();
    h.set_size(3);
    h.set_mode(0o644);
    h.set_entry_type(tar::EntryType::Regular);
    b.append_data(&mut h, "a", &b"new"[..]).expect("append a");
    let mut l = tar::Header::new_gnu();
    l.set_size(0);
    l.set_mode(0o644);
    l.set_entry_type(tar::EntryType::Link);
    b.append_link(&mut l, "b", "a").expect("append b");
    b.into_inner().expect("finish").flush().expect("flush");
}

/// The names in `dir`, sorted.
fn names_in(dir: &std::path::Path) -> Vec<std::ffi::OsString> {
    let mut names: Vec<_> = std::fs::read_dir(dir)
        .expect("read_dir")
        .map(|e| e.expect("entry").file_name())
        .collect();
    names.sort();
    names
}
