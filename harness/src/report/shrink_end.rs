//! [`ShrinkEnd`]: how the shrink of a finding ended, a field of every finding a report holds.

/// Why a shrink ended (`report.json`'s `shrink` field of a finding).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ShrinkEnd {
    /// Nothing simpler that the shrinker tries still fails: a local minimum.
    Minimal,
    /// The candidate budget (`--shrink-steps`) ran out first.
    Steps,
    /// The time budget (`--shrink-time`, or what `--shrink-total` had left) ran out first.
    Time,
    /// The run was stopped (Ctrl-C) while shrinking.
    Interrupted,
    /// Not shrunk: the run's `--shrink-total` was spent before this finding's turn, so it
    /// is written as found.
    TotalSpent,
    /// Not shrunk: a finding read from a report written before this field existed, or a
    /// fuzz `hang` whose shrunk archive did not hang again at the full timeout (the archive
    /// found is kept).
    #[default]
    NotShrunk,
}

impl ShrinkEnd {
    /// How a report states the size of a finding's case of `entries` W1 entries and how its
    /// shrink ended: `shrunk to 2 entries`, `shrunk to 5 entries, time budget ran out`,
    /// `34 entries, not shrunk: the run's --shrink-total was spent`.
    pub fn describe(self, entries: usize) -> String {
        let n = format!(
            "{entries} {}",
            if entries == 1 { "entry" } else { "entries" }
        );
        match self {
            ShrinkEnd::Minimal => format!("shrunk to {n}"),
            ShrinkEnd::Steps => format!("shrunk to {n}, step budget ran out"),
            ShrinkEnd::Time => format!("shrunk to {n}, time budget ran out"),
            ShrinkEnd::Interrupted => format!("shrunk to {n}, interrupted"),
            ShrinkEnd::TotalSpent => {
                format!("{n}, not shrunk: the run's --shrink-total was spent")
            }
            ShrinkEnd::NotShrunk => format!("{n}, not shrunk"),
        }
    }
}
