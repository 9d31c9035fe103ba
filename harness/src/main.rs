//! The `snapconf` binary: parse, run, map to an exit code.

mod cmd;

use clap::Parser;

fn main() {
    let cli = cmd::Cli::parse();
    // Orphans of the tools under test are reparented to us, so that each step's stragglers
    // are killed and reported (snapconf_producers::process::stragglers); the pipeline runs one tool
    // at a time, as that module requires.
    snapconf_producers::process::stragglers::become_subreaper();
    std::process::exit(cmd::dispatch(cli));
}
