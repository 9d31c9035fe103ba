//! `parser-disagreement`: every parser reads the same bytes as the same member list.
//!
//! Property: two tar parsers that read one archive to the end list the same members in the
//! same order (normalised name, kind, link target, size of regular files), and none stops
//! where another reads on. A validator that reads an archive differently from the extractor
//! it guards is a bypass: the validator passes what the extractor then writes. Evidence:
//! [`Evidence::listings`]. A parser that stops at one of its documented limits
//! ([`crate::archive::parsers::LIMITS`]: BusyBox and V7 headers, for one) is no
//! disagreement (`check-archive --all-parsers` says "limit of `<tool>`" on its line).

use super::{Check, CheckDef, Evidence, Violation};
use crate::archive::parser_listing::ParserListing;
use crate::archive::parsers::known_limit;
use crate::error::HarnessError;
use crate::model::bytes::escape;

/// The definition registered as [`Check::PARSER_DISAGREEMENT`].
pub const DEF: CheckDef = CheckDef {
    id: "parser-disagreement",
    explain: "two parsers read the same archive as different member lists",
    column: 100,
    severity: 6,
    judge,
};

fn judge(ev: &Evidence<'_>) -> Result<Vec<Violation>, HarnessError> {
    let ran: Vec<(&str, &ParserListing)> = ev.listings.iter().map(|(n, l)| (*n, l)).collect();
    Ok(disagreements(&ran)
        .into_iter()
        .map(|d| Violation::new(Check::PARSER_DISAGREEMENT, format!("{}: {d}", ev.what)))
        .collect())
}

/// Every disagreement between parsers, by name, that read the archive to the end, each
/// against the first such parser in the given order (the reference when it accepted); and
/// every parser that stopped where that one read on. One line each.
pub fn disagreements(listings: &[(&str, &ParserListing)]) -> Vec<String> {
    let complete: Vec<(&str, &ParserListing)> = listings
        .iter()
        .filter(|(_, l)| matches!(l, ParserListing::Members(_)))
        .copied()
        .collect();
    let Some((base_name, base)) = complete.first() else {
        return Vec::new();
    };
    let read = match base {
        ParserListing::Members(m) => m.len(),
        ParserListing::Failed(_) | ParserListing::Refused(_) => 0,
    };
    // A parser that stops where another reads to the end disagrees too: a validator that
    // refuses (or errors) while the extractor behind it reads members, or the reverse.
    let failed = listings.iter().filter_map(|(name, l)| match l {
        ParserListing::Failed(why) if known_limit(name, why).is_some() => None,
        ParserListing::Failed(why) => Some(format!(
            "{name} stopped ({why}) where {base_name} read {read} member(s)"
        )),
        // A safety refusal is the reference's judgement, not a reading of the bytes.
        ParserListing::Members(_) | ParserListing::Refused(_) => None,
    });
    complete[1..]
        .iter()
        .filter_map(|(n, l)| compare_listings(base_name, base, n, l))
        .chain(failed)
        .collect()
}

/// Compare two listings that both read to the end; `None` when either failed or they agree,
/// else the first difference (member count, then per member name, kind, link target, size).
pub fn compare_listings(
    a_name: &str,
    a: &ParserListing,
    b_name: &str,
    b: &ParserListing,
) -> Option<String> {
    let (ParserListing::Members(a), ParserListing::Members(b)) = (a, b) else {
        return None;
    };
    for (i, (x, y)) in a.iter().zip(b.iter()).enumerate() {
        let what = if !same_name(&x.name, &y.name) {
            format!("name `{}` vs `{}`", escape(&x.name), escape(&y.name))
        } else if x.kind != y.kind {
            format!("kind {} vs {}", x.kind, y.kind)
        } else if x.link_target != y.link_target {
            format!(
                "link target `{}` vs `{}`",
                escape(x.link_target.as_deref().unwrap_or_default()),
                escape(y.link_target.as_deref().unwrap_or_default())
            )
        } else if x.size != y.size {
            format!("size {:?} vs {:?}", x.size, y.size)
        } else {
            continue;
        };
        return Some(format!(
            "member {} (`{}`): {a_name} and {b_name} disagree: {what}",
            i + 1,
            escape(&x.name)
        ));
    }
    (a.len() != b.len())
        .then(|| format!("{a_name} lists {} member(s), {b_name} {}", a.len(), b.len()))
}

/// `name` without its leading `..` components (`../../out/x` is `out/x`).
fn without_leading_parents(mut name: &[u8]) -> &[u8] {
    while let Some(rest) = name.strip_prefix(b"..") {
        match rest {
            [] => return rest,
            [b'/', rest @ ..] => name = rest,
            _ => break,
        }
    }
    name
}

/// Whether two parsers' (normalised) names are one member's: equal, or equal once leading
/// `..` components are dropped from the one that has them. BusyBox tar strips leading
/// `../` as it lists and extracts, as GNU tar and bsdtar strip a leading `/`: a safety
/// normalisation that writes the member lower in the tree, not a different reading of the
/// bytes. A `..` elsewhere in a name is never dropped.
fn same_name(a: &[u8], b: &[u8]) -> bool {
    a == b || without_leading_parents(a) == without_leading_parents(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leading_parents_are_a_normalisation_and_inner_ones_are_not() {
        assert!(same_name(b"../out/target", b"out/target"));
        assert!(same_name(b"../../x", b"x"));
        assert!(same_name(b"a", b"a"));
        assert!(
            !same_name(b"a/../b", b"b"),
            "an inner `..` is a different name"
        );
        assert!(
            !same_name(b"..x/y", b"x/y"),
            "`..x` is a name, not a parent"
        );
        assert!(!same_name(b"../a", b"b"));
    }

    /// BusyBox stopping at a V7 header is its limit; GNU tar stopping with
    /// the same words, or BusyBox stopping otherwise, is a disagreement.
    #[test]
    fn a_known_limit_is_not_a_disagreement() {
        let read = ParserListing::Members(Vec::new());
        let v7 = ParserListing::Failed(
            "`busybox tar -tvf a.tar` exited with status 1: tar: invalid tar magic\\n".into(),
        );
        let other = ParserListing::Failed("exited with status 1: tar: short read".into());
        let runs = [("reference", &read), ("busybox", &v7)];
        assert!(disagreements(&runs).is_empty());
        let runs = [("reference", &read), ("gnu-tar", &v7), ("busybox", &other)];
        assert_eq!(disagreements(&runs).len(), 2);
    }
}
