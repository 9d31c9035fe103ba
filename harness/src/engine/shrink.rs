//! Shrinking a failing case, and the budgets of a shrink.
//!
//! Each case `i` of a run is drawn from its own RNG, seeded from `(seed, i)`, so it can be
//! drawn again at any time ([`crate::gen::draw_case`]). A failing case, generated or a real
//! tree, is shrunk by [`minimise_tree`]: runs of entries removed (delta debugging), then the greedy
//! [`minimise`] polish, keeping each candidate that still fails.

use crate::model::spec::Case;
use crate::report::ShrinkEnd;
use std::time::{Duration, Instant};

/// Limits on one shrink.
#[derive(Clone, Copy, Debug)]
pub struct ShrinkBudget {
    /// Most candidate cases to try.
    pub steps: u32,
    /// Most wall time to spend.
    pub time: Duration,
}

impl Default for ShrinkBudget {
    fn default() -> Self {
        ShrinkBudget {
            steps: 400,
            time: Duration::from_secs(60),
        }
    }
}

/// What a shrink found: the smallest failing case, how many candidates were tried and why
/// it ended.
#[derive(Clone, Debug)]
pub struct Shrunk {
    /// The smallest failing case found.
    pub case: Case,
    /// Candidate cases tried.
    pub tried: u32,
    /// Why the shrink ended.
    pub end: ShrinkEnd,
}

/// Which budget, if any, `budget` no longer allows another candidate under, `tried`
/// candidates and `start` into a shrink.
fn spent(budget: ShrinkBudget, tried: u32, start: Instant) -> Option<ShrinkEnd> {
    if tried >= budget.steps {
        Some(ShrinkEnd::Steps)
    } else if start.elapsed() >= budget.time {
        Some(ShrinkEnd::Time)
    } else {
        None
    }
}

/// Shrinking a case, generated or a real directory's (`snapconf audit`): remove runs of W1
/// entries, halving the run length from half the entries down to one (delta
/// debugging, Zeller and Hildebrandt 2002), keeping each removal that leaves a valid case
/// that still fails; then [`minimise`] polishes. A removal takes along the entries that
/// need a removed one (another name of a removed inode), and a directory removed while
/// its children stay is created implicitly, so every candidate is a real workspace. A
/// single culprit among `n` entries is found in about `2·log2(n)` runs.
///
/// # Errors
/// The first `Err` of `fails`, as for [`minimise`].
pub fn minimise_tree<E>(
    case: Case,
    mut fails: impl FnMut(&Case) -> Result<bool, E>,
    budget: ShrinkBudget,
    names: Names,
) -> Result<Shrunk, E> {
    let start = Instant::now();
    let mut tried = 0;
    let mut stopped = None;
    let case = remove_runs(
        case,
        |c| c.spec.entries.len(),
        |c, i, n| {
            let w = without_entries(c, i, n);
            (w.spec.entries.len() != c.spec.entries.len() && w.spec.check().is_ok()).then_some(w)
        },
        2,
        |c| {
            if let Some(end) = spent(budget, tried, start) {
                stopped = Some(end);
                return Ok(None);
            }
            tried += 1;
            fails(c).map(Some)
        },
    )?;
    if let Some(end) = stopped {
        return Ok(Shrunk { case, tried, end });
    }
    let rest = ShrinkBudget {
        time: budget.time.saturating_sub(start.elapsed()),
        steps: budget.steps.saturating_sub(tried),
    };
    let polished = minimise(case, fails, rest, names)?;
    Ok(Shrunk {
        tried: tried + polished.tried,
        ..polished
    })
}

/// Delta debugging (Zeller and Hildebrandt 2002) over anything made of `len(state)` parts:
/// for run lengths from half the parts (all of a single part) down to `smallest`, halving,
/// offer `state` without parts `i..i + n` (`without`, `None` when that is no candidate:
/// nothing removed, or not valid) to `test`, left to right, and keep each candidate `test`
/// says still fails (`Ok(Some(true))`). `test` returns `Ok(None)` when its budget allows no
/// more runs: the smallest failing state so far is returned then. A single culprit among `n` parts is
/// found in about `2·log2(n)` runs. Shared by the run's shrink ([`minimise_tree`], parts =
/// W1 entries) and the fuzzer's (parts = archive members).
///
/// # Errors
/// The first `Err` of `test`.
pub fn remove_runs<S, E>(
    mut state: S,
    len: impl Fn(&S) -> usize,
    without: impl Fn(&S, usize, usize) -> Option<S>,
    smallest: usize,
    mut test: impl FnMut(&S) -> Result<Option<bool>, E>,
) -> Result<S, E> {
    let smallest = smallest.max(1);
    // Half the parts first; a state of one part offers that part too when single parts
    // may go (`smallest` 1).
    let mut run = (len(&state) / 2).max(if smallest == 1 { len(&state).min(1) } else { 0 });
    while run >= smallest {
        let mut i = 0;
        while i < len(&state) {
            let Some(c) = without(&state, i, run) else {
                i += run;
                continue;
            };
            match test(&c)? {
                None => return Ok(state),
                Some(true) => state = c,
                Some(false) => i += run,
            }
        }
        run /= 2;
    }
    Ok(state)
}

/// `case` without W1 entries `i..i + n`, and without every entry that is another name of
/// a removed inode.
fn without_entries(case: &Case, i: usize, n: usize) -> Case {
    use crate::model::spec::EntryKind;
    let mut c = case.clone();
    let end = (i + n).min(c.spec.entries.len());
    let mut gone: std::collections::BTreeSet<crate::model::bytes::RelPath> = c.spec.entries[i..end]
        .iter()
        .map(|e| e.path.clone())
        .collect();
    c.spec.entries.drain(i..end);
    // Hardlinks name earlier entries, so one pass in order catches chains.
    c.spec.entries.retain(|e| match &e.kind {
        EntryKind::Hardlink { target } if gone.contains(target) => {
            gone.insert(e.path.clone());
            false
        }
        _ => true,
    });
    c
}

/// Whether a shrink may rename entries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Names {
    /// Shorten names to one letter where the finding stays (generated cases: their names
    /// are the generator's).
    Shorten,
    /// Keep every name (a real tree, `snapconf audit`: its names are the user's culprits).
    Keep,
}

/// Most candidates [`simplest_with`] tries: a stratified case of the default config
/// reaches its minimum in far fewer, and the shape check of one candidate takes
/// microseconds.
pub const STRATUM_STEPS: u32 = 4000;

/// The simplest case [`minimise_tree`] reaches from `case` that still has every shape of
/// `shapes` ([`crate::gen::has_shapes`]): a stratified opening case of `run`
/// ([`crate::gen::Strata`]) stripped of whatever else its draw held, so that the case
/// shows its stratum's behaviour and no other one in front of it (a cell keeps its first
/// finding). A pure function of `case` and `shapes`: the budget is [`STRATUM_STEPS`]
/// candidates, never time. Returns `case` as it is when it lacks the shapes.
pub fn simplest_with(case: Case, shapes: &[&str]) -> Case {
    if !crate::gen::has_shapes(&case, shapes) {
        return case;
    }
    let budget = ShrinkBudget {
        steps: STRATUM_STEPS,
        time: Duration::MAX,
    };
    let has = |c: &Case| Ok::<_, std::convert::Infallible>(crate::gen::has_shapes(c, shapes));
    match minimise_tree(case, has, budget, Names::Shorten) {
        Ok(shrunk) => shrunk.case,
        Err(never) => match never {},
    }
}

/// Greedy polish after the removal of runs ([`minimise_tree`]): drop single W1 entries,
/// exclusions and prior entries, then empty file contents, reset modes, make hardlinks
/// plain files and shorten names
/// to one letter, keeping each change that leaves a valid case
/// (`WorkspaceSpec::check`) that still fails; repeat until nothing more goes.
///
/// # Errors
/// The first `Err` of `fails` (a harness fault while running a candidate, not "does not
/// reproduce"): the shrink stops there and says why.
pub fn minimise<E>(
    case: Case,
    fails: impl FnMut(&Case) -> Result<bool, E>,
    budget: ShrinkBudget,
    names: Names,
) -> Result<Shrunk, E> {
    let mut p = Polish {
        case,
        fails,
        budget,
        start: Instant::now(),
        tried: 0,
        changed: false,
    };
    loop {
        p.changed = false;
        // Removals, last first so that earlier entries keep their referents.
        for which in 0..3 {
            let len = match which {
                0 => p.case.spec.entries.len(),
                1 => p.case.spec.exclusions.len(),
                _ => p.case.prior.entries.len(),
            };
            for i in (0..len).rev() {
                let mut c = p.case.clone();
                match which {
                    0 if i < c.spec.entries.len() => {
                        c.spec.entries.remove(i);
                    }
                    1 if i < c.spec.exclusions.len() => {
                        c.spec.exclusions.remove(i);
                    }
                    2 if i < c.prior.entries.len() => {
                        c.prior.entries.remove(i);
                    }
                    _ => continue,
                }
                if let Some(end) = p.offer(c)? {
                    return Ok(p.end(end));
                }
            }
        }
        // Simplifications: empty contents, default modes.
        for i in 0..p.case.spec.entries.len() {
            let mut c = p.case.clone();
            let e = &mut c.spec.entries[i];
            let mut simpler = false;
            if let crate::model::spec::EntryKind::File { content } = &mut e.kind {
                if !content.0.is_empty() {
                    content.0.clear();
                    simpler = true;
                }
            }
            if e.mode.is_some() && !simpler {
                e.mode = None;
                simpler = true;
            }
            if !simpler {
                continue;
            }
            if let Some(end) = p.offer(c)? {
                return Ok(p.end(end));
            }
        }
        // Second names made files of their own: a hardlink that is not needed as one (an
        // excluded alias where any excluded file does) leaves the shrunk case, so its
        // trigger is the plainer feature.
        for i in 0..p.case.spec.entries.len() {
            let mut c = p.case.clone();
            let e = &mut c.spec.entries[i];
            if !matches!(e.kind, crate::model::spec::EntryKind::Hardlink { .. }) {
                continue;
            }
            e.kind = crate::model::spec::EntryKind::File {
                content: Default::default(),
            };
            if let Some(end) = p.offer(c)? {
                return Ok(p.end(end));
            }
        }
        // Short names: each entry renamed to the first free one-letter name in its
        // directory, its children, other names and exclusions along.
        let rename = if names == Names::Shorten {
            p.case.spec.entries.len()
        } else {
            0
        };
        for i in 0..rename {
            let Some(c) = renamed_short(&p.case, i) else {
                continue;
            };
            if let Some(end) = p.offer(c)? {
                return Ok(p.end(end));
            }
        }
        if !p.changed {
            return Ok(p.end(ShrinkEnd::Minimal));
        }
    }
}

/// The state of one [`minimise`]: the smallest failing case so far and what it cost.
struct Polish<F> {
    case: Case,
    fails: F,
    budget: ShrinkBudget,
    start: Instant,
    tried: u32,
    /// Whether this round kept a candidate.
    changed: bool,
}

impl<F> Polish<F> {
    /// Tries candidate `c`: skipped if it is not a valid case, kept if it still fails.
    /// `Some(end)` when a budget allows no more candidates (`c` is not tried then).
    fn offer<E>(&mut self, c: Case) -> Result<Option<ShrinkEnd>, E>
    where
        F: FnMut(&Case) -> Result<bool, E>,
    {
        if c.spec.check().is_err() || c.prior.check().is_err() {
            return Ok(None);
        }
        if let Some(end) = spent(self.budget, self.tried, self.start) {
            return Ok(Some(end));
        }
        self.tried += 1;
        if (self.fails)(&c)? {
            self.case = c;
            self.changed = true;
        }
        Ok(None)
    }

    /// The shrink's result, ended by `end`.
    fn end(self, end: ShrinkEnd) -> Shrunk {
        Shrunk {
            case: self.case,
            tried: self.tried,
            end,
        }
    }
}

/// `case` with W1 entry `i` renamed to the first one-letter name (`a` to `z`) not taken in
/// its directory, and every path under it, hardlink target naming it and exclusion of it
/// renamed along; `None` when its name is one letter already or no letter is free.
fn renamed_short(case: &Case, i: usize) -> Option<Case> {
    use crate::model::bytes::RelPath;
    use crate::model::spec::EntryKind;
    let from = case.spec.entries.get(i)?.path.as_bytes().to_vec();
    let (dir, name): (&[u8], &[u8]) = match from.iter().rposition(|&b| b == b'/') {
        Some(k) => (&from[..=k], &from[k + 1..]),
        None => (&[], &from[..]),
    };
    if name.len() == 1 && name[0].is_ascii_lowercase() {
        return None;
    }
    let taken = |letter: u8| {
        let mut p = dir.to_vec();
        p.push(letter);
        case.spec.entries.iter().any(|e| {
            let b = e.path.as_bytes();
            b == p.as_slice() || (b.starts_with(&p) && b.get(p.len()) == Some(&b'/'))
        })
    };
    let letter = (b'a'..=b'z').find(|&l| !taken(l))?;
    let mut to = dir.to_vec();
    to.push(letter);
    let rename = |p: &RelPath| -> RelPath {
        let b = p.as_bytes();
        if b == from.as_slice() {
            return RelPath::new(to.clone()).unwrap_or_else(|_| p.clone());
        }
        if b.starts_with(&from) && b.get(from.len()) == Some(&b'/') {
            let mut n = to.clone();
            n.extend_from_slice(&b[from.len()..]);
            return RelPath::new(n).unwrap_or_else(|_| p.clone());
        }
        p.clone()
    };
    let mut c = case.clone();
    for e in &mut c.spec.entries {
        e.path = rename(&e.path);
        if let EntryKind::Hardlink { target } = &mut e.kind {
            *target = rename(target);
        }
    }
    for x in &mut c.spec.exclusions {
        *x = rename(x);
    }
    Some(c)
}

#[cfg(test)]
mod tests;
