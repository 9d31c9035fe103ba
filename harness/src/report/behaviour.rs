//! The behaviour of a finding: what the tool did, abstracted, and what in the workspace set
//! it off. With the check and the side it is a cause's key ([`super::CauseKey`]).
//!
//! A behaviour is made of two parts, never of names, lengths, counts, seeds or which line
//! of a tree diff came first:
//! - the *kind* of what happened ([`kind`]): for a refused hydration (`late-failure`) the
//!   refusal class, the reference's reason (`hardlink-not-allowed`) or an external tool's
//!   error abstracted ([`error_kind`]: `hardlink-target-missing`, `file-exists`,
//!   `filter-refused` for any refusal of Python's data filter); a class that names what was
//!   refused (a reference reason, `filter-refused`, `name-not-convertible`) stands for its
//!   trigger, since a cell records only the first entry of the class a seed drew; for a
//!   tree comparison (`roundtrip`, `checkpoint-restore`) the kinds of difference
//!   ([`diff_kinds`]: `missing dir`, `extra special`, `changed file mode`; entries of one
//!   type each missing and extra are `renamed`, [`renamed`]); for a failed hydration that
//!   changed the prior workspace (`atomic-hydration`), `cleared-root` alone when
//!   snapconf's adapter emptied the root before its tool ran, else `left entries` (it only
//!   added) or `lost entries` (it removed or replaced some), in both cases without a
//!   trigger: leaving a half tree is the extractor's behaviour whatever made it stop, and
//!   what it refused is a cause of its own; for the other checks the message with names
//!   abstracted ([`super::shape`]);
//! - the *trigger* ([`Trigger`]): the feature of the shrunk reproducer's workspace that sets
//!   it off, the most specific of those the feature detector finds
//!   ([`crate::model::expected::features`], [`Trigger::key_features`]).

use super::fingerprint::shape;
use super::FindingRecord;
use crate::checks::Check;
use crate::model::expected::{features, Feature};
use crate::model::spec::WorkspaceSpec;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;

/// What a shrunk reproducer holds that a cause's key is made of: the features of its
/// workspace and the kinds of difference of its tree diff. Stored with each finding
/// ([`FindingRecord::trigger`]); empty in reports written before it existed and in fuzz
/// reports (a fuzz cause has its own signature, [`FindingRecord::cause`]).
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Trigger {
    /// The [`Feature`] names of the shrunk W1, sorted, plus `exclusion` when it excludes a
    /// path (and no excluded name shares an inode: that is `excluded-alias`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub features: Vec<String>,
    /// [`diff_kinds`] of the shrunk finding's tree diff (empty without one), sorted.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub diff: Vec<String>,
}

impl Trigger {
    /// The trigger of a finding shrunk to workspace `spec` whose evidence is `observed`
    /// (the finding's observed text, where a tree diff follows a `diff (` line).
    pub fn of(spec: &WorkspaceSpec, observed: Option<&str>) -> Trigger {
        let found = features(spec);
        let mut names: Vec<String> = found.iter().map(|f| f.name().to_string()).collect();
        if !spec.exclusions.is_empty() && !found.contains(&Feature::ExcludedAlias) {
            names.push("exclusion".into());
        }
        names.sort();
        Trigger {
            features: names,
            diff: observed
                .filter(|o| o.contains("diff ("))
                .map(diff_kinds)
                .unwrap_or_default(),
        }
    }

    /// True when nothing is known (an old report, a fuzz finding).
    pub fn is_empty(&self) -> bool {
        self.features.is_empty() && self.diff.is_empty()
    }

    /// The feature the key uses: the first of `TRIGGER_ORDER` the shrunk case has, with
    /// FIFOs, sockets and character devices as one class, `special-file` (a tool that
    /// mishandles one mishandles the others); empty when it has none. One feature, not the
    /// set: a shrunk case often holds more than its trigger (a symlink's absolute target
    /// beside the hardlink to it, an awkward name the shrinker cannot make plain, a
    /// directory left empty), and that varies with the seed.
    pub fn key_features(&self) -> Vec<String> {
        self.key_features_for("")
    }

    /// [`key_features`](Self::key_features) for a behaviour of kind `kind`: for entries
    /// written under other names (`diff: renamed`, see `renamed`) a name feature comes
    /// first (`NAME_FEATURES`), since the name is what the tool mishandled, whatever else
    /// (a dangling symlink target, a special mode) the shrunk entry still has.
    pub fn key_features_for(&self, kind: &str) -> Vec<String> {
        let names_first = kind.ends_with(&format!("diff: {RENAMED}"));
        let class = |f: &str| match f {
            "fifo" | "socket" | "char-device" => "special-file".to_string(),
            other => other.to_string(),
        };
        let have: BTreeSet<String> = self.features.iter().map(|f| class(f)).collect();
        let first = names_first
            .then(|| NAME_FEATURES.iter().find(|t| have.contains(**t)))
            .flatten();
        first
            .or_else(|| TRIGGER_ORDER.iter().find(|t| have.contains(**t)))
            .map(|t| vec![t.to_string()])
            .unwrap_or_default()
    }
}

/// `kinds` of a tree diff, or `renamed` alone when they are entries of one type each
/// missing and extra and nothing else (`extra symlink, missing symlink`; `extra dir, extra
/// file, missing dir, missing file`): the tool wrote the members under other names than
/// theirs, whichever types the shrunk case's entries have.
pub fn renamed(kinds: Vec<String>) -> Vec<String> {
    let of = |word: &str| -> BTreeSet<&str> {
        kinds.iter().filter_map(|k| k.strip_prefix(word)).collect()
    };
    let (extra, missing) = (of("extra "), of("missing "));
    let only = extra.len() + missing.len() == kinds.len();
    if only && !extra.is_empty() && extra == missing && !extra.contains("hardlinks") {
        vec![RENAMED.to_string()]
    } else {
        kinds
    }
}

/// The diff kind of entries written under other names ([`renamed`]).
pub const RENAMED: &str = "renamed";

/// The features that name a member rather than what it is: the trigger of a `renamed`
/// diff is one of these when the shrunk case has one ([`Trigger::key_features_for`]).
const NAME_FEATURES: [&str; 3] = ["control-char-name", "non-utf8-name", "long-name"];

/// Which feature of a shrunk case is its trigger, most specific first: what a feature
/// implies comes after it (`shared-inode` after `excluded-alias` and
/// `hardlink-to-symlink`; a symlink's target after the hardlink to it), exclusions before
/// the names and links a shrunk case keeps around them, names and modes last (`empty-dir`
/// is never one: shrinking leaves directories empty).
pub const TRIGGER_ORDER: [&str; 14] = [
    "excluded-alias",
    "hardlink-to-symlink",
    "special-file",
    "exclusion",
    "read-only-dir",
    "shared-inode",
    "absolute-symlink",
    "escaping-symlink",
    "symlink-loop",
    "dangling-symlink",
    "non-utf8-name",
    "control-char-name",
    "long-name",
    "special-mode",
];

/// The behaviour of `f` in one line: `<kind>` for a root emptied by the adapter,
/// `<kind>; features: a, b` otherwise (`features: none` for a plain workspace). A fuzz
/// finding's behaviour is its cause signature.
pub fn behaviour(f: &FindingRecord) -> String {
    if let Some(c) = &f.cause {
        return c.clone();
    }
    let (kind, with_features) = kind(f.check, &f.message, &f.trigger);
    if !with_features {
        return kind;
    }
    let feats = f.trigger.key_features_for(&kind);
    if feats.is_empty() {
        format!("{kind}; features: none")
    } else {
        format!("{kind}; features: {}", feats.join(", "))
    }
}

/// The words of a `containment` message before the first change outside the root
/// (`changed out/x`, `new src/f`, `removed canary`).
const OUTSIDE: &str = " outside the root: ";

/// True for a `containment` kind ([`kind`]) of an entry outside the root that was
/// changed (`... outside the root: changed <path>`), not created or removed.
pub fn changes_outside(kind: &str) -> bool {
    kind.ends_with(&format!("{OUTSIDE}changed <path>"))
}

/// True for a tree comparison's kind ([`kind`]) whose every difference changes the mode
/// or content of an entry that is there (`diff: changed file mode`), nothing missing,
/// extra, retyped or retargeted: a write landing on an entry the archive put there.
pub fn changes_entries(kind: &str) -> bool {
    kind.strip_prefix("diff: ").is_some_and(|kinds| {
        kinds
            .split(", ")
            .all(|d| d.starts_with("changed ") && (d.ends_with(" mode") || d.ends_with(" content")))
    })
}

/// The words in an atomic-hydration message when snapconf's adapter emptied the root.
const CLEARED: &str = "emptied the root before the tool ran";

/// The kind of what happened (see the module docs), and whether the trigger's features
/// belong to the key (not for `cleared-root`: the adapter clears whatever the tool then
/// refuses).
pub fn kind(check: Check, message: &str, trigger: &Trigger) -> (String, bool) {
    let diff = |from_message: &str| {
        let kinds = if trigger.diff.is_empty() {
            diff_kinds(&format!("diff (\n{from_message}"))
        } else {
            trigger.diff.clone()
        };
        format!("diff: {}", renamed(kinds).join(", "))
    };
    let after = |marker: &str| message.split_once(marker).map(|(_, rest)| rest);
    if check == Check::LATE_FAILURE {
        if let Some(refusal) = after(" was refused: ") {
            let class = error_kind(refusal);
            // A class that names what was refused stands for its trigger too.
            let named = NAMED_REFUSALS.contains(&class.as_str()) || is_reason(&class);
            return (format!("refused: {class}"), !named);
        }
    } else if check == Check::ROUNDTRIP || check == Check::CHECKPOINT_RESTORE {
        if let Some(first) = after(" differs from the expected tree: ") {
            return (diff(first), true);
        }
    } else if check == Check::ATOMIC_HYDRATION {
        if message.contains(CLEARED) {
            return ("cleared-root".into(), false);
        }
        if let Some((step, first)) = message.split_once(" the prior workspace: ") {
            // What a failed hydration did to the prior workspace, not which entries: it
            // wrote some and stopped (`left entries`), or it also removed or replaced some
            // (`lost entries`, the worse). Not keyed by the trigger either: leaving a half
            // tree is the extractor's behaviour whatever made it stop, and what it refused
            // is a cause of its own (`late-failure`).
            let kinds = match diff(first).strip_prefix("diff: ") {
                Some(k) if k.split(", ").all(|k| k.starts_with("extra ")) => "left entries",
                _ => "lost entries",
            };
            return (format!("{}: {kinds}", shape(step)), false);
        }
    }
    if check == Check::CONTAINMENT {
        // What changed outside, not how (`(mode 644 -> 755)`, `(content written)`).
        let what = match message.rfind(" (") {
            Some(i) if message.ends_with(')') => &message[..i],
            _ => message,
        };
        // Nor which entry of the jail: a decoy (`out/x`), the canary or the capture root
        // `src` beside the root are one effect, whichever the shrunk case's links reach.
        if let Some((step, change)) = what.split_once(OUTSIDE) {
            let verb = change.split_whitespace().next().unwrap_or_default();
            return (format!("{}{OUTSIDE}{verb} <path>", shape(step)), true);
        }
        return (shape(what), true);
    }
    (shape(message), true)
}

/// Refusal classes that name what was refused, so that the key leaves the trigger out: a
/// tool refuses them whichever entry of the class a seed drew first (a cell records one
/// finding), as does the reference with each of its reasons.
const NAMED_REFUSALS: [&str; 2] = ["filter-refused", "name-not-convertible"];

/// True for a reference reason (`hardlink-not-allowed`): kebab-case, not an adapter name.
fn is_reason(word: &str) -> bool {
    word.contains('-')
        && word.chars().all(|c| c.is_ascii_lowercase() || c == '-')
        && !ADAPTERS.contains(&word)
        && !ERROR_CLASSES.iter().any(|(_, c)| *c == word)
}

/// Error classes of external tools: a phrase in the message (lower-cased) and its class.
/// The first match wins, so the specific phrases come first.
const ERROR_CLASSES: [(&str, &str); 20] = [
    ("cannot hard link", "hardlink-target-missing"),
    ("can't create hardlink", "hardlink-target-missing"),
    ("hard-link target", "hardlink-target-missing"),
    ("linkname", "hardlink-target-missing"),
    // Python's data filter: every refusal is a `tarfile.FilterError`.
    ("specialfileerror", "filter-refused"),
    ("absolutelinkerror", "filter-refused"),
    ("absolutepatherror", "filter-refused"),
    ("outsidedestinationerror", "filter-refused"),
    ("filtererror", "filter-refused"),
    ("can't be converted", "name-not-convertible"),
    ("cannot be converted", "name-not-convertible"),
    ("file exists", "file-exists"),
    ("permission denied", "permission-denied"),
    ("not a directory", "not-a-directory"),
    ("is a directory", "is-a-directory"),
    ("failed to unpack", "unpack-failed"),
    ("no such file or directory", "no-such-file"),
    ("timed out", "timeout"),
    ("killed by signal", "signal"),
    ("invalid", "invalid-archive"),
];

/// The class of a hydration's refusal text: the reference's reason as it gives it
/// (`hardlink-not-allowed: member ...` → `hardlink-not-allowed`), else the first class of
/// `ERROR_CLASSES` whose phrase the text holds, else a Python exception's name
/// (`KeyError: ...` → `KeyError`), else the text with names abstracted ([`shape`]).
pub fn error_kind(text: &str) -> String {
    let first = text.split_whitespace().next().unwrap_or("");
    if let Some(reason) = first.strip_suffix(':').filter(|r| is_reason(r)) {
        return reason.to_string();
    }
    let lower = text.to_lowercase();
    if let Some((_, class)) = ERROR_CLASSES.iter().find(|(p, _)| lower.contains(p)) {
        return (*class).to_string();
    }
    let exception = text.split_whitespace().find_map(|w| {
        let name = w.strip_suffix(':')?.rsplit('.').next()?;
        let ok = (name.ends_with("Error") || name.ends_with("Exception"))
            && name.chars().all(|c| c.is_ascii_alphanumeric());
        ok.then(|| name.to_string())
    });
    exception.unwrap_or_else(|| shape(text))
}

/// Adapter names that look like a reference reason when they start a message (`tar-rs:`).
const ADAPTERS: [&str; 3] = ["tar-rs", "python-data", "python-tar"];

/// The kinds of difference in a tree diff: the lines after the last `diff (` line of
/// `text` (none without one), each `- ` line missing, `+ ` line extra, a `- `
/// line followed by a `+ ` line of the same name changed. A kind names the entry type
/// (`file`, `dir`, `symlink`, `special`) and, when changed, what changed (`type`, `mode`,
/// `content`, `target`): `missing dir`, `extra special`, `changed file content`;
/// `missing hardlinks`/`extra hardlinks` for inode groups. Sorted, each once.
pub fn diff_kinds(text: &str) -> Vec<String> {
    let body = match text.rfind("\ndiff (") {
        Some(i) => text[i + 1..].split_once('\n').map_or("", |(_, b)| b),
        None if text.starts_with("diff (") => text.split_once('\n').map_or("", |(_, b)| b),
        None => "",
    };
    let lines: Vec<(char, &str)> = body
        .lines()
        .filter_map(|l| {
            let sign = l.chars().next()?;
            let rest = l.get(2..)?;
            (matches!(sign, '-' | '+') && l.get(1..2) == Some(" ")).then_some((sign, rest))
        })
        .collect();
    let mut out: BTreeSet<String> = BTreeSet::new();
    let mut i = 0;
    while i < lines.len() {
        let (sign, line) = lines[i];
        let word = if sign == '-' { "missing" } else { "extra" };
        if line.starts_with("hardlinks:") {
            out.insert(format!("{word} hardlinks"));
            i += 1;
            continue;
        }
        let Some(node) = NodeLine::parse(line) else {
            i += 1;
            continue;
        };
        let next = lines.get(i + 1).and_then(|(s, l)| {
            let n = NodeLine::parse(l)?;
            (sign == '-' && *s == '+' && n.name == node.name).then_some(n)
        });
        match next {
            Some(after) => {
                out.insert(format!(
                    "changed {} {}",
                    node.kind(),
                    node.what_changed(&after)
                ));
                i += 2;
            }
            None => {
                out.insert(format!("{word} {}", node.kind()));
                i += 1;
            }
        }
    }
    out.into_iter().collect()
}

/// One `ls -l`-style line of a diff, split into its mode, middle fields, name and target.
struct NodeLine<'a> {
    mode: &'a str,
    fields: Vec<&'a str>,
    name: &'a str,
    target: Option<&'a str>,
}

impl<'a> NodeLine<'a> {
    fn parse(line: &'a str) -> Option<NodeLine<'a>> {
        let (mode, rest) = line.split_once("  ")?;
        let b = mode.as_bytes();
        if b.len() != 10 || !b"-dlpscb".contains(&b[0]) {
            return None;
        }
        let mut fields: Vec<&str> = rest.split("  ").collect();
        let last = fields.pop()?;
        let (name, target) = match (b[0], last.split_once(" -> ")) {
            (b'l', Some((n, t))) => (n, Some(t)),
            _ => (last.trim_end_matches('/'), None),
        };
        Some(NodeLine {
            mode,
            fields,
            name,
            target,
        })
    }

    fn kind(&self) -> &'static str {
        match self.mode.as_bytes()[0] {
            b'-' => "file",
            b'd' => "dir",
            b'l' => "symlink",
            _ => "special",
        }
    }

    fn what_changed(&self, after: &NodeLine<'_>) -> &'static str {
        if self.mode.as_bytes()[0] != after.mode.as_bytes()[0] {
            "type"
        } else if self.target != after.target {
            "target"
        } else if self.fields != after.fields {
            "content"
        } else if self.mode != after.mode {
            "mode"
        } else {
            "inode"
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_errors_are_classed_without_names() {
        let gnu = "`tar -xf $JAIL/archive.tar -C $JAIL/h-2` exited with status 2: tar: ./x y/a: \
                   Cannot hard link to ‘./store/a’: No such file or directory";
        let bb =
            "`busybox tar -xf a` exited with status 1: tar: can't create hardlink './b' to './a'";
        let py = "`python3 -I -S -c <script: 23 lines> a b tar` exited with status 1: Traceback \
                  (most recent call last): ... KeyError: \"linkname './a' not found\"";
        let bsd = "`bsdtar -xf a` exited with status 1: ./node_modules/a: Hard-link target './a' \
                   does not exist.: No such file or directory";
        for t in [gnu, bb, py, bsd] {
            assert_eq!(error_kind(t), "hardlink-target-missing", "{t}");
        }
        assert_eq!(
            error_kind("hardlink-not-allowed: member `./mod.py/f` (hardlink members are refused)"),
            "hardlink-not-allowed"
        );
        assert_eq!(
            error_kind("tar-rs: failed to unpack `$JAIL/h-2/a/a`"),
            "unpack-failed"
        );
        assert_eq!(
            error_kind("Traceback: ... tarfile.SpecialFileError: './a' is a special file"),
            "filter-refused"
        );
        assert_eq!(
            error_kind(
                "Traceback: ... tarfile.AbsoluteLinkError: 'l' is a link to an absolute path"
            ),
            "filter-refused"
        );
        assert_eq!(error_kind("boom: ValueError: x"), "ValueError");
    }

    /// Which entry of the jail an escape changed, and how, are not part of the kind: the
    /// capture root `src`, a decoy under `out/` and the canary are one effect (seed 11 of
    /// the default job keyed a `python-tar` escape apart when it changed `src`).
    #[test]
    fn a_containment_kind_names_the_change_not_the_entry() {
        let t = Trigger::default();
        let k = |m: &str| kind(Check::CONTAINMENT, m, &t).0;
        let changed = [
            "hydration changed the jail outside the root: changed src (mode 0755 -> 0700)",
            "hydration changed the jail outside the root: changed out/x (content or metadata written)",
            "hydration changed the jail outside the root: changed canary (size 12 -> 3)",
            "hydration changed the jail outside the root: changed the jail itself (replaced)",
        ];
        for m in changed {
            assert_eq!(
                k(m),
                "hydration changed the jail outside the root: changed <path>",
                "{m}"
            );
        }
        assert_eq!(
            k("hydration changed the jail outside the root: new out/pwned (file)"),
            "hydration changed the jail outside the root: new <path>"
        );
        assert_ne!(
            k(changed[0]),
            k("capture changed the jail outside the root: changed src")
        );
        assert_eq!(k("x: the root was replaced"), "x: the root was replaced");
    }

    /// Entries written under other names are one kind whatever their types, and a name
    /// is their trigger before what else the shrunk entry has (seeds 2 and 4 of the
    /// default job keyed `tar-rs`'s mangling of a long path under a newline directory
    /// apart: a directory and file there, a dangling symlink here).
    #[test]
    fn entries_under_other_names_are_one_kind_keyed_by_the_name() {
        let k = |v: &[&str]| renamed(v.iter().map(|s| s.to_string()).collect());
        assert_eq!(k(&["extra symlink", "missing symlink"]), [RENAMED]);
        assert_eq!(
            k(&["extra dir", "extra file", "missing dir", "missing file"]),
            [RENAMED]
        );
        assert_eq!(k(&["extra file"]), ["extra file"]);
        assert_eq!(
            k(&["extra file", "missing dir"]),
            ["extra file", "missing dir"]
        );
        assert_eq!(
            k(&["changed file mode", "extra file", "missing file"]),
            ["changed file mode", "extra file", "missing file"]
        );
        assert_eq!(k(&["extra hardlinks", "missing hardlinks"]).len(), 2);
        let t = Trigger {
            features: vec!["control-char-name".into(), "dangling-symlink".into()],
            diff: vec!["extra symlink".into(), "missing symlink".into()],
        };
        assert_eq!(t.key_features(), ["dangling-symlink"]);
        let (kind, _) = super::kind(
            Check::ROUNDTRIP,
            "hydration into an empty root differs from the expected tree: + l",
            &t,
        );
        assert_eq!(kind, "diff: renamed");
        assert_eq!(t.key_features_for(&kind), ["control-char-name"]);
        let plain = Trigger {
            features: vec!["dangling-symlink".into()],
            ..t
        };
        assert_eq!(plain.key_features_for(&kind), ["dangling-symlink"]);
    }

    /// A failed hydration that changed the prior workspace is keyed by whether it only
    /// added entries or also lost some, never by which entries or by its trigger (seed 9
    /// of the default job keyed bsdtar's half tree by the dangling symlink it had written
    /// before refusing a non-UTF-8 name).
    #[test]
    fn a_half_tree_is_keyed_by_what_was_lost_not_by_its_entries() {
        let t = Trigger {
            features: vec!["dangling-symlink".into(), "non-utf8-name".into()],
            diff: vec!["extra dir".into(), "extra symlink".into()],
        };
        let m = "refused hydration changed the prior workspace: + drwxr-xr-x  .venv/lib/";
        assert_eq!(
            kind(Check::ATOMIC_HYDRATION, m, &t),
            ("refused hydration changed: left entries".to_string(), false)
        );
        let lost = Trigger {
            diff: vec!["extra dir".into(), "missing file".into()],
            ..t.clone()
        };
        assert_eq!(
            kind(Check::ATOMIC_HYDRATION, m, &lost).0,
            "refused hydration changed: lost entries"
        );
        // Without features in the key, as `behaviour` writes it.
        assert!(!kind(Check::ATOMIC_HYDRATION, m, &t).1);
    }

    /// What a shrunk case holds besides its trigger is not part of the key.
    #[test]
    fn key_features_keep_the_trigger() {
        let t = |f: &[&str]| Trigger {
            features: f.iter().map(|s| s.to_string()).collect(),
            diff: Vec::new(),
        };
        assert_eq!(
            t(&["empty-dir", "exclusion", "non-utf8-name"]).key_features(),
            ["exclusion"]
        );
        assert_eq!(
            t(&["empty-dir", "non-utf8-name"]).key_features(),
            ["non-utf8-name"]
        );
        assert_eq!(
            t(&["escaping-symlink", "exclusion"]).key_features(),
            ["exclusion"]
        );
        assert_eq!(t(&["fifo", "socket"]).key_features(), ["special-file"]);
        assert_eq!(
            t(&["absolute-symlink", "hardlink-to-symlink", "shared-inode"]).key_features(),
            ["hardlink-to-symlink"]
        );
        assert_eq!(
            t(&["absolute-symlink", "dangling-symlink"]).key_features(),
            ["absolute-symlink"]
        );
        assert_eq!(
            t(&["excluded-alias", "shared-inode"]).key_features(),
            ["excluded-alias"]
        );
        assert_eq!(t(&["empty-dir"]).key_features(), Vec::<String>::new());
    }

    /// The kinds of a diff do not depend on names or on which line comes first.
    #[test]
    fn diff_kinds_name_types_and_properties() {
        let a = "listing\ndiff (- prior, + after):\n- ----------  51  sha256:b9f55b23  a\n\
                 - drwxr-xr-x  data.bin/\n";
        let b =
            "diff (- prior, + after):\n- drwxr-xr-x  zz/\n- -rw-r--r--  0  sha256:e3b0c442  b\n";
        assert_eq!(diff_kinds(a), ["missing dir", "missing file"]);
        assert_eq!(diff_kinds(a), diff_kinds(b));
        let c = "diff (- expected, + observed):\n- -rw-r--r--  1  sha256:aa  f\n\
                 + -rwxr-xr-x  1  sha256:aa  f\n+ c?????????  1,3  dev\n\
                 - lrwxrwxrwx  l -> a\n+ lrwxrwxrwx  l -> b\n+ hardlinks: a = b\n";
        assert_eq!(
            diff_kinds(c),
            [
                "changed file mode",
                "changed symlink target",
                "extra hardlinks",
                "extra special"
            ]
        );
    }
}
