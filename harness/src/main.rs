//! The `snapconf` binary: parse, run, map to an exit code.

mod cmd;

use clap::Parser;

fn main() {
    let cli = cmd::Cli::parse();
    std::process::exit(cmd::dispatch(cli));
}
