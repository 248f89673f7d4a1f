//! Flags of kubebuilder's and operator-sdk's commands that operator-rs does not take, each with
//! the reason: a command line that passes one is refused with that reason, in one line, before
//! it is parsed (clap alone would only say the flag is unexpected). docs/flags.md lists them with
//! every other flag of both tools; tests/flags_table.rs keeps the two in step.

/// A flag refused on a command, and why.
#[derive(Debug)]
pub struct Refused {
    /// The command's words: `["create", "webhook"]`.
    pub command: &'static [&'static str],
    /// Its spellings: `--image-builder`, `-b`.
    pub flags: &'static [&'static str],
    pub reason: &'static str,
}

/// Every refused flag.
pub static REFUSED: &[Refused] = &[
    Refused {
        command: &["create", "webhook"],
        flags: &["--legacy"],
        reason: "operator-sdk's deprecated layout put webhooks under api/; operator-rs writes them \
                 under src/webhook/ (leave the flag out)",
    },
    Refused {
        command: &["alpha", "generate"],
        flags: &["--plugins"],
        reason: "alpha generate replays the plugins PROJECT records (layout and plugins); it takes \
                 no other keys: add a plugin with `edit --plugins <key>` afterwards",
    },
    Refused {
        command: &["generate", "kustomize", "manifests"],
        flags: &["--plugins"],
        reason: "operator-rs's OLM generators are one, for Rust projects: there are no plugin keys \
                 to choose (leave the flag out)",
    },
    Refused {
        command: &["generate", "bundle"],
        flags: &["--plugins"],
        reason: "operator-rs's OLM generators are one, for Rust projects: there are no plugin keys \
                 to choose (leave the flag out)",
    },
    Refused {
        command: &["bundle", "validate"],
        flags: &["--plugins"],
        reason: "bundle validate runs no plugins (leave the flag out)",
    },
    Refused {
        command: &["bundle", "validate"],
        flags: &["--image-builder", "-b"],
        reason: "operator-rs validates bundle folders offline and pulls no images: unpack the \
                 bundle image into a folder (docker create, then docker cp <id>:/ ./bundle) and \
                 validate that",
    },
    Refused {
        command: &["bundle", "validate"],
        flags: &["--alpha-select-external"],
        reason: "operator-rs runs its validators in-process and no external validator executables \
                 (operator-sdk's alpha protocol): run them on the bundle folder yourself",
    },
];

/// The refusal of the first refused flag `argv` passes to its command, as one line.
pub fn check(argv: &[String]) -> Option<String> {
    for refused in REFUSED {
        let Some(rest) = after_command(argv, refused.command) else {
            continue;
        };
        for arg in rest {
            if let Some(flag) = refused
                .flags
                .iter()
                .find(|f| arg == *f || arg.starts_with(&format!("{f}=")))
            {
                return Some(format!("{flag}: {}", refused.reason));
            }
        }
    }
    None
}

/// The arguments after `command`'s words, if `argv` runs that command (global flags may come
/// before its words).
fn after_command<'a>(argv: &'a [String], command: &[&str]) -> Option<&'a [String]> {
    let mut words = 0;
    for (i, arg) in argv.iter().enumerate().skip(1) {
        if arg.starts_with('-') {
            continue;
        }
        if command.get(words) != Some(&arg.as_str()) {
            return None;
        }
        words += 1;
        if words == command.len() {
            return Some(&argv[i + 1..]);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(line: &str) -> Vec<String> {
        line.split(' ').map(str::to_string).collect()
    }

    #[test]
    fn refused_flags_are_found_after_their_command_only() {
        let refusal = check(&argv(
            "operator-rs --verbose bundle validate ./bundle -b podman",
        ))
        .unwrap();
        assert!(refusal.starts_with("-b: operator-rs validates bundle folders offline"));
        assert!(check(&argv("operator-rs create webhook --group g --legacy=true")).is_some());
        assert!(check(&argv("operator-rs create api --group g --legacy")).is_none());
        assert!(check(&argv("operator-rs init --plugins go/v4")).is_none());
        assert!(check(&argv("operator-rs generate bundle --plugins=go/v4")).is_some());
    }

    #[test]
    fn every_refusal_gives_a_reason_and_operator_rs_has_no_such_flag() {
        use clap::CommandFactory as _;
        let cli = crate::cli::Cli::command();
        for refused in REFUSED {
            assert!(refused.reason.len() > 20, "{refused:?}");
            let mut command = &cli;
            for word in refused.command {
                command = command
                    .find_subcommand(word)
                    .expect("a command of operator-rs");
            }
            for flag in refused.flags {
                let taken = command.get_arguments().any(|a| {
                    a.get_long().is_some_and(|l| format!("--{l}") == *flag)
                        || a.get_short().is_some_and(|s| format!("-{s}") == *flag)
                });
                assert!(
                    !taken,
                    "{flag} is refused but {} takes it",
                    refused.command.join(" ")
                );
            }
        }
    }
}
