//! Text from outside never acts on the terminal, and every message tells
//! the truth on one line: a saved file's host name or a value typed on the
//! command line is shown escaped, in line, in every view and error; a
//! saved file that makes no sense is refused naming the field; and the
//! views fall back to ASCII where the locale's charset is not UTF-8.

use std::path::Path;
use std::process::{Command, Output, Stdio};

/// `placement-study ARGS` from the repository root, with `locale` as
/// `LC_ALL` (the test's own environment must not decide the charset).
fn placement_study_in(locale: &str, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_placement-study"))
        .args(args)
        .env("LC_ALL", locale)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdin(Stdio::null())
        .output()
        .expect("the binary runs")
}

fn placement_study(args: &[&str]) -> Output {
    placement_study_in("C.UTF-8", args)
}

/// The status, and stderr, which must be exactly one line.
fn one_line_error(output: &Output) -> (Option<i32>, String) {
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert_eq!(stderr.lines().count(), 1, "not one line: {stderr:?}");
    assert!(stderr.starts_with("placement-study: "), "{stderr}");
    (output.status.code(), stderr)
}

/// A copy of `fixtures/results/NAME` in `dir`, changed by `edit`.
fn edited_copy(dir: &Path, name: &str, edit: impl FnOnce(&mut serde_json::Value)) -> String {
    let text = std::fs::read_to_string(Path::new("fixtures/results").join(name)).unwrap();
    let mut document: serde_json::Value = serde_json::from_str(&text).unwrap();
    edit(&mut document);
    let copy = dir.join(name);
    std::fs::write(&copy, serde_json::to_vec_pretty(&document).unwrap()).unwrap();
    copy.to_str().unwrap().to_string()
}

/// Every line of every table in `text` is as wide as the table's top line.
fn assert_tables_in_line(text: &str) {
    let mut width = None;
    for line in text.lines() {
        let boxed = line.starts_with(['┌', '│', '├', '└', '+', '|']);
        match (boxed, width) {
            (true, None) => width = Some(line.chars().count()),
            (true, Some(width)) => assert_eq!(line.chars().count(), width, "{line}\n{text}"),
            (false, _) => width = None,
        }
    }
}

#[test]
fn a_host_name_with_control_codes_is_shown_escaped_and_in_line() {
    let dir = tempfile::tempdir().unwrap();
    let hostile = |document: &mut serde_json::Value| {
        document["host"] = "evil\u{0}\u{1b}[31mred\nline".into();
        document["model"] = "CPU\u{1b}]0;title\u{7}".into();
    };
    let files = [
        edited_copy(dir.path(), "gate-guest-one-core-shared.json", hostile),
        edited_copy(dir.path(), "run-vm-skip-gate.json", hostile),
    ];
    for args in [
        vec!["report", &files[0], &files[1]],
        vec!["report", "--wide", &files[0], &files[1]],
        vec!["report", &files[0]],
        vec!["report", &files[1]],
    ] {
        let output = placement_study(&args);
        assert_eq!(output.status.code(), Some(0), "{args:?}");
        let shown = String::from_utf8(output.stdout).unwrap();
        assert!(
            !shown.contains(['\u{0}', '\u{1b}', '\u{7}']),
            "{args:?}: {shown:?}"
        );
        // The comparison names every host (a gate's own view names none).
        if args.len() >= 3 {
            assert!(shown.contains(r"evil\0\u{1b}[31m"), "{args:?}: {shown}");
        }
        assert!(!shown.contains("red\nline"), "{args:?}: {shown}");
        assert_tables_in_line(&shown);
    }
}

/// The newline escaped in every view of every kind, in one place: a saved
/// document whose host, model, warnings, command line or prepare hold a
/// fake line ("\n\nFAKE-LINE: ...") shows it on the line it is part of, in
/// the terminal's view (80 columns and `--wide`) and in the Markdown; and
/// `run -- sh -c 'true<newline>...'` prints no line of its own making. (A
/// saved document's host printed 5 fake lines in `report FILE`.)
#[test]
fn a_newline_from_outside_starts_no_line_in_any_view() {
    const FAKE: &str = "\n\nFAKE-LINE: every check passed, valid study (exit 0)";
    let dir = tempfile::tempdir().unwrap();
    let fixtures = std::fs::read_dir("fixtures/results").unwrap();
    let mut names: Vec<String> = fixtures
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".json"))
        .collect();
    names.sort();
    for name in &names {
        let file = edited_copy(dir.path(), name, |document| {
            document["host"] = format!("host{FAKE}").into();
            document["model"] = format!("model{FAKE}").into();
            if let Some(warnings) = document["warnings"].as_array_mut() {
                warnings.push(format!("note{FAKE}").into());
            }
            for command in ["options", "command"] {
                let argv = document.get_mut(command).and_then(|c| c.get_mut("argv"));
                if let Some(argv) = argv.and_then(serde_json::Value::as_array_mut) {
                    argv.push(format!("arg{FAKE}").into());
                }
            }
            if document["options"]["prepare"].is_string() {
                document["options"]["prepare"] = format!("prep{FAKE}").into();
            }
        });
        for args in [
            vec!["report", &file],
            vec!["report", "--wide", &file],
            vec!["report", "--markdown=-", &file],
        ] {
            let output = placement_study(&args);
            let shown = String::from_utf8(output.stdout).unwrap();
            assert!(
                !shown.is_empty(),
                "{args:?}: {}",
                String::from_utf8_lossy(&output.stderr)
            );
            assert!(
                !shown
                    .lines()
                    .any(|line| line.trim_start().starts_with("FAKE-LINE")),
                "{args:?}: a line of its own:\n{shown}"
            );
        }
    }
    let _cpus = crate::common::cpus_to_myself();
    let mut args = vec!["run"];
    args.extend(crate::common::QUICK_RUN);
    args.extend([
        "--prepare",
        "true\n: FAKE-LINE prepared",
        "--",
        "sh",
        "-c",
        "true\n: FAKE-LINE valid study",
    ]);
    let output = placement_study(&args);
    let shown = String::from_utf8(output.stdout).unwrap();
    assert!(shown.contains(r"true\n: FAKE-LINE valid study"), "{shown}");
    assert!(
        !shown
            .lines()
            .any(|line| line.trim_start().starts_with(": FAKE-LINE")),
        "{shown}"
    );
}

#[test]
fn values_and_paths_in_errors_stay_on_one_line() {
    for (args, expected) in [
        (
            vec!["topology", "--sysfs-root", "/tmp/no\nsuch"],
            r"/tmp/no\nsuch",
        ),
        (
            vec!["gate", "--threshold", "0.2\nx"],
            r"--threshold 0.2\nx:",
        ),
        (
            vec!["observe", "--seconds", "1\u{1b}[2J", "--pid", "1"],
            r"\u{1b}[2J",
        ),
        (vec!["report", "no\nsuch.json"], r"no\nsuch.json"),
    ] {
        let (_, stderr) = one_line_error(&placement_study(&args));
        assert!(stderr.contains(expected), "{args:?}: {stderr}");
        assert!(!stderr.contains('\u{1b}'), "{args:?}: {stderr:?}");
    }
}

/// clap's own messages (three lines, with the hint to `--help`) quote
/// what was typed escaped too.
#[test]
fn a_value_clap_refuses_is_quoted_escaped() {
    for args in [
        ["observe", "--pid", "1\u{1b}[31m\n2"],
        ["run", "--arms", "one\nper-core"],
    ] {
        let output = placement_study(&args);
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        let stderr = String::from_utf8(output.stderr).unwrap();
        let first = stderr.lines().next().unwrap();
        assert!(first.starts_with("error: invalid value '"), "{stderr}");
        assert!(first.contains(r"\n"), "{args:?}: {stderr}");
        assert!(!stderr.contains('\u{1b}'), "{args:?}: {stderr:?}");
    }
}

#[test]
fn a_range_message_states_the_least_value_accepted() {
    let (status, stderr) = one_line_error(&placement_study(&[
        "observe",
        "--seconds",
        "0.05",
        "--pid",
        "1",
    ]));
    assert_eq!(status, Some(2));
    assert!(
        stderr.contains("--seconds 0.05: out of range; use 0.1 s to 604800 s"),
        "{stderr}"
    );
}

#[test]
fn a_saved_file_that_makes_no_sense_is_damaged_naming_the_field() {
    let dir = tempfile::tempdir().unwrap();
    let observe = "observe-kernel-vm.json";
    for (edit, expected) in [
        (
            ("cpus", "ms", serde_json::json!(-1e308)),
            "damaged observe file: cpus[0].ms is -1e+308; a time is from 0",
        ),
        (
            ("cpus", "share", serde_json::json!(1.5)),
            "damaged observe file: cpus[0].share is 1.5; a share is from 0 to 1",
        ),
        (
            ("threads", "on_cpu_ms", serde_json::json!(1e300)),
            "damaged observe file: threads[0].on_cpu_ms is 1e+300; a time is from 0",
        ),
    ] {
        let (list, field, value) = edit;
        let file = edited_copy(dir.path(), observe, |document| {
            document[list][0][field] = value;
        });
        let (status, stderr) = one_line_error(&placement_study(&["report", &file]));
        assert_eq!(status, Some(1), "{stderr}");
        assert!(stderr.contains(&format!("{file}: {expected}")), "{stderr}");
    }
}

#[test]
fn a_bom_is_read_and_trailing_data_and_deep_nesting_have_their_own_message() {
    let dir = tempfile::tempdir().unwrap();
    let gate = std::fs::read("fixtures/results/gate-vm-no-smt.json").unwrap();
    let with = |name: &str, bytes: Vec<u8>| {
        let path = dir.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        path.to_str().unwrap().to_string()
    };
    let bom = with("bom.json", [b"\xef\xbb\xbf".as_slice(), &gate].concat());
    let plain = placement_study(&["report", "fixtures/results/gate-vm-no-smt.json"]);
    let output = placement_study(&["report", &bom]);
    assert_eq!(output.status.code(), plain.status.code());
    assert_eq!(output.stdout, plain.stdout);

    let trailing = with("trailing.json", [gate.as_slice(), b"{}"].concat());
    let deep = with(
        "deep.json",
        ["[".repeat(100_000), "]".repeat(100_000)]
            .concat()
            .into_bytes(),
    );
    let truncated = with("truncated.json", gate[..gate.len() / 2].to_vec());
    for (file, expected) in [
        (&trailing, "more after the JSON document"),
        (&deep, "nested deeper than any placement-study document"),
        (&truncated, "was it truncated?"),
    ] {
        let (status, stderr) = one_line_error(&placement_study(&["report", file]));
        assert_eq!(status, Some(1), "{stderr}");
        assert!(stderr.contains(expected), "{stderr}");
        if file != &truncated {
            assert!(!stderr.contains("truncated"), "{stderr}");
        }
    }
}

#[test]
fn the_c_locale_draws_tables_and_signs_in_ascii() {
    let run = "fixtures/results/run-vm-skip-gate.json";
    let ascii = placement_study_in("C", &["report", run]);
    let utf8 = placement_study_in("C.UTF-8", &["report", run]);
    assert_eq!(ascii.status.code(), Some(0));
    let ascii = String::from_utf8(ascii.stdout).unwrap();
    let utf8 = String::from_utf8(utf8.stdout).unwrap();
    assert!(ascii.is_ascii(), "{ascii}");
    assert!(ascii.contains("+---"), "{ascii}");
    assert!(utf8.contains('┌'), "{utf8}");
    assert_tables_in_line(&ascii);
    // LC_ALL wins over LANG, as setlocale has it; the JSON is unchanged.
    let json = |locale| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_placement-study"));
        command
            .args(["report", run, "--json", "-"])
            .env("LC_ALL", locale)
            .env("LANG", "en_US.UTF-8")
            .current_dir(env!("CARGO_MANIFEST_DIR"));
        command.output().unwrap()
    };
    let (c, utf) = (json("C"), json("C.UTF-8"));
    assert_eq!(c.stdout, utf.stdout);
    assert!(String::from_utf8_lossy(&c.stderr).is_ascii());
}
