//! [`Sequence`]: one session of turns, replayable from its JSON (`sequence.json`), and
//! [`draw_sequence`], which draws the sequences of a lifecycle run.

use crate::gen::{draw_edit, spec_strategy, Edit, GenConfig};
use crate::model::spec::WorkspaceSpec;
use proptest::strategy::{Strategy, ValueTree};
use serde::{Deserialize, Serialize};
use snapconf_tarbytes::Rng;

/// A session: the initial workspace (a generated W1, with its exclusions) and the turns
/// that follow, each through the same backend instance.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Sequence {
    /// The workspace before the first turn's edits.
    pub initial: WorkspaceSpec,
    /// The turns, at least one.
    pub turns: Vec<Turn>,
}

/// One turn: the edits the agent makes, then a capture (the turn's checkpoint), then the
/// restores asked for.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Turn {
    /// Applied in order to the workspace the turn starts from.
    #[serde(default)]
    pub edits: Vec<Edit>,
    /// Restores after the turn's capture, in order.
    #[serde(default)]
    pub restores: Vec<Restore>,
}

/// A restore of an accepted checkpoint.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Restore {
    /// Which checkpoint: 0 is the newest accepted one, 1 the one before, ... (modulo the
    /// number accepted so far).
    pub back: u8,
    /// Over the live workspace (`true`) or into an empty root (`false`).
    pub warm: bool,
}

impl Sequence {
    /// Every edit of every turn.
    pub fn edits(&self) -> usize {
        self.turns.iter().map(|t| t.edits.len()).sum()
    }

    /// The size a shrink makes smaller: turns, edits, restores, and the initial
    /// workspace's entries and exclusions.
    pub fn size(&self) -> usize {
        self.turns.len()
            + self.edits()
            + self.turns.iter().map(|t| t.restores.len()).sum::<usize>()
            + crate::gen::spec_size(&self.initial)
    }
}

/// Sequence `index` of a lifecycle run with `seed`: the initial workspace is drawn as a
/// case's W1 of the same seed and index is (the same generator and `GenConfig`), then
/// 1..=`max_turns` turns from the harness's [`Rng`] seeded from `(seed, index)`. The first
/// turn has no edits (its checkpoint is the initial workspace); each later one 1–3. Each
/// turn asks for 0–2 restores, two thirds of them warm, of the newest, the previous or the
/// one before that checkpoint.
///
/// # Errors
/// The generator cannot draw a workspace (a message naming the index).
pub fn draw_sequence(
    cfg: &GenConfig,
    seed: u64,
    index: u64,
    max_turns: usize,
) -> Result<Sequence, String> {
    let mut runner = crate::gen::case_runner(seed, index);
    let initial = spec_strategy(cfg)
        .new_tree(&mut runner)
        .map_err(|e| format!("cannot draw sequence {index}: {e}"))?
        .current();
    let mut rng = Rng::new(seed ^ index.rotate_left(32) ^ 0x5e55_10c1_f0c1_e000);
    let turns = 1 + rng.below(max_turns.max(1));
    let turns = (0..turns)
        .map(|t| {
            let edits = if t == 0 { 0 } else { 1 + rng.below(3) };
            Turn {
                edits: (0..edits).map(|_| draw_edit(&mut rng)).collect(),
                restores: (0..rng.below(3))
                    .map(|_| Restore {
                        back: rng.below(3) as u8,
                        warm: rng.below(3) != 0,
                    })
                    .collect(),
            }
        })
        .collect();
    Ok(Sequence { initial, turns })
}
