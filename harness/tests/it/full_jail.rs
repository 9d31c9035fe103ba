//! A full jail filesystem ends a run with exit 3 and a message naming the filesystem, never
//! a panic, and leaves nothing in it. Needs root: each run is `unshare -m` with a 2 MiB
//! tmpfs mounted as the jail base (the mount never leaves that namespace).

use crate::support;

use std::path::Path;
use std::process::Command;

/// `snapconf run` (or, with `fuzz`, a 5 s `snapconf fuzz` of GNU tar) with a 2 MiB tmpfs
/// as `--jail-dir`, `fill` bytes of it taken first; the exit code, stderr, and the names
/// left in the tmpfs afterwards. `None` (skipped) when the mount cannot be made here.
fn run_on_full_tmpfs(tmp: &Path, fill: u64, fuzz: bool) -> Option<(i32, String, String)> {
    let tag = format!("{fill}{}", if fuzz { "-fuzz" } else { "" });
    let jail = tmp.join(format!("jail-{tag}"));
    let report = tmp.join(format!("report-{tag}"));
    let listing = tmp.join(format!("left-{tag}"));
    std::fs::create_dir_all(&jail).expect("mkdir");
    let script = r#"mount -t tmpfs -o size=2m tmpfs "$1" || exit 97
head -c "$5" /dev/zero > "$1/fill" 2>/dev/null
if [ "$6" = fuzz ]; then
  "$2" fuzz --extractor gnu-tar --time 5 --seed 3 --jail-dir "$1" --report-dir "$3" --timeout 10
else
  "$2" run --cases 20 --seed 3 --jail-dir "$1" --report-dir "$3" --timeout 10
fi
code=$?
ls -A "$1" > "$4"
exit $code"#;
    let out = Command::new("unshare")
        .args(["-m", "--propagation", "private", "sh", "-c", script, "sh"])
        .arg(&jail)
        .arg(support::snapconf_bin())
        .arg(&report)
        .arg(&listing)
        .arg(fill.to_string())
        .arg(if fuzz { "fuzz" } else { "run" })
        .env(support::PLAIN_DRAWS.0, support::PLAIN_DRAWS.1)
        .output()
        .expect("start unshare");
    let code = out.status.code().unwrap_or(-1);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    if code == 97 || (code == 1 && stderr.contains("unshare")) {
        support::skip::skip(
            "a private mount namespace with a tmpfs (unshare -m, mount)",
            "run the tests as root",
        );
        return None;
    }
    let left = std::fs::read_to_string(&listing).unwrap_or_default();
    Some((code, stderr, left))
}

/// A tmpfs full from the start (no jail can be made) and one with 192 KiB free (seed 3 fills
/// it while tools run: the reaper of a tool cannot write its report): both exit 3 naming
/// the filesystem, no panic, and only the filler is left in it.
#[test]
fn a_full_jail_filesystem_is_a_clear_exit_3() {
    if !rustix::process::geteuid().is_root() {
        support::skip::skip("root (the test mounts a tmpfs)", "run the tests as root");
        return;
    }
    let tmp = tempfile::tempdir().expect("tempdir");
    for (fill, fuzz) in [(2 << 20, false), (1_900_000, false), (2 << 20, true)] {
        let Some((code, stderr, left)) = run_on_full_tmpfs(tmp.path(), fill, fuzz) else {
            return;
        };
        let fill = format!("{fill}{}", if fuzz { "-fuzz" } else { "" });
        let jail = tmp.path().join(format!("jail-{fill}"));
        assert_eq!(code, 3, "fill {fill}: {stderr}");
        assert!(
            stderr.contains(&format!(
                "the jail filesystem `{}` is full (ENOSPC)",
                jail.display()
            )),
            "fill {fill}: {stderr}"
        );
        assert!(!stderr.contains("panicked"), "fill {fill}: {stderr}");
        assert_eq!(left.trim(), "fill", "fill {fill}: left behind");
    }
}
