//! The man page and clap agree on every flag, both ways: each long (`--name`)
//! and short (`-q`) flag that clap knows for a command is documented for that
//! command in man/placement-study.1, and each flag the man page documents is
//! one clap knows for a command it documents it for.
//!
//! The man page is not parsed everywhere, only where it defines options:
//!
//! * an item's tag (the line after `.TP`) in COMMANDS, for the command of
//!   the `.SS` it is under, and in OPTIONS, for the commands its
//!   `.SS Title (command, ...)` names (every word in the parentheses that is
//!   a command's name; "(every command)" names all of them and the program
//!   itself);
//! * a SYNOPSIS line, from `.B placement-study COMMAND` to the next `.br`
//!   or paragraph, for that command.
//!
//! Prose and the other sections (OUTPUT, SIGNALS, JSON, EXAMPLES, SEE ALSO)
//! are left out: they mention flags in passing, and other tools' flags too
//! (`pdsh -R exec`, `cargo test -- --ignored`, `perf stat -e`). A SYNOPSIS
//! mention alone does not document a flag: it needs an item that says what
//! it does.

use clap::CommandFactory;
use placement_study::cli::Cli;
use std::collections::BTreeSet;

/// The program itself, as a scope: its own flags (`--version`) are no
/// command's.
const PROGRAM: &str = "placement-study";

/// The commands a part of the man page documents flags for.
#[derive(Debug, Clone)]
enum Scope {
    Every,
    Commands(Vec<String>),
}

impl Scope {
    fn covers(&self, command: &str) -> bool {
        match self {
            Scope::Every => true,
            Scope::Commands(names) => names.iter().any(|name| name == command),
        }
    }

    /// An OPTIONS subsection's scope, from the parentheses that end its
    /// title: "Gate rule (gate, the gate that run runs first, and each
    /// comparison of pairs)" names gate, run and pairs.
    fn of_options_title(title: &str) -> Scope {
        let named = title
            .rsplit_once('(')
            .and_then(|(_, rest)| rest.strip_suffix(')'))
            .unwrap_or("");
        if named == "every command" {
            return Scope::Every;
        }
        Scope::Commands(
            named
                .split(|c: char| !(c.is_alphanumeric() || c == '-'))
                .filter(|word| !word.is_empty())
                .map(str::to_string)
                .collect(),
        )
    }
}

impl std::fmt::Display for Scope {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Scope::Every => f.write_str("every command"),
            Scope::Commands(names) if names.is_empty() => f.write_str("no command"),
            Scope::Commands(names) => f.write_str(&names.join(", ")),
        }
    }
}

/// One flag where the man page defines options.
#[derive(Debug)]
struct Mention {
    flag: String,
    scope: Scope,
    /// An item's tag (documents the flag), not a SYNOPSIS line (names it).
    item: bool,
    /// 1-based line of man/placement-study.1.
    line: usize,
}

/// A roff line as its reader sees the text: `\-` is a hyphen, font changes
/// (`\fB`), `\|` and `\&` vanish, other escapes read as a space.
fn plain(roff: &str) -> String {
    let mut text = String::with_capacity(roff.len());
    let mut chars = roff.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            text.push(c);
            continue;
        }
        match chars.next() {
            Some('-') => text.push('-'),
            Some('f') => {
                chars.next();
            }
            Some('|' | '&') => {}
            Some('(') => {
                chars.next();
                chars.next();
                text.push(' ');
            }
            _ => text.push(' '),
        }
    }
    text
}

/// The flags on a roff line: words `--name` and `-x` (a bare `--` ends
/// the options, it is none).
fn flags_on(roff: &str) -> Vec<String> {
    plain(roff)
        .split(|c: char| c.is_whitespace() || "[]()|,;:=\"".contains(c))
        .filter(|word| {
            let long = word.strip_prefix("--").is_some_and(|name| {
                name.starts_with(|c: char| c.is_ascii_alphabetic())
                    && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
            });
            let short = word.len() == 2
                && word.starts_with('-')
                && word[1..].starts_with(|c: char| c.is_ascii_alphabetic());
            long || short
        })
        .map(str::to_string)
        .collect()
}

/// Every flag in SYNOPSIS, and in the item tags of COMMANDS and OPTIONS.
fn mentions(man: &str) -> Vec<Mention> {
    let mut found = Vec::new();
    let mut section = "";
    // SYNOPSIS: the command of the `.B placement-study` line being read,
    // None in the prose after them. COMMANDS, OPTIONS: the `.SS`'s.
    let mut scope: Option<Scope> = None;
    let mut push = |flags: Vec<String>, scope: &Scope, item: bool, index: usize| {
        for flag in flags {
            let (scope, line) = (scope.clone(), index + 1);
            found.push(Mention {
                flag,
                scope,
                item,
                line,
            });
        }
    };
    let mut lines = man.lines().enumerate();
    while let Some((index, line)) = lines.next() {
        if let Some(title) = line.strip_prefix(".SH ") {
            section = title.trim();
            scope = None;
        } else if section == "SYNOPSIS" {
            if let Some(rest) = line.strip_prefix(".B placement-study") {
                let command = match rest.split_whitespace().next() {
                    Some(word) if !word.starts_with('\\') => word,
                    _ => PROGRAM,
                };
                scope = Some(Scope::Commands(vec![command.to_string()]));
            } else if matches!(line, ".br" | ".PP" | ".P" | ".LP") {
                scope = None;
            }
            if let Some(scope) = &scope {
                push(flags_on(line), scope, false, index);
            }
        } else if section == "COMMANDS" || section == "OPTIONS" {
            if let Some(title) = line.strip_prefix(".SS ") {
                scope = Some(if section == "COMMANDS" {
                    Scope::Commands(vec![title.trim().to_string()])
                } else {
                    Scope::of_options_title(title.trim())
                });
            } else if line == ".TP"
                && let Some((index, tag)) = lines.next()
            {
                // An item before any `.SS` documents its flags for no command.
                let scope = scope.clone().unwrap_or(Scope::Commands(Vec::new()));
                push(flags_on(tag), &scope, true, index);
            }
        }
    }
    found
}

/// Each command clap knows (the program first, as [`PROGRAM`]) with its
/// long and short flags, `--help` and `--version` included: the command is
/// built, as the user meets it.
fn clap_flags() -> Vec<(String, BTreeSet<String>)> {
    fn walk(command: &clap::Command, name: &str, into: &mut Vec<(String, BTreeSet<String>)>) {
        let flags = command
            .get_arguments()
            .flat_map(|arg| {
                let long = arg.get_long().map(|long| format!("--{long}"));
                let short = arg.get_short().map(|short| format!("-{short}"));
                long.into_iter().chain(short)
            })
            .collect();
        into.push((name.to_string(), flags));
        for sub in command.get_subcommands() {
            walk(sub, sub.get_name(), into);
        }
    }
    let mut root = Cli::command();
    root.build();
    let mut commands = Vec::new();
    walk(&root, PROGRAM, &mut commands);
    commands
}

#[test]
fn every_flag_clap_knows_is_in_the_man_page_and_the_reverse() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/man/placement-study.1");
    let man = std::fs::read_to_string(path).expect("man/placement-study.1 is readable");
    let mentions = mentions(&man);
    let commands = clap_flags();
    assert!(
        mentions.iter().any(|m| m.flag == "--json" && m.item),
        "the parse found no --json item: does man/placement-study.1 still use .TP items?"
    );

    let mut problems = Vec::new();
    for (command, flags) in &commands {
        for flag in flags {
            let documented = mentions
                .iter()
                .any(|m| m.item && &m.flag == flag && m.scope.covers(command));
            if !documented {
                problems.push(format!(
                    "`{command} {flag}`: clap knows it, but no .TP item documents it under \
                     COMMANDS `.SS {command}` or an OPTIONS subsection naming {command}"
                ));
            }
        }
    }
    for mention in &mentions {
        let known = commands
            .iter()
            .any(|(command, flags)| mention.scope.covers(command) && flags.contains(&mention.flag));
        if !known {
            let place = if mention.item { "an item" } else { "SYNOPSIS" };
            problems.push(format!(
                "man/placement-study.1:{}: {place} documents `{}` for {}, \
                 which clap does not know there",
                mention.line, mention.flag, mention.scope
            ));
        }
    }
    assert!(
        problems.is_empty(),
        "clap and the man page disagree:\n{}",
        problems.join("\n")
    );
}

#[test]
fn the_parse_reads_roff_as_a_reader_sees_it() {
    assert_eq!(flags_on(r#".BR \-q ", " \-\-quiet"#), ["-q", "--quiet"]);
    assert_eq!(flags_on(r"\fB\-\-json\fR[=\fIFILE\fR]"), ["--json"]);
    assert_eq!(flags_on(r".IR DIR \||\| \-\-no\-cpuid ]"), ["--no-cpuid"]);
    assert_eq!(
        flags_on(r"\fB\-\-\fR \fICOMMAND\fR [\fIARG\fR ...]"),
        Vec::<String>::new()
    );
    assert_eq!(flags_on(r".B no\-smt"), Vec::<String>::new());
    let scope =
        Scope::of_options_title("Gate rule (gate, the gate that run runs first, and pairs)");
    assert!(scope.covers("gate") && scope.covers("run") && scope.covers("pairs"));
    assert!(!scope.covers("hybrid"));
    assert!(Scope::of_options_title("Help (every command)").covers(PROGRAM));
}

#[test]
fn only_synopsis_lines_and_option_items_count() {
    let man = r#".SH SYNOPSIS
.B placement-study gate
.RB [ \-\-json
.RI [ FILE ]]
.br
.B placement-study report \-\-fleet
.PP
Every command also takes
.B \-\-wide
.SH COMMANDS
.SS observe
Prose naming
.B \-\-pid
does not count.
.TP
.BI \-\-kernel " NAME"
.SH OPTIONS
.SS Search (pairs)
.TP
.B \-\-exhaustive
.SH EXAMPLES
.TP
.B pdsh \-R exec
"#;
    let found: Vec<String> = mentions(man)
        .iter()
        .map(|m| {
            format!(
                "{}:{} {} for {}",
                m.line,
                if m.item { "item" } else { "synopsis" },
                m.flag,
                m.scope
            )
        })
        .collect();
    assert_eq!(
        found,
        [
            "3:synopsis --json for gate",
            "6:synopsis --fleet for report",
            "16:item --kernel for observe",
            "20:item --exhaustive for pairs",
        ]
    );
}

/// The statuses a command's `--help` lists under "Exit status:" (the
/// lines that start with a number).
fn help_statuses(command: &str) -> Vec<u8> {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_placement-study"))
        .args([command, "--help"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{command} --help");
    let help = String::from_utf8(output.stdout).unwrap();
    let (_, section) = help
        .split_once("\nExit status:\n")
        .unwrap_or_else(|| panic!("{command} --help has no exit statuses:\n{help}"));
    section
        .lines()
        // "  130  stopped by SIGINT": a number and two spaces (a wrapped
        // line's "1 %" has one).
        .filter_map(|line| line.trim_start().split_once("  ")?.0.parse().ok())
        .collect()
}

/// The man page's EXIT STATUS "By command" list: each command (an item's
/// tag) with the statuses its item lists.
fn man_statuses_by_command(man: &str) -> Vec<(String, Vec<u8>)> {
    let section = man
        .split("\n.SH EXIT STATUS\n")
        .nth(1)
        .and_then(|rest| rest.split("\n.SH ").next())
        .expect("the man page has an EXIT STATUS section");
    let (_, by_command) = section
        .split_once("\n.SS By command\n")
        .expect("EXIT STATUS has a By command list");
    by_command
        .split("\n.TP\n")
        .skip(1)
        .map(|item| {
            let mut lines = item.lines();
            let command = lines.next().unwrap_or_default();
            let command = command.strip_prefix(".B ").unwrap_or(command).to_string();
            let statuses = lines
                .next()
                .unwrap_or_default()
                .split(';')
                .next()
                .unwrap_or_default()
                .split(',')
                .map(|status| {
                    status.trim().parse().unwrap_or_else(|_| {
                        panic!("{command}'s man page item lists {status:?}, not a status")
                    })
                })
                .collect();
            (command, statuses)
        })
        .collect()
}

/// Every command's `--help` lists its own exit statuses, and they are the
/// ones the man page's EXIT STATUS lists for it; every command is there.
#[test]
fn each_commands_help_lists_the_exit_statuses_the_man_page_gives_it() {
    let man = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/man/placement-study.1"
    ))
    .unwrap();
    let listed = man_statuses_by_command(&man);
    let commands: Vec<String> = Cli::command()
        .get_subcommands()
        .map(|sub| sub.get_name().to_string())
        .collect();
    assert_eq!(
        listed.iter().map(|(c, _)| c.clone()).collect::<Vec<_>>(),
        commands,
        "the man page's By command list and clap's commands"
    );
    for (command, statuses) in &listed {
        assert_eq!(
            &help_statuses(command),
            statuses,
            "{command} --help and the man page"
        );
    }
}
