//! docs/flags.md against the CLI: every row that says `same` or `differs` is a flag its command
//! takes, every `refused` row a flag the command refuses in one line with the reason the row
//! gives (src/refused_flags.rs), every refusal is in the table, and no row lacks a reason where
//! it needs one.

mod support;

use std::collections::BTreeSet;
use std::path::Path;

use clap::CommandFactory as _;
use operator_rs::cli::Cli;
use operator_rs::refused_flags::REFUSED;

/// One row of the table.
#[derive(Debug)]
struct Row {
    command: Vec<String>,
    /// Its spellings: `-q`, `--quiet`.
    flags: Vec<String>,
    status: String,
    why: String,
}

fn rows() -> Vec<Row> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/flags.md");
    let text = std::fs::read_to_string(&path).unwrap();
    let mut rows = Vec::new();
    for line in text.lines().filter(|l| l.starts_with("| `")) {
        let cells: Vec<&str> = line.trim_matches('|').split(" | ").map(str::trim).collect();
        assert_eq!(cells.len(), 6, "not a row of six cells: {line}");
        let unquote = |cell: &str| cell.trim_matches('`').to_string();
        rows.push(Row {
            command: unquote(cells[0]).split(' ').map(str::to_string).collect(),
            flags: unquote(cells[1]).split(", ").map(str::to_string).collect(),
            status: cells[4].to_string(),
            why: cells[5].to_string(),
        });
        assert!(
            cells[2] != "—" || cells[3] != "—",
            "a row of a flag neither anchor has: {line}"
        );
    }
    assert!(
        rows.len() > 100,
        "the table is missing: {} rows",
        rows.len()
    );
    rows
}

/// Whether `command` (the built CLI's, globals and help included) takes `flag`.
fn takes(cli: &clap::Command, command: &[String], flag: &str) -> bool {
    let mut current = cli;
    for word in command {
        current = current
            .find_subcommand(word)
            .unwrap_or_else(|| panic!("operator-rs has no command {}", command.join(" ")));
    }
    current.get_arguments().any(|arg| {
        arg.get_long().is_some_and(|l| format!("--{l}") == flag)
            || arg.get_short().is_some_and(|s| format!("-{s}") == flag)
    })
}

#[test]
fn every_row_says_what_the_cli_does() {
    let mut cli = Cli::command();
    cli.build();
    let mut seen = BTreeSet::new();
    for row in rows() {
        let name = format!("{} {}", row.command.join(" "), row.flags.join(", "));
        assert!(seen.insert(name.clone()), "{name} is in the table twice");
        match row.status.as_str() {
            "same" | "differs" => {
                if row.status == "differs" {
                    assert!(!row.why.is_empty(), "{name} differs: the row must say why");
                }
                for flag in &row.flags {
                    assert!(
                        takes(&cli, &row.command, flag),
                        "{name} says {} but operator-rs refuses {flag}",
                        row.status
                    );
                }
            }
            "refused" => {
                assert!(
                    !row.why.is_empty(),
                    "{name} is refused: the row must say why"
                );
                for flag in &row.flags {
                    assert!(
                        !takes(&cli, &row.command, flag),
                        "{name} says refused but operator-rs takes {flag}"
                    );
                    let refusal = REFUSED
                        .iter()
                        .find(|r| {
                            r.command.iter().eq(row.command.iter())
                                && r.flags.contains(&flag.as_str())
                        })
                        .unwrap_or_else(|| {
                            panic!(
                                "{name}: {flag} is refused without a reason (src/refused_flags.rs)"
                            )
                        });
                    // The table's reason is the CLI's, in its own words but starting alike.
                    let start: String = row.why.chars().take(24).collect();
                    assert!(
                        refusal.reason.starts_with(&start),
                        "{name}: the table's reason {:?} is not the CLI's {:?}",
                        row.why,
                        refusal.reason
                    );
                }
            }
            other => panic!("{name}: status {other:?} is not same, differs or refused"),
        }
    }
    // Every refusal of the CLI is a row of the table.
    for refused in REFUSED {
        for flag in refused.flags {
            let found = seen.iter().any(|name| {
                name.starts_with(&format!("{} ", refused.command.join(" ")))
                    && name.split(' ').any(|w| w.trim_end_matches(',') == *flag)
            });
            assert!(
                found,
                "{} {flag} is refused but not in docs/flags.md",
                refused.command.join(" ")
            );
        }
    }
}

/// A refused flag, on the command line, is one line that gives the reason, and nothing else runs.
#[test]
fn refused_flags_are_one_line_with_the_reason() {
    let (_tmp, dir) = support::folder("project");
    for refused in REFUSED {
        for flag in refused.flags {
            let mut args: Vec<&str> = refused.command.to_vec();
            args.extend([*flag, "value"]);
            let stderr = support::assert_refused(&dir, &args, &[*flag]);
            let start: String = refused.reason.chars().take(40).collect();
            assert!(stderr.contains(&start), "{args:?}: {stderr}");
        }
    }
}
