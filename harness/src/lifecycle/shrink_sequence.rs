//! Shrinking a failing sequence: fewer turns, fewer restores and edits, then a smaller
//! initial workspace (the run's own shrinker, [`minimise_tree`], over it), repeated until
//! nothing more goes. Every candidate is a valid sequence: edits and restores name what
//! they act on by number, modulo what exists, so dropping any of them leaves the rest
//! applicable.

use crate::engine::shrink::{minimise_tree, Names, ShrinkBudget};
use crate::gen::Sequence;
use crate::model::spec::Case;
use crate::report::ShrinkEnd;
use std::time::Instant;

/// What a shrink of a sequence found: the smallest failing sequence, how many candidates
/// were tried and why it ended.
#[derive(Clone, Debug)]
pub struct ShrunkSequence {
    /// The smallest failing sequence found.
    pub sequence: Sequence,
    /// Candidate sequences tried.
    pub tried: u32,
    /// Why the shrink ended.
    pub end: ShrinkEnd,
}

/// Shrink `seq`, keeping each candidate for which `fails` holds, within `budget`
/// (candidates and wall time over every pass).
///
/// # Errors
/// The first `Err` of `fails` (a fault of snapconf while running a candidate).
pub fn shrink_sequence<E>(
    seq: Sequence,
    mut fails: impl FnMut(&Sequence) -> Result<bool, E>,
    budget: ShrinkBudget,
) -> Result<ShrunkSequence, E> {
    let start = Instant::now();
    let mut best = seq;
    let mut tried = 0u32;
    let spent = |tried: u32| tried >= budget.steps || start.elapsed() >= budget.time;
    loop {
        let mut changed = false;
        let mut candidates: Vec<Sequence> = Vec::new();
        // Whole turns, last first; the first turn stays.
        for i in (1..best.turns.len()).rev() {
            let mut c = best.clone();
            c.turns.remove(i);
            candidates.push(c);
        }
        if best.turns.len() > 1 {
            // The first turn goes too, with the second's edits taken by the initial
            // workspace (they applied to it anyway).
            let mut c = best.clone();
            c.turns.remove(0);
            candidates.push(c);
        }
        for (t, turn) in best.turns.iter().enumerate() {
            for i in (0..turn.restores.len()).rev() {
                let mut c = best.clone();
                c.turns[t].restores.remove(i);
                candidates.push(c);
            }
            for i in (0..turn.edits.len()).rev() {
                let mut c = best.clone();
                c.turns[t].edits.remove(i);
                candidates.push(c);
            }
            for (i, r) in turn.restores.iter().enumerate() {
                if r.back > 0 {
                    let mut c = best.clone();
                    c.turns[t].restores[i].back = 0;
                    candidates.push(c);
                }
            }
        }
        for c in candidates {
            if spent(tried) {
                return Ok(end(best, tried, budget, start));
            }
            // A candidate of an earlier pass may no longer fit what was kept since.
            if weight(&c) >= weight(&best) {
                continue;
            }
            tried += 1;
            if fails(&c)? {
                best = c;
                changed = true;
                break;
            }
        }
        if changed {
            continue;
        }
        // The initial workspace, with the run's shrinker.
        let rest = ShrinkBudget {
            steps: budget.steps.saturating_sub(tried),
            time: budget.time.saturating_sub(start.elapsed()),
        };
        let before = best.initial.clone();
        let turns = best.turns.clone();
        let shrunk = minimise_tree(
            Case {
                spec: before.clone(),
                prior: Default::default(),
            },
            |c: &Case| {
                fails(&Sequence {
                    initial: c.spec.clone(),
                    turns: turns.clone(),
                })
            },
            rest,
            Names::Shorten,
        )?;
        tried += shrunk.tried;
        best.initial = shrunk.case.spec;
        if shrunk.end != ShrinkEnd::Minimal {
            return Ok(ShrunkSequence {
                sequence: best,
                tried,
                end: shrunk.end,
            });
        }
        if best.initial == before {
            return Ok(ShrunkSequence {
                sequence: best,
                tried,
                end: ShrinkEnd::Minimal,
            });
        }
    }
}

/// What a candidate must make smaller: the size, then how far back the restores reach.
fn weight(s: &Sequence) -> (usize, usize) {
    let back = s
        .turns
        .iter()
        .flat_map(|t| &t.restores)
        .map(|r| usize::from(r.back))
        .sum();
    (s.size(), back)
}

fn end(sequence: Sequence, tried: u32, budget: ShrinkBudget, start: Instant) -> ShrunkSequence {
    let end = if tried >= budget.steps {
        ShrinkEnd::Steps
    } else if start.elapsed() >= budget.time {
        ShrinkEnd::Time
    } else {
        ShrinkEnd::Minimal
    };
    ShrunkSequence {
        sequence,
        tried,
        end,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gen::Edit;
    use crate::gen::{Restore, Turn};
    use crate::model::bytes::RawBytes;

    /// A predicate that needs one Modify edit somewhere and a warm restore after it keeps
    /// exactly those, in two turns, with an empty initial workspace.
    #[test]
    fn shrinks_to_the_turns_and_edits_the_failure_needs() {
        let modify = Edit::Modify {
            file: 0,
            content: RawBytes(b"x".to_vec()),
        };
        let create = Edit::Create {
            dir: 0,
            name: 0,
            content: RawBytes(b"y".to_vec()),
        };
        let warm = Restore {
            back: 2,
            warm: true,
        };
        let turn = |edits: Vec<Edit>, restores: Vec<Restore>| Turn { edits, restores };
        let seq = Sequence {
            initial: Default::default(),
            turns: vec![
                turn(
                    vec![],
                    vec![
                        warm,
                        Restore {
                            back: 0,
                            warm: false,
                        },
                    ],
                ),
                turn(vec![create.clone(), modify.clone()], vec![]),
                turn(vec![create.clone()], vec![warm]),
                turn(vec![create], vec![warm]),
            ],
        };
        let fails = |s: &Sequence| -> Result<bool, ()> {
            let at = s.turns.iter().position(|t| t.edits.contains(&modify));
            Ok(at.is_some_and(|i| {
                s.turns[i + 1..]
                    .iter()
                    .any(|t| t.restores.iter().any(|r| r.warm))
            }))
        };
        let out = shrink_sequence(seq, fails, ShrinkBudget::default()).expect("shrink");
        assert_eq!(out.end, ShrinkEnd::Minimal);
        assert_eq!(out.sequence.turns.len(), 2, "{:?}", out.sequence);
        assert_eq!(out.sequence.edits(), 1);
        let restores: Vec<Restore> = out
            .sequence
            .turns
            .iter()
            .flat_map(|t| t.restores.clone())
            .collect();
        assert_eq!(
            restores,
            [Restore {
                back: 0,
                warm: true
            }]
        );
    }
}
