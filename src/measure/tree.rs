//! The process tree of a command this tool started (`run -- COMMAND`, its
//! `--prepare`, `observe -- COMMAND`), owned to its end (issue 38).
//!
//! The command runs in a process group of its own (set on the held child,
//! [`super::launch`]), and the tool is a child subreaper
//! ([`become_subreaper`]), so a descendant whose parent ends, even one
//! that left the group with `setsid` or daemonised, becomes the tool's
//! child rather than init's. The tree is then: the command, the members
//! of its group, the tool's other children (only where it is a subreaper:
//! a library caller's own children are never taken for the command's),
//! and every descendant of those, found by scanning `/proc`.
//!
//! A stop signal is passed on to the whole tree ([`Supervisor`]); after
//! the command exits, whatever of its tree still runs is an outliver:
//! named ([`Outliver`]), then stopped with SIGTERM, [`OUTLIVER_GRACE`],
//! then SIGKILL, and reaped, its CPU time counted with the repetition's
//! ([`Tree::stop_outlivers`]). A second stop signal kills the whole tree
//! and quits at once ([`super::stop`]).

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use serde::{Deserialize, Serialize};

use super::stop;

/// How long outlivers get between SIGTERM and SIGKILL, and a stopped
/// command between the stop signal passed on and SIGKILL.
pub const OUTLIVER_GRACE: Duration = Duration::from_millis(500);
/// How often the tree is looked at while it is being stopped.
const LOOK: Duration = Duration::from_millis(10);
/// How long killed processes may take to be gone before the tool gives
/// up on them (SIGKILL ends anything but a process stuck in the kernel).
const KILL_WAIT: Duration = Duration::from_secs(5);

/// A process of the command's tree still alive when the command exited.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Outliver {
    #[schemars(range(min = 1))]
    pub pid: i32,
    /// Its name (`/proc/PID/comm`).
    pub name: String,
    /// How long it outlived the command, ms: until it was gone, or until
    /// it was last seen where it was left running.
    pub outlived_ms: u64,
    /// What ended it.
    pub ended_by: OutliverEnd,
}

/// What became of an outliver.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum OutliverEnd {
    /// SIGTERM ended it (or it ended on its own meanwhile).
    Sigterm,
    /// It outlasted SIGTERM's grace: SIGKILL.
    Sigkill,
    /// `--leave-running`: still running when the tool went on.
    LeftRunning,
}

impl OutliverEnd {
    /// What became of it, for a message: "stopped by SIGTERM".
    pub fn describe(self) -> &'static str {
        match self {
            OutliverEnd::Sigterm => "stopped by SIGTERM",
            OutliverEnd::Sigkill => "killed with SIGKILL after SIGTERM's grace",
            OutliverEnd::LeftRunning => "left running (--leave-running)",
        }
    }
}

/// How far the tool owns what a user's command starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ownership {
    /// `--leave-running`: outlivers are named, not stopped.
    pub leave_running: bool,
    /// `--prepare-timeout`: a prepare still running then is killed.
    pub prepare_timeout: Duration,
}

impl Default for Ownership {
    fn default() -> Ownership {
        Ownership {
            leave_running: false,
            prepare_timeout: DEFAULT_PREPARE_TIMEOUT,
        }
    }
}

/// `--prepare-timeout`'s default: ten minutes, longer than any cache drop
/// or database reset, short of a forgotten server.
pub const DEFAULT_PREPARE_TIMEOUT: Duration = Duration::from_secs(600);

/// Makes this process a child subreaper: every orphaned descendant is
/// re-parented to it, so the tree a command leaves behind can be found
/// and reaped. Called by the commands that run a user's command.
pub fn become_subreaper() -> anyhow::Result<()> {
    use anyhow::Context;
    nix::sys::prctl::set_child_subreaper(true)
        .context("prctl(PR_SET_CHILD_SUBREAPER) for the command's process tree")
}

/// One process as `/proc` shows it.
#[derive(Clone, Debug)]
struct Process {
    pid: i32,
    ppid: i32,
    pgrp: i32,
    zombie: bool,
    name: String,
}

fn processes() -> Vec<Process> {
    let Ok(all) = procfs::process::all_processes() else {
        return Vec::new();
    };
    all.flatten()
        .filter_map(|process| process.stat().ok())
        .map(|stat| Process {
            pid: stat.pid,
            ppid: stat.ppid,
            pgrp: stat.pgrp,
            zombie: matches!(stat.state, 'Z' | 'X'),
            name: stat.comm,
        })
        .collect()
}

/// This process's children among `all`.
fn children(all: &[Process], me: i32) -> BTreeSet<i32> {
    all.iter().filter(|p| p.ppid == me).map(|p| p.pid).collect()
}

/// The members of the tree of `root` in `group` among `all`; see the
/// module docs. `subreaper`: this process's children count as roots, but
/// for those in `before` (its children before the command started: what
/// an earlier command was left running with, for one).
fn members(
    all: &[Process],
    root: i32,
    group: i32,
    me: i32,
    subreaper: Option<&BTreeSet<i32>>,
) -> Vec<Process> {
    let came_back =
        |p: &Process| subreaper.is_some_and(|before| p.ppid == me && !before.contains(&p.pid));
    let mut inside: BTreeSet<i32> = all
        .iter()
        .filter(|p| p.pid != me)
        .filter(|p| p.pid == root || p.pgrp == group || came_back(p))
        .map(|p| p.pid)
        .collect();
    loop {
        let before = inside.len();
        for process in all {
            if process.pid != me && inside.contains(&process.ppid) {
                inside.insert(process.pid);
            }
        }
        if inside.len() == before {
            break;
        }
    }
    all.iter()
        .filter(|p| inside.contains(&p.pid))
        .cloned()
        .collect()
}

/// The CPU time and context switches of reaped processes, as rusage
/// gives them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Reaped {
    pub cpu_ns: u64,
    pub context_switches: u64,
}

impl Reaped {
    /// The usage `wait4` gave for one process (with the descendants it
    /// waited for).
    pub fn of(usage: &libc::rusage) -> Reaped {
        let nanos = |t: libc::timeval| t.tv_sec as u64 * 1_000_000_000 + t.tv_usec as u64 * 1000;
        Reaped {
            cpu_ns: nanos(usage.ru_utime) + nanos(usage.ru_stime),
            context_switches: (usage.ru_nvcsw + usage.ru_nivcsw) as u64,
        }
    }

    pub fn add(&mut self, other: Reaped) {
        self.cpu_ns += other.cpu_ns;
        self.context_switches += other.context_switches;
    }
}

/// A command's process tree: its first process (the group's leader) and
/// everything `members` finds. Registered with the stop handlers while
/// it lives, so a second stop signal kills its group at once; dropped
/// unfinished (an error on the way), it kills the whole tree.
pub struct Tree {
    root: Pid,
    me: i32,
    /// Where this process is a subreaper: its children before the command
    /// started, the command's root aside.
    subreaper: Option<BTreeSet<i32>>,
    finished: bool,
}

impl Tree {
    /// The tree of the held child `root`, the leader of its own group.
    pub fn of(root: Pid) -> Tree {
        stop::set_command_group(root.as_raw());
        let me = std::process::id() as i32;
        let subreaper = nix::sys::prctl::get_child_subreaper()
            .unwrap_or(false)
            .then(|| {
                let mut before = children(&processes(), me);
                before.remove(&root.as_raw());
                before
            });
        Tree {
            root,
            me,
            subreaper,
            finished: false,
        }
    }

    /// The tree's processes now, the reaped root excluded.
    fn now(&self) -> Vec<Process> {
        members(
            &processes(),
            self.root.as_raw(),
            self.root.as_raw(),
            self.me,
            self.subreaper.as_ref(),
        )
    }

    /// Sends `signal` to the group and to every living member (those that
    /// left the group included).
    pub fn signal(&self, signal: Signal) {
        let _ = nix::sys::signal::killpg(self.root, signal);
        for process in self.now().iter().filter(|p| !p.zombie) {
            let _ = kill(Pid::from_raw(process.pid), signal);
        }
    }

    /// Reaps the members that are this process's zombie children (never
    /// the root, which the caller waits for), adding up their usage.
    fn reap(&self, members: &[Process], reaped: &mut Reaped) {
        for process in members
            .iter()
            .filter(|p| p.zombie && p.ppid == self.me && p.pid != self.root.as_raw())
        {
            reaped.add(reap_one(process.pid));
        }
    }

    /// After the command (the root) was reaped at `ended`: names every
    /// member still alive, then (unless `leave_running`) stops them, TERM,
    /// [`OUTLIVER_GRACE`], KILL, and reaps every member this process can,
    /// giving their usage for the repetition's CPU time.
    pub fn stop_outlivers(
        mut self,
        ended: Instant,
        leave_running: bool,
    ) -> (Vec<Outliver>, Reaped) {
        let mut reaped = Reaped::default();
        let first = self.now();
        self.reap(&first, &mut reaped);
        let mut outlivers: Vec<Outliver> = first
            .iter()
            .filter(|p| !p.zombie)
            .map(|p| Outliver {
                pid: p.pid,
                name: p.name.clone(),
                outlived_ms: ended.elapsed().as_millis() as u64,
                ended_by: OutliverEnd::LeftRunning,
            })
            .collect();
        if leave_running || outlivers.is_empty() {
            self.finish();
            return (outlivers, reaped);
        }
        let mut settled = vec![false; outlivers.len()];
        let mut signal = Signal::SIGTERM;
        self.signal(signal);
        let killed_at = Instant::now() + OUTLIVER_GRACE;
        let deadline = Instant::now() + OUTLIVER_GRACE + KILL_WAIT;
        loop {
            let left = self.now();
            self.reap(&left, &mut reaped);
            let alive: Vec<i32> = left.iter().filter(|p| !p.zombie).map(|p| p.pid).collect();
            for (outliver, settled) in outlivers.iter_mut().zip(&mut settled) {
                if !*settled && !alive.contains(&outliver.pid) {
                    *settled = true;
                    outliver.outlived_ms = ended.elapsed().as_millis() as u64;
                    outliver.ended_by = match signal {
                        Signal::SIGKILL => OutliverEnd::Sigkill,
                        _ => OutliverEnd::Sigterm,
                    };
                }
            }
            let waiting = left.iter().any(|p| !p.zombie || p.ppid == self.me);
            if !waiting || Instant::now() > deadline {
                break;
            }
            if signal == Signal::SIGTERM && Instant::now() >= killed_at {
                signal = Signal::SIGKILL;
                self.signal(signal);
            }
            self.quit_if_asked();
            std::thread::sleep(LOOK);
        }
        self.finish();
        (outlivers, reaped)
    }

    /// Kills the whole tree now and waits (a moment) for it to be gone,
    /// reaping what this process can; the root included.
    pub fn kill(&self) {
        self.signal(Signal::SIGKILL);
        let mut reaped = Reaped::default();
        let deadline = Instant::now() + KILL_WAIT;
        let _ = nix::sys::wait::waitpid(self.root, Some(nix::sys::wait::WaitPidFlag::WNOHANG));
        while Instant::now() < deadline {
            let left = self.now();
            self.reap(&left, &mut reaped);
            if !left.iter().any(|p| !p.zombie || p.ppid == self.me) {
                break;
            }
            std::thread::sleep(LOOK);
        }
    }

    /// After a second stop signal (the handler already killed the group):
    /// kills the rest of the tree and quits the way that signal does.
    pub fn quit_if_asked(&self) {
        if let Some(signal) = stop::quit_signal() {
            self.kill();
            stop::quit_now(signal);
        }
    }

    fn finish(&mut self) {
        self.finished = true;
        stop::set_command_group(0);
    }
}

impl Drop for Tree {
    fn drop(&mut self) {
        if !self.finished {
            self.kill();
            let _ = nix::sys::wait::waitpid(self.root, None);
            self.finish();
        }
    }
}

/// Reaps `pid`, a zombie child, and gives its usage.
fn reap_one(pid: i32) -> Reaped {
    let mut status: libc::c_int = 0;
    // SAFETY: rusage is plain data that wait4 fills in.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: valid pointers to the two out-parameters, for this call.
    let reaped = unsafe { libc::wait4(pid, &mut status, libc::WNOHANG, &mut usage) };
    if reaped == pid {
        Reaped::of(&usage)
    } else {
        Reaped::default()
    }
}

/// What a supervised command does with a stop signal.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OnStop {
    /// Pass it on to the tree, and SIGKILL the tree after `grace` (a
    /// repetition, a prepare: the study ends).
    KillAfter(Duration),
    /// Pass it on to the tree and let the command decide when it ends
    /// (`observe`: its end is what is recorded).
    LetItEnd,
}

/// Watches a running command's tree between its polls: passes the first
/// stop signal on, kills the tree after a stop's grace or at a deadline,
/// and on a second signal kills it and quits.
pub struct Supervisor {
    on_stop: OnStop,
    /// When the stop was passed on.
    passed_on: Option<Instant>,
    /// A deadline (`--prepare-timeout`) and whether it was reached.
    deadline: Option<Instant>,
    pub timed_out: bool,
    killed: bool,
}

impl Supervisor {
    pub fn new(on_stop: OnStop, timeout: Option<Duration>) -> Supervisor {
        Supervisor {
            on_stop,
            passed_on: None,
            deadline: timeout.map(|timeout| Instant::now() + timeout),
            timed_out: false,
            killed: false,
        }
    }

    /// One look, between two polls of the command's end.
    pub fn tend(&mut self, tree: &Tree) {
        tree.quit_if_asked();
        if self.killed {
            return;
        }
        if let Some(deadline) = self.deadline
            && Instant::now() >= deadline
        {
            self.timed_out = true;
            self.killed = true;
            tree.signal(Signal::SIGKILL);
            return;
        }
        match (stop::stop_signal(), self.passed_on) {
            (Some(signal), None) => {
                self.passed_on = Some(Instant::now());
                let signal = Signal::try_from(signal.signal_number())
                    .expect("SIGINT and SIGTERM are signals");
                tree.signal(signal);
            }
            (Some(_), Some(at)) => {
                if let OnStop::KillAfter(grace) = self.on_stop
                    && at.elapsed() >= grace
                {
                    self.killed = true;
                    tree.signal(Signal::SIGKILL);
                }
            }
            (None, _) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn process(pid: i32, ppid: i32, pgrp: i32) -> Process {
        Process {
            pid,
            ppid,
            pgrp,
            zombie: false,
            name: format!("p{pid}"),
        }
    }

    #[test]
    fn the_tree_is_the_group_its_descendants_and_the_orphans_come_back() {
        let me = 10;
        let all = [
            process(me, 1, me),
            process(20, me, 20), // the command
            process(21, 20, 20), // its child
            process(22, 1, 22),  // someone else's
            process(30, 21, 30), // setsid'd grandchild
            process(31, 30, 30), // and its child
            process(40, me, 40), // an orphan re-parented to me
            process(41, 1, 20),  // in the group, parent gone (no subreaper)
            process(50, 22, 22), // someone else's child
            process(60, me, 60), // left running by an earlier command
            process(61, 60, 60), // and its child
        ];
        let before = BTreeSet::from([60]);
        let pids = |found: Vec<Process>| found.iter().map(|p| p.pid).collect::<Vec<_>>();
        assert_eq!(
            pids(members(&all, 20, 20, me, Some(&before))),
            vec![20, 21, 30, 31, 40, 41]
        );
        // A library caller's own children are not the command's.
        assert_eq!(
            pids(members(&all, 20, 20, me, None)),
            vec![20, 21, 30, 31, 41]
        );
    }

    #[test]
    fn reaped_usage_adds_cpu_time_and_switches() {
        // SAFETY: rusage is plain data; all zeroes is a valid value.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        usage.ru_utime.tv_sec = 1;
        usage.ru_stime.tv_usec = 500;
        usage.ru_nvcsw = 2;
        usage.ru_nivcsw = 1;
        let mut sum = Reaped::of(&usage);
        sum.add(Reaped::of(&usage));
        assert_eq!(sum.cpu_ns, 2_001_000_000);
        assert_eq!(sum.context_switches, 6);
    }
}
