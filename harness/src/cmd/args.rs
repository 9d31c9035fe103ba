//! Command-line arguments (clap). Every knob also has a `SNAPCONF_*` environment variable.

use super::policy_flags::{
    AbsoluteSymlinksFlag, DuplicatesFlag, EscapingSymlinksFlag, HardlinksFlag, ModesFlag,
    SpecialFilesFlag,
};
use clap::{Args, Parser, Subcommand};
use snapconf_extract as rx;
use snapconf_harness::fuzz::CoverageMode;
use std::path::PathBuf;

/// snapconf: a conformance suite for workspace snapshots (tar capture and hydration).
///
/// Exit codes: 0 every pair conforms or every finding is known from the baseline (replay:
/// fixed; hydrate/check-archive: accepted), 1 findings of a new cause (run, audit,
/// lifecycle, fuzz; replay: reproduces; hydrate/check-archive: refused, root untouched),
/// 2 bad usage or configuration, 3 nothing ran (no tool, or every capture refused) or
/// internal error. recover: 0 recovered or nothing to do, 1 a leftover could not be
/// removed, 2 bad usage.
#[derive(Debug, Parser)]
#[command(name = "snapconf", version, about, long_about = None)]
pub struct Cli {
    /// The Python the Python adapters run (it needs `tarfile`'s PEP 706 filters: 3.12, or
    /// 3.11.4 and later); default: `SNAPCONF_PYTHON`, else the first such Python among
    /// `python3`, `python3.13`, `python3.12` on PATH, `uv python find`, uv's and pyenv's
    /// installations and an active venv
    #[arg(long, global = true, value_name = "PATH")]
    pub python: Option<PathBuf>,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Generate cases and run them through every producer × extractor pair
    Run(RunArgs),
    /// Run an existing directory through every pair with the same checks
    Audit(AuditArgs),
    /// Re-run a reproducer directory (`cases/<id>/`): exit 1 while it reproduces, 0 when fixed
    Replay(ReplayArgs),
    /// List the built-in adapters (and `--backend` ones) with their versions or why they are unavailable
    List(ListArgs),
    /// Hydrate ARCHIVE into ROOT with the reference extractor (atomic: all or nothing)
    ///
    /// ARCHIVE is a tar file or stream, plain or compressed with gzip, zstd or xz (told by
    /// its magic number). The policy flags default to what snapconf's default profile
    /// promises (hardlinks copied, absolute and escaping symlinks kept, FIFOs and devices
    /// dropped, modes data-filter); each flag's help names the profile key it stands for.
    ///
    /// Exit 0: hydrated. 1: refused (the archive breaks the policy, is malformed or
    /// truncated; ROOT unchanged). 2: bad usage, before anything is read (ARCHIVE missing or
    /// a directory; ROOT `/`, `.` or `..`, a file or a symlink; ROOT's parent missing or not
    /// a directory). 3: an I/O failure while hydrating, not a property of the archive
    /// (reading it, `ENOSPC`, `EACCES` on an unwritable parent; ROOT unchanged).
    Hydrate(HydrateArgs),
    /// Remove what a killed `hydrate` of ROOT left beside it (its staging directory)
    ///
    /// A staging directory `.ROOT.snapconf-stage-<16 hex>` of a hydration that died is
    /// removed: ROOT is then exactly its prior tree, or exactly the new tree if the dead
    /// hydration had swapped it in (the extractor's recovery). One line on stdout per
    /// directory removed; one per staging directory a live hydration holds (its lock), which
    /// is left alone. Exit 0: recovered, or nothing to do (also when only live ones were
    /// found); 2: bad usage (ROOT does not end in a plain name, or its parent is missing or
    /// not a directory); 3: a leftover could not be removed (an I/O failure, named on
    /// stderr).
    Recover(RecoverArgs),
    /// Validate an archive with the reference extractor; print the verdict and listing as JSON
    ///
    /// Same reader, checks and policy defaults as `hydrate`, so the two agree on every
    /// input (compressed ones included); nothing is written. Exit 0: accepted. 1: refused
    /// (with `--all-parsers`: the parsers disagree, or the reference's parser cannot read
    /// the archive). 2: the archive is missing or a directory. 3: an I/O failure reading it
    /// (or a listing tool that cannot be run).
    CheckArchive(CheckArchiveArgs),
    /// The fuzzer's persistent reference server: `hydrate` once per request line
    /// (`ARCHIVE ROOT`, each hex-encoded) read from stdin, answering `exit N` on stdout
    #[command(hide = true)]
    ServeHydrate(ServeHydrateArgs),
    /// Manage the baseline of known causes
    #[command(subcommand)]
    Baseline(BaselineCommand),
    /// Work with report directories
    #[command(subcommand)]
    Report(ReportCommand),
    /// Run sessions: sequences of turns (edits, a capture per turn, cold and warm restores
    /// of earlier checkpoints) through one backend instance per sequence
    Lifecycle(LifecycleArgs),
    /// Mutate seed and adversarial archives and run them through an extractor
    /// (`--extractor`), or hunt for parser disagreements (`--parsers`)
    Fuzz(FuzzArgs),
}

#[derive(Debug, Args)]
pub struct LifecycleArgs {
    /// Sequences per producer × extractor pair
    #[arg(long, default_value_t = 100, env = "SNAPCONF_SEQUENCES")]
    pub sequences: u64,
    /// Most turns of one sequence (each has 1 to N, drawn from the seed)
    #[arg(long, default_value_t = 6, env = "SNAPCONF_TURNS",
          value_parser = clap::value_parser!(u64).range(1..=64))]
    pub turns: u64,
    /// Seed of the run (default: drawn from the clock and printed)
    #[arg(long, env = "SNAPCONF_SEED")]
    pub seed: Option<u64>,
    /// Faults to inject into every warm restore, comma-separated: truncate, corrupt,
    /// efbig, enospc, kill, or all (default: none)
    #[arg(long, value_delimiter = ',', env = "SNAPCONF_FAULTS")]
    pub faults: Vec<String>,
    /// Re-run a lifecycle reproducer directory (`cases/<id>/` of a lifecycle report)
    /// instead: exit 1 while it reproduces, 0 once fixed
    #[arg(long, value_name = "CASE_DIR")]
    pub replay: Option<PathBuf>,
    /// Run only shard K of N (`K/N`, 1-based): sequence indices i with i % N == K-1, so N
    /// CI jobs with the same --seed and --sequences together run the whole set, each
    /// sequence once; `snapconf report merge` joins their reports
    #[arg(long, env = "SNAPCONF_SHARD")]
    pub shard: Option<String>,
    #[command(flatten)]
    pub shrink: ShrinkArgs,
    #[command(flatten)]
    pub pairs: PairArgs,
    #[command(flatten)]
    pub output: OutputArgs,
}

#[derive(Debug, Args)]
pub struct FuzzArgs {
    /// The extractor under test (a built-in name, see `snapconf list`); a comma-separated
    /// list or `all` fuzzes each available one in turn, each for `--time` seconds, into one
    /// report (one not available here: exit 3, after the others ran)
    #[arg(long, env = "SNAPCONF_FUZZ_EXTRACTOR")]
    pub extractor: Option<String>,
    /// Hunt for archives that the available parsers list differently instead
    #[arg(long)]
    pub parsers: bool,
    /// Session length in seconds
    #[arg(long, default_value_t = 60, env = "SNAPCONF_FUZZ_TIME")]
    pub time: u64,
    /// Stop after this many executions (over every `-j` worker), or at `--time`, whichever
    /// comes first; with `-j 1` and `--seed` a session then draws the same inputs on any
    /// machine, however loaded (as libFuzzer's `-runs`)
    #[arg(long, env = "SNAPCONF_FUZZ_RUNS", value_parser = clap::value_parser!(u64).range(1..))]
    pub runs: Option<u64>,
    /// Seed of the mutation generator (default: drawn from the clock and printed)
    #[arg(long, env = "SNAPCONF_SEED")]
    pub seed: Option<u64>,
    /// Profile: `default` or a path to a TOML file (default: the `--backend` file's
    /// `[profile]`, else `default`)
    #[arg(long, env = "SNAPCONF_PROFILE")]
    pub profile: Option<String>,
    /// Directory holding seeds/ and adversarial/ (default: `corpora` here if it exists,
    /// else the checkout's `corpora/` this binary was built from)
    #[arg(long, env = "SNAPCONF_CORPORA")]
    pub corpora: Option<PathBuf>,
    /// Directory for the report (`report.json`, `summary.md`, `index.html`, `junit.xml`),
    /// `fuzz.json` and `cases/` (default: `reports/runs/fuzz-<extractor>-<time>-<pid>-seed<seed>`)
    #[arg(long, env = "SNAPCONF_REPORT_DIR")]
    pub report_dir: Option<PathBuf>,
    /// Timeout for each hydration, in seconds (at least 1)
    #[arg(long, default_value_t = 20, env = "SNAPCONF_TIMEOUT",
          value_parser = clap::value_parser!(u64).range(1..))]
    pub timeout: u64,
    /// Where jails are created (default: /dev/shm when writable, else the temp dir)
    #[arg(long, env = "SNAPCONF_JAIL_DIR")]
    pub jail_dir: Option<PathBuf>,
    /// Most extractor runs spent shrinking one finding
    #[arg(long, default_value_t = 60, env = "SNAPCONF_SHRINK_STEPS")]
    pub shrink_runs: u32,
    /// A backend description whose extractor to fuzz (with `--extractor` naming it;
    /// repeatable)
    #[arg(
        long = "backend",
        value_name = "FILE",
        env = "SNAPCONF_BACKEND",
        value_delimiter = ','
    )]
    pub backends: Vec<PathBuf>,
    /// Do not run the extractor in a filesystem view (bubblewrap): archives that could
    /// reach past the jail (absolute names or targets, more than one `..`) are then
    /// skipped, as they are when the view cannot be built here.
    #[arg(long, env = "SNAPCONF_FUZZ_NO_VIEW")]
    pub no_view: bool,
    /// Start one process (and lay out one view) per archive even for an extractor with a
    /// persistent server (python-data, python-tar, the reference): slower, the checks see
    /// the same
    #[arg(long, env = "SNAPCONF_FUZZ_ONE_SHOT")]
    pub one_shot: bool,
    /// Re-run a fuzz reproducer directory (its `archive.tar`), or any tar archive file,
    /// through the extractor with the session's checks instead (exit 1 while a check
    /// fails, 0 when none does). Absolute names and any number of `..` run, in the view
    #[arg(long)]
    pub replay: Option<PathBuf>,
    /// Baseline of known causes (JSON, written by `snapconf baseline update` from a fuzz
    /// report): a finding of a known cause is reported as known, does not fail the session
    /// and takes none of its check's slots, so other causes of that check are still found
    #[arg(long, env = "SNAPCONF_BASELINE")]
    pub baseline: Option<PathBuf>,
    /// Workers fuzzing at once, each with jails and a seed of its own (worker k draws from
    /// seed + k) and one list of causes between them (default: the cores this process
    /// may use)
    #[arg(short = 'j', long, env = "SNAPCONF_JOBS", value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub jobs: Option<u32>,
    /// Coverage feedback: keep inputs that reach new code of the extractor and mutate them
    /// further. `auto`: where the extractor reports coverage (the Python extractors, a
    /// backend on snapconf_worker.py or .js, in a view with its persistent worker); `on`:
    /// an extractor that reports none is a usage error (exit 2); `off` (the default until a
    /// guided session is measured to find more: fuzz/README.md): blind
    #[arg(long, value_enum, default_value_t = CoverageMode::Off, env = "SNAPCONF_FUZZ_COVERAGE")]
    pub coverage: CoverageMode,
    #[command(flatten)]
    pub output: OutputArgs,
}

#[derive(Debug, Subcommand)]
pub enum BaselineCommand {
    /// Add every cause of a run to a baseline (its other causes and notes stay; --replace
    /// starts over)
    Update(BaselineUpdateArgs),
}

#[derive(Debug, Args)]
pub struct BaselineUpdateArgs {
    /// The report directory of a run (holding report.json)
    #[arg(long)]
    pub report: PathBuf,
    /// The baseline file to write; when it exists, the report's causes are added to its own
    #[arg(long, default_value = "reports/baseline/baseline.json")]
    pub out: PathBuf,
    /// Start over: the file holds the report's causes alone (notes of kept causes stay)
    #[arg(long)]
    pub replace: bool,
}

#[derive(Debug, Subcommand)]
pub enum ReportCommand {
    /// Join the reports of `run --shard K/N` (or `lifecycle --shard K/N`) jobs into the
    /// report of the whole run (pairs
    /// summed, each cell's first finding, causes, matrix, JUnit, the baseline check); exits
    /// as `run` does
    Merge(ReportMergeArgs),
}

#[derive(Debug, Args)]
pub struct ReportMergeArgs {
    /// Report directories of the shards (each holding report.json and cases/)
    #[arg(required = true, num_args = 1..)]
    pub dirs: Vec<PathBuf>,
    /// Directory for the merged report: new, empty, or holding only an earlier snapconf
    /// report (replaced)
    #[arg(long)]
    pub out: PathBuf,
    /// Baseline of known causes to check the merged report against
    #[arg(long, env = "SNAPCONF_BASELINE")]
    pub baseline: Option<PathBuf>,
    /// Merge even when shards of the run are missing: the report says it is partial and
    /// names them, and the exit code is the findings' (without it: exit 3)
    #[arg(long)]
    pub allow_partial: bool,
}

/// Which pairs and which profile.
#[derive(Debug, Args)]
pub struct PairArgs {
    /// Producers to run, comma-separated; `all` takes every built-in (default: every
    /// available built-in but the opt-in variants, such as `gnu-tar-lnk`)
    #[arg(long, value_delimiter = ',', env = "SNAPCONF_PRODUCERS")]
    pub producers: Vec<String>,
    /// Extractors to run, comma-separated; `all` takes every built-in (default: every
    /// available built-in but the opt-in variants, such as `gnu-tar-merge`)
    #[arg(long, value_delimiter = ',', env = "SNAPCONF_EXTRACTORS")]
    pub extractors: Vec<String>,
    /// Profile: `default` or a path to a TOML file (default: the first `--backend`'s
    /// `[profile]`, else `default`)
    #[arg(long, env = "SNAPCONF_PROFILE")]
    pub profile: Option<String>,
    /// A backend description (TOML, see producers/backends/README.md) to run as a producer
    /// and an extractor, paired with itself and with the built-ins (repeatable; the
    /// environment variable takes a comma-separated list). `--producers none` /
    /// `--extractors none` leave the built-ins out of that side
    #[arg(
        long = "backend",
        value_name = "FILE",
        value_delimiter = ',',
        env = "SNAPCONF_BACKEND"
    )]
    pub backends: Vec<PathBuf>,
    /// Directory for `report.json`, `summary.md` and `cases/` (default: a new
    /// `reports/runs/<run-id>`). It must be new, empty, or hold only an earlier snapconf
    /// report, which is replaced; anything else (a symlink too) is refused (exit 2) before
    /// the first case
    #[arg(long, env = "SNAPCONF_REPORT_DIR")]
    pub report_dir: Option<PathBuf>,
    /// Timeout for each capture and each hydration, in seconds (at least 1)
    #[arg(long, default_value_t = 20, env = "SNAPCONF_TIMEOUT",
          value_parser = clap::value_parser!(u64).range(1..))]
    pub timeout: u64,
    /// Where jails are created (default: /dev/shm when writable, else the temp dir)
    #[arg(long, env = "SNAPCONF_JAIL_DIR")]
    pub jail_dir: Option<PathBuf>,
    /// Baseline of known causes (JSON, written by `snapconf baseline update`): findings of
    /// known causes are reported but do not fail the run, whatever the seed or pairs
    #[arg(long, env = "SNAPCONF_BASELINE")]
    pub baseline: Option<PathBuf>,
    /// Workers running cases and shrinks at once, each with jails of its own (default: the
    /// cores this process may use). The report is the same for every value
    #[arg(short = 'j', long, env = "SNAPCONF_JOBS", value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub jobs: Option<u32>,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// Number of cases to generate
    #[arg(long, default_value_t = 100, env = "SNAPCONF_CASES")]
    pub cases: u64,
    /// Seed of the run (default: drawn from the clock and printed)
    #[arg(long, env = "SNAPCONF_SEED")]
    pub seed: Option<u64>,
    #[command(flatten)]
    pub shrink: ShrinkArgs,
    /// Run only shard K of N (`K/N`, 1-based): case indices i with i % N == K-1, so N CI
    /// jobs with the same --seed and --cases together run the whole set, each case once
    #[arg(long, env = "SNAPCONF_SHARD")]
    pub shard: Option<String>,
    /// Faults to inject into every hydration over a prior workspace, comma-separated:
    /// truncate, corrupt, efbig, enospc, kill, or all (default: none)
    #[arg(long, value_delimiter = ',', env = "SNAPCONF_FAULTS")]
    pub faults: Vec<String>,
    #[command(flatten)]
    pub pairs: PairArgs,
    #[command(flatten)]
    pub output: OutputArgs,
}

/// What a command that runs cases prints, and how (`run`, `audit`, `lifecycle`, `fuzz`):
/// cargo's and cargo-nextest's conventions.
#[derive(Debug, Args)]
pub struct OutputArgs {
    /// No progress and no notes on stderr: only the final summary and errors (not with -v)
    #[arg(short, long, env = "SNAPCONF_QUIET",
          value_parser = clap::builder::FalseyValueParser::new())]
    pub quiet: bool,
    /// Also a line on stderr for each finding as it is found and each shrink
    #[arg(short, long, env = "SNAPCONF_VERBOSE",
          value_parser = clap::builder::FalseyValueParser::new())]
    pub verbose: bool,
    /// Colour the terminal output: auto (when the stream is a terminal, `TERM` is not
    /// `dumb` and `NO_COLOR` is unset or empty; `CLICOLOR_FORCE` forces it), always, never.
    /// Report files are never coloured
    #[arg(long, value_enum, default_value_t = ColorWhen::Auto, value_name = "WHEN",
          env = "SNAPCONF_COLOR")]
    pub color: ColorWhen,
    /// Form of stdout: human (the summary) or json (one JSON event per line, see
    /// docs/events.md; progress stays on stderr)
    #[arg(long, value_enum, default_value_t = MessageFormatArg::Human, value_name = "FMT",
          env = "SNAPCONF_MESSAGE_FORMAT")]
    pub message_format: MessageFormatArg,
    /// Seconds between plain progress lines (stderr not a terminal, or `TERM=dumb`); 0
    /// prints one per event
    #[arg(
        long,
        default_value_t = 5,
        env = "SNAPCONF_PROGRESS_EVERY",
        hide = true
    )]
    pub progress_every: u64,
}

/// `--color`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ColorWhen {
    Auto,
    Always,
    Never,
}

/// `--message-format`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum MessageFormatArg {
    Human,
    Json,
}

/// How long shrinking may take (`run` and `audit`).
#[derive(Debug, Args)]
pub struct ShrinkArgs {
    /// Most candidate cases tried when shrinking one finding
    #[arg(long, default_value_t = 400, env = "SNAPCONF_SHRINK_STEPS")]
    pub shrink_steps: u32,
    /// Most seconds spent shrinking one finding (a bound for a slow or loaded machine; a
    /// shrink normally ends before, when nothing smaller reproduces)
    #[arg(long, default_value_t = 120, env = "SNAPCONF_SHRINK_TIME")]
    pub shrink_time: u64,
    /// Most wall seconds the whole shrink phase takes (on all -j workers); findings whose
    /// turn comes later are written unshrunk
    #[arg(long, default_value_t = 600, env = "SNAPCONF_SHRINK_TOTAL")]
    pub shrink_total: u64,
}

#[derive(Debug, Args)]
pub struct AuditArgs {
    /// The directory to audit (read only; it is copied into a jail)
    pub dir: PathBuf,
    /// A root-relative path to exclude (repeatable)
    #[arg(long)]
    pub exclude: Vec<String>,
    #[command(flatten)]
    pub shrink: ShrinkArgs,
    #[command(flatten)]
    pub pairs: PairArgs,
    #[command(flatten)]
    pub output: OutputArgs,
}

#[derive(Debug, Args)]
pub struct ListArgs {
    /// Also list the producer and extractor of this backend description (repeatable)
    #[arg(
        long = "backend",
        value_name = "FILE",
        value_delimiter = ',',
        env = "SNAPCONF_BACKEND"
    )]
    pub backends: Vec<PathBuf>,
}

#[derive(Debug, Args)]
pub struct ReplayArgs {
    /// A reproducer directory written by `run` or `audit`
    pub case_dir: PathBuf,
    /// The backend description(s) a reproducer of a `--backend` run needs (repeatable)
    #[arg(
        long = "backend",
        value_name = "FILE",
        value_delimiter = ',',
        env = "SNAPCONF_BACKEND"
    )]
    pub backends: Vec<PathBuf>,
}

/// The reference extractor's policy knobs (values: [`super::policy_flags`]; defaults: the
/// extractor's `Policy::default()`, the one set of defaults, which is the hydration policy
/// of the default profile: `model::policy_map::hydration_policy`).
#[derive(Debug, Args)]
pub struct PolicyArgs {
    /// Hardlink members: reject | copy | link (profile key `hardlinks`: copy,
    /// refuse-at-capture, refuse-excluded-alias → copy; preserve → link)
    #[arg(
        long,
        value_enum,
        default_value_t = rx::Hardlinks::default().into(),
        hide_possible_values = true
    )]
    pub hardlinks: HardlinksFlag,
    /// Absolute symlinks: reject | keep | rebase | drop (profile key `absolute-symlinks`:
    /// keep → keep, rebase-inside-root → rebase, drop → drop, refuse-at-capture → reject)
    #[arg(
        long,
        value_enum,
        default_value_t = rx::AbsoluteSymlinks::default().into(),
        hide_possible_values = true
    )]
    pub absolute_symlinks: AbsoluteSymlinksFlag,
    /// Relative symlinks leaving the root: reject | keep (profile key `escaping-symlinks`:
    /// keep → keep, refuse-at-capture → reject)
    #[arg(
        long,
        value_enum,
        default_value_t = rx::EscapingSymlinks::default().into(),
        hide_possible_values = true
    )]
    pub escaping_symlinks: EscapingSymlinksFlag,
    /// FIFO and device members: reject | drop (profile key `special-files`: drop → drop,
    /// refuse-at-capture → reject)
    #[arg(
        long,
        value_enum,
        default_value_t = rx::SpecialFiles::default().into(),
        hide_possible_values = true
    )]
    pub special_files: SpecialFilesFlag,
    /// Two members of one name: reject | last-wins (no profile key: a capture never names a
    /// path twice)
    #[arg(
        long,
        value_enum,
        default_value_t = rx::Duplicates::default().into(),
        hide_possible_values = true
    )]
    pub duplicates: DuplicatesFlag,
    /// Permission bits: exact | data-filter (profile key `modes`: exact → exact; exec-bit,
    /// data-filter, ignore → data-filter, which keeps the owner's execute bit)
    #[arg(
        long,
        value_enum,
        default_value_t = rx::Modes::default().into(),
        hide_possible_values = true
    )]
    pub modes: ModesFlag,
    /// The root the archive was captured from (for `--absolute-symlinks rebase`)
    #[arg(long)]
    pub original_root: Option<PathBuf>,
    /// Accept an archive with no member, which empties the root (refused by default as
    /// `empty-archive`: a cut-off or zero-filled upload looks the same)
    #[arg(long)]
    pub allow_empty: bool,
    /// Most bytes a compressed archive (gzip, zstd, xz) may decompress to; over it the
    /// archive is refused as `decompression-limit`
    #[arg(long, value_name = "BYTES", default_value_t = rx::Limits::default().decompressed_bytes)]
    pub max_decompressed_bytes: u64,
    /// Most decompressed bytes per compressed byte, judged once 1 MiB has come out; over it
    /// the archive is refused as `decompression-limit` (a decompression bomb)
    #[arg(long, value_name = "RATIO", default_value_t = rx::Limits::default().compression_ratio)]
    pub max_compression_ratio: u64,
}

#[derive(Debug, Args)]
pub struct HydrateArgs {
    /// The archive (`-` for stdin)
    pub archive: PathBuf,
    /// The workspace root to replace
    pub root: PathBuf,
    #[command(flatten)]
    pub policy: PolicyArgs,
}

#[derive(Debug, Args)]
pub struct RecoverArgs {
    /// The workspace root whose dead hydrations' leftovers are removed (ROOT itself is
    /// never modified; it need not exist)
    pub root: PathBuf,
}

#[derive(Debug, Args)]
pub struct ServeHydrateArgs {
    #[command(flatten)]
    pub policy: PolicyArgs,
}

#[derive(Debug, Args)]
pub struct CheckArchiveArgs {
    /// The archive (`-` for stdin)
    pub file: PathBuf,
    /// List the archive with every available parser (reference, tar crate, GNU tar,
    /// bsdtar, BusyBox, Python tarfile) and report each disagreement (exit 1); a tool that
    /// stops at a known limit of its own is reported as "limit of TOOL", not counted
    #[arg(long)]
    pub all_parsers: bool,
    #[command(flatten)]
    pub policy: PolicyArgs,
}
