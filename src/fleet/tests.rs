//! Gathering per host from every shape of input: engine lines, bare
//! documents, Ansible `--tree` files, folders; and what is shown of it.

use super::ansible::AnsibleResult;
use super::engines::{Line, classify};
use super::*;
use std::borrow::Cow;

/// Gathers `text` as one input named "in", each document kept as its kind.
fn gather(text: &str) -> Vec<FleetHost<DocumentKind>> {
    let mut gathering = Gathering::default();
    gathering.input(
        "in",
        text.as_bytes(),
        &mut |_: &Origin, d: SavedDocument| d.head().kind,
    );
    gathering.finish()
}

fn gate_line(host: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/fleet/vm-gate.json");
    let mut gate: serde_json::Value =
        serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    gate["host"] = host.into();
    gate.to_string()
}

#[test]
fn hosts_gather_their_documents_and_the_reason_they_have_none() {
    let gate = gate_line("inside");
    let text = format!(
        "a: {gate}\na: human view\nb: {gate}\nb: {gate}\nb: {{\"kind\nc: Permission denied\n\
         pdsh@head: c: ssh exited with exit code 255\nd:\nd: {{\ne: last words\n\
         pdsh@head: f: command timeout\npdsh@head: f: ssh exited with exit code 255\n"
    );
    let hosts = gather(&text);
    let names: Vec<&str> = hosts.iter().map(|h| h.host.as_str()).collect();
    assert_eq!(names, ["a", "b", "c", "d", "e", "f"]);
    // The engine's label names the host, not the document's field.
    assert_eq!(hosts[0].documents.len(), 1);
    assert_eq!(hosts[0].documents[0].source.line, Some(1));
    assert_eq!(hosts[1].documents[0].replaced, 1);
    assert_eq!(hosts[1].documents[0].source.line, Some(4));
    assert_eq!(hosts[1].unreadable, 1);
    let reason = |i: usize| hosts[i].broken.as_ref().unwrap().reason.clone();
    assert_eq!(
        reason(2),
        "pdsh@head: ssh exited with exit code 255; last line: Permission denied"
    );
    assert!(reason(3).contains("split over lines"), "{}", reason(3));
    assert_eq!(reason(4), "no result line; last line: last words");
    assert_eq!(
        hosts[4].broken.as_ref().unwrap().source.to_string(),
        "in:10"
    );
    // The timeout, then the exit status of the ssh it killed.
    assert_eq!(
        reason(5),
        "pdsh@head: command timeout; pdsh@head: ssh exited with exit code 255"
    );
    assert_eq!(hosts[5].broken.as_ref().unwrap().source.line, Some(11));
}

#[test]
fn bare_documents_belong_to_the_host_they_name() {
    let text = format!(
        "{}\nverdict: no-smt (exit 4)\n{}\n{{broken\n",
        gate_line("n1"),
        gate_line("n2")
    );
    let hosts = gather(&text);
    let names: Vec<&str> = hosts.iter().map(|h| h.host.as_str()).collect();
    // The human view's "verdict:" is no host; the bad line is the input's.
    assert_eq!(names, ["n1", "n2", "in"]);
    // Engine output and bare lines together (`cat pdsh.out gate.jsonl`):
    // each engine line's document is still its host's.
    let mixed = gather(&format!("n3: {}\n{}\n", gate_line("n3"), gate_line("n4")));
    let names: Vec<&str> = mixed.iter().map(|h| h.host.as_str()).collect();
    assert_eq!(names, ["n3", "n4"]);
    assert!(mixed.iter().all(|h| h.broken.is_none()));
    assert!(
        hosts[2]
            .broken
            .as_ref()
            .unwrap()
            .reason
            .starts_with("in:4: ")
    );
    let nothing = gather("just a human view\n");
    assert_eq!(nothing[0].host, "in");
    assert_eq!(
        nothing[0].broken.as_ref().unwrap().reason,
        "no result line; last line: just a human view"
    );
}

/// An Ansible `--tree` object of a command that printed `stdout` and
/// `stderr` and exited `rc`, as Ansible 2.19 writes it.
fn tree_file(stdout: &str, stderr: &str, rc: i32) -> String {
    let msg = if rc == 0 { "" } else { "non-zero return code" };
    serde_json::json!({
        "changed": true, "cmd": ["placement-study", "gate", "--json-line", "-"],
        "msg": msg, "rc": rc, "stdout": stdout, "stderr": stderr,
        "stdout_lines": stdout.lines().collect::<Vec<_>>(),
    })
    .to_string()
}

/// Gathers each (file, text) as one input.
fn gather_files(files: &[(&str, String)]) -> Vec<FleetHost<DocumentKind>> {
    let mut gathering = Gathering::default();
    for (file, text) in files {
        gathering.input(
            file,
            text.as_bytes(),
            &mut |_: &Origin, d: SavedDocument| d.head().kind,
        );
    }
    gathering.finish()
}

#[test]
fn ansible_tree_files_are_the_hosts_they_are_named_after() {
    let gate = gate_line("inside");
    let hosts = gather_files(&[
        // Twice the gate with a stray line between: the last one counts.
        (
            "tree/n1",
            tree_file(&format!("{gate}\nverdict: no-smt\n{gate}"), "view", 4),
        ),
        ("tree/n2", tree_file("", "first\nlast words\n\n", 1)),
        // The human view only, without --json-line.
        ("tree/n3", tree_file("human view\nits last line", "", 4)),
        (
            "tree/n4",
            serde_json::json!({
                "changed": false, "unreachable": true,
                "msg": "Task failed: Failed to connect to the host via ssh",
            })
            .to_string(),
        ),
        // A module that never started: no stdout, Ansible's own stderr.
        (
            "tree/n5",
            serde_json::json!({
                "changed": false, "rc": 127, "module_stdout": "",
                "module_stderr": "/bin/sh: 1: python3: not found\n",
                "msg": "The module interpreter 'python3' was not found.",
            })
            .to_string(),
        ),
        ("tree/n6", tree_file("{\"kind\": \"gate\", \"cut", "", 1)),
        // Pretty, as Ansible writes it with -vvv.
        (
            "tree/n7",
            serde_json::to_string_pretty(&serde_json::json!({"rc": 0, "stdout": gate})).unwrap(),
        ),
        // Ended by its task_timeout (ansible-core 2.14's file, whole).
        (
            "tree/n8",
            serde_json::json!({
                "changed": false,
                "msg": "The command action failed to execute in the expected time frame (5) \
                        and was terminated",
            })
            .to_string(),
        ),
    ]);
    let names: Vec<&str> = hosts.iter().map(|h| h.host.as_str()).collect();
    // The file names the host, not the document's own `host` field.
    assert_eq!(names, ["n1", "n2", "n3", "n4", "n5", "n6", "n7", "n8"]);
    assert_eq!(hosts[0].documents[0].replaced, 1);
    assert_eq!(hosts[0].documents[0].source.to_string(), "tree/n1");
    assert_eq!(hosts[6].documents[0].kind, DocumentKind::Gate);
    let reason = |i: usize| hosts[i].broken.as_ref().unwrap().reason.clone();
    assert_eq!(reason(1), "ansible: exit code 1; last line: last words");
    assert_eq!(reason(2), "ansible: exit code 4; last line: its last line");
    assert_eq!(
        reason(3),
        "ansible: Task failed: Failed to connect to the host via ssh"
    );
    assert_eq!(
        reason(4),
        "ansible: The module interpreter 'python3' was not found. (exit code 127); \
         last line: /bin/sh: 1: python3: not found"
    );
    assert!(
        reason(5).starts_with("tree/n6: not a placement-study JSON file"),
        "{}",
        reason(5)
    );
    assert_eq!(
        reason(7),
        "ansible: The command action failed to execute in the expected time frame (5) and \
         was terminated"
    );
}

#[test]
fn a_damaged_document_is_not_taken_for_an_ansible_file() {
    let mut gate: serde_json::Value = serde_json::from_str(&gate_line("n1")).unwrap();
    let kindless = {
        gate.as_object_mut().unwrap().remove("kind");
        gate.to_string()
    };
    for (text, shape) in [
        (kindless.as_str(), false),
        // Ansible's fields, but a `kind`: a document, however odd.
        (r#"{"kind": "gate", "stdout": ""}"#, false),
        // A message alone is no Ansible result.
        (r#"{"msg": "hello"}"#, false),
        (r#"{"msg": "down", "failed": true}"#, true),
        (r#"{"stdout": ""}"#, true),
        // Two objects, as `cat tree/*` would make: not one result.
        (r#"{"stdout": ""}{"stdout": ""}"#, false),
        ("node1: {\"stdout\": \"\"}", false),
    ] {
        assert_eq!(
            AnsibleResult::of(text.as_bytes()).is_some(),
            shape,
            "{text}"
        );
    }
    let hosts = gather_files(&[("saved/n1.json", kindless)]);
    assert_eq!(hosts[0].host, "saved/n1.json");
    let reason = &hosts[0].broken.as_ref().unwrap().reason;
    assert!(reason.contains("no \"kind\" field"), "{reason}");
}

#[test]
fn a_folder_is_its_regular_files_in_natural_order() {
    let dir = tempfile::tempdir().unwrap();
    for host in ["n10", "n2", "n1"] {
        let stdout = gate_line("inside");
        std::fs::write(dir.path().join(host), tree_file(&stdout, "", 4)).unwrap();
    }
    std::fs::create_dir(dir.path().join("n3")).unwrap();
    // Read, it would wait for a writer forever.
    let fifo = dir.path().join("n4");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
    std::fs::write(dir.path().join("n5"), "").unwrap();
    std::fs::write(dir.path().join("n6"), "not a result\n").unwrap();
    let hosts = read(&[dir.path().to_path_buf()], |_, d| d.head().kind)
        .unwrap()
        .hosts;
    let names: Vec<&str> = hosts.iter().map(|h| h.host.as_str()).collect();
    let shown = |name: &str| dir.path().join(name).display().to_string();
    let (folder, fifo, empty, garbage) = (shown("n3"), shown("n4"), shown("n5"), shown("n6"));
    assert_eq!(names, ["n1", "n2", &folder, &fifo, &empty, &garbage, "n10"]);
    let reason = |i: usize| hosts[i].broken.as_ref().unwrap().reason.clone();
    assert!(reason(2).starts_with("a folder inside "), "{}", reason(2));
    assert!(reason(3).starts_with("not a regular file"), "{}", reason(3));
    assert_eq!(reason(4), "empty");
    assert_eq!(reason(5), "no result line; last line: not a result");
}

#[test]
fn what_was_named_but_cannot_be_read_is_an_error_not_a_host() {
    let dir = tempfile::tempdir().unwrap();
    let empty_folder = dir.path().join("tree");
    std::fs::create_dir(&empty_folder).unwrap();
    let gate = dir.path().join("gate.jsonl");
    std::fs::write(&gate, gate_line("n1")).unwrap();
    let missing = dir.path().join("no\u{1b}such.out");
    // A socket cannot be read, whoever runs the test.
    let socket = dir.path().join("socket");
    let _listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
    // Sparse: no disk is filled.
    let huge = dir.path().join("huge.out");
    std::fs::File::create(&huge)
        .unwrap()
        .set_len(FLEET_INPUT_CAP + 1)
        .unwrap();
    for (named, says) in [
        (
            &missing,
            "no\\u{1b}such.out: no such file or folder; check the path",
        ),
        (&empty_folder, "tree: an empty folder; name the folder"),
        (&socket, "socket: is a socket, not a fleet input file"),
        (
            &huge,
            "more than the 512 MiB read of one input; split it over",
        ),
    ] {
        // Named after a readable input, the bad one still fails it all.
        let error = read(&[gate.clone(), named.clone()], |_, d| d.head().kind)
            .unwrap_err()
            .to_string();
        assert!(error.starts_with("report --fleet: "), "{error}");
        assert!(error.contains(says), "{says:?} not in {error}");
        assert!(!error.chars().any(char::is_control), "{error}");
    }
    // Read fine, no result line: as in a folder, a host named by its path.
    let human = dir.path().join("view.txt");
    std::fs::write(&human, "the human view alone\n").unwrap();
    let hosts = read(std::slice::from_ref(&human), |_, d| d.head().kind)
        .unwrap()
        .hosts;
    assert_eq!(hosts.len(), 1);
    assert_eq!(hosts[0].host, human.display().to_string());
}

#[test]
fn reasons_and_names_are_one_line_safe_to_show() {
    assert_eq!(
        one_line("plain 'quoted' \"text\""),
        "plain 'quoted' \"text\""
    );
    assert_eq!(
        one_line("a\u{1b}[2Jb\rc\td\0e\u{202e}f\u{85}"),
        "a\\u{1b}[2Jb\\rc\\td\\0e\\u{202e}f\\u{85}"
    );
    assert_eq!(escape_controls("node1"), Cow::Borrowed("node1"));
    let long = one_line(&"é".repeat(500));
    assert_eq!(long.chars().count(), REASON_CHARS);
    assert!(long.ends_with("é…"), "{long}");
    // Around the cap, with multi-byte characters and escapes that do
    // not fit whole: never more than the cap, never a cut escape.
    for pad in 190..=205 {
        for tail in ["\u{1b}", "€", "\n", "b"] {
            let text = format!("{}{}", "x".repeat(pad), tail.repeat(4));
            let shown = one_line(&text);
            assert!(shown.chars().count() <= REASON_CHARS, "{pad} {tail:?}");
            let kept = shown.trim_end_matches('…').trim_start_matches('x');
            assert!(
                kept.is_empty() || kept.len() % escape_controls(tail).len() == 0,
                "{pad} {tail:?}: {shown}"
            );
        }
    }

    let mut gate: serde_json::Value = serde_json::from_str(&gate_line("x")).unwrap();
    gate["host"] = "evil\u{1b}]0;owned\u{7}".into();
    assert_eq!(
        gather(&gate.to_string())[0].host,
        "evil\\u{1b}]0;owned\\u{7}"
    );
    let text = format!(
        "n2: {}\u{1b}[31mred\nn3: {{\"kind\": \"g\\u001bate\", \"schema_version\": 1}}\n",
        "long ".repeat(100)
    );
    let hosts = gather(&text);
    for host in &hosts {
        let reason = &host.broken.as_ref().unwrap().reason;
        assert!(reason.chars().count() <= REASON_CHARS, "{reason}");
        assert!(!reason.chars().any(char::is_control), "{reason}");
    }
    assert!(hosts[0].broken.as_ref().unwrap().reason.ends_with('…'));
    assert!(
        hosts[1]
            .broken
            .as_ref()
            .unwrap()
            .reason
            .contains("g\\u{1b}ate"),
        "{:?}",
        hosts[1].broken
    );
}

#[test]
fn hosts_sort_by_their_numbers() {
    let mut hosts = vec!["node10", "node2", "login1", "node02", "node1", "node1b"];
    hosts.sort_by(|a, b| natural(a, b));
    assert_eq!(
        hosts,
        ["login1", "node1", "node1b", "node2", "node02", "node10"]
    );
}

#[test]
fn engine_lines_are_told_apart() {
    assert_eq!(
        classify("pdsh@head: node2: ssh exited with exit code 255", false),
        Line::Engine {
            host: "node2",
            message: "pdsh@head: ssh exited with exit code 255".into()
        }
    );
    assert_eq!(
        classify("clush: node3: command timeout", false),
        Line::Engine {
            host: "node3",
            message: "clush: command timeout".into()
        }
    );
    assert_eq!(
        classify("node1: {\"kind\": 1}", false),
        Line::Host {
            host: "node1",
            rest: "{\"kind\": 1}"
        }
    );
    assert_eq!(
        classify("{\"kind\":\"gate\"}", false),
        Line::Bare("{\"kind\":\"gate\"}")
    );
    assert_eq!(
        classify("node1:", false),
        Line::Host {
            host: "node1",
            rest: ""
        }
    );
    assert_eq!(
        classify("sending signal 15 to node3 [sh] pid 23266", false),
        Line::Stray
    );
    assert_eq!(classify("  CPUID hypervisor bit: set", false), Line::Stray);
    assert_eq!(classify("verdict: no-smt (exit 4)", true), Line::Stray);
    assert!(matches!(
        classify("clush: node3: command timeout", true),
        Line::Engine { .. }
    ));
}
