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
        let boot_script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/vm/boot-guest.sh");
        assert!(
            boot_script.is_file(),
            "{} is absent: guest tests need ../shared beside the repository",
            boot_script.display()
        );
        Guest { boot_script }
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

    fn boot_with(
        &self,
        smp: &str,
        pin: Option<&str>,
        throttle: Option<&str>,
        args: &[&str],
    ) -> GuestRun {
        let binary = static_binary();
        let invocation = format!(
            "boot-guest.sh smp={smp} PIN={}{} placement-study {}",
            pin.unwrap_or("(none)"),
            throttle
                .map(|caps| format!(" THROTTLE={caps}"))
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
        for (variable, value) in [("PIN", pin), ("THROTTLE", throttle)] {
            match value {
                Some(value) => command.env(variable, value),
                None => command.env_remove(variable),
            };
        }
        command.env("TIMEOUT", GUEST_TIMEOUT_SECONDS.to_string());
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
fn build_arm64_unit_tests() -> Result<PathBuf, String> {
    let started = Instant::now();
    let output = Command::new(env!("CARGO"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args([
            "test",
            "--release",
            "--lib",
            "--no-run",
            "--message-format=json",
        ])
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
pub fn static_binary() -> &'static Path {
    built(&STATIC_BINARY, build_static_binary)
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
    let started = Instant::now();
    let output = command
        .output()
        .unwrap_or_else(|error| panic!("cannot run {invocation}: {error}"));
    let run = GuestRun::parse(
        invocation,
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
    run
}

/// Seconds one guest may take, boot included (a gate takes about 10; a
/// guest that stalled used to hit this, see `Engine`'s held counter group).
const GUEST_TIMEOUT_SECONDS: u64 = 120;

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
    pub fn assert_exit(&self, expected: i32) {
        assert_eq!(self.exit_code, expected, "wrong exit code\n{self}");
    }

    /// The first JSON object in the payload's output that starts a line.
    /// Anything around it (a text report; the progress line, because the
    /// guest console is a terminal: it is redrawn with "\r\x1b[2K", whose
    /// "\r" boot-guest.sh strips, so "\x1b[2K" counts as a line start here)
    /// is ignored. Panics, showing the run,
    /// when there is none.
    pub fn json(&self) -> serde_json::Value {
        let console = self.stdout.replace("\x1b[2K", "\n");
        let mut line_start = 0;
        for line in console.split_inclusive('\n') {
            if line.starts_with('{') {
                let rest = &console[line_start..];
                let mut values = serde_json::Deserializer::from_str(rest).into_iter();
                if let Some(Ok(value @ serde_json::Value::Object(_))) = values.next() {
                    return value;
                }
            }
            line_start += line.len();
        }
        panic!("no JSON object in the guest's output\n{self}");
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
    use super::GuestRun;

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
}
