//! Writes `corpora/adversarial/` from the builders in `snapconf_harness::fuzz` (archive +
//! TOML expectation holding the reference's current verdict, to be reviewed in the diff),
//! and `corpora/seeds/tar-rs-*.tar` with the `tar` crate.
//!
//! Usage: `cargo run -p snapconf-harness --example make-corpora -- [CORPORA_DIR]`
//! (default `corpora`). External tools' seeds come from `corpora/make-seeds.sh`, which
//! calls this first.

use snapconf_harness::fuzz::{adversarial_cases, named_policy, reference_expectation};
use std::path::PathBuf;

fn main() -> anyhow::Result<()> {
    let dir = PathBuf::from(std::env::args().nth(1).unwrap_or_else(|| "corpora".into()));
    let adv = dir.join("adversarial");
    std::fs::create_dir_all(&adv)?;
    for c in adversarial_cases() {
        let policy = named_policy(c.policy)
            .ok_or_else(|| anyhow::anyhow!("unknown policy `{}`", c.policy))?;
        let e = reference_expectation(c.attack, c.policy, &policy, &c.bytes);
        std::fs::write(adv.join(format!("{}.tar", c.name)), &c.bytes)?;
        std::fs::write(adv.join(format!("{}.toml", c.name)), toml::to_string(&e)?)?;
    }
    let seeds = dir.join("seeds");
    std::fs::create_dir_all(&seeds)?;
    let mut b = tar::Builder::new(Vec::new());
    let mut h = tar::Header::new_gnu();
    h.set_entry_type(tar::EntryType::Directory);
    h.set_mode(0o755);
    h.set_size(0);
    h.set_mtime(1_700_000_000);
    b.append_data(&mut h, "dir/", std::io::empty())?;
    let mut h = tar::Header::new_gnu();
    h.set_mode(0o644);
    h.set_size(6);
    h.set_mtime(1_700_000_000);
    b.append_data(&mut h, "dir/file.txt", &b"hello\n"[..])?;
    let long = format!("dir/{}", "n".repeat(120));
    let mut h = tar::Header::new_gnu();
    h.set_mode(0o755);
    h.set_size(3);
    h.set_mtime(1_700_000_000);
    b.append_data(&mut h, &long, &b"#!\n"[..])?;
    let mut h = tar::Header::new_gnu();
    h.set_entry_type(tar::EntryType::Symlink);
    h.set_mode(0o777);
    h.set_size(0);
    h.set_mtime(1_700_000_000);
    b.append_link(&mut h, "link", "dir/file.txt")?;
    std::fs::write(seeds.join("tar-rs-gnu.tar"), b.into_inner()?)?;
    println!("wrote {} and {}", adv.display(), seeds.display());
    Ok(())
}
