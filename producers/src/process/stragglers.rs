//! Processes a tool leaves behind: found, killed and named after each step.
//!
//! A tool runs in a process group of its own, and that group is killed when the tool ends
//! ([`crate::process::run`]); a process that left the group (`setsid`, a daemon) survives that.
//! Left alone it could write into the jail during a later step and be blamed on that
//! step's pair. So the `snapconf` binary makes itself the *child subreaper*
//! (`prctl(PR_SET_CHILD_SUBREAPER)`, Linux 3.4): an orphaned descendant of a tool is then
//! reparented to snapconf, not to init, and after every step that ran a tool
//! [`reap_stragglers`] kills (`SIGKILL`, with its process group) and reaps every child of
//! snapconf that no step owns, and names them for the step's report.
//!
//! The binary also turns on a reaper of its own for each step ([`crate::process::reaper`]):
//! a tool's orphans are then reparented to that step's reaper, which kills and names them,
//! so steps may run in parallel threads. Without it, only single-threaded callers that run
//! one tool at a time may rely on [`reap_stragglers`]: any child not registered as
//! persistent (a backend worker, [`register_persistent`]) is taken for a straggler.
//! Without either (libraries, unit tests running cases in parallel threads)
//! [`reap_stragglers`] does nothing.

use rustix::process::{
    kill_process, kill_process_group, waitid, waitpid, Pid, Signal, WaitId, WaitIdOptions,
    WaitOptions,
};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

static SUBREAPER: AtomicBool = AtomicBool::new(false);
static PERSISTENT: Mutex<Vec<i32>> = Mutex::new(Vec::new());

/// Rounds of kill-and-reap: a killed straggler's own children are reparented to us and
/// caught in the next round.
const ROUNDS: usize = 8;

/// Makes this process the child subreaper and turns [`reap_stragglers`] on. Call once,
/// from a single-threaded program that runs one tool at a time; false (and nothing on) if
/// the kernel refuses.
pub fn become_subreaper() -> bool {
    let on = rustix::process::set_child_subreaper(Some(rustix::process::getpid())).is_ok();
    SUBREAPER.store(on, Ordering::Relaxed);
    on
}

/// Marks `pid`, a child meant to outlive a step (a backend worker), as not a straggler.
pub fn register_persistent(pid: Pid) {
    let mut p = PERSISTENT.lock().unwrap_or_else(|e| e.into_inner());
    p.push(pid.as_raw_nonzero().get());
}

/// Undoes [`register_persistent`] (the worker was killed and reaped).
pub fn unregister_persistent(pid: Pid) {
    let mut p = PERSISTENT.lock().unwrap_or_else(|e| e.into_inner());
    p.retain(|&x| x != pid.as_raw_nonzero().get());
}

thread_local! {
    // The stragglers of the last steps this thread ran: killed and named by each step's
    // own reaper (`crate::process::reaper`) and handed over by `crate::process::run`.
    static HANDED: std::cell::RefCell<Vec<String>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Hands `lines` (stragglers a step's reaper killed) to this thread's next
/// [`reap_stragglers`].
pub(crate) fn hand_over(lines: Vec<String>) {
    HANDED.with(|h| h.borrow_mut().extend(lines));
}

/// The processes the steps this thread ran since the last call left behind, killed and
/// reaped, one line each (`PID COMMAND LINE`); processes that had already exited are reaped
/// and not listed.
///
/// Under a per-step reaper ([`crate::process::reaper::enable`]) those are what each step's
/// reaper found among its own descendants, so threads running steps at once never see
/// each other's. Else, after [`become_subreaper`], every child of this process that is
/// not a registered persistent child is taken for a straggler (single-threaded callers
/// only). Empty when neither is on.
pub fn reap_stragglers() -> Vec<String> {
    let mut named = HANDED.with(|h| std::mem::take(&mut *h.borrow_mut()));
    if crate::process::reaper::program().is_none() && SUBREAPER.load(Ordering::Relaxed) {
        let persistent = PERSISTENT.lock().unwrap_or_else(|e| e.into_inner()).clone();
        named.extend(kill_children(&persistent, None));
    }
    named
}

/// Kills (`SIGKILL`, with its process group) and reaps every child of this process whose
/// pid is not in `spare`, in rounds (a killed child's own children are reparented to us
/// when we are a subreaper, and caught in the next round); one line per child that was
/// still running (`PID COMMAND LINE`), except members of process group `killed` (the
/// tool's own group, killed just before: its background children end with it and are no
/// stragglers, however soon after the kill they are seen).
pub(crate) fn kill_children(spare: &[i32], killed: Option<i32>) -> Vec<String> {
    if !has_children() {
        return Vec::new();
    }
    let me = rustix::process::getpid().as_raw_nonzero().get();
    let mut named = Vec::new();
    let mut budget = CMDLINE_RETRY_BUDGET;
    for _ in 0..ROUNDS {
        let found: Vec<Proc> = children_of(me)
            .into_iter()
            .filter(|c| !spare.contains(&c.pid))
            .collect();
        if found.is_empty() {
            break;
        }
        // Every name before any kill: a member of a group killed first would be exiting,
        // its command line empty.
        for p in &found {
            if !p.zombie && killed != Some(p.group) {
                named.push(format!("{} {}", p.pid, cmdline(p.pid, &mut budget)));
            }
        }
        for Proc {
            pid: raw, zombie, ..
        } in found
        {
            let Some(pid) = Pid::from_raw(raw) else {
                continue;
            };
            if !zombie {
                let _ = kill_process_group(pid, Signal::KILL);
                let _ = kill_process(pid, Signal::KILL);
            }
            let _ = waitpid(Some(pid), WaitOptions::empty());
        }
    }
    named
}

/// False only if this process has no child at all: `waitid(P_ALL, WNOHANG | WNOWAIT)`
/// answers `ECHILD` then, at the cost of one system call instead of a `/proc` scan (the
/// usual case: the tool's group was reaped and nothing was left).
fn has_children() -> bool {
    let options = WaitIdOptions::NOHANG
        | WaitIdOptions::NOWAIT
        | WaitIdOptions::EXITED
        | WaitIdOptions::STOPPED
        | WaitIdOptions::CONTINUED;
    !matches!(waitid(WaitId::All, options), Err(rustix::io::Errno::CHILD))
}

/// Every process whose parent is `me` ([`all_processes`]).
fn children_of(me: i32) -> Vec<Proc> {
    all_processes()
        .into_iter()
        .filter(|p| p.ppid == me)
        .collect()
}

/// The time one kill of stragglers may spend waiting for empty command lines to fill
/// ([`cmdline`]), over all the processes it names: a tool that makes many processes
/// which exit at once cannot stall the kill by 20 ms each.
const CMDLINE_RETRY_BUDGET: std::time::Duration = std::time::Duration::from_millis(100);

/// The command line of `pid` on one line (NULs and other control characters shown as
/// spaces, runs of spaces as one), at most 200 bytes.
///
/// A process caught inside `execve` reads an empty `/proc/PID/cmdline` (the new image's
/// argument area is not set up yet), as does one that is exiting: an empty read is tried
/// again every millisecond for up to 20 ms, taken from `budget` (the process is not killed
/// yet, so its `exec` completes), then the line is the kernel's command name in brackets
/// (`/proc/PID/comm`, as `ps` shows it), or empty if the process is gone.
fn cmdline(pid: i32, budget: &mut std::time::Duration) -> String {
    let step = std::time::Duration::from_millis(1);
    let mut raw = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    for _ in 0..20 {
        if !raw.is_empty() || *budget < step {
            break;
        }
        std::thread::sleep(step);
        *budget -= step;
        raw = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    }
    if raw.is_empty() {
        let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
        let comm = comm.trim_end();
        return if comm.is_empty() {
            String::new()
        } else {
            format!("[{comm}]")
        };
    }
    let lossy = String::from_utf8_lossy(&raw).replace(|c: char| c.is_control(), " ");
    let mut text = lossy.split_whitespace().collect::<Vec<_>>().join(" ");
    if text.len() > 200 {
        let mut cut = 200;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        text.truncate(cut);
        text.push('…');
    }
    text
}

/// The environment variable that marks every process a backend worker started
/// (`kill_tagged`): `setsid` leaves a process group and a session, and reparenting
/// leaves the process tree, but the environment is inherited.
pub const WORKER_TAG_VAR: &str = "SNAPCONF_WORKER_TAG";

/// Kills (`SIGKILL`, with its process group when it leads one) every process that descends
/// from `root` or from an orphan (a child of init or of this process) that carries
/// `WORKER_TAG_VAR=tag` in its environment, except this process,
/// zombies and members of process group `spare_group` (the worker's own group, while it
/// runs on); reaps those that are this process's children (reparented to it as the child
/// subreaper). In rounds, so that what a killed process forked meanwhile is caught too.
/// One line per process killed (`PID COMMAND LINE`), for a `hang` finding.
///
/// A process that cleared its environment *and* left `root`'s tree (a double-forked
/// daemon started with `env -i`), or whose orphaned ancestor went to another subreaper,
/// is not found.
pub(crate) fn kill_tagged(tag: &str, root: i32, spare_group: Option<i32>) -> Vec<String> {
    let me = rustix::process::getpid().as_raw_nonzero().get();
    let mut needle = format!("{WORKER_TAG_VAR}={tag}").into_bytes();
    needle.push(0);
    let mut named = Vec::new();
    let mut killed: Vec<i32> = Vec::new();
    let mut budget = CMDLINE_RETRY_BUDGET;
    for _ in 0..ROUNDS {
        let all = all_processes();
        // Orphans are reparented to init or to the nearest subreaper (this process, in
        // the binary): only those are checked for the tag (reading every process's
        // environment after each request would cost), and their trees are taken whole.
        let mut tree = vec![root];
        tree.extend(
            all.iter()
                .filter(|p| (p.ppid <= 1 || p.ppid == me) && p.pid != root)
                .filter(|p| tagged(p.pid, &needle))
                .map(|p| p.pid),
        );
        let mut grew = true;
        while grew {
            grew = false;
            for p in &all {
                if tree.contains(&p.ppid) && !tree.contains(&p.pid) {
                    tree.push(p.pid);
                    grew = true;
                }
            }
        }
        let found: Vec<&Proc> = all
            .iter()
            .filter(|p| p.pid != me && !p.zombie && Some(p.group) != spare_group)
            .filter(|p| tree.contains(&p.pid))
            .collect();
        if found.is_empty() {
            break;
        }
        // Every name before any kill (see `kill_children`).
        for p in &found {
            if !killed.contains(&p.pid) {
                named.push(format!("{} {}", p.pid, cmdline(p.pid, &mut budget)));
                killed.push(p.pid);
            }
        }
        for p in found {
            let Some(pid) = Pid::from_raw(p.pid) else {
                continue;
            };
            if p.group == p.pid {
                let _ = kill_process_group(pid, Signal::KILL);
            }
            let _ = kill_process(pid, Signal::KILL);
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    // Reap the ones that are our children (others are reaped by their own parents).
    for raw in killed {
        let Some(pid) = Pid::from_raw(raw) else {
            continue;
        };
        for _ in 0..100 {
            match waitpid(Some(pid), WaitOptions::NOHANG) {
                Ok(None) => std::thread::sleep(std::time::Duration::from_millis(2)),
                Err(rustix::io::Errno::INTR) => {}
                _ => break,
            }
        }
    }
    named
}

/// Whether `/proc/PID/environ` holds `needle` (`NAME=VALUE\0`) as a whole entry.
fn tagged(pid: i32, needle: &[u8]) -> bool {
    let Ok(env) = std::fs::read(format!("/proc/{pid}/environ")) else {
        return false;
    };
    env.split_inclusive(|&b| b == 0).any(|e| e == needle)
}

/// A process as `/proc/PID/stat` shows it.
#[derive(Clone, Copy, Debug)]
struct Proc {
    pid: i32,
    ppid: i32,
    group: i32,
    zombie: bool,
}

/// Every process, from `/proc/*/stat` (`pid (comm) state ppid pgrp ...`; `comm` may hold
/// spaces and parentheses, so the fields are read after the last `)`).
fn all_processes() -> Vec<Proc> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for entry in dir.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<i32>().ok())
        else {
            continue;
        };
        let Ok(stat) = std::fs::read(format!("/proc/{pid}/stat")) else {
            continue;
        };
        let Some(close) = stat.iter().rposition(|&b| b == b')') else {
            continue;
        };
        let rest = String::from_utf8_lossy(&stat[close + 1..]);
        let mut f = rest.split_ascii_whitespace();
        let (Some(state), Some(ppid), Some(group)) = (f.next(), f.next(), f.next()) else {
            continue;
        };
        let (Ok(ppid), Ok(group)) = (ppid.parse(), group.parse()) else {
            continue;
        };
        out.push(Proc {
            pid,
            ppid,
            group,
            zombie: state == "Z",
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A child is found by its parent pid even when its command name holds `) ` (the
    /// `stat` fields are read after the last `)`), is not a zombie while it runs, and is
    /// named by its command line.
    #[test]
    fn children_are_found_whatever_their_name() {
        let t = tempfile::tempdir().expect("tempdir");
        let odd = t.path().join("s) x (");
        std::os::unix::fs::symlink("/bin/sleep", &odd).expect("symlink");
        let mut child = std::process::Command::new(&odd)
            .arg("30")
            .spawn()
            .expect("spawn sleep");
        let pid = i32::try_from(child.id()).expect("pid fits");
        let me = rustix::process::getpid().as_raw_nonzero().get();
        let found = children_of(me);
        let mut budget = CMDLINE_RETRY_BUDGET;
        let line = cmdline(pid, &mut budget);
        let _ = child.kill();
        let _ = child.wait();
        assert!(
            found.iter().any(|c| c.pid == pid && !c.zombie),
            "{pid} in {found:?}"
        );
        assert!(line.ends_with("s) x ( 30"), "{line}");
    }

    /// A process whose command line reads empty (here a zombie; also one inside `execve`)
    /// is named by its kernel command name in brackets, not by an empty line, after 20 ms
    /// of tries taken from the kill's budget, or at once when the budget is spent.
    #[test]
    fn a_process_without_a_command_line_is_named_by_its_command() {
        let mut child = std::process::Command::new("/bin/true")
            .spawn()
            .expect("spawn true");
        let pid = i32::try_from(child.id()).expect("pid fits");
        let me = rustix::process::getpid().as_raw_nonzero().get();
        let mut zombie = false;
        for _ in 0..2000 {
            zombie = children_of(me).iter().any(|c| c.pid == pid && c.zombie);
            if zombie {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        let mut budget = CMDLINE_RETRY_BUDGET;
        let line = cmdline(pid, &mut budget);
        let spent = CMDLINE_RETRY_BUDGET - budget;
        let mut none = std::time::Duration::ZERO;
        let at_once = cmdline(pid, &mut none);
        let _ = child.wait();
        assert!(zombie, "{pid} became a zombie");
        assert_eq!(line, "[true]");
        assert_eq!(
            spent,
            std::time::Duration::from_millis(20),
            "20 tries, 1 ms each"
        );
        assert_eq!(at_once, "[true]", "no budget left: named at once");
    }
}
