//! The composite action, `action.yml` at the repository root, run here as GitHub would run
//! it: each step's `if:` judged, its `${{ … }}` filled in, its `run:` script run with bash
//! (`GITHUB_OUTPUT` and `GITHUB_STEP_SUMMARY` files in a temporary directory), and the
//! two artifact actions it uses played by copies into a temporary store. The jobs and
//! their `with:` come from the workflow in docs/ci.md (only the backend, the case count and
//! the pairs are made small), so the documented workflow is what runs: the shards, then
//! the merge, the summary, the upload of the reproducers and the gate.

use crate::support;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use yaml_rust2::{Yaml, YamlLoader};

/// The repository root.
fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the harness is in the workspace")
        .to_path_buf()
}

/// The one YAML document in `text`.
fn yaml(text: &str) -> Yaml {
    let mut docs = YamlLoader::load_from_str(text).expect("valid YAML");
    assert_eq!(docs.len(), 1, "one document");
    docs.remove(0)
}

/// `y` as text (numbers too, as an action input is).
fn text(y: &Yaml) -> String {
    match y {
        Yaml::String(s) | Yaml::Real(s) => s.clone(),
        Yaml::Integer(i) => i.to_string(),
        Yaml::Boolean(b) => b.to_string(),
        _ => String::new(),
    }
}

/// The workflow in docs/ci.md's section on the action: its first `yaml` block.
fn documented_workflow() -> Yaml {
    let doc = std::fs::read_to_string(repo().join("docs/ci.md")).expect("docs/ci.md");
    let section = doc
        .split("\n## ")
        .find(|s| s.starts_with("The action"))
        .expect("docs/ci.md has a section on the action");
    let block = section
        .split("```yaml\n")
        .nth(1)
        .and_then(|b| b.split("```").next())
        .expect("the section shows a workflow");
    yaml(block)
}

/// What a job's steps see: the inputs, the paths, and the outputs of earlier steps.
struct Ctx {
    inputs: BTreeMap<String, String>,
    outputs: BTreeMap<String, String>,
    runner_temp: PathBuf,
    matrix_shard: String,
}

impl Ctx {
    /// The value of one expression name (`inputs.cases`, `runner.temp`, …).
    fn value(&self, name: &str) -> String {
        let name = name.trim();
        if let Some(i) = name.strip_prefix("inputs.") {
            return self
                .inputs
                .get(i)
                .unwrap_or_else(|| panic!("no input `{i}`"))
                .clone();
        }
        if let Some(o) = name.strip_prefix("steps.") {
            return self.outputs.get(o).cloned().unwrap_or_default();
        }
        match name {
            "github.action_path" => repo().display().to_string(),
            "github.run_number" => "7".into(),
            "runner.temp" => self.runner_temp.display().to_string(),
            "matrix.shard" => self.matrix_shard.clone(),
            other => panic!("the test does not know `{other}`"),
        }
    }

    /// `s` with each `${{ NAME }}` replaced.
    fn fill(&self, s: &str) -> String {
        let mut out = String::new();
        let mut rest = s;
        while let Some(at) = rest.find("${{") {
            out.push_str(&rest[..at]);
            let end = rest[at..].find("}}").expect("closed expression") + at;
            out.push_str(&self.value(&rest[at + 3..end]));
            rest = &rest[end + 2..];
        }
        out.push_str(rest);
        out
    }

    /// An `if:` of `A == 'v'` / `A != 'v'` terms joined by `&&` and `||` (`&&` first).
    fn holds(&self, cond: &str) -> bool {
        cond.split("||").any(|all| {
            all.split("&&").all(|term| {
                let (a, b, eq) = match term.split_once("==") {
                    Some((a, b)) => (a, b, true),
                    None => {
                        let (a, b) = term.split_once("!=").expect("== or !=");
                        (a, b, false)
                    }
                };
                let b = b.trim().trim_matches('\'');
                (self.value(a) == b) == eq
            })
        })
    }
}

/// One job running the action with `with`: its exit code and the step summary written.
struct Job {
    code: i32,
    summary: String,
}

/// Run the action's steps in `work` with `with` (on top of the inputs' defaults), with
/// `bin` (a directory holding `snapconf`) first on PATH and `store` holding the artifacts.
fn run_action(
    action: &Yaml,
    with: &BTreeMap<String, String>,
    work: &Path,
    bin: &Path,
    store: &Path,
) -> Job {
    let temp = tempfile::tempdir().expect("tempdir");
    let mut ctx = Ctx {
        inputs: BTreeMap::new(),
        outputs: BTreeMap::new(),
        runner_temp: temp.path().to_path_buf(),
        matrix_shard: String::new(),
    };
    for (k, v) in action["inputs"].as_hash().expect("inputs") {
        let default = ctx.fill(&text(&v["default"]));
        ctx.inputs.insert(text(k), default);
    }
    for (k, v) in with {
        assert!(
            ctx.inputs.contains_key(k),
            "`{k}` is not an input of action.yml"
        );
        let v = ctx.fill(v);
        ctx.inputs.insert(k.clone(), v);
    }
    let summary = temp.path().join("step-summary.md");
    // The exit code of the first step that failed: after it only `always()` steps run.
    let mut failed: Option<i32> = None;
    for step in action["runs"]["steps"].as_vec().expect("steps") {
        let id = text(&step["id"]);
        let cond = step["if"].as_str().unwrap_or_default();
        // `always() && (COND)` runs after a failure too; any other `if:` (or none) is
        // GitHub's implicit `success() && …`.
        let (always, cond) = match cond.strip_prefix("always() && (") {
            Some(rest) => (true, rest.strip_suffix(')').expect("`always() && (…)`")),
            None => (false, cond),
        };
        if (failed.is_some() && !always) || (!cond.is_empty() && !ctx.holds(cond)) {
            continue;
        }
        if let Some(uses) = step["uses"].as_str() {
            artifact(uses, &step["with"], &ctx, work, store);
            continue;
        }
        let script = ctx.fill(step["run"].as_str().expect("a run or uses step"));
        assert_eq!(
            step["shell"].as_str(),
            Some("bash"),
            "step {id}: a composite step names its shell"
        );
        let output = temp.path().join(format!("output-{id}"));
        let mut cmd = std::process::Command::new("bash");
        cmd.args(["--noprofile", "--norc", "-eo", "pipefail", "-c", &script])
            .current_dir(work)
            .env("GITHUB_OUTPUT", &output)
            .env("GITHUB_STEP_SUMMARY", &summary)
            .env(
                "PATH",
                format!(
                    "{}:{}",
                    bin.display(),
                    std::env::var("PATH").unwrap_or_default()
                ),
            );
        for (k, v) in step["env"].as_hash().into_iter().flatten() {
            cmd.env(text(k), ctx.fill(&text(v)));
        }
        let out = cmd.output().expect("bash runs");
        if !out.status.success() {
            failed.get_or_insert(out.status.code().unwrap_or(-1));
            continue;
        }
        for line in std::fs::read_to_string(&output).unwrap_or_default().lines() {
            if let Some((k, v)) = line.split_once('=') {
                ctx.outputs
                    .insert(format!("{id}.outputs.{k}"), v.to_string());
            }
        }
    }
    Job {
        code: failed.unwrap_or(0),
        summary: std::fs::read_to_string(&summary).unwrap_or_default(),
    }
}

/// A job's directories under `tmp`: its working directory, a `bin` first on its PATH
/// (holding `snapconf`) and the artifact store.
fn job_dirs(tmp: &Path) -> (PathBuf, PathBuf, PathBuf) {
    let (work, bin, store) = (tmp.join("work"), tmp.join("bin"), tmp.join("store"));
    for d in [&work, &bin, &store] {
        std::fs::create_dir(d).expect("mkdir");
    }
    std::os::unix::fs::symlink(support::snapconf_bin(), bin.join("snapconf")).expect("symlink");
    (work, bin, store)
}

/// An executable `bin/NAME` running the shell `body`.
fn tool(bin: &Path, name: &str, body: &str) {
    let path = bin.join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).expect("write");
    std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o755))
        .expect("chmod");
}

/// Play `actions/upload-artifact` (copy `path` to `store/NAME`) or
/// `actions/download-artifact` (copy each `store/PATTERN*` to `path/NAME`).
fn artifact(uses: &str, with: &Yaml, ctx: &Ctx, work: &Path, store: &Path) {
    let copy = |from: &Path, to: &Path| {
        let ok = std::process::Command::new("cp")
            .arg("-a")
            .arg(from)
            .arg(to)
            .status()
            .is_ok_and(|s| s.success());
        assert!(ok, "cp {} {}", from.display(), to.display());
    };
    let path = work.join(ctx.fill(&text(&with["path"])));
    match uses {
        "actions/upload-artifact@v4" => {
            let name = ctx.fill(&text(&with["name"]));
            assert!(path.is_dir(), "upload of a missing `{}`", path.display());
            copy(&path, &store.join(name));
        }
        "actions/download-artifact@v4" => {
            let pattern = ctx.fill(&text(&with["pattern"]));
            let prefix = pattern.strip_suffix('*').expect("a pattern NAME-*");
            std::fs::create_dir_all(&path).expect("mkdir");
            for e in std::fs::read_dir(store).expect("store").flatten() {
                if e.file_name().to_string_lossy().starts_with(prefix) {
                    copy(&e.path(), &path.join(e.file_name()));
                }
            }
        }
        other => panic!("action.yml uses `{other}`, which the test does not play"),
    }
}

/// The documented workflow, run job by job with the action: every shard job succeeds
/// whatever it finds and uploads its shard; the merge job joins them, appends
/// `summary.md` to the step summary, uploads the report with its reproducers and fails
/// with exit 1 on the (new) finding, as `snapconf report merge` does.
#[test]
fn the_documented_workflow_runs_the_shards_merges_and_reports() {
    if !support::producer_available("gnu-tar-lnk") {
        return;
    }
    let action = yaml(&std::fs::read_to_string(repo().join("action.yml")).expect("action.yml"));
    let workflow = documented_workflow();
    let tmp = tempfile::tempdir().expect("tempdir");
    let (work, bin, store) = job_dirs(tmp.path());
    // `sudo` is never needed where the tools are installed; if it is, it says so.
    tool(
        &bin,
        "sudo",
        "echo \"sudo $*: a tool is missing\" >&2\nexit 9",
    );

    // The jobs that use the action, in order, with their `with:` and matrix.
    let jobs = workflow["jobs"].as_hash().expect("jobs");
    let mut shards_seen = Vec::new();
    let mut merged = None;
    for (name, job) in jobs {
        let name = text(name);
        let step = job["steps"]
            .as_vec()
            .expect("steps")
            .iter()
            .find(|s| {
                s["uses"]
                    .as_str()
                    .is_some_and(|u| u.starts_with("OWNER/snapconf@"))
            })
            .unwrap_or_else(|| panic!("job `{name}` uses the action"));
        let mut with: BTreeMap<String, String> = step["with"]
            .as_hash()
            .expect("with")
            .iter()
            .map(|(k, v)| (text(k), text(v)))
            .collect();
        let shards: usize = with["shards"].parse().expect("shards is a number");
        // Small and local: the built-in pairs (one that finds a late-failure), few cases.
        with.remove("backend");
        with.remove("baseline");
        with.insert("cases".into(), "8".into());
        with.insert(
            "args".into(),
            "--producers tar-rs,gnu-tar-lnk --extractors reference --shrink-total 10".into(),
        );
        let matrix = job["strategy"]["matrix"]["shard"].as_vec();
        if let Some(matrix) = matrix {
            assert_eq!(
                matrix.len(),
                shards,
                "job `{name}`: one matrix entry per shard"
            );
            assert_eq!(with["shard"], "${{ matrix.shard }}", "job `{name}`");
            for k in matrix {
                let mut w = with.clone();
                w.insert("shard".into(), text(k));
                let job = run_action(&action, &w, &work, &bin, &store);
                assert_eq!(job.code, 0, "shard {} succeeds whatever it finds", text(k));
                assert!(job.summary.is_empty(), "a shard writes no summary");
                shards_seen.push(text(k));
            }
        } else {
            assert_eq!(
                with["shard"], "merge",
                "job `{name}` without a matrix merges"
            );
            assert!(
                job["needs"]
                    .as_str()
                    .is_some_and(|n| jobs.keys().any(|k| text(k) == n)),
                "the merge job needs the shard job"
            );
            assert_eq!(
                shards_seen.len(),
                shards,
                "the merge comes after every shard"
            );
            with.insert("report-dir".into(), "merged".into());
            merged = Some(run_action(&action, &with, &work, &bin, &store));
        }
    }
    let merged = merged.expect("the workflow has a merge job");
    assert_eq!(merged.code, 1, "the gate fails on the new finding");
    let summary_md = std::fs::read_to_string(work.join("merged/summary.md")).expect("summary.md");
    assert_eq!(
        merged.summary, summary_md,
        "summary.md went to the job summary"
    );
    let report: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(store.join("snapconf-report/report.json"))
            .expect("uploaded report"),
    )
    .expect("report.json");
    assert_eq!(report["cases"], 8, "the shards together ran every case");
    assert!(
        store
            .join("snapconf-report/cases/late-failure__gnu-tar-lnk__reference/repro.sh")
            .is_file(),
        "the reproducers are uploaded"
    );
}

/// A run that ends in exit 3 (an extractor asked for is not available here: less ran than
/// asked) still puts its summary in the job summary and uploads its report, and the job
/// fails with that code.
#[test]
fn a_run_that_did_less_than_asked_still_reports() {
    let action = yaml(&std::fs::read_to_string(repo().join("action.yml")).expect("action.yml"));
    let tmp = tempfile::tempdir().expect("tempdir");
    let (work, bin, store) = job_dirs(tmp.path());
    // A `bsdtar` that fails at everything, `--version` included: not available.
    tool(&bin, "bsdtar", "echo broken >&2\nexit 1");
    let with: BTreeMap<String, String> = [
        ("cases", "3"),
        ("seed", "1"),
        ("args", "--producers tar-rs --extractors reference,bsdtar"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    let job = run_action(&action, &with, &work, &bin, &store);
    assert_eq!(job.code, 3, "less ran than asked: {}", job.summary);
    assert!(job.summary.contains("INCOMPLETE"), "{}", job.summary);
    assert!(
        store.join("snapconf-report/report.json").is_file(),
        "the report is uploaded"
    );
}
