//! The `snapconf` binary: parse, run, map to an exit code.

mod cmd;

use clap::Parser;

fn main() {
    // A step's own reaper (snapconf_producers::process::reaper): this binary, started by
    // itself around one external tool.
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if args
        .get(1)
        .is_some_and(|a| a == snapconf_producers::process::reaper::REAP_ARG)
    {
        std::process::exit(snapconf_producers::process::reaper::main(&args[2..]));
    }
    let cli = cmd::Cli::parse();
    // Every external tool runs under a reaper of its own, which kills and names the
    // processes it leaves behind; steps may then run in parallel threads. This process is
    // also a subreaper, so that an orphan of a reaper killed from outside still ends here.
    snapconf_producers::process::stragglers::become_subreaper();
    if let Ok(exe) = std::env::current_exe() {
        snapconf_producers::process::reaper::enable(exe);
    }
    std::process::exit(cmd::dispatch(cli));
}
