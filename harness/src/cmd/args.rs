//! Command-line arguments (clap). Every knob also has a `SNAPCONF_*` environment variable.

use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

/// snapconf: a conformance suite for workspace snapshots (tar capture and hydration).
///
/// Exit codes: 0 every pair conforms (replay: fixed; hydrate/check-archive: accepted),
/// 1 findings (replay: reproduces; hydrate/check-archive: refused, root untouched),
/// 2 bad usage or configuration, 3 nothing ran or internal error.
#[derive(Debug, Parser)]
#[command(name = "snapconf", version, about, long_about = None)]
pub struct Cli {
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
    /// List the built-in adapters with their versions or why they are unavailable
    List,
    /// Hydrate ARCHIVE into ROOT with the reference extractor (atomic: all or nothing)
    Hydrate(HydrateArgs),
    /// Validate an archive with the reference extractor; print the verdict and listing as JSON
    CheckArchive(CheckArchiveArgs),
    /// Manage the baseline of known findings
    #[command(subcommand)]
    Baseline(BaselineCommand),
}

#[derive(Debug, Subcommand)]
pub enum BaselineCommand {
    /// Write a baseline that makes every finding of a run known (notes of kept entries stay)
    Update(BaselineUpdateArgs),
}

#[derive(Debug, Args)]
pub struct BaselineUpdateArgs {
    /// The report directory of a run (holding report.json)
    #[arg(long)]
    pub report: PathBuf,
    /// The baseline file to write
    #[arg(long, default_value = "reports/baseline/baseline.json")]
    pub out: PathBuf,
}

/// Which pairs and which profile.
#[derive(Debug, Args)]
pub struct PairArgs {
    /// Producers to run, comma-separated (default: every available built-in)
    #[arg(long, value_delimiter = ',', env = "SNAPCONF_PRODUCERS")]
    pub producers: Vec<String>,
    /// Extractors to run, comma-separated (default: every available built-in)
    #[arg(long, value_delimiter = ',', env = "SNAPCONF_EXTRACTORS")]
    pub extractors: Vec<String>,
    /// Profile: `default` or a path to a TOML file
    #[arg(long, default_value = "default", env = "SNAPCONF_PROFILE")]
    pub profile: String,
    /// Directory for report.json, summary.md and cases/ (default: reports/runs/<run-id>)
    #[arg(long, env = "SNAPCONF_REPORT_DIR")]
    pub report_dir: Option<PathBuf>,
    /// Timeout for each capture and each hydration, in seconds
    #[arg(long, default_value_t = 20, env = "SNAPCONF_TIMEOUT")]
    pub timeout: u64,
    /// Where jails are created (default: /dev/shm when writable, else the temp dir)
    #[arg(long, env = "SNAPCONF_JAIL_DIR")]
    pub jail_dir: Option<PathBuf>,
    /// Baseline of known findings (JSON, written by `snapconf baseline update`): known
    /// findings are reported but do not fail the run
    #[arg(long, env = "SNAPCONF_BASELINE")]
    pub baseline: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// Number of cases to generate
    #[arg(long, default_value_t = 100, env = "SNAPCONF_CASES")]
    pub cases: u64,
    /// Seed of the run (default: drawn from the clock and printed)
    #[arg(long, env = "SNAPCONF_SEED")]
    pub seed: Option<u64>,
    /// Most candidate cases tried when shrinking one finding
    #[arg(long, default_value_t = 400, env = "SNAPCONF_SHRINK_STEPS")]
    pub shrink_steps: u32,
    /// Faults to inject into every hydration over a prior workspace, comma-separated:
    /// truncate, corrupt, efbig, enospc, kill, or all (default: none)
    #[arg(long, value_delimiter = ',', env = "SNAPCONF_FAULTS")]
    pub faults: Vec<String>,
    #[command(flatten)]
    pub pairs: PairArgs,
}

#[derive(Debug, Args)]
pub struct AuditArgs {
    /// The directory to audit (read only; it is copied into a jail)
    pub dir: PathBuf,
    /// A root-relative path to exclude (repeatable)
    #[arg(long)]
    pub exclude: Vec<String>,
    #[command(flatten)]
    pub pairs: PairArgs,
}

#[derive(Debug, Args)]
pub struct ReplayArgs {
    /// A reproducer directory written by `run` or `audit`
    pub case_dir: PathBuf,
}

/// The reference extractor's policy knobs.
#[derive(Debug, Args)]
pub struct PolicyArgs {
    /// Hardlink members: reject | copy | link
    #[arg(long, default_value = "reject")]
    pub hardlinks: String,
    /// Absolute symlinks: reject | keep | rebase | drop
    #[arg(long, default_value = "keep")]
    pub absolute_symlinks: String,
    /// Relative symlinks leaving the root: reject | keep
    #[arg(long, default_value = "keep")]
    pub escaping_symlinks: String,
    /// FIFO and device members: reject | drop
    #[arg(long, default_value = "drop")]
    pub special_files: String,
    /// Two members of one name: reject | last-wins
    #[arg(long, default_value = "reject")]
    pub duplicates: String,
    /// Permission bits: exact | data-filter
    #[arg(long, default_value = "data-filter")]
    pub modes: String,
    /// The root the archive was captured from (for `--absolute-symlinks rebase`)
    #[arg(long)]
    pub original_root: Option<PathBuf>,
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
pub struct CheckArchiveArgs {
    /// The archive (`-` for stdin)
    pub file: PathBuf,
    #[command(flatten)]
    pub policy: PolicyArgs,
}
