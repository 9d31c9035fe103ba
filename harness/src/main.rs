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
    // Before anything else (and before any thread starts): as root, a mount namespace of
    // our own with private mounts, so that no mount of this process or its tools (the
    // `enospc` fault's tmpfs) outlives it, even after a SIGKILL. Not root, or not allowed
    // (a container): nothing changes and nothing is said.
    cmd::remember_exe();
    if let Err(e) = snapconf_harness::jail::namespace::enter_private_mounts() {
        eprintln!("snapconf: warning: cannot make this process's mounts private: {e}");
    }
    // A write past `RLIMIT_FSIZE` must fail with `EFBIG`, not kill this process (the
    // default action of `SIGXFSZ`): `hydrate` then reads on, a refusal of the archive still
    // wins, and its staging directory is removed (a hostile review found the process
    // killed, the verdict lost and the staging left). A handler, not `SIG_IGN`, so the
    // tools this process starts get the default action back at `exec`, as they would
    // from a shell.
    let _ = signal_hook::flag::register(
        signal_hook::consts::SIGXFSZ,
        std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false)),
    );
    let cli = cmd::Cli::parse();
    if let Some(python) = &cli.python {
        snapconf_producers::adapters::python::use_python(python);
    }
    // Every external tool runs under a reaper of its own, which kills and names the
    // processes it leaves behind; steps may then run in parallel threads. This process is
    // also a subreaper, so that an orphan of a reaper killed from outside still ends here.
    snapconf_producers::process::stragglers::become_subreaper();
    if let Ok(exe) = cmd::self_exe() {
        snapconf_producers::process::reaper::enable(exe);
    }
    std::process::exit(cmd::dispatch(cli));
}
