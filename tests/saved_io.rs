//! The saved-file I/O layer against every kind of path a user can type:
//! regular files, symlinks, device nodes, FIFOs, folders. Every node and
//! link is made inside a temp dir (device nodes with the numbers of the
//! machine's null, full and zero devices), never the machine's own /dev.

use crate::common;
use nix::sys::stat::{Mode, SFlag, makedev, mknod};
use placement_study::saved::{
    JSON_INPUT_CAP, ObserveMode, OutputTarget, SavedDocument, check_distinct, load, read_capped,
    write_all_to,
};
use std::fs;
use std::io::Write;
use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt, symlink};
use std::path::{Path, PathBuf};
use std::process::Stdio;

/// Makes a device node `name` in `dir`; `None` (the caller skips, saying
/// why) where this process may not make nodes (not root, or in a container
/// without CAP_MKNOD).
fn device_node(dir: &Path, name: &str, kind: SFlag, major: u64, minor: u64) -> Option<PathBuf> {
    let path = dir.join(name);
    match mknod(
        &path,
        kind,
        Mode::from_bits_truncate(0o666),
        makedev(major, minor),
    ) {
        Ok(()) => Some(path),
        Err(e) => {
            eprintln!("skipping: cannot make a device node here ({e})");
            None
        }
    }
}

/// A character node with the numbers of /dev/null (1 3), /dev/full (1 7)
/// or /dev/zero (1 5).
fn char_node(dir: &Path, name: &str, minor: u64) -> Option<PathBuf> {
    device_node(dir, name, SFlag::S_IFCHR, 1, minor)
}

fn is_char_device(path: &Path, minor: u64) -> bool {
    let meta = fs::symlink_metadata(path).unwrap();
    meta.file_type().is_char_device() && meta.rdev() == makedev(1, minor)
}

fn parse(path: &Path) -> OutputTarget {
    OutputTarget::parse(path).unwrap_or_else(|e| panic!("{}: {e:#}", path.display()))
}

fn parse_error(path: &Path) -> String {
    match OutputTarget::parse(path) {
        Ok(target) => panic!("{} was accepted as {target:?}", path.display()),
        Err(e) => format!("{e:#}"),
    }
}

/// The names in `dir`, sorted: proves no temp file was left behind.
fn names_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

fn umask() -> u32 {
    let status = fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("Umask:")).unwrap();
    u32::from_str_radix(line["Umask:".len()..].trim(), 8).unwrap()
}

#[test]
fn dash_is_standard_output() {
    let target = parse(Path::new("-"));
    assert!(target.is_stdout());
    assert_eq!(target.display().to_string(), "standard output");
}

#[test]
fn a_new_file_is_created_complete_with_the_default_mode_and_no_leftovers() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.json");
    let target = parse(&path);
    assert!(!path.exists(), "parse must not create anything");
    assert_eq!(target.display().to_string(), path.display().to_string());
    target.write(b"{}\n").unwrap();
    assert_eq!(fs::read(&path).unwrap(), b"{}\n");
    let mode = fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o644 & !umask());
    assert_eq!(names_in(dir.path()), ["run.json"]);
}

#[test]
fn an_existing_file_is_replaced_atomically_keeping_its_mode() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.json");
    fs::write(&path, "old").unwrap();
    fs::set_permissions(&path, fs::Permissions::from_mode(0o600)).unwrap();
    let old_inode = fs::metadata(&path).unwrap().ino();
    parse(&path).write(b"new").unwrap();
    let meta = fs::metadata(&path).unwrap();
    assert_eq!(fs::read(&path).unwrap(), b"new");
    assert_ne!(meta.ino(), old_inode, "a new file renamed over the old one");
    assert_eq!(meta.permissions().mode() & 0o777, 0o600);
    assert_eq!(names_in(dir.path()), ["run.json"]);
}

#[test]
fn a_replaced_file_keeps_its_owner_when_root_writes_it() {
    // SAFETY: geteuid has no preconditions and cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipping: only root may give a file to another owner");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.json");
    fs::write(&path, "old").unwrap();
    std::os::unix::fs::chown(&path, Some(4242), Some(4343)).unwrap();
    parse(&path).write(b"new").unwrap();
    let meta = fs::metadata(&path).unwrap();
    assert_eq!((meta.uid(), meta.gid()), (4242, 4343));
}

#[test]
fn a_relative_new_file_resolves_against_the_current_folder() {
    match parse(Path::new("saved-io-relative-test.json")) {
        OutputTarget::File { real, .. } => assert_eq!(
            real,
            std::env::current_dir()
                .unwrap()
                .canonicalize()
                .unwrap()
                .join("saved-io-relative-test.json")
        ),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_symlink_to_a_file_stays_a_link_and_its_target_gets_the_content() {
    let dir = tempfile::tempdir().unwrap();
    let target_file = dir.path().join("results").join("run.json");
    fs::create_dir(target_file.parent().unwrap()).unwrap();
    fs::write(&target_file, "old").unwrap();
    let link = dir.path().join("latest.json");
    symlink(&target_file, &link).unwrap();
    if nix::unistd::geteuid().is_root() {
        // Root owns every system folder: it never follows a link to a
        // file (tests/owned_tree.rs follows one as nobody).
        let error = format!("{:#}", OutputTarget::parse(&link).unwrap_err());
        assert!(error.contains("as root an output never follows"), "{error}");
        return;
    }
    let target = parse(&link);
    assert_eq!(target.display().to_string(), link.display().to_string());
    target.write(b"new").unwrap();
    assert!(
        fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(fs::read_link(&link).unwrap(), target_file);
    assert_eq!(fs::read(&target_file).unwrap(), b"new");
    assert_eq!(names_in(target_file.parent().unwrap()), ["run.json"]);
}

#[test]
fn the_null_node_is_written_in_place_and_stays_a_device() {
    let dir = tempfile::tempdir().unwrap();
    let Some(null) = char_node(dir.path(), "null", 3) else {
        return;
    };
    let target = parse(&null);
    assert!(matches!(target, OutputTarget::Stream { .. }), "{target:?}");
    target.write(b"{}\n").unwrap();
    assert!(is_char_device(&null, 3), "the node was replaced");
    assert_eq!(names_in(dir.path()), ["null"]);
}

#[test]
fn a_symlink_to_the_null_node_keeps_both_link_and_node() {
    let dir = tempfile::tempdir().unwrap();
    let Some(null) = char_node(dir.path(), "null", 3) else {
        return;
    };
    let link = dir.path().join("out.json");
    symlink(&null, &link).unwrap();
    parse(&link).write(b"{}\n").unwrap();
    assert!(
        fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert!(is_char_device(&null, 3));
    assert_eq!(names_in(dir.path()), ["null", "out.json"]);
}

#[test]
fn the_full_node_is_a_one_line_no_space_error() {
    let dir = tempfile::tempdir().unwrap();
    let Some(full) = char_node(dir.path(), "full", 7) else {
        return;
    };
    let error = format!("{:#}", parse(&full).write(&[b'x'; 8192]).unwrap_err());
    assert!(error.contains("No space left"), "{error}");
    assert!(error.contains(&full.display().to_string()), "{error}");
    assert!(!error.contains('\n'), "{error}");
    assert!(is_char_device(&full, 7));
}

#[test]
fn a_block_device_is_refused_at_parse_time() {
    let dir = tempfile::tempdir().unwrap();
    // The numbers of loop0; parse only looks at the node, never opens it.
    let Some(block) = device_node(dir.path(), "disk", SFlag::S_IFBLK, 7, 0) else {
        return;
    };
    let error = parse_error(&block);
    assert!(error.contains("block device"), "{error}");
    assert!(error.contains(&block.display().to_string()), "{error}");
    assert!(
        fs::symlink_metadata(&block)
            .unwrap()
            .file_type()
            .is_block_device()
    );
}

#[test]
fn a_fifo_is_checked_without_opening_and_written_to_its_reader() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("pipe");
    nix::unistd::mkfifo(&fifo, Mode::from_bits_truncate(0o600)).unwrap();
    // No reader yet: opening the FIFO here would block forever.
    let target = parse(&fifo);
    assert!(matches!(target, OutputTarget::Stream { .. }), "{target:?}");
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || fs::read(fifo).unwrap())
    };
    target.write(b"through the pipe").unwrap();
    assert_eq!(reader.join().unwrap(), b"through the pipe");
    assert!(fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo());
}

#[test]
fn a_dangling_symlink_is_an_error_naming_the_link() {
    let dir = tempfile::tempdir().unwrap();
    let link = dir.path().join("out.json");
    symlink(dir.path().join("gone.json"), &link).unwrap();
    let error = parse_error(&link);
    assert!(error.contains(&link.display().to_string()), "{error}");
    assert!(
        error.contains("gone.json") && error.contains("does not exist"),
        "{error}"
    );
}

#[test]
fn a_folder_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let error = parse_error(dir.path());
    assert!(error.contains("is a folder"), "{error}");
}

#[test]
fn a_missing_folder_is_found_at_parse_time_naming_the_path() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("no-such-folder").join("run.json");
    let error = parse_error(&path);
    assert!(error.contains(&path.display().to_string()), "{error}");
    assert!(error.contains("does not exist"), "{error}");
    let trailing_slash = dir.path().join("new-folder/");
    let error = parse_error(&trailing_slash);
    assert!(error.contains("does not name a file"), "{error}");
}

#[test]
fn a_read_only_folder_is_found_at_parse_time() {
    // SAFETY: geteuid has no preconditions and cannot fail.
    if unsafe { libc::geteuid() } == 0 {
        // Root passes access(2)'s permission bits, so only a read-only file
        // system stops it, and none can be mounted here in a test.
        eprintln!("skipping: root may write into any folder");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let locked = dir.path().join("locked");
    fs::create_dir(&locked).unwrap();
    fs::set_permissions(&locked, fs::Permissions::from_mode(0o555)).unwrap();
    let error = parse_error(&locked.join("run.json"));
    assert!(error.contains("cannot create files in"), "{error}");
}

#[test]
fn a_link_planted_at_the_temp_name_is_never_followed() {
    let dir = tempfile::tempdir().unwrap();
    let precious = dir.path().join("precious.txt");
    fs::write(&precious, "precious").unwrap();
    // The first temp name write tries, as documented on OutputTarget::write.
    let planted = dir
        .path()
        .join(format!(".run.json.{}.tmp", std::process::id()));
    symlink(&precious, &planted).unwrap();
    let path = dir.path().join("run.json");
    parse(&path).write(b"result").unwrap();
    assert_eq!(fs::read(&path).unwrap(), b"result");
    assert_eq!(fs::read(&precious).unwrap(), b"precious");
    assert_eq!(fs::read_link(&planted).unwrap(), precious);
}

#[test]
fn a_failed_write_names_the_users_path_and_leaves_no_temp_file() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("out");
    fs::create_dir(&folder).unwrap();
    let path = folder.join("run.json");
    let target = parse(&path);
    fs::remove_dir(&folder).unwrap();
    let error = format!("{:#}", target.write(b"{}").unwrap_err());
    assert!(error.contains(&path.display().to_string()), "{error}");
    assert!(
        !error.contains(".run.json."),
        "names the temp file: {error}"
    );
    // A folder replaced by something else after the check: nothing written.
    fs::create_dir(&folder).unwrap();
    fs::create_dir(&path).unwrap();
    let error = format!("{:#}", target.write(b"{}").unwrap_err());
    assert!(error.contains("no longer a regular file"), "{error}");
    assert_eq!(names_in(&folder), ["run.json"]);
}

#[test]
fn two_outputs_may_not_both_be_stdout_or_one_file() {
    let dir = tempfile::tempdir().unwrap();
    let stdout = parse(Path::new("-"));
    let error = check_distinct(&[("--json", &stdout), ("--csv", &stdout)]).unwrap_err();
    let error = format!("{error:#}");
    assert!(
        error.contains("--json") && error.contains("--csv") && error.contains("standard output"),
        "{error}"
    );
    let plain = dir.path().join("run.json");
    let spelled_otherwise = dir.path().join(".").join("run.json");
    let link = dir.path().join("link.json");
    fs::write(&plain, "").unwrap();
    symlink(&plain, &link).unwrap();
    // Root never follows a link to a file at all.
    let others: &[&PathBuf] = match nix::unistd::geteuid().is_root() {
        true => &[&spelled_otherwise],
        false => &[&spelled_otherwise, &link],
    };
    for other in others {
        let (a, b) = (parse(&plain), parse(other));
        let error = format!(
            "{:#}",
            check_distinct(&[("--json", &a), ("--csv", &b)]).unwrap_err()
        );
        assert!(error.contains("both name the file"), "{error}");
    }
    let csv = parse(&dir.path().join("run.csv"));
    check_distinct(&[("--json", &parse(&plain)), ("--csv", &csv)]).unwrap();
    check_distinct(&[("--json", &stdout), ("--csv", &csv)]).unwrap();
}

#[test]
fn writing_into_a_closed_pipe_is_an_error_not_a_panic() {
    let (reader, writer) = nix::unistd::pipe().unwrap();
    drop(reader);
    let mut writer = fs::File::from(writer);
    let error = write_all_to(&mut writer, b"text\n", "standard output").unwrap_err();
    let error = format!("{error:#}");
    assert!(
        error.starts_with("cannot write to standard output: Broken pipe"),
        "{error}"
    );
}

#[test]
fn a_writer_that_fails_on_flush_is_an_error_too() {
    struct FailsOnFlush;
    impl Write for FailsOnFlush {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Err(std::io::Error::from_raw_os_error(libc::EBADF))
        }
    }
    let error = write_all_to(&mut FailsOnFlush, b"x", "standard output").unwrap_err();
    assert!(
        format!("{error}").contains("Bad file descriptor"),
        "{error}"
    );
}

/// A device named as a saved document is refused unread, with the way to
/// read it all the same; redirected to standard input, it is read up to the
/// cap and no further.
#[test]
fn a_zero_node_is_refused_by_name_and_stops_at_the_cap_as_standard_input() {
    let dir = tempfile::tempdir().unwrap();
    let Some(zero) = char_node(dir.path(), "zero", 5) else {
        return;
    };
    let error = format!("{:#}", read_capped(&zero, 4096).unwrap_err());
    assert_eq!(
        error,
        format!(
            "{}: is a character device, not a saved result; to read it all the same, give - and \
             redirect it: - < {}",
            zero.display(),
            zero.display()
        )
    );
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_placement-study"))
        .args(["report", "-"])
        .stdin(fs::File::open(&zero).unwrap())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("standard input: larger than 64 MiB; not a saved result"),
        "{stderr}"
    );
}

/// A pipe over the cap, written as a pipe hands it out (64 KiB at a
/// time), is refused as a file over it is, with the same one line: the
/// buffer grows without being zeroed again for each read (see
/// `input::tests::a_stream_in_small_reads_is_zeroed_once`).
#[test]
fn a_pipe_over_the_cap_is_refused_like_a_file() {
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_placement-study"))
        .args(["report", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writing = std::thread::spawn(move || {
        let chunk = vec![b' '; 64 * 1024];
        let mut written = 0u64;
        // The reader leaves at the cap: the write past it fails (EPIPE).
        while written <= JSON_INPUT_CAP + chunk.len() as u64 {
            if stdin.write_all(&chunk).is_err() {
                break;
            }
            written += chunk.len() as u64;
        }
    });
    let output = child.wait_with_output().unwrap();
    writing.join().unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(
        stderr.trim_end(),
        "placement-study: standard input: larger than 64 MiB; not a saved result"
    );
    assert!(output.stdout.is_empty());
}

#[test]
fn read_capped_reads_a_file_up_to_the_cap_and_refuses_one_byte_more() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.json");
    fs::write(&path, [b'x'; 1000]).unwrap();
    assert_eq!(read_capped(&path, 1000).unwrap().len(), 1000);
    let error = format!("{:#}", read_capped(&path, 999).unwrap_err());
    assert!(
        error.ends_with("larger than 999 bytes; not a saved result"),
        "{error}"
    );
    fs::write(&path, "").unwrap();
    assert!(read_capped(&path, 0).unwrap().is_empty());
}

/// A FIFO named as a saved document would wait for a writer forever: it is
/// refused at once (no writer here), saying how to read it all the same.
#[test]
fn read_capped_refuses_a_fifo_without_waiting_for_a_writer() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("pipe");
    nix::unistd::mkfifo(&fifo, Mode::from_bits_truncate(0o600)).unwrap();
    let error = format!("{:#}", read_capped(&fifo, JSON_INPUT_CAP).unwrap_err());
    assert!(
        error.ends_with(&format!(
            "pipe: is a FIFO, not a saved result; to read it all the same, give - and redirect \
             it: - < {}",
            fifo.display()
        )),
        "{error}"
    );
}

#[test]
fn read_capped_refuses_a_folder_and_names_a_missing_file() {
    let dir = tempfile::tempdir().unwrap();
    let error = format!("{:#}", read_capped(dir.path(), JSON_INPUT_CAP).unwrap_err());
    assert!(error.contains("is a folder"), "{error}");
    let missing = dir.path().join("missing.json");
    let error = format!("{:#}", read_capped(&missing, JSON_INPUT_CAP).unwrap_err());
    assert_eq!(
        error,
        format!("{}: no such file; check the path", missing.display())
    );
}

/// The variable naming what a child's stdout is open on.
const STDOUT_PATH_VARIABLE: &str = "SAVED_IO_STDOUT_PATH";

#[test]
#[ignore = "run by a_path_to_what_stdout_is_open_on_is_stdout, with stdout on a temp file or node"]
fn child_with_stdout_on_a_path() {
    let Some(path) = std::env::var_os(STDOUT_PATH_VARIABLE).map(PathBuf::from) else {
        eprintln!("skipping: {STDOUT_PATH_VARIABLE} is set only by the parent test");
        return;
    };
    let link = path.with_extension("link");
    symlink(&path, &link).unwrap();
    // A terminal or null device stays a stream; a file is stdout itself.
    let expect_stream = fs::metadata(&path).unwrap().file_type().is_char_device();
    for path in [&path, &link] {
        let target = parse(path);
        let is_stream = matches!(target, OutputTarget::Stream { .. });
        assert!(
            if expect_stream {
                is_stream
            } else {
                target.is_stdout()
            },
            "{}: {target:?}",
            path.display()
        );
    }
}

/// Runs [`child_with_stdout_on_a_path`] with its stdout on `path`.
fn run_child_with_stdout_on(path: &Path) -> std::process::Output {
    common::rerun_test(module_path!(), "child_with_stdout_on_a_path")
        .env(STDOUT_PATH_VARIABLE, path)
        .stdout(
            fs::OpenOptions::new()
                .write(true)
                .create(true)
                .truncate(true)
                .open(path)
                .unwrap(),
        )
        .stderr(Stdio::piped())
        .output()
        .unwrap()
}

#[test]
fn a_path_to_what_stdout_is_open_on_is_stdout() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("stdout.txt");
    let output = run_child_with_stdout_on(&file);
    let child_stdout = fs::read_to_string(&file).unwrap();
    assert!(
        output.status.success() && child_stdout.contains("1 passed"),
        "{child_stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    // Any other file is a file.
    assert!(!parse(&dir.path().join("other.txt")).is_stdout());
    if let Some(null) = char_node(dir.path(), "null", 3) {
        let output = run_child_with_stdout_on(&null);
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
}

/// A saved `observe --json` from a real run: `sh -c 'yes | head -c
/// 300000000 | md5sum >/dev/null; exit 3'` on a 2-vCPU VM.
const OBSERVE_PIPELINE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/fixtures/results/observe-pipeline-vm.json"
);

#[test]
fn a_saved_observation_loads_as_an_observe_document() {
    let document = load(Path::new(OBSERVE_PIPELINE)).unwrap_or_else(|e| panic!("{e:#}"));
    let SavedDocument::Observe(observed) = document else {
        panic!("{OBSERVE_PIPELINE}: loaded as {document:?}");
    };
    assert_eq!(observed.options.mode, ObserveMode::Command);
    assert_eq!(observed.exit_status, Some(3));
    assert_eq!(observed.judged.threads.len(), 4);
    assert!(observed.judged.valid, "{:?}", observed.judged.problems);
}

#[test]
fn a_truncated_observation_is_a_one_line_error_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let whole: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(OBSERVE_PIPELINE).unwrap()).unwrap();
    // Cut after its first fields: still JSON, still an observe document,
    // but the judgement and the rest are gone.
    let head: serde_json::Map<String, serde_json::Value> = whole
        .as_object()
        .unwrap()
        .iter()
        .filter(|(key, _)| {
            [
                "schema_version",
                "kind",
                "tool_version",
                "host",
                "started_unix",
                "options",
            ]
            .contains(&key.as_str())
        })
        .map(|(key, value)| (key.clone(), value.clone()))
        .collect();
    let cut_fields = dir.path().join("observe-fields.json");
    fs::write(&cut_fields, serde_json::to_vec(&head).unwrap()).unwrap();
    // Cut mid-document, as a full disk or a killed copy leaves it.
    let cut_bytes = dir.path().join("observe-bytes.json");
    fs::write(&cut_bytes, &fs::read(OBSERVE_PIPELINE).unwrap()[..4096]).unwrap();
    for (path, expected) in [
        (&cut_fields, "damaged observe file: missing field"),
        (&cut_bytes, "not a placement-study JSON file"),
    ] {
        let error = format!("{:#}", load(path).unwrap_err());
        assert_eq!(error.lines().count(), 1, "not one line: {error:?}");
        assert!(
            error.starts_with(&format!("{}: {expected}", path.display())),
            "{error}"
        );
    }
}

/// `placement-study ARGS` run from the repository root; stdout and status.
fn run_binary(args: &[&str]) -> (String, Option<i32>) {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_placement-study"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    (
        String::from_utf8(output.stdout).unwrap(),
        output.status.code(),
    )
}

/// A saved topology is a document like every other: `report FILE` prints
/// the view `topology` printed, the JSON comes back byte for byte, and a
/// file `topology --json` wrote before it had a head (no `kind`) still
/// reads, its host unknown.
#[test]
fn a_saved_topology_re_renders_and_an_old_one_still_reads() {
    let dir = tempfile::tempdir().unwrap();
    let saved = dir.path().join("machine.json");
    let machine = "fixtures/sysfs/laptop-i5-11300H";
    let saved_arg = saved.to_str().unwrap();
    let (live_view, status) = run_binary(&[
        "topology",
        "--sysfs-root",
        machine,
        "--no-cpuid",
        "--json",
        saved_arg,
    ]);
    assert_eq!(status, Some(0));
    let (re_rendered, status) = run_binary(&["report", saved_arg]);
    assert_eq!(status, Some(0));
    assert_eq!(re_rendered, live_view);
    let (json, _) = run_binary(&["report", "--json=-", saved_arg]);
    assert_eq!(json, fs::read_to_string(&saved).unwrap());
    let document: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(document["kind"], "topology");
    assert_eq!(document["host"], "laptop-i5-11300H");

    // The same machine as 0.1.0 wrote it: the probed machine alone.
    let mut old = document.as_object().unwrap().clone();
    for field in [
        "kind",
        "tool_version",
        "host",
        "started_unix",
        "complete",
        "model",
        "topology",
        "evidence",
    ] {
        old.remove(field);
    }
    let old_file = dir.path().join("old.json");
    fs::write(&old_file, serde_json::to_vec(&old).unwrap()).unwrap();
    let (old_view, status) = run_binary(&["report", old_file.to_str().unwrap()]);
    assert_eq!(status, Some(0));
    assert_eq!(old_view, live_view);
    let (compared, status) =
        run_binary(&["report", "--wide", saved_arg, old_file.to_str().unwrap()]);
    assert_eq!(status, Some(0));
    assert_eq!(
        compared
            .matches("│ 1 package, 4 cores × 2 threads, 1 core class │")
            .count(),
        2,
        "{compared}"
    );
}
