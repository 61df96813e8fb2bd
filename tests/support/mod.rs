//! Booting QEMU guests with a chosen vCPU topology for end-to-end tests.
//!
//! `../shared/vm/boot-guest.sh` (beside the repository) boots a throw-away
//! Linux guest, runs one static x86_64 binary in it and reports `EXIT=N`.
//! The guest tests are `#[ignore]`d (each boot costs seconds of emulated
//! CPU) and run with `--ignored`; [`Guest::new`] finds the boot script,
//! [`Guest::boot`] builds the static `placement-study` once per test process
//! and runs it in a guest; [`Guest::boot_throttled`] also caps vCPUs at a
//! share of their host CPU, so that one runs slower than another.
//!
//! [`Arm64Guest`] does the same with `boot-guest-arm64.sh`, whose guest has
//! a PMU that really counts (exactly, with icount on one vCPU), and a
//! binary built by `build-arm64.sh`. [`Arm64Guest::boot_script`] runs a
//! shell script instead, with `placement-study` and the `hold-counters`
//! test tool (`tests/hold-counters/`) unpacked into the guest's `/tmp` first.
//!
//! Inside the guest the payload's stdout and stderr are both the serial
//! console, so they arrive merged in [`GuestRun::stdout`]; and the console is
//! a terminal, so anything the product prints only "when stderr is a
//! terminal" shows up there too. [`GuestRun::json`] copes with that.

pub mod noise;

use std::fmt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, OnceLock, PoisonError};
use std::time::Instant;

/// The payload architecture: boot-guest.sh runs x86_64 guests only. Naming
/// the target explicitly also keeps `crt-static` away from build scripts and
/// proc-macros, which must stay dynamic host binaries.
const GUEST_TARGET: &str = "x86_64-unknown-linux-gnu";

/// Guest vCPUs are pinned to host CPUs 0 and 1 (`PIN=`), and an unpinned
/// guest runs as fast as the host lets it: two guests at once would measure
/// each other. Every boot holds this lock.
static ONE_GUEST_AT_A_TIME: Mutex<()> = Mutex::new(());

/// The static binary, built on first use; the error is cargo's output.
static STATIC_BINARY: OnceLock<Result<PathBuf, String>> = OnceLock::new();

/// A place to boot guests from: the boot script, found and opted in to.
pub struct Guest {
    /// boot-guest.sh itself, for a test whose guests another program boots
    /// (the fleet test's pdsh runs it once per host).
    pub boot_script: PathBuf,
    /// Seconds one boot may take, boot included.
    timeout_seconds: u64,
}

/// What one guest boot produced.
#[derive(Debug)]
pub struct GuestRun {
    /// What was booted, for failure messages: smp, pin, throttle and arguments.
    pub invocation: String,
    /// The payload's exit code from the guest's `EXIT=N` line; when the guest
    /// never reported one, boot-guest.sh's own status (124 timeout, 125
    /// set-up failure, -1 killed by a signal).
    pub exit_code: i32,
    /// The payload's output: its stdout and stderr, merged by the guest console.
    pub stdout: String,
    /// The host side: boot-guest.sh's diagnostics (accelerator, pinning, timings).
    pub stderr: String,
    /// The guest-visible sibling map boot-guest.sh printed before the payload ran.
    pub guest_topology: String,
}

impl Guest {
    /// The boot script. A guest test was asked for (`--ignored`), so a
    /// missing script fails it rather than passing it silently.
    pub fn new() -> Guest {
        Guest::with_timeout(GUEST_TIMEOUT_SECONDS)
    }

    /// The same, each boot allowed `seconds` (a benchmark of today's
    /// slowest search needs more than a test's bound).
    pub fn with_timeout(seconds: u64) -> Guest {
        let boot_script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/vm/boot-guest.sh");
        assert!(
            boot_script.is_file(),
            "{} is absent: guest tests need ../shared beside the repository",
            boot_script.display()
        );
        Guest {
            boot_script,
            timeout_seconds: seconds,
        }
    }

    /// Boots a guest with QEMU `-smp` string `smp`, optionally pinning guest
    /// vCPU i to host CPU `pin[i]` (e.g. `"0,0,1,1"`), and runs the static
    /// `placement-study` with `args` in it. Panics, with cargo's output, when
    /// the static binary does not build, or when boot-guest.sh cannot be run.
    pub fn boot(&self, smp: &str, pin: Option<&str>, args: &[&str]) -> GuestRun {
        self.boot_with(smp, pin, None, args)
    }

    /// [`Guest::boot`] with guest vCPU i pinned to host CPU `pin[i]` and
    /// capped at `throttle[i]` per cent of it (boot-guest.sh's `THROTTLE=`,
    /// cgroup CFS bandwidth): `pin` `"0,1"` with `throttle` `"100,46"` makes
    /// vCPU 1 run at about 0.46 of vCPU 0's speed, alone or loaded, a slower
    /// core class the guest does not publish. Panics, showing the run, when
    /// boot-guest.sh did not confirm every cap below 100 % (an older script
    /// ignores `THROTTLE`; one without a cgroup cpu controller exits 125).
    pub fn boot_throttled(&self, smp: &str, pin: &str, throttle: &str, args: &[&str]) -> GuestRun {
        let run = self.boot_with(smp, Some(pin), Some(throttle), args);
        for (vcpu, cap) in throttle.split(',').enumerate() {
            let confirmation = format!("boot-guest: throttled vCPU {vcpu} -> {cap} %");
            assert!(
                cap == "100" || run.stderr.contains(&confirmation),
                "boot-guest.sh did not cap vCPU {vcpu} at {cap} % (no '{confirmation}')\n{run}"
            );
        }
        run
    }

    /// [`Guest::boot`] of a guest of two NUMA nodes, vCPU i on node i with
    /// 512 MiB each, whose SLIT publishes `distance` between them
    /// (boot-guest.sh's `QEMU_ARGS`, `MEM`); under TCG both nodes' memory
    /// is the same host memory.
    pub fn boot_two_nodes(&self, distance: u32, args: &[&str]) -> GuestRun {
        let qemu_args = format!(
            "-object memory-backend-ram,id=m0,size=512M -object memory-backend-ram,id=m1,size=512M \
             -numa node,nodeid=0,cpus=0,memdev=m0 -numa node,nodeid=1,cpus=1,memdev=m1 \
             -numa dist,src=0,dst=1,val={distance}"
        );
        self.boot_env("2", &[("MEM", "1024"), ("QEMU_ARGS", &qemu_args)], args)
    }

    fn boot_with(
        &self,
        smp: &str,
        pin: Option<&str>,
        throttle: Option<&str>,
        args: &[&str],
    ) -> GuestRun {
        let mut env = Vec::new();
        env.extend(pin.map(|pin| ("PIN", pin)));
        env.extend(throttle.map(|caps| ("THROTTLE", caps)));
        self.boot_env(smp, &env, args)
    }

    /// Boots with `env` (boot-guest.sh's variables) and nothing else
    /// inherited that would change the guest.
    fn boot_env(&self, smp: &str, env: &[(&str, &str)], args: &[&str]) -> GuestRun {
        let value = |name: &str| env.iter().find(|(n, _)| *n == name).map(|(_, v)| *v);
        let (pin, throttle) = (value("PIN"), value("THROTTLE"));
        let binary = static_binary();
        let invocation = format!(
            "boot-guest.sh smp={smp} PIN={}{}{} placement-study {}",
            pin.unwrap_or("(none)"),
            throttle
                .map(|caps| format!(" THROTTLE={caps}"))
                .unwrap_or_default(),
            value("QEMU_ARGS")
                .map(|qemu| format!(" QEMU_ARGS={qemu}"))
                .unwrap_or_default(),
            args.join(" ")
        );
        // Through bash: a copied shared/ may have lost the script's exec bit.
        let mut command = Command::new("bash");
        command
            .arg(&self.boot_script)
            .arg(binary)
            .arg(smp)
            .args(args);
        // Nothing inherited: a caller's PIN or THROTTLE would change the guest.
        for variable in ["PIN", "THROTTLE", "MEM", "QEMU_ARGS"] {
            match value(variable) {
                Some(value) => command.env(variable, value),
                None => command.env_remove(variable),
            };
        }
        command.env("TIMEOUT", self.timeout_seconds.to_string());
        boot_guest(invocation, &mut command)
    }
}

/// The arm64 guest harness: `boot-guest-arm64.sh` and the static aarch64
/// binaries `build-arm64.sh` makes.
pub struct Arm64Guest {
    boot_script: PathBuf,
    build_script: PathBuf,
}

/// How the arm64 guest's QEMU counts instructions.
#[derive(Clone, Copy, Debug)]
pub enum Icount {
    /// `-icount shift=0,sleep=off`: an exact instructions counter (on one
    /// vCPU), cycles = instructions.
    Exact,
    /// No icount: no instructions event at all; cycles follow host time.
    None,
}

/// The test tool that holds the PMU's counters, a crate of its own.
const HOLD_COUNTERS_CRATE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/hold-counters");

/// The static aarch64 unit-test binary of the library, built on first use.
static ARM64_UNIT_TESTS: OnceLock<Result<PathBuf, String>> = OnceLock::new();

/// rustup's aarch64 target, whose musl links statically by default.
const ARM64_TARGET: &str = "aarch64-unknown-linux-musl";

/// `cargo test --lib --no-run` for [`ARM64_TARGET`]: the test executable.
/// In the dev profile: the unit tests count what they run, not how fast, and
/// an optimised build of the library and its dev-dependencies took 278 s of
/// CI's time against 120 s unoptimised.
fn build_arm64_unit_tests() -> Result<PathBuf, String> {
    let started = Instant::now();
    let output = Command::new(env!("CARGO"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["test", "--lib", "--no-run", "--message-format=json"])
        .args(["--target", ARM64_TARGET])
        .env(
            "CARGO_TARGET_AARCH64_UNKNOWN_LINUX_MUSL_LINKER",
            "aarch64-linux-gnu-gcc",
        )
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .output()
        .map_err(|error| format!("cannot run {}: {error}", env!("CARGO")))?;
    if !output.status.success() {
        return Err(format!(
            "{}\n(needs `rustup target add {ARM64_TARGET}` and gcc-aarch64-linux-gnu, as .ci/run installs)",
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    let executable = String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .find_map(|message| message["executable"].as_str().map(PathBuf::from))
        .ok_or("cargo reported no test executable")?;
    println!(
        "guest: built aarch64 unit tests {} in {:.1} s",
        executable.display(),
        started.elapsed().as_secs_f64()
    );
    Ok(executable)
}

/// The static aarch64 `placement-study`, built on first use.
static ARM64_BINARY: OnceLock<Result<PathBuf, String>> = OnceLock::new();
/// The static aarch64 `hold-counters` test tool, built on first use.
static ARM64_HOLD_COUNTERS: OnceLock<Result<PathBuf, String>> = OnceLock::new();

impl Arm64Guest {
    /// The scripts. A guest test was asked for, so a missing one fails it.
    pub fn new() -> Arm64Guest {
        let vm = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/vm");
        let guest = Arm64Guest {
            boot_script: vm.join("boot-guest-arm64.sh"),
            build_script: vm.join("build-arm64.sh"),
        };
        for script in [&guest.boot_script, &guest.build_script] {
            assert!(
                script.is_file(),
                "{} is absent: guest tests need ../shared beside the repository",
                script.display()
            );
        }
        guest
    }

    /// Boots an arm64 guest with `-smp smp` and runs the static
    /// `placement-study` with `args` in it.
    pub fn boot(&self, smp: &str, icount: Icount, args: &[&str]) -> GuestRun {
        let binary = built(&ARM64_BINARY, || self.build(&["--bin", "placement-study"]));
        let invocation = format!(
            "boot-guest-arm64.sh smp={smp} icount={icount:?} placement-study {}",
            args.join(" ")
        );
        boot_guest(
            invocation,
            self.guest_command(binary, smp, icount).args(args),
        )
    }

    /// Boots an arm64 guest that runs `script` (busybox sh) with
    /// `/tmp/placement-study` and `/tmp/hold-counters` in place. The script's
    /// exit status is the run's.
    pub fn boot_script(&self, smp: &str, icount: Icount, script: &str) -> GuestRun {
        let binary = built(&ARM64_BINARY, || self.build(&["--bin", "placement-study"]));
        let hold = built(&ARM64_HOLD_COUNTERS, || {
            self.build_crate(HOLD_COUNTERS_CRATE, &[])
        });
        let folder = tempfile::tempdir().expect("a temporary folder for the guest payload");
        let payload = folder.path().join("payload.sh");
        let files = [("placement-study", binary), ("hold-counters", hold)];
        std::fs::write(&payload, self_extracting(script, &files))
            .unwrap_or_else(|error| panic!("cannot write {}: {error}", payload.display()));
        let invocation =
            format!("boot-guest-arm64.sh smp={smp} icount={icount:?} script:\n{script}");
        boot_guest(invocation, &mut self.guest_command(&payload, smp, icount))
    }

    fn guest_command(&self, payload: &Path, smp: &str, icount: Icount) -> Command {
        // Through bash: a copied shared/ may have lost the script's exec bit.
        let mut command = Command::new("bash");
        command.arg(&self.boot_script).arg(payload).arg(smp);
        command.env_remove("PIN");
        match icount {
            Icount::Exact => command.env_remove("ICOUNT"),
            Icount::None => command.env("ICOUNT", "none"),
        };
        command.env("TIMEOUT", GUEST_TIMEOUT_SECONDS.to_string());
        command
    }

    /// Builds the library's unit tests for aarch64 (route 1 of
    /// build-arm64.sh: rustup's musl target, Debian's cross linker; the
    /// script itself only builds) and runs those matching `filter` in an
    /// arm64 guest, output uncaptured.
    pub fn boot_unit_tests(&self, smp: &str, filter: &str) -> GuestRun {
        let binary = built(&ARM64_UNIT_TESTS, build_arm64_unit_tests);
        let invocation =
            format!("boot-guest-arm64.sh smp={smp} placement-study unit tests {filter}");
        boot_guest(
            invocation,
            self.guest_command(binary, smp, Icount::Exact).args([
                filter,
                "--test-threads=1",
                "--nocapture",
            ]),
        )
    }

    /// `build-arm64.sh` on placement-study with `args`: the binary's path.
    fn build(&self, args: &[&str]) -> Result<PathBuf, String> {
        self.build_crate(env!("CARGO_MANIFEST_DIR"), args)
    }

    /// `build-arm64.sh CRATE --release ARGS`: the path it prints last.
    fn build_crate(&self, crate_dir: &str, args: &[&str]) -> Result<PathBuf, String> {
        let started = Instant::now();
        let output = Command::new("bash")
            .arg(&self.build_script)
            .arg(crate_dir)
            .args(args)
            .env_remove("CARGO_ENCODED_RUSTFLAGS")
            .output()
            .map_err(|error| format!("cannot run {}: {error}", self.build_script.display()))?;
        let stdout = String::from_utf8_lossy(&output.stdout);
        match stdout.lines().last() {
            Some(path) if output.status.success() => {
                println!(
                    "guest: built static aarch64 {path} in {:.1} s",
                    started.elapsed().as_secs_f64()
                );
                Ok(PathBuf::from(path))
            }
            _ => Err(String::from_utf8_lossy(&output.stderr).into_owned()),
        }
    }
}

/// The static x86_64 `placement-study` that [`Guest::boot`] runs, built on
/// first use; panics with cargo's output when it does not build.
/// `GUEST_BINARY=PATH` boots another static build instead (an older
/// release, to compare its gate with this one's).
pub fn static_binary() -> &'static Path {
    built(&STATIC_BINARY, || match std::env::var_os("GUEST_BINARY") {
        Some(path) => Ok(PathBuf::from(path)),
        None => build_static_binary(),
    })
}

/// The binary a `OnceLock` holds, built with `build` on first use; panics
/// with the build's output when it failed.
fn built(
    slot: &'static OnceLock<Result<PathBuf, String>>,
    build: impl FnOnce() -> Result<PathBuf, String>,
) -> &'static Path {
    match slot.get_or_init(build) {
        Ok(binary) => binary,
        Err(output) => panic!("building a static guest binary failed:\n{output}"),
    }
}

/// A busybox shell script that first unpacks `files` (appended after it,
/// byte for byte) into `/tmp/NAME`, executable, then runs `script`. The
/// guest harness copies one file in; this carries several.
fn self_extracting(script: &str, files: &[(&str, &Path)]) -> Vec<u8> {
    let contents: Vec<Vec<u8>> = files
        .iter()
        .map(|(_, path)| {
            std::fs::read(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
        })
        .collect();
    // Offsets are written with a fixed width, so the header's length does
    // not depend on them.
    let header = |start: usize| -> String {
        let mut text = String::from("#!/bin/sh\n");
        let mut offset = start;
        for ((name, _), bytes) in files.iter().zip(&contents) {
            text.push_str(&format!(
                "tail -c +{:012} \"$0\" | head -c {:012} > /tmp/{name} && chmod 755 /tmp/{name} || exit 125\n",
                offset + 1,
                bytes.len()
            ));
            offset += bytes.len();
        }
        text.push_str(script);
        text.push_str("\nexit $?\n");
        text
    };
    let start = header(0).len();
    let mut payload = header(start).into_bytes();
    for bytes in contents {
        payload.extend(bytes);
    }
    payload
}

/// Runs one boot command, one guest at a time, and parses what it printed.
fn boot_guest(invocation: String, command: &mut Command) -> GuestRun {
    let _guest_slot = ONE_GUEST_AT_A_TIME
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    for boot in 1.. {
        let started = Instant::now();
        let output = command
            .output()
            .unwrap_or_else(|error| panic!("cannot run {invocation}: {error}"));
        let run = GuestRun::parse(
            invocation.clone(),
            output.status.code().unwrap_or(-1),
            &String::from_utf8_lossy(&output.stdout),
            &String::from_utf8_lossy(&output.stderr),
        );
        println!(
            "guest: {} -> exit {} in {:.1} s",
            run.invocation.lines().next().unwrap_or_default(),
            run.exit_code,
            started.elapsed().as_secs_f64()
        );
        let Some(why) = run.guest_failed_under_its_payload() else {
            return run;
        };
        if boot == BOOTS_PAST_A_STALLED_GUEST {
            return run;
        }
        // The guest, not the product, stopped: no verdict to read.
        println!("guest: {why}; booting again");
    }
    unreachable!("the loop returns on its last boot")
}

/// Boots a guest may take when the guest itself stalls. In December 2026
/// TCG guests timed out three times for reasons below `placement-study`:
/// twice with an empty console (the firmware or kernel stalled before the
/// payload started), once with the payload's verdict printed and the guest
/// kernel reporting "soft lockup - CPU#3 stuck for 45s!" until the timeout
/// (a vCPU spinning in the kernel, which no user program can cause). Such
/// a boot says nothing about the product, so it boots once more; any other
/// timeout stays a failure.
const BOOTS_PAST_A_STALLED_GUEST: usize = 2;

/// `pairs --json`: the measured map must be the sharing the pins create.
/// Sharing a host CPU costs about +100 % here; pairs on separate host CPUs
/// have measured up to +12 % on this 2-CPU cloud host (both host CPUs busy
/// at once are slower), too close to the default 15 % to decide in few
/// repetitions, so the suite draws the line at 50 %.
pub const PAIRS: &[&str] = &["pairs", "--json", "--threshold", "50%"];
/// [`PAIRS`] with the latency pass first.
pub const PAIRS_LATENCY_FIRST: &[&str] = &[
    "pairs",
    "--json",
    "--threshold",
    "50%",
    "--first-pass",
    "latency",
];

/// `latency --json` in a guest, with its defaults: a stacked pair ends after
/// three samples at the bound, the others once their latency settles.
pub const LATENCY: &[&str] = &["latency", "--json"];

/// Seconds one guest may take, boot included (a gate takes about 10; a
/// guest that stalled used to hit this, see `Engine`'s held counter group).
const GUEST_TIMEOUT_SECONDS: u64 = 240;

/// Builds `placement-study` as a static release binary for the guest, in its
/// own target directory so it never invalidates the normal build.
fn build_static_binary() -> Result<PathBuf, String> {
    let manifest_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let target_dir = manifest_dir.join("target/guest");
    // Keep whatever RUSTFLAGS the caller set (CI may add -D warnings).
    let rustflags = match std::env::var("RUSTFLAGS") {
        Ok(flags) if !flags.trim().is_empty() => format!("{flags} -C target-feature=+crt-static"),
        _ => "-C target-feature=+crt-static".to_owned(),
    };
    let started = Instant::now();
    let output = Command::new(env!("CARGO"))
        .current_dir(manifest_dir)
        .args([
            "build",
            "--release",
            "--bin",
            "placement-study",
            "--target",
            GUEST_TARGET,
        ])
        .arg("--target-dir")
        .arg(&target_dir)
        // CARGO_ENCODED_RUSTFLAGS would silently win over RUSTFLAGS.
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .env("RUSTFLAGS", rustflags)
        .output()
        .map_err(|error| format!("cannot run {}: {error}", env!("CARGO")))?;
    if !output.status.success() {
        return Err(String::from_utf8_lossy(&output.stderr).into_owned());
    }
    let binary = target_dir
        .join(GUEST_TARGET)
        .join("release/placement-study");
    println!(
        "guest: built static {} in {:.1} s",
        binary.display(),
        started.elapsed().as_secs_f64()
    );
    Ok(binary)
}

impl GuestRun {
    /// Splits boot-guest.sh's stdout into the sibling map it prints first
    /// (`guest-topology: ` lines), the payload's output, and the closing
    /// `EXIT=N` line.
    fn parse(invocation: String, script_status: i32, stdout: &str, stderr: &str) -> GuestRun {
        let mut guest_topology = String::new();
        let mut payload = String::new();
        let mut reported_exit = None;
        for line in stdout.lines() {
            if let Some(code) = line.strip_prefix("EXIT=") {
                reported_exit = code.trim().parse().ok();
            } else if payload.is_empty() && line.starts_with("guest-topology: ") {
                guest_topology.push_str(line);
                guest_topology.push('\n');
            } else {
                payload.push_str(line);
                payload.push('\n');
            }
        }
        GuestRun {
            invocation,
            exit_code: reported_exit.unwrap_or(script_status),
            stdout: payload,
            stderr: stderr.to_owned(),
            guest_topology,
        }
    }

    /// Panics, showing the whole run, unless the payload exited with `expected`.
    /// Why boot-guest.sh timed out for the guest's own sake, if it did:
    /// before the guest reported its payload's start
    /// (`guest_uptime_at_payload_start=?s`), or with the guest kernel
    /// reporting a CPU stuck in the kernel (a soft lockup, an RCU stall).
    pub fn guest_failed_under_its_payload(&self) -> Option<&'static str> {
        if self.exit_code != 124 {
            return None;
        }
        if self.stderr.contains("guest_uptime_at_payload_start=?s") {
            return Some("the guest never reached its payload (an empty console)");
        }
        // Every study draws its first progress line on the console's
        // terminal at once: a payload that printed nothing in the whole
        // timeout never ran (CI-11: a 10-vCPU guest, 7 vCPUs on one host
        // CPU, silent from its payload's start at 5.3 s to the end).
        if self.stdout.trim().is_empty() {
            return Some("the payload started but the guest printed nothing after it");
        }
        ["soft lockup", "rcu_sched self-detected stall", "rcu: INFO:"]
            .iter()
            .any(|report| self.stdout.contains(report))
            .then_some("the guest kernel reported a CPU stuck in the kernel")
    }

    pub fn assert_exit(&self, expected: i32) {
        assert_eq!(self.exit_code, expected, "wrong exit code\n{self}");
    }

    /// A boot that printed `document` and exited `exit`, as boot-guest.sh
    /// shows it (a progress line ahead of the JSON on the same terminal):
    /// for tests of the readings on recorded documents.
    pub fn recorded(invocation: &str, document: &serde_json::Value, exit: i32) -> GuestRun {
        let stdout = format!("\x1b[2Kgate: rep 3/15 {{siblings}}\x1b[2K{document}\nEXIT={exit}\n");
        GuestRun::parse(invocation.into(), 0, &stdout, "")
    }

    /// [`GuestRun::document`], or a panic showing the run when there is none.
    pub fn json(&self) -> serde_json::Value {
        self.document()
            .unwrap_or_else(|| panic!("no JSON object in the guest's output\n{self}"))
    }

    /// The first JSON object in the payload's output that starts a line
    /// (see [`GuestRun::documents`]).
    pub fn document(&self) -> Option<serde_json::Value> {
        self.documents().into_iter().next()
    }

    /// Every JSON object in the payload's output that starts a line, in
    /// order. Anything around them (a text report; the progress line,
    /// because the guest console is a terminal: it is redrawn with
    /// "\r\x1b[2K", whose "\r" boot-guest.sh strips, so "\x1b[2K" counts as
    /// a line start here) is ignored.
    pub fn documents(&self) -> Vec<serde_json::Value> {
        let console = self.stdout.replace("\x1b[2K", "\n");
        let mut found = Vec::new();
        let mut line_start = 0;
        for line in console.split_inclusive('\n') {
            if line.starts_with('{') {
                let rest = &console[line_start..];
                let mut values = serde_json::Deserializer::from_str(rest).into_iter();
                if let Some(Ok(value @ serde_json::Value::Object(_))) = values.next() {
                    found.push(value);
                }
            }
            line_start += line.len();
        }
        found
    }
}

/// The exit status of every inconclusive verdict: the gate's, pairs' and
/// hybrid's, and `run`'s when its gate was inconclusive.
const INCONCLUSIVE_EXIT: i32 = 5;

/// What one boot's outcome means to a test that expects a definite verdict.
#[derive(Debug, PartialEq, Eq)]
pub enum Reading {
    /// The expected verdict with its exit status: the test goes on to its
    /// other checks.
    Right,
    /// No verdict at all (gate exit 5; an inconclusive pairs or hybrid
    /// verdict), which a noisy host can cause: the guest may boot once
    /// more. Says what the run read.
    Inconclusive(String),
    /// A definite verdict other than the expected one, or anything else
    /// gone wrong (a timeout, an invalid run): never retried. Says what
    /// the run read.
    Wrong(String),
}

/// Reads `run` against the definite `verdict` a test expects, with its
/// `exit` status: both must be right. The verdict is the document's
/// `verdict` (gate, pairs), `class_judgement.verdict` (hybrid) or
/// `gate.verdict` (`run`, gated); without a document, the gate's text
/// view's `verdict: ...` line (`run` stopped at its gate). A run that
/// shows no verdict is inconclusive only with exit 5, and an incomplete
/// document (a stop signal) never is: nothing about the host's noise
/// stopped it.
pub fn read_verdict(verdict: &str, exit: i32, run: &GuestRun) -> Reading {
    let document = run.document();
    let found = match &document {
        Some(document) => verdict_in(document).map(str::to_owned),
        None => verdict_in_text(&run.stdout),
    };
    if run.exit_code == exit && found.as_deref() == Some(verdict) {
        return Reading::Right;
    }
    let reading = what_the_run_read(run, found.as_deref(), document.as_ref());
    let complete = document
        .as_ref()
        .is_none_or(|document| document["complete"] != false);
    let inconclusive = match found.as_deref() {
        Some(found) => found == "inconclusive",
        None => run.exit_code == INCONCLUSIVE_EXIT,
    };
    if inconclusive && complete {
        Reading::Inconclusive(reading)
    } else {
        Reading::Wrong(format!("expected {verdict} (exit {exit}), got {reading}"))
    }
}

/// The verdict the gate's text view shows: its line `verdict: virtual
/// (exit 3), baseline: ...`.
fn verdict_in_text(console: &str) -> Option<String> {
    console.replace("\x1b[2K", "\n").lines().find_map(|line| {
        let rest = line.strip_prefix("verdict: ")?;
        rest.split([' ', ',']).next().map(str::to_owned)
    })
}

/// Where a document keeps its verdict and the judgement behind it: a gated
/// `run` in the gate it passed first.
fn judged(document: &serde_json::Value) -> &serde_json::Value {
    if document["kind"] == "run" || document["kind"] == "command" {
        &document["gate"]
    } else {
        document
    }
}

/// The verdict a gate, pairs, hybrid or gated run document reached.
fn verdict_in(document: &serde_json::Value) -> Option<&str> {
    let judged = judged(document);
    judged["class_judgement"]["verdict"]
        .as_str()
        .or_else(|| judged["verdict"].as_str())
}

/// One line for a CI log: the exit status, the verdict, the control's
/// reading (unless the sentence quotes it already) and the sentence.
fn what_the_run_read(
    run: &GuestRun,
    verdict: Option<&str>,
    document: Option<&serde_json::Value>,
) -> String {
    let mut parts = vec![
        format!("exit {}", run.exit_code),
        format!("verdict {}", verdict.unwrap_or("(none)")),
    ];
    let Some(document) = document else {
        parts.push("no JSON document".to_owned());
        return parts.join("; ");
    };
    let judged = judged(document);
    let sentence = judged["sentence"].as_str().unwrap_or_default();
    let control = &judged["control"];
    if let (Some(status), Some(detail)) = (control["status"].as_str(), control["detail"].as_str()) {
        if !sentence.contains(detail) {
            parts.push(format!("control {status}: {detail}"));
        }
    }
    if !sentence.is_empty() {
        parts.push(format!("\"{sentence}\""));
    }
    parts.join("; ")
}

/// How many times [`boot_expecting`] boots a guest whose verdict stays
/// inconclusive: on CI's host (each CPU at 0.6 to 0.95 of its speed by
/// turns, independently) `hybrid` was inconclusive on two boots running,
/// honestly, and a third boot is one more chance at a quiet spell; a
/// wrong verdict is never booted again.
const INCONCLUSIVE_BOOTS: usize = 3;

/// Runs `boot` and returns its run when it reached the definite `verdict`
/// with its `exit` status. Until the verdicts are robust to a noisy host,
/// an inconclusive run boots the guest again, up to
/// [`INCONCLUSIVE_BOOTS`] boots in all, saying why (visible with
/// `--nocapture`); a wrong verdict, or a last run that is not right, fails
/// the test showing the run.
pub fn boot_expecting(verdict: &str, exit: i32, boot: impl FnMut() -> GuestRun) -> GuestRun {
    boot_reading(|run| read_verdict(verdict, exit, run), boot)
}

/// [`boot_expecting`] with any reading of a boot: a test whose claim is a
/// measured difference reads it from the product's own interval, so that a
/// boot where the product said the evidence was weak boots again and one
/// where it claimed the wrong thing fails at once.
pub fn boot_reading(
    read: impl FnMut(&GuestRun) -> Reading,
    boot: impl FnMut() -> GuestRun,
) -> GuestRun {
    boot_again_if_inconclusive(read, boot).unwrap_or_else(|failure| panic!("{failure}"))
}

/// [`boot_reading`]'s decisions, the failure as its message.
fn boot_again_if_inconclusive(
    mut read: impl FnMut(&GuestRun) -> Reading,
    mut boot: impl FnMut() -> GuestRun,
) -> Result<GuestRun, String> {
    let mut readings: Vec<String> = Vec::new();
    loop {
        let run = boot();
        match read(&run) {
            Reading::Right => return Ok(run),
            Reading::Wrong(why) if readings.is_empty() => {
                return Err(format!("wrong verdict, not retried: {why}\n{run}"));
            }
            Reading::Wrong(why) => {
                return Err(format!(
                    "wrong verdict on the retry: {why} (the boots before were inconclusive: \
                     {})\n{run}",
                    readings.join("; ")
                ));
            }
            Reading::Inconclusive(why) if readings.len() + 1 == INCONCLUSIVE_BOOTS => {
                return Err(format!(
                    "inconclusive {INCONCLUSIVE_BOOTS} times: {why} (the boots before: {})\n{run}",
                    readings.join("; ")
                ));
            }
            Reading::Inconclusive(why) => {
                println!(
                    "guest: retrying: {} was inconclusive: {why}",
                    run.invocation.lines().next().unwrap_or_default()
                );
                readings.push(why);
            }
        }
    }
}

/// The whole run, as a failure message that makes a CI log legible.
impl fmt::Display for GuestRun {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "--- {} -> exit {}", self.invocation, self.exit_code)?;
        writeln!(f, "--- guest topology:\n{}", self.guest_topology.trim_end())?;
        writeln!(
            f,
            "--- payload output (stdout+stderr):\n{}",
            self.stdout.trim_end()
        )?;
        write!(f, "--- boot-guest.sh stderr:\n{}", self.stderr.trim_end())
    }
}

#[cfg(test)]
mod tests {
    use super::{GuestRun, Reading, boot_again_if_inconclusive, read_verdict};

    /// Shaped like boot-guest.sh's stdout (its topology lines are from a real
    /// boot), with a progress line ahead of the JSON and a sentence after it:
    /// the guest console is a terminal and merges stdout and stderr.
    const RECORDED_STDOUT: &str = "\
guest-topology: cpu0: thread_siblings_list=0-1 core_cpus_list=0-1 core_id=0 pkg=0
guest-topology: processors=4 hypervisor_flag=yes model= QEMU TCG CPU version 2.5+
gate: rep 3/15 {siblings}
{\"verdict\": \"physical\",
 \"pairs\": {\"siblings\": [0, 1]}}
two workers on one core's siblings cost more
EXIT=0
";

    #[test]
    fn a_timeout_the_guest_itself_caused_is_told_apart() {
        let stalled_boot = "boot-guest: qemu_rc=124 total=301.3s guest_uptime_at_payload_start=?s \
                            at_end=?s\nboot-guest: TIMEOUT after 300s\n";
        let guest_stalled = |stdout: &str, stderr: &str| {
            GuestRun::parse("test".into(), 124, stdout, stderr)
                .guest_failed_under_its_payload()
                .is_some()
        };
        assert!(guest_stalled("", stalled_boot));
        let stalled_payload = "boot-guest: qemu_rc=124 total=241.3s \
                               guest_uptime_at_payload_start=7.39s at_end=?s\n";
        assert!(!guest_stalled("gate: batch 3\n", stalled_payload));
        // CI-11: the payload started and the guest printed nothing after it.
        assert!(guest_stalled("", stalled_payload));
        // CI, December 2026: the verdict printed, then the guest kernel stuck.
        let locked_up = "verdict: virtual (exit 3)\n[   60.683998] watchdog: BUG: soft lockup - \
                         CPU#3 stuck for 45s! [payload:127]\n";
        assert!(guest_stalled(locked_up, stalled_payload));
    }

    #[test]
    fn guest_output_splits_into_topology_payload_and_exit_code() {
        let run = GuestRun::parse("test".into(), 0, RECORDED_STDOUT, "boot-guest: pinned\n");
        assert_eq!(run.exit_code, 0);
        assert_eq!(run.guest_topology.lines().count(), 2);
        assert!(run.stdout.starts_with("gate: rep 3/15"));
        assert!(!run.stdout.contains("EXIT="));
        assert_eq!(run.json()["verdict"], "physical");
    }

    #[test]
    fn guest_that_never_reported_keeps_the_script_status() {
        let run = GuestRun::parse("test".into(), 124, "", "boot-guest: TIMEOUT after 300s\n");
        assert_eq!(run.exit_code, 124);
    }

    /// The same-CPU control's detail when the virtual one-core guest's
    /// control failed on a busy host (exit 5), in the words
    /// `judge::gate::control_check` uses.
    const FAILED_CONTROL: &str = "the control CPU was not the workers' alone: both workers on \
        one CPU cost 3.12× what one worker costs alone there (TSC ticks per byte, medians of 5 \
        and 5 repetitions; expected about 2×, accepted 1.4–2.8): something else ran there or \
        their buffers evicted each other";

    /// A guest console as boot-guest.sh prints it: the redrawn progress
    /// line, the payload's JSON document (trimmed to what the verdict is
    /// read from), and `EXIT=N`.
    fn console(document: serde_json::Value, exit: i32) -> GuestRun {
        GuestRun::recorded(
            "boot-guest.sh smp=2 PIN=0,1 placement-study gate --json",
            &document,
            exit,
        )
    }

    /// The virtual one-core guest's gate, from
    /// fixtures/results/gate-guest-one-core-split.json.
    fn virtual_gate() -> GuestRun {
        console(
            serde_json::json!({
                "kind": "gate", "complete": true, "verdict": "virtual", "baseline": "alone",
                "sentence": "two workers on one core's siblings cost 1.7 % [-2.1, 5.6] more than \
                    one worker alone on that core (paired over 5 repetitions each; ratio of \
                    medians +1.9 %); threshold 15 %: placement is virtual: the affinity mask \
                    moved nothing physical (typical of a VM, whose sibling map is fiction)",
                "control": {"name": "control", "status": "passed", "detail": "both workers on \
                    one CPU cost 2.00× what one worker costs alone there (TSC ticks per byte, \
                    medians of 5 and 5 repetitions; expected about 2×, accepted 1.4–2.8)"},
            }),
            3,
        )
    }

    /// The same guest's gate when its same-CPU control failed: the flake
    /// that turned `.ci/run` red.
    fn gate_with_a_failed_control() -> GuestRun {
        console(
            serde_json::json!({
                "kind": "gate", "complete": true, "verdict": "inconclusive", "baseline": "alone",
                "sentence": format!("two workers on one core's siblings cost 9.8 % [-4.0, 23.1] \
                    more than one worker alone on that core (paired over 5 repetitions each; \
                    ratio of medians +8.2 %); threshold 15 %: inconclusive: the interval \
                    straddles the threshold; raise --max-reps, lengthen --rep-ms, or quiet the \
                    machine (stop other load, pin the governor); the same-CPU control failed: \
                    {FAILED_CONTROL}"),
                "control": {"name": "control", "status": "failed", "detail": FAILED_CONTROL},
            }),
            5,
        )
    }

    #[test]
    fn the_expected_verdict_is_right() {
        assert_eq!(read_verdict("virtual", 3, &virtual_gate()), Reading::Right);
    }

    #[test]
    fn a_failed_control_is_inconclusive_and_says_why_once() {
        let Reading::Inconclusive(why) = read_verdict("virtual", 3, &gate_with_a_failed_control())
        else {
            panic!("not inconclusive");
        };
        assert!(
            why.starts_with("exit 5; verdict inconclusive; \"two workers"),
            "{why}"
        );
        // The sentence quotes the control's detail: it is not repeated.
        assert_eq!(why.matches("medians of 5 and 5").count(), 1, "{why}");
        assert!(
            why.contains("the same-CPU control failed: the control CPU"),
            "{why}"
        );
    }

    #[test]
    fn a_definite_verdict_other_than_the_expected_one_is_wrong() {
        for expected in [("physical", 0), ("no-smt", 4)] {
            let reading = read_verdict(expected.0, expected.1, &virtual_gate());
            assert!(
                matches!(&reading, Reading::Wrong(why)
                    if why.starts_with(&format!("expected {} (exit {}), got exit 3; verdict virtual", expected.0, expected.1))),
                "{reading:?}"
            );
        }
    }

    #[test]
    fn a_pairs_map_left_undecided_is_inconclusive_with_the_controls_reading() {
        let run = console(
            serde_json::json!({
                "kind": "pairs", "complete": true, "verdict": "inconclusive",
                "sentence": "measured 0 / 1 / 2-3, published 0-1 / 2-3: inconclusive, 1 pair \
                    undecided; raise --max-reps, lengthen --rep-ms, or quiet the machine",
                "control": {"name": "control", "status": "passed", "detail": "both workers on \
                    one CPU cost 1.87× what one worker costs alone there"},
            }),
            5,
        );
        let reading = read_verdict("agree", 0, &run);
        assert!(
            matches!(&reading, Reading::Inconclusive(why)
                if why.contains("verdict inconclusive; control passed: both workers")
                    && why.contains("1 pair undecided")),
            "{reading:?}"
        );
        // Fake siblings where the maps should agree: wrong, however sure.
        let differ = console(
            serde_json::json!({"kind": "pairs", "complete": true, "verdict": "differ"}),
            3,
        );
        assert!(matches!(
            read_verdict("agree", 0, &differ),
            Reading::Wrong(_)
        ));
    }

    #[test]
    fn hybrid_is_read_from_its_class_judgement() {
        let hybrid = |verdict: &str, exit: i32| {
            console(
                serde_json::json!({
                    "kind": "hybrid", "complete": true, "valid": exit != 6,
                    "class_judgement": {"verdict": verdict},
                    "sentence": format!("ceiling 1.48 fastest-class CPUs; measured classes {verdict}"),
                }),
                exit,
            )
        };
        assert_eq!(
            read_verdict("differ", 3, &hybrid("differ", 3)),
            Reading::Right
        );
        assert!(matches!(
            read_verdict("differ", 3, &hybrid("inconclusive", 5)),
            Reading::Inconclusive(_)
        ));
        assert!(matches!(
            read_verdict("differ", 3, &hybrid("agree", 0)),
            Reading::Wrong(_)
        ));
        // An invalid study with the right classes is not a verdict problem.
        assert!(matches!(
            read_verdict("differ", 3, &hybrid("differ", 6)),
            Reading::Wrong(_)
        ));
    }

    #[test]
    fn a_run_is_read_from_its_gate_or_its_exit_status() {
        let gated = |exit: i32| {
            console(
                serde_json::json!({"kind": "run", "complete": true, "valid": exit == 0,
                    "gate": {"kind": "gate", "verdict": "physical"}}),
                exit,
            )
        };
        assert_eq!(read_verdict("physical", 0, &gated(0)), Reading::Right);
        assert!(matches!(
            read_verdict("physical", 0, &gated(6)),
            Reading::Wrong(_)
        ));
        // `run` without --json: its gate's text view, then the status.
        let text = |verdict: &str, exit: i32| {
            let stdout = format!(
                "\x1b[2KTwo workers on one core's siblings cost ...\nverdict: {verdict} (exit \
                 {exit}), baseline: separate cores\nrun: stopped at the gate ({verdict})\nEXIT={exit}\n"
            );
            GuestRun::parse("run".into(), 0, &stdout, "")
        };
        assert_eq!(
            read_verdict("virtual", 3, &text("virtual", 3)),
            Reading::Right
        );
        assert_eq!(
            read_verdict("virtual", 3, &text("inconclusive", 5)),
            Reading::Inconclusive("exit 5; verdict inconclusive; no JSON document".into())
        );
        // The right status is not enough: the verdict must show.
        let silent = GuestRun::parse("run".into(), 0, "EXIT=3\n", "");
        assert!(matches!(
            read_verdict("virtual", 3, &silent),
            Reading::Wrong(_)
        ));
        let silent = GuestRun::parse("run".into(), 0, "EXIT=5\n", "");
        assert_eq!(
            read_verdict("virtual", 3, &silent),
            Reading::Inconclusive("exit 5; verdict (none); no JSON document".into())
        );
    }

    #[test]
    fn timeouts_and_stopped_gates_are_wrong_not_inconclusive() {
        let timeout = GuestRun::parse("gate".into(), 124, "", "boot-guest: TIMEOUT after 120s\n");
        assert!(matches!(
            read_verdict("virtual", 3, &timeout),
            Reading::Wrong(_)
        ));
        let stopped = console(
            serde_json::json!({"kind": "gate", "complete": false, "verdict": "inconclusive",
                "sentence": "stopped by SIGTERM after 3 repetitions of 15: no verdict"}),
            143,
        );
        assert!(matches!(
            read_verdict("virtual", 3, &stopped),
            Reading::Wrong(_)
        ));
    }

    /// [`boot_again_if_inconclusive`] over recorded boots: the result, and
    /// how many boots it asked for.
    fn boots(
        recorded: Vec<GuestRun>,
        verdict: &str,
        exit: i32,
    ) -> (Result<GuestRun, String>, usize) {
        let mut recorded = recorded.into_iter();
        let mut booted = 0;
        let result = boot_again_if_inconclusive(
            |run| read_verdict(verdict, exit, run),
            || {
                booted += 1;
                recorded.next().expect("no more recorded boots")
            },
        );
        (result, booted)
    }

    #[test]
    fn an_inconclusive_boot_is_retried_up_to_three_boots() {
        let (result, booted) = boots(
            vec![gate_with_a_failed_control(), virtual_gate()],
            "virtual",
            3,
        );
        assert_eq!(booted, 2);
        assert_eq!(result.expect("the retry decided").exit_code, 3);

        let twice = vec![
            gate_with_a_failed_control(),
            gate_with_a_failed_control(),
            virtual_gate(),
        ];
        let (result, booted) = boots(twice, "virtual", 3);
        assert_eq!(booted, 3);
        assert_eq!(result.expect("the third boot decided").exit_code, 3);

        let thrice = vec![
            gate_with_a_failed_control(),
            gate_with_a_failed_control(),
            gate_with_a_failed_control(),
            virtual_gate(),
        ];
        let (result, booted) = boots(thrice, "virtual", 3);
        assert_eq!(booted, 3, "three boots, no more");
        let failure = result.expect_err("inconclusive three times fails");
        assert!(
            failure.starts_with("inconclusive 3 times: exit 5;"),
            "{failure}"
        );
    }

    #[test]
    fn a_wrong_verdict_fails_at_once_even_after_a_retry() {
        let (result, booted) = boots(vec![virtual_gate(), virtual_gate()], "physical", 0);
        assert_eq!(booted, 1, "a wrong verdict is never retried");
        let failure = result.expect_err("wrong fails");
        assert!(
            failure.starts_with("wrong verdict, not retried: expected physical"),
            "{failure}"
        );

        let (result, booted) = boots(
            vec![gate_with_a_failed_control(), virtual_gate()],
            "physical",
            0,
        );
        assert_eq!(booted, 2);
        let failure = result.expect_err("wrong on the retry fails");
        assert!(
            failure.starts_with("wrong verdict on the retry: expected physical"),
            "{failure}"
        );
    }

    #[test]
    fn a_right_first_boot_is_not_repeated() {
        let (result, booted) = boots(vec![virtual_gate()], "virtual", 3);
        assert_eq!(booted, 1);
        assert!(result.is_ok());
    }
}
