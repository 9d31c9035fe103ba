//! Plugged-in backends through the adapter traits: command templates (a tar backend round
//! trips, names with spaces and quotes reach the tool intact), the validate split pipeline
//! and the persistent worker (garbage, death, hang, drop), with no process left behind.

use snapconf_producers::backend::{BackendDescription, Mode};
use snapconf_producers::{
    Availability, Backend, CaptureRequest, Extractor, HydrateRequest, Outcome, Producer,
};
use std::path::{Path, PathBuf};
use std::time::Duration;

const TIMEOUT: Duration = Duration::from_secs(10);

fn backend(dir: &Path, text: &str) -> Backend {
    let path = dir.join("b.toml");
    std::fs::write(&path, text).expect("write the description");
    Backend::load(&path).unwrap_or_else(|e| panic!("{e}"))
}

struct Scene {
    _tmp: tempfile::TempDir,
    dir: PathBuf,
}

impl Scene {
    /// A temp dir whose path holds a space and a quote, so templates must keep words whole.
    fn new() -> Scene {
        let tmp = tempfile::tempdir().expect("tempdir");
        let dir = tmp.path().join("it's a dir");
        std::fs::create_dir(&dir).expect("mkdir");
        Scene { _tmp: tmp, dir }
    }
    fn fresh(&self, name: &str) -> PathBuf {
        let p = self.dir.join(name);
        std::fs::create_dir_all(&p).expect("mkdir");
        p
    }
}

fn capture(b: &Backend, root: &Path, archive: &Path, ex: &[&[u8]], scratch: &Path) -> Outcome {
    let ex: Vec<Vec<u8>> = ex.iter().map(|e| e.to_vec()).collect();
    b.producer()
        .capture(&CaptureRequest {
            root,
            exclusions: &ex,
            archive,
            scratch,
            timeout: TIMEOUT,
        })
        .unwrap_or_else(|e| panic!("{e}"))
}

fn hydrate(b: &Backend, archive: &Path, root: &Path, scratch: &Path) -> Outcome {
    b.extractor()
        .hydrate(&HydrateRequest {
            archive,
            root,
            scratch,
            limits: None,
            timeout: TIMEOUT,
        })
        .unwrap_or_else(|e| panic!("{e}"))
}

const TAR: &str = r#"
name = "tar-test"
capture = ["sh", "-c", 'sed "s|^|./|" "$3" > "$3.dot" && exec tar -cf "$2" -C "$1" --anchored --no-wildcards -X "$3.dot" .', "sh", "{root}", "{archive}", "{exclude_file}"]
hydrate = ["tar", "-xf", "{archive}", "-C", "{root}"]
"#;

/// A backend made of `tar` commands round-trips a small tree, honours an exclusion, and the
/// paths (with a space and a quote) reach tar as single words.
#[test]
fn a_tar_backend_round_trips_through_the_traits() {
    let s = Scene::new();
    let b = backend(&s.dir, TAR);
    assert!(matches!(
        b.producer().availability(),
        Availability::Available { .. }
    ));
    let src = s.fresh("src $(x)");
    std::fs::create_dir_all(src.join("a/b")).expect("mkdir");
    std::fs::write(src.join("a/keep"), "k").expect("write");
    std::fs::write(src.join("a/b/secret"), "s").expect("write");
    let archive = s.dir.join("a r.tar");
    let out = capture(&b, &src, &archive, &[b"a/b"], &s.fresh("scratch1"));
    assert_eq!(out, Outcome::Success);
    let dst = s.fresh("dst");
    assert_eq!(
        hydrate(&b, &archive, &dst, &s.fresh("scratch2")),
        Outcome::Success
    );
    assert_eq!(std::fs::read(dst.join("a/keep")).ok(), Some(b"k".to_vec()));
    assert!(!dst.join("a/b").exists(), "the exclusion was honoured");
}

/// A newline in an exclusion cannot be written to `{exclude_file}`: the case is refused for
/// this backend, saying why, and the limitation is declared.
#[test]
fn an_exclusion_with_a_newline_is_refused_not_mangled() {
    let s = Scene::new();
    let b = backend(&s.dir, TAR);
    let out = capture(
        &b,
        &s.fresh("src"),
        &s.dir.join("x.tar"),
        &[b"a\nb"],
        &s.fresh("sc"),
    );
    let Outcome::Refused { message } = out else {
        panic!("refused expected, got {out:?}")
    };
    assert!(message.contains("newline"), "{message}");
    assert!(b.producer().limitations().is_some());
}

/// Split pipeline: the validator's refusal stops the hydrate step, its accept is counted, and
/// a hydrate-step refusal after an accept says both steps.
#[test]
fn the_validate_step_runs_first_and_its_verdicts_are_counted() {
    let s = Scene::new();
    let text = r#"
name = "split"
capture = ["true"]
validate = ["sh", "-c", 'test "$(cat "$1")" != bad', "sh", "{archive}"]
hydrate = ["sh", "-c", 'test "$(cat "$1")" = good || { echo "cannot hydrate" >&2; exit 3; }', "sh", "{archive}"]
"#;
    let b = backend(&s.dir, text);
    let root = s.fresh("root");
    let archive = s.dir.join("a.tar");
    for (content, want) in [
        ("bad", "split` validate step refused"),
        (
            "odd",
            "the validate step accepted the archive, then: backend `split` hydrate step refused",
        ),
    ] {
        std::fs::write(&archive, content).expect("write");
        let out = hydrate(&b, &archive, &root, &s.fresh(content));
        let Outcome::Refused { message } = out else {
            panic!("{content}: refused expected, got {out:?}")
        };
        assert!(message.contains(want), "{content}: {message}");
    }
    std::fs::write(&archive, "good").expect("write");
    assert_eq!(
        hydrate(&b, &archive, &root, &s.fresh("good")),
        Outcome::Success
    );
    let v = b.verdicts().counts();
    assert_eq!((v.accepted, v.refused, v.accepted_then_refused), (2, 1, 1));
}

/// A program that is not installed makes the role unavailable, naming the command and key.
#[test]
fn a_missing_program_is_unavailable_naming_it() {
    let s = Scene::new();
    let b = backend(
        &s.dir,
        "name = \"m\"\ncapture = [\"snapconf-missing-tool\"]\nhydrate = [\"tar\"]\n",
    );
    let Availability::Unavailable {
        reason,
        install_hint,
    } = b.producer().availability()
    else {
        panic!("unavailable expected")
    };
    assert!(
        reason.contains("`capture` command `snapconf-missing-tool` was not found"),
        "{reason}"
    );
    assert!(
        install_hint.contains("snapconf-missing-tool"),
        "{install_hint}"
    );
    assert!(matches!(
        b.extractor().availability(),
        Availability::Available { .. }
    ));
}

/// Processes whose command line mentions `marker`.
fn processes_mentioning(marker: &str) -> Vec<String> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(cmdline) = std::fs::read(e.path().join("cmdline")) else {
            continue;
        };
        let text = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        if text.contains(marker) {
            out.push(text);
        }
    }
    out
}

/// A worker written in `sh`: `script` is the loop body run per request line.
fn sh_worker(s: &Scene, name: &str, body: &str) -> Backend {
    let marker = s.dir.join(name);
    let text = format!(
        "name = \"{name}\"\nmode = \"worker\"\ntimeout = 1\nworker = [\"sh\", \"-c\", '{body}', \"sh\", \"{}\"]\n",
        marker.display()
    );
    backend(&s.dir, &text)
}

fn call(b: &Backend, s: &Scene) -> Outcome {
    capture(
        b,
        &s.fresh("r"),
        &s.dir.join("w.tar"),
        &[b"\xff"],
        &s.fresh("sc"),
    )
}

/// Garbage, death and silence each give a clear message naming the worker command; the
/// worker is restarted once and then given up; nothing is left running after a drop.
#[test]
fn broken_workers_give_clear_outcomes_and_leave_nothing_behind() {
    let s = Scene::new();
    let cases = [
        (
            "garbage",
            "while read l; do echo not-json; done",
            "with garbage `not-json`",
        ),
        (
            "dies",
            "read l; exit 9",
            "exited with status 9 during the capture request",
        ),
    ];
    for (name, body, says) in cases {
        let b = sh_worker(&s, name, body);
        let marker = s.dir.join(name).display().to_string();
        for round in 0..2 {
            let out = call(&b, &s);
            let Outcome::Refused { message } = out else {
                panic!("{name} {round}: refused expected, got {out:?}")
            };
            assert!(message.contains(says), "{name}: {message}");
            assert!(
                message.contains("worker `sh -c"),
                "{name}: names the command: {message}"
            );
        }
        let Outcome::Refused { message } = call(&b, &s) else {
            panic!("{name}: refused expected")
        };
        assert!(message.contains("is unavailable"), "{name}: {message}");
        assert_eq!(
            b.worker().map(|w| w.starts()),
            Some(2),
            "{name}: restarted once"
        );
        drop(b);
        assert!(
            processes_mentioning(&marker).is_empty(),
            "{name}: left behind"
        );
    }

    // Silence: a hang, the group (with a background child) is killed, a fresh worker next.
    let b = sh_worker(&s, "hangs", "sleep 600 & read l; sleep 600");
    let marker = s.dir.join("hangs").display().to_string();
    for _ in 0..2 {
        let out = call(&b, &s);
        let Outcome::Hang { message } = out else {
            panic!("hang expected, got {out:?}")
        };
        assert!(
            message.contains("did not answer the capture request within 1000 ms"),
            "{message}"
        );
    }
    assert_eq!(
        b.worker().map(|w| w.starts()),
        Some(2),
        "a fresh worker per hang"
    );
    assert!(
        b.worker().and_then(|w| w.unavailable()).is_none(),
        "hangs do not give it up"
    );
    assert!(
        processes_mentioning(&marker).is_empty(),
        "killed at the timeout"
    );

    // A healthy worker answering the protocol stays one process; drop kills it.
    let b = sh_worker(&s, "echo", r#"while read l; do echo "{\"ok\":true}"; done"#);
    let marker = s.dir.join("echo").display().to_string();
    for _ in 0..3 {
        assert_eq!(call(&b, &s), Outcome::Success);
    }
    assert_eq!(b.worker().map(|w| w.starts()), Some(1));
    assert_eq!(processes_mentioning(&marker).len(), 1, "one worker runs");
    drop(b);
    assert!(
        processes_mentioning(&marker).is_empty(),
        "drop kills the worker"
    );
}

/// Worker mode can be switched to command mode on a loaded description (the benchmark does).
#[test]
fn a_description_switches_modes() {
    let s = Scene::new();
    let b = backend(
        &s.dir,
        "name = \"w\"\nmode = \"worker\"\nworker = [\"cat\"]\ncapture = [\"true\"]\nhydrate = [\"true\"]\n",
    );
    assert!(b.worker().is_some());
    let mut d: BackendDescription = b.description().clone();
    d.mode = Mode::Command;
    let c = Backend::new(d);
    assert!(c.worker().is_none());
    assert_eq!(call(&c, &s), Outcome::Success);
}

/// Every file named `PWNED` under `dir`, recursively.
fn pwned_under(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if e.file_name() == "PWNED" {
                found.push(p.clone());
            }
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                todo.push(p);
            }
        }
    }
    found
}

/// The values of `{root}`, `{archive}` and `{exclude_file}` hold `$(…)`, backticks, `;`,
/// a newline and spaces (`{dir}` spaces only). Passed to `sh -c`, `env sh -c` and
/// `bash -o pipefail -c` scripts as positional parameters (the only form a description may
/// use), they arrive byte for byte and run nothing: no `PWNED` file appears in the test's
/// cwd or anywhere under the directories involved.
#[test]
fn hostile_paths_reach_scripts_as_positional_parameters_and_run_nothing() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let evil = "e $(touch PWNED) `touch PWNED` ; touch PWNED\n x";
    let base = tmp.path().join(evil);
    // `{dir}` is the one value whose code bytes are refused when the description loads
    // (`description.rs`'s test): here it holds a space only.
    let dir = tmp.path().join("dir with spaces");
    std::fs::create_dir_all(&dir).expect("mkdir");
    let script = r#"printf '%s\000' "$1" "$2" "$3" "$4" > "$OUT""#;
    let args = r#""sh", "{root}", "{archive}", "{exclude_file}", "{dir}""#;
    let text = format!(
        "name = \"evil\"\n\
         capture = [\"env\", \"OUT={{archive}}\", \"sh\", \"-c\", '''{script}''', {args}]\n\
         validate = [\"bash\", \"-o\", \"pipefail\", \"-c\", '''OUT=\"$1/validated\"; {script}''', {args}]\n\
         hydrate = [\"sh\", \"-c\", '''OUT=\"$1/hydrated\"; {script}''', {args}]\n"
    );
    let path = dir.join("b.toml");
    std::fs::write(&path, text).expect("write the description");
    let b = Backend::load(&path).unwrap_or_else(|e| panic!("{e}"));
    let root = base.join(format!("root {evil}"));
    std::fs::create_dir_all(&root).expect("mkdir");
    let archive = base.join(format!("archive {evil}.tar"));
    let scratch = base.join(format!("scratch {evil}"));
    std::fs::create_dir_all(&scratch).expect("mkdir");
    let expect = |got: Vec<u8>| {
        let dir = dir.canonicalize().expect("canonical dir");
        let want: Vec<&[u8]> = vec![
            root.as_os_str().as_encoded_bytes(),
            archive.as_os_str().as_encoded_bytes(),
            &[],
            dir.as_os_str().as_encoded_bytes(),
        ];
        let fields: Vec<&[u8]> = got.split(|&b| b == 0).take(4).collect();
        assert_eq!(fields[0], want[0]);
        assert_eq!(fields[1], want[1]);
        assert!(
            fields[2].starts_with(scratch.as_os_str().as_encoded_bytes())
                && fields[2].ends_with(b"/exclude"),
            "{:?}",
            String::from_utf8_lossy(fields[2])
        );
        assert_eq!(fields[3], want[3]);
    };
    assert_eq!(
        capture(&b, &root, &archive, &[], &scratch),
        Outcome::Success
    );
    expect(std::fs::read(&archive).expect("the capture wrote the archive"));
    assert_eq!(hydrate(&b, &archive, &root, &scratch), Outcome::Success);
    expect(std::fs::read(root.join("validated")).expect("the validate step ran"));
    expect(std::fs::read(root.join("hydrated")).expect("the hydrate step ran"));
    let cwd = std::env::current_dir().expect("cwd");
    assert!(!cwd.join("PWNED").exists(), "code ran in the test's cwd");
    assert_eq!(pwned_under(tmp.path()), Vec::<PathBuf>::new());
}

/// Tools run in the request's scratch dir (worker: a private dir), never in the caller's
/// cwd: a hydrate step and a worker writing `cwd-marker` to `.` leave it there, not in the
/// test's cwd.
#[test]
fn tools_run_in_the_scratch_dir_not_in_our_cwd() {
    let s = Scene::new();
    let cwd = std::env::current_dir().expect("cwd");
    let marker = cwd.join("cwd-marker");
    let _ = std::fs::remove_file(&marker);
    let b = backend(
        &s.dir,
        "name = \"cwd\"\ncapture = [\"true\"]\nhydrate = [\"sh\", \"-c\", \"echo here > cwd-marker\"]\n",
    );
    let scratch = s.fresh("scratch-cwd");
    let out = hydrate(&b, &s.dir.join("a.tar"), &s.fresh("root-cwd"), &scratch);
    let leaked = marker.exists();
    let _ = std::fs::remove_file(&marker);
    assert_eq!(out, Outcome::Success);
    assert!(!leaked, "the hydrate step wrote into the test's cwd");
    assert!(
        scratch.join("cwd-marker").exists(),
        "it ran in the scratch dir"
    );

    let w = sh_worker(
        &s,
        "cwd-worker",
        r#"echo here > cwd-marker; while read l; do echo "{\"ok\":true}"; done"#,
    );
    assert_eq!(call(&w, &s), Outcome::Success);
    drop(w);
    let leaked = marker.exists();
    let _ = std::fs::remove_file(&marker);
    assert!(!leaked, "the worker wrote into the test's cwd");
}

/// The most bytes held at once, while `f` runs, by regular files this process has open
/// (anonymous captures included) and by files under `dir`; sampled every 5 ms.
fn peak_file_bytes<T>(dir: &Path, f: impl FnOnce() -> T) -> (T, u64) {
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
    fn sample(dir: &Path) -> u64 {
        let mut total = 0;
        for e in std::fs::read_dir("/proc/self/fd")
            .into_iter()
            .flatten()
            .flatten()
        {
            if let Ok(m) = std::fs::metadata(e.path()) {
                if m.is_file() {
                    total += std::os::unix::fs::MetadataExt::blocks(&m) * 512;
                }
            }
        }
        let mut todo = vec![dir.to_path_buf()];
        while let Some(d) = todo.pop() {
            for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
                match e.metadata() {
                    Ok(m) if m.is_dir() => todo.push(e.path()),
                    Ok(m) => total += std::os::unix::fs::MetadataExt::blocks(&m) * 512,
                    Err(_) => {}
                }
            }
        }
        total
    }
    let done = AtomicBool::new(false);
    let peak = AtomicU64::new(0);
    let out = std::thread::scope(|sc| {
        sc.spawn(|| {
            while !done.load(Ordering::Relaxed) {
                peak.fetch_max(sample(dir), Ordering::Relaxed);
                std::thread::sleep(Duration::from_millis(5));
            }
        });
        let out = f();
        done.store(true, Ordering::Relaxed);
        out
    });
    (out, peak.load(Ordering::Relaxed))
}

/// A tool printing 200 MB on stdout and on stderr (a command step, and a worker on its
/// stderr) ends with its evidence saying how many bytes were dropped, and no file grew
/// past a few MiB meanwhile (the captures are capped pipes, not scratch files).
#[test]
fn floods_of_output_are_capped_and_counted() {
    let s = Scene::new();
    let flood =
        "head -c 200000000 /dev/zero; head -c 200000000 /dev/zero >&2; echo last words >&2; exit 3";
    let b = backend(
        &s.dir,
        &format!(
            "name = \"flood\"\ncapture = [\"true\"]\nhydrate = [\"sh\", \"-c\", \"{flood}\"]\n"
        ),
    );
    let scratch = s.fresh("scratch-flood");
    let (out, peak) = peak_file_bytes(&s.dir, || {
        hydrate(&b, &s.dir.join("a.tar"), &s.fresh("root-flood"), &scratch)
    });
    let Outcome::Refused { message } = out else {
        panic!("refused expected, got {out:?}")
    };
    assert!(message.contains("last words"), "{message}");
    let dropped = 200_000_000 + "last words\n".len() - (16 << 20);
    assert!(
        message.contains(&format!("[{dropped} bytes dropped]")),
        "{message}"
    );
    assert!(peak < 8 << 20, "files held {peak} bytes at the peak");

    let w = sh_worker(
        &s,
        "flood-worker",
        "read l; head -c 50000000 /dev/zero >&2; echo last words >&2; exit 4",
    );
    let (out, peak) = peak_file_bytes(&s.dir, || call(&w, &s));
    let Outcome::Refused { message } = out else {
        panic!("refused expected, got {out:?}")
    };
    assert!(
        message.contains("last words [") && message.contains(" bytes dropped]"),
        "{message}"
    );
    assert!(peak < 8 << 20, "files held {peak} bytes at the peak");
}
