//! Documented exit codes of the `snapconf` binary.

/// Every pair conforms, or every finding is of a cause the `--baseline` lists (`run`,
/// `audit`, `lifecycle`, `fuzz --extractor`, `report merge`); the finding no longer
/// reproduces (`replay`, `--replay`); hydrated / accepted (`hydrate`, `check-archive`).
pub const OK: i32 = 0;
/// Findings of a cause the baseline does not list (`run`, `audit`, `lifecycle`, `fuzz
/// --extractor`, `report merge`); the finding reproduces (`replay`, `--replay`); refused,
/// root untouched (`hydrate`, `check-archive`).
pub const FINDINGS: i32 = 1;
/// Bad usage or configuration: unknown adapter, missing directory, unreadable profile, a
/// bad `--shard`, a baseline file that cannot be read, an input file that is not a regular
/// file or is over its limit ([`snapconf_producers::input`]), a symlink or special file in
/// a report directory given to `report merge`; for `hydrate`, `recover` and
/// `check-archive`: an archive that does not exist or is a directory, a ROOT that does not
/// end in a plain name (`/`, `.`, `..`), exists and is not a directory (a file, a symlink),
/// or whose parent is missing or not a directory; given before anything runs.
pub const USAGE: i32 = 2;
/// Nothing ran, or less than was asked (`run`, `audit`, `lifecycle`, `fuzz`, `report
/// merge`): no producer or extractor available; the temp directory (`TMPDIR`) unusable,
/// said before any tool is probed; `--cases 0`, `--sequences 0`; a fuzz session of 0
/// executions (`--time 0`); every capture of every pair refused, so no case had an archive
/// to judge; the jail filesystem full (`ENOSPC`: the machine failed, not snapconf; said
/// naming it); a host canary that changed during a fuzz session (its results void); a tool
/// asked for by name, by `all` or by a `--backend` file that is not
/// available here (the others run and are reported; stderr and the report's notes name the
/// missing ones and why); a `fuzz --replay` of an archive that could reach past the jail
/// where no filesystem view runs (not run, for the host's sake); `report merge` of shards with one missing (without
/// `--allow-partial`). It wins over [`FINDINGS`]: an incomplete run is said even when what
/// did run found something. `replay`: the tool is missing. For `hydrate`, `recover` and
/// `check-archive`: [`IO_FAILURE`].
pub const NOTHING_RAN: i32 = 3;
/// Less than was asked ran: the same code as [`NOTHING_RAN`], named for where a part ran.
pub const INCOMPLETE: i32 = NOTHING_RAN;
/// `hydrate`, `recover` and `check-archive`: an I/O failure of ours or of the target
/// filesystem, not a property of the archive (reading the archive fails, `ENOSPC`,
/// `EFBIG`, `EACCES` on an unwritable parent, a leftover that cannot be removed), or a
/// listing tool that cannot be run (`check-archive --all-parsers`), or any other error;
/// the root is unchanged. The same code as [`NOTHING_RAN`]: the environment failed, not
/// the archive.
pub const IO_FAILURE: i32 = NOTHING_RAN;
/// Every other command: snapconf failed while it ran, after its arguments were accepted:
/// an internal error (a bug of snapconf), or an error it names on stderr that is not one
/// of the above (say a report it cannot write). What was found may not be reported.
pub const INTERNAL_ERROR: i32 = 4;
