//! `snapconf check-archive --all-parsers` and `snapconf fuzz --parsers`.

use super::args::FuzzArgs;
use super::Usage;
use snapconf_harness::archive::parser_listing::ParserListing;
use snapconf_harness::archive::parsers::{
    all_listings, known_limit, listings, printable, ParserRun,
};
use snapconf_harness::checks::parser_disagreement::disagreements;
use snapconf_harness::exit;
use snapconf_harness::fuzz::{host_safe, mutate};
use snapconf_tarbytes::{Records, Rng};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

fn summary_line(r: &ParserRun) -> String {
    match &r.listing {
        None => format!("{:<15} not installed here (skipped)", r.parser),
        Some(ParserListing::Members(m)) => format!("{:<15} {} member(s)", r.parser, m.len()),
        Some(ParserListing::Failed(e)) => match known_limit(r.parser, e) {
            Some(limit) => format!(
                "{:<15} limit of {}: {e} ({}: not a parser disagreement)",
                r.parser, r.parser, limit.what
            ),
            None => format!("{:<15} stopped: {e}", r.parser),
        },
        Some(ParserListing::Refused(e)) => format!(
            "{:<15} {e} (for safety: not a parser disagreement)",
            r.parser
        ),
    }
}

/// Print `line` on stdout, made [`printable`] (no raw control byte of a name or a tool's
/// message reaches the terminal).
fn say(line: &str) {
    outln!("{}", printable(line));
}

/// `check-archive --all-parsers FILE`: exit [`exit::FINDINGS`] (1) if parsers disagree (in
/// what they list, or one stops where another reads to the end, unless at a known limit of
/// its own: "limit of `<tool>`", [`snapconf_harness::archive::parsers::LIMITS`]) or if the
/// reference's parser cannot read the bytes (garbage, a cut header: refused, whether or
/// not the others can), [`exit::OK`] otherwise; [`exit::USAGE`] (2) when `FILE` cannot be
/// read, [`exit::NOTHING_RAN`] (3) when a tool could not be run. `FILE` may be `-` (stdin).
/// Every line printed is made printable: a member name's control bytes are escaped.
///
/// The reference's listing is its parser's reading of the bytes alone
/// ([`snapconf_harness::archive::parser_listing::reference_parse_listing`]: no policy), compared like every
/// other parser's. Its verdict as a validator under `policy` (the command's policy flags)
/// is printed on a line of its own and is no disagreement: a refusal for what a readable
/// archive would write (`..`, a dangling hardlink) is the validator's job, and a refusal of
/// an early member does not hide a later member that the parsers read differently.
///
/// A compressed archive (gzip, zstd, xz: the reference's one detection,
/// `snapconf_extract::compression`) is decompressed once, under the default limits, and
/// every parser lists the tar inside it: the comparison is of tar parsing, and not every
/// parser decompresses (the `tar` crate, BusyBox without its gzip applet). One that cannot
/// be decompressed is listed as it is.
pub fn check_all(file: &Path, policy: &snapconf_extract::Policy) -> anyhow::Result<i32> {
    use snapconf_extract::compression::{tar_stream, Compression};
    let scratch = tempfile::tempdir()?;
    // Read from files, never whole into memory: stdin is copied to one first, and a
    // compressed archive is decompressed into another (under the policy's limits on
    // decompressed bytes and ratio), which every parser then lists.
    let file = if file == Path::new("-") {
        let path = scratch.path().join("stdin.tar");
        let mut out = std::fs::File::create(&path)?;
        std::io::copy(&mut std::io::stdin().lock(), &mut out)
            .map_err(|e| Usage(format!("cannot read the archive from stdin: {e}")))?;
        path
    } else {
        let shown = || printable(&file.display().to_string());
        let meta = std::fs::metadata(file)
            .map_err(|e| Usage(format!("cannot read archive `{}`: {e}", shown())))?;
        if meta.is_dir() {
            return Err(Usage(format!("archive `{}` is a directory", shown())).into());
        }
        std::fs::File::open(file)
            .map_err(|e| Usage(format!("cannot read archive `{}`: {e}", shown())))?;
        file.to_path_buf()
    };
    let file = file.as_path();
    let opened = std::io::BufReader::new(std::fs::File::open(file)?);
    // What the verdict says of a compression the reference does not read (bzip2, say) is
    // also where its listing stops: the two agree.
    let mut unreadable = None;
    let decompressed = match tar_stream(opened, &policy.limits) {
        Ok((kind, mut stream)) if kind != Compression::None => {
            let path = scratch.path().join("decompressed.tar");
            let mut out = std::fs::File::create(&path)?;
            match std::io::copy(&mut stream, &mut out) {
                Ok(_) => {
                    say(&format!(
                        "{}-compressed: every parser lists the decompressed tar",
                        kind.name()
                    ));
                    Some(path)
                }
                Err(e) => {
                    say(&format!(
                        "{}-compressed, cannot be decompressed ({e}): listed as it is",
                        kind.name()
                    ));
                    None
                }
            }
        }
        Ok(_) => None,
        Err(e) => {
            unreadable = Some(e.to_string());
            None
        }
    };
    let tar = decompressed.as_deref().unwrap_or(file);
    let mut runs = all_listings(tar)?;
    if let (Some(why), Some(reference)) = (unreadable, runs.first_mut()) {
        reference.listing = Some(ParserListing::Failed(printable(&why)));
    }
    for r in &runs {
        say(&summary_line(r));
    }
    let reference_failed = match runs.first().and_then(|r| r.listing.as_ref()) {
        Some(ParserListing::Failed(why)) => Some(why.clone()),
        _ => None,
    };
    // The reference as a validator, under this command's policy: its own question.
    match snapconf_extract::validate(std::io::BufReader::new(std::fs::File::open(tar)?), policy) {
        Ok(l) => say(&format!(
            "validator       the reference accepts it ({} member(s)) under the policy flags",
            l.members.len()
        )),
        Err(e) => {
            let verdict = e.to_string();
            // Where the validator stops and where its parser alone stops (the `reference`
            // line) are both said: a policy refusal of an early member can come before a
            // later member the parser cannot read.
            let elsewhere = match &reference_failed {
                Some(why) if *why != printable(&verdict) => {
                    "; its parser alone, without the policy, stops elsewhere (the \
                     `reference` line)"
                }
                Some(_) => "; its parser stops there too (the `reference` line)",
                None => "",
            };
            say(&format!(
                "validator       the reference {verdict} under the policy flags{elsewhere} (a \
                 verdict, not a parser disagreement)"
            ));
        }
    }
    let d = disagreements(&listings(&runs));
    for line in &d {
        say(&format!("parser-disagreement: {line}"));
    }
    if d.is_empty() {
        if let Some(why) = &reference_failed {
            say(&format!(
                "refused: the reference's parser cannot read the archive to its end ({why})"
            ));
        }
    }
    Ok(if d.is_empty() && reference_failed.is_none() {
        exit::OK
    } else {
        exit::FINDINGS
    })
}

/// The parser pair of a disagreement line (`member 2 (...): A and B disagree: ...` or
/// `A lists n member(s), B m`), used to keep one reproducer per pair and kind.
fn key(line: &str) -> String {
    if let Some((parser, _)) = line.split_once(" stopped (") {
        return format!("{parser} stopped");
    }
    if let Some((_, rest)) = line.split_once("): ") {
        let pair = rest.split(": ").next().unwrap_or("");
        let what = rest
            .split(": ")
            .nth(1)
            .unwrap_or("")
            .split(' ')
            .next()
            .unwrap_or("");
        return format!("{pair} {what}");
    }
    let words: Vec<&str> = line.split(' ').collect();
    format!(
        "{} {} count",
        words.first().unwrap_or(&""),
        words.get(4).unwrap_or(&"")
    )
}

/// `fuzz --parsers`: mutate the corpus and keep each new kind of disagreement as
/// `cases/parser-disagreement-<n>/` (`archive.tar`, `listings.txt`).
pub fn hunt(a: &FuzzArgs, seed: u64) -> anyhow::Result<i32> {
    let bases = super::fuzz::load_bases(&super::fuzz::corpora_dir(a.corpora.as_deref()))?;
    let report = a
        .report_dir
        .clone()
        .unwrap_or_else(|| PathBuf::from(format!("reports/runs/fuzz-parsers-{seed}")));
    let scratch = tempfile::tempdir()?;
    let file = scratch.path().join("archive.tar");
    let recs: Vec<(String, Records)> = bases
        .iter()
        .map(|(l, b)| (l.clone(), Records::parse(b)))
        .collect();
    let mut rng = Rng::new(seed);
    let start = Instant::now();
    let mut seen = BTreeSet::new();
    let mut runs = 0u64;
    eprintln!("snapconf fuzz --parsers: seed {seed}, {} s", a.time);
    // A signal (caught since the command began) ends the hunt after the archive being
    // listed; the scratch directory is removed on the way out.
    let stopped = snapconf_harness::jail::cleanup::stop_requested;
    while start.elapsed() < Duration::from_secs(a.time) && !stopped() {
        let (label, base) = &recs[rng.below(recs.len())];
        let n = 1 + rng.below(3);
        let (bytes, _) = mutate(base, &mut rng, n);
        if !host_safe(&bytes) {
            continue;
        }
        std::fs::write(&file, &bytes)?;
        runs += 1;
        let ran = all_listings(&file)?;
        for line in disagreements(&listings(&ran)) {
            let k = key(&line);
            if !seen.insert(k.clone()) {
                continue;
            }
            let dir = report
                .join("cases")
                .join(format!("parser-disagreement-{}", seen.len()));
            std::fs::create_dir_all(&dir)?;
            std::fs::write(dir.join("archive.tar"), &bytes)?;
            let mut text = format!("base: {label}\nseed: {seed}\n{line}\n\n");
            for r in &ran {
                text.push_str(&summary_line(r));
                text.push('\n');
            }
            text.push_str("\nreplay: snapconf check-archive --all-parsers archive.tar\n");
            std::fs::write(dir.join("listings.txt"), text)?;
            say(&format!(
                "parser-disagreement ({k}): {line} -> {}",
                dir.display()
            ));
        }
    }
    outln!(
        "{runs} archives listed by every parser; {} kind(s) of disagreement; report in `{}`",
        seen.len(),
        report.display()
    );
    Ok(if stopped() {
        eprintln!("snapconf fuzz --parsers: interrupted; the disagreements so far are written");
        snapconf_harness::jail::cleanup::INTERRUPTED
    } else if seen.is_empty() {
        exit::OK
    } else {
        exit::FINDINGS
    })
}
