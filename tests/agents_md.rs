//! The AGENTS.md that `init` writes names only commands that exist: every `make` target is in the
//! project's Makefile, every `operator-rs` command line parses (subcommands and flags), every
//! `cargo` subcommand runs.

mod support;

use std::collections::BTreeSet;
use std::process::Command;

use support::{folder, run_ok};

/// The command lines of a Markdown text that start with `program`: the lines of its code blocks
/// and its inline code spans, up to a `#` comment.
fn command_lines<'a>(text: &'a str, program: &str) -> Vec<&'a str> {
    let mut code: Vec<&str> = Vec::new();
    let mut in_block = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            in_block = !in_block;
        } else if in_block {
            code.push(line);
        } else {
            code.extend(line.split('`').skip(1).step_by(2));
        }
    }
    code.into_iter()
        .map(|c| c.split('#').next().unwrap_or_default().trim())
        .filter(|c| c.starts_with(&format!("{program} ")))
        .collect()
}

#[test]
fn every_command_agents_md_names_exists() {
    for init in [&["--multigroup"][..], &[]] {
        let (_tmp, dir) = folder("crew");
        let mut args = vec!["init", "--domain", "example.com"];
        args.extend(init);
        run_ok(&dir, &args);
        let agents = std::fs::read_to_string(dir.join("AGENTS.md")).unwrap();
        let makefile = std::fs::read_to_string(dir.join("Makefile")).unwrap();
        let targets: BTreeSet<&str> = makefile
            .lines()
            .filter_map(|l| l.split_once(':').map(|(t, _)| t))
            .filter(|t| !t.is_empty() && t.chars().all(|c| c.is_alphanumeric() || c == '-'))
            .collect();

        let make = command_lines(&agents, "make");
        assert!(make.len() >= 5, "{make:?}");
        for line in make {
            for word in line.split_whitespace().skip(1).filter(|w| !w.contains('=')) {
                assert!(
                    targets.contains(word),
                    "AGENTS.md names `make {word}`, not a target"
                );
            }
        }

        let operator_rs = command_lines(&agents, "operator-rs");
        assert!(operator_rs.len() >= 5, "{operator_rs:?}");
        for line in operator_rs {
            let words: Vec<&str> = line.split_whitespace().skip(1).collect();
            let subcommands: Vec<&str> = words
                .iter()
                .copied()
                .take_while(|w| !w.starts_with('-'))
                .collect();
            let mut help = subcommands.clone();
            help.push("--help");
            let out = run_ok(&dir, &help);
            for flag in words.iter().filter(|w| w.starts_with("--")) {
                let flag = flag.split('=').next().unwrap();
                assert!(
                    out.contains(&format!("{flag} "))
                        || out.contains(&format!("{flag}["))
                        || out.contains(&format!("{flag}\n")),
                    "AGENTS.md: `{line}`: operator-rs {} has no {flag}",
                    subcommands.join(" ")
                );
            }
        }

        let cargo = command_lines(&agents, "cargo");
        for line in cargo {
            let Some(subcommand) = line.split_whitespace().nth(1) else {
                continue;
            };
            let status = Command::new("cargo")
                .args([subcommand, "--help"])
                .output()
                .unwrap()
                .status;
            assert!(
                status.success(),
                "AGENTS.md names `cargo {subcommand}`, which cargo has not"
            );
        }
    }
}
