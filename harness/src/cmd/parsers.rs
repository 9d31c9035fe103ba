//! `snapconf check-archive --all-parsers` and `snapconf fuzz --parsers`.

use super::args::FuzzArgs;

pub fn hunt(_a: &FuzzArgs, _seed: u64) -> anyhow::Result<i32> {
    Err(super::Usage("--parsers is not implemented yet".into()).into())
}
