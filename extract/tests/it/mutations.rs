//! Mutated archives (a poor man's fuzzer that runs in `cargo test`): random byte flips,
//! truncations and block splices of valid archives.
//!
//! Properties: no input panics; `validate` and `hydrate` agree (same verdict, same reason
//! code: a validator that parses differently from its extractor is a bypass); a hydration
//! never changes anything outside the root, and a refused one leaves the prior intact.

use crate::common;

use common::{jailed, Jail, Raw};
use snapconf_extract::{hydrate, hydrate_file, validate, Duplicates, Hardlinks, Policy};
use snapconf_tarbytes::Rng;

/// Valid and hostile seeds; `out` is a directory outside the root that must stay untouched.
fn seeds(out: &str) -> Vec<Vec<u8>> {
    vec![
        // H9, H10, H11 shapes aimed at `out`
        Raw::new()
            .dir("foo/")
            .symlink("foo", out)
            .file("foo/x", b"1")
            .finish(),
        Raw::new()
            .symlink("link", &format!("{out}/target"))
            .file("link", b"owned")
            .finish(),
        Raw::new()
            .symlink("up", "..")
            .file("up/exploit/foo/bar", b"bad")
            .finish(),
        Raw::new()
            .dir("./")
            .dir("d/")
            .file("d/a", b"hello")
            .hardlink("d/b", "d/a")
            .symlink("d/s", "a")
            .file("e", &[1u8; 700])
            .finish(),
        Raw::new()
            .long_name(&[b'n'; 150])
            .file("x", b"long")
            .pax(&[("path", b"pax/name"), ("size", b"3")])
            .file("y", b"abc")
            .push(b'6', b"fifo", b"", b"", 0o644)
            .finish(),
        Raw::new()
            .symlink("up", "..")
            .dir_mode("ro/", 0o555)
            .file("ro/f", b"x")
            .finish(),
    ]
}

fn mutate(rng: &mut Rng, seed: &[u8]) -> Vec<u8> {
    let mut b = seed.to_vec();
    match rng.below(4) {
        0 => {
            for _ in 0..=rng.below(8) {
                let i = rng.below(b.len());
                b[i] = rng.next_u64() as u8;
            }
        }
        1 => b.truncate(rng.below(b.len())),
        2 => {
            // flip bytes inside a header and fix its checksum, so mutations get past it
            let blocks = b.len() / 512;
            let h = rng.below(blocks) * 512;
            for _ in 0..=rng.below(4) {
                let i = h + rng.below(512);
                b[i] = [b'/', b'.', 0, b'1', b'2', b'5', b'x', b'L', 0xff][rng.below(9)];
            }
            let mut block = [0u8; 512];
            block.copy_from_slice(&b[h..h + 512]);
            common::set_checksum(&mut block);
            b[h..h + 512].copy_from_slice(&block);
        }
        _ => {
            // duplicate a random block range elsewhere
            let blocks = b.len() / 512;
            let from = rng.below(blocks) * 512;
            let to = rng.below(blocks) * 512;
            let chunk = b[from..from + 512].to_vec();
            b.splice(to..to, chunk);
        }
    }
    b
}

/// `SNAPCONF_MUTATION_SEED` and `SNAPCONF_MUTATION_SCALE` (a multiplier) widen a run.
fn knobs(seed: u64) -> (u64, usize) {
    let env = |k: &str| std::env::var(k).ok().and_then(|v| v.parse::<u64>().ok());
    let seed = env("SNAPCONF_MUTATION_SEED").map_or(seed, |s| s | 1);
    (seed, env("SNAPCONF_MUTATION_SCALE").unwrap_or(1) as usize)
}

fn policies() -> [Policy; 2] {
    [
        Policy::default(),
        Policy {
            hardlinks: Hardlinks::Link,
            duplicates: Duplicates::LastWins,
            ..Policy::default()
        },
    ]
}

/// 20,000 mutations through `validate`: no panic.
#[test]
fn validate_never_panics() {
    let (seed, scale) = knobs(0x5eed_1234_abcd_0001);
    let mut rng = Rng::new(seed);
    let seeds = seeds("/nonexistent/out");
    for _ in 0..20_000 * scale {
        let pick = rng.below(seeds.len());
        let ar = mutate(&mut rng, &seeds[pick]);
        for policy in policies() {
            let _ = validate(&ar[..], &policy);
        }
    }
}

/// 300 mutations through `hydrate` (the single pass) and `hydrate_file` of the plain file
/// (validation, then the write pass), alternately, in a jail: contained, atomic, and in
/// agreement with `validate`.
#[test]
fn hydrate_agrees_with_validate_and_stays_contained() {
    let (seed, scale) = knobs(0x5eed_1234_abcd_0002);
    let mut rng = Rng::new(seed);
    let jail = Jail::new();
    let seeds = seeds(&jail.out().display().to_string());
    jail.prior(&[("prior", "prior content"), ("dir/f", "x")]);
    let files = tempfile::tempdir().expect("tempdir");
    let file = files.path().join("archive.tar");
    let (mut accepted, mut refused) = (0, 0);
    for i in 0..300 * scale {
        let pick = rng.below(seeds.len());
        let ar = mutate(&mut rng, &seeds[pick]);
        let policy = &policies()[i % 2];
        let v = validate(&ar[..], policy);
        let h = if i % 4 < 2 {
            jailed(&jail, || hydrate(&ar[..], &jail.root(), policy))
        } else {
            std::fs::write(&file, &ar).expect("write");
            let f = std::fs::File::open(&file).expect("open");
            jailed(&jail, || hydrate_file(&f, &jail.root(), policy))
        };
        match (&v, &h) {
            (Ok(_), Ok(_)) => accepted += 1,
            (Err(a), Err(b)) if a.reason().is_some() && a.reason() == b.reason() => refused += 1,
            _ => panic!("mutation {i} (seed {seed}): validate {v:?} but hydrate {h:?}"),
        }
        if h.is_ok() {
            // put the prior back for the next round
            let prior = Raw::new()
                .file("prior", b"prior content")
                .file("dir/f", b"x")
                .finish();
            hydrate(&prior[..], &jail.root(), &Policy::default()).expect("reset");
        }
    }
    eprintln!("mutations: {accepted} accepted, {refused} refused");
    assert!(accepted > 0 && refused > 0);
}

/// 150 compressed archives through `hydrate` and `hydrate_file` in a jail: a seed, mutated
/// or not, compressed with gzip, zstd or xz, and the compressed bytes mutated or not
/// (flipped bytes, a cut). `validate` and the hydration agree on each, and a hydration stays
/// contained.
#[test]
fn compressed_mutations_agree_with_validate() {
    let (seed, scale) = knobs(0x5eed_1234_abcd_0003);
    let mut rng = Rng::new(seed);
    let jail = Jail::new();
    let seeds = seeds(&jail.out().display().to_string());
    let reset = || {
        let prior = Raw::new().file("prior", b"prior content").finish();
        hydrate(&prior[..], &jail.root(), &Policy::default()).expect("reset");
    };
    reset();
    let files = tempfile::tempdir().expect("tempdir");
    let file = files.path().join("archive");
    let (mut accepted, mut refused) = (0, 0);
    for i in 0..150 * scale {
        let pick = rng.below(seeds.len());
        let tar = if rng.below(2) == 0 {
            seeds[pick].clone()
        } else {
            mutate(&mut rng, &seeds[pick])
        };
        let (name, enc) = common::encoders()[rng.below(3)];
        let mut bytes = enc(&tar);
        match rng.below(3) {
            0 => {}
            1 => bytes.truncate(rng.below(bytes.len())),
            _ => {
                for _ in 0..=rng.below(3) {
                    let at = rng.below(bytes.len());
                    bytes[at] = rng.next_u64() as u8;
                }
            }
        }
        let policy = &policies()[i % 2];
        let v = validate(&bytes[..], policy);
        // Every other one from a file: hydrate_file decompresses in a second thread.
        let h = if i % 4 < 2 {
            jailed(&jail, || hydrate(&bytes[..], &jail.root(), policy))
        } else {
            std::fs::write(&file, &bytes).expect("write");
            let f = std::fs::File::open(&file).expect("open");
            jailed(&jail, || hydrate_file(&f, &jail.root(), policy))
        };
        match (&v, &h) {
            (Ok(_), Ok(_)) => accepted += 1,
            (Err(a), Err(b)) if a.reason().is_some() && a.reason() == b.reason() => refused += 1,
            _ => panic!("{name} mutation {i} (seed {seed}): validate {v:?} but hydrate {h:?}"),
        }
        if h.is_ok() {
            reset();
        }
    }
    eprintln!("compressed mutations: {accepted} accepted, {refused} refused");
    assert!(accepted > 0 && refused > 0);
}

/// Pinned bytes and draws: the seeds, the checksum fix and the generator's outputs for a
/// given seed must not change (a failure seed replays only then).
#[test]
fn seeds_and_draws_are_pinned() {
    let fnv = |bytes: &[u8]| {
        bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
            (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
        })
    };
    let all: Vec<u8> = seeds("/x").concat();
    let mut block = [9u8; 512];
    common::set_checksum(&mut block);
    let mut rng = Rng::new(42);
    let draws = (rng.next_u64(), rng.below(1000), rng.below(7));
    assert_eq!((all.len(), fnv(&all)), (22528, 0xf41d_45d1_6773_6b00));
    assert_eq!(&block[148..156], b"011270\0 ");
    assert_eq!(draws, (0xbdd7_3226_2feb_6e95, 291, 0));
}
