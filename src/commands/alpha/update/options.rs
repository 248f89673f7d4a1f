//! `alpha update`'s flags resolved into what the run does, with kubebuilder's names, defaults
//! and rules: one squashed commit unless `--show-commits`, `--restore-path` only when squashing,
//! `--git-config` on top of kubebuilder's defaults. Checked before anything runs.

use anyhow::{Result, bail};

use super::Versions;
use crate::cli::AlphaUpdateArgs;
use crate::commands::alpha::git::GitConfig;

/// What one `alpha update` does, from its flags.
#[derive(Debug)]
pub(super) struct Options {
    /// Keep the history on the output branch (`--show-commits`, or `--squash=false`) rather
    /// than one commit on the base branch.
    pub history: bool,
    /// Paths kept as the base has them (`--restore-path`): relative, `/`-separated, no `..`.
    pub restore: Vec<String>,
    pub git: GitConfig,
    merge_message: Option<String>,
    conflict_message: Option<String>,
}

impl Options {
    pub fn of(args: &AlphaUpdateArgs) -> Result<Self> {
        if args.show_commits && args.squash == Some(true) {
            bail!(
                "--squash and --show-commits contradict each other: one commit (--squash) is the \
                 default; --show-commits keeps the history"
            );
        }
        let history = args.show_commits || args.squash == Some(false);
        if history && !args.restore_path.is_empty() {
            bail!(
                "the --restore-path flag is not supported with --show-commits: a path is restored \
                 in the one commit of the default (squashed) update"
            );
        }
        if args.in_place
            && let Some(flag) = branch_flag(args)
        {
            bail!("{flag} names a branch or a commit, which --in-place does not make");
        }
        let restore = args
            .restore_path
            .iter()
            .map(|path| restore_path(path))
            .collect::<Result<Vec<_>>>()?;
        let message = |m: &Option<String>| m.clone().filter(|m| !m.trim().is_empty());
        Ok(Self {
            history,
            restore,
            git: GitConfig::from_flags(&args.git_config)?,
            merge_message: message(&args.merge_message),
            conflict_message: message(&args.conflict_message),
        })
    }

    /// Whether `path` (of the project) is under one of the restored paths.
    pub fn restores(&self, path: &str) -> bool {
        self.restore.iter().any(|r| {
            path == r
                || path
                    .strip_prefix(r.as_str())
                    .is_some_and(|rest| rest.starts_with('/'))
        })
    }

    /// The message of the update's commit: `--merge-message` or `--conflict-message`, else
    /// kubebuilder's (with operator-rs for kubebuilder), which lists the files that conflict.
    pub fn message(&self, versions: &Versions, conflicts: &[String]) -> String {
        let (from, to) = (&versions.from, &versions.to);
        if conflicts.is_empty() {
            return self
                .merge_message
                .clone()
                .unwrap_or_else(|| format!("chore(operator-rs): update scaffold {from} -> {to}"));
        }
        if let Some(message) = &self.conflict_message {
            return message.clone();
        }
        let mut message = format!(
            "chore(operator-rs): (:warning: manual conflict resolution required) update scaffold \
             {from} -> {to}\n\nConflicts, committed with their markers (search for <<<<<<<):\n"
        );
        for path in conflicts {
            message.push_str(&format!("- {path}\n"));
        }
        message
    }
}

/// The first flag given that only the branch mode has.
fn branch_flag(args: &AlphaUpdateArgs) -> Option<&'static str> {
    [
        (args.squash.is_some(), "--squash"),
        (args.show_commits, "--show-commits"),
        (args.push, "--push"),
        (args.output_branch.is_some(), "--output-branch"),
        (args.from_branch.is_some(), "--from-branch"),
        (args.merge_message.is_some(), "--merge-message"),
        (args.conflict_message.is_some(), "--conflict-message"),
        (args.open_gh_issue, "--open-gh-issue"),
    ]
    .into_iter()
    .find_map(|(given, flag)| given.then_some(flag))
}

/// A `--restore-path` as the project's paths are written: relative to the project, `/`
/// separators, no `.` or `..` steps, no trailing `/`.
fn restore_path(given: &str) -> Result<String> {
    let trimmed = given.trim().trim_start_matches("./").trim_end_matches('/');
    let parts: Vec<&str> = trimmed.split('/').collect();
    if trimmed.is_empty()
        || given.starts_with('/')
        || given.contains('\\')
        || parts
            .iter()
            .any(|p| p.is_empty() || *p == "." || *p == "..")
    {
        bail!(
            "--restore-path {given:?} is not a path inside the project: give a file or folder \
             relative to the project's root, such as .github/workflows"
        );
    }
    Ok(parts.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::{AlphaCommand, Cli, Command};
    use clap::Parser;

    fn args(flags: &[&str]) -> AlphaUpdateArgs {
        let argv = [&["operator-rs", "alpha", "update"][..], flags].concat();
        let Command::Alpha(AlphaCommand::Update(args)) = Cli::try_parse_from(argv).unwrap().command
        else {
            panic!()
        };
        args
    }

    fn refusal(flags: &[&str]) -> String {
        Options::of(&args(flags)).unwrap_err().to_string()
    }

    #[test]
    fn squashing_is_the_default_and_show_commits_keeps_the_history() {
        assert!(!Options::of(&args(&[])).unwrap().history);
        assert!(!Options::of(&args(&["--squash"])).unwrap().history);
        assert!(Options::of(&args(&["--show-commits"])).unwrap().history);
        assert!(Options::of(&args(&["--squash=false"])).unwrap().history);
        assert!(refusal(&["--squash", "--show-commits"]).contains("contradict"));
        assert!(
            refusal(&["--show-commits", "--restore-path", ".github/workflows"])
                .contains("not supported with --show-commits")
        );
    }

    #[test]
    fn restore_paths_are_paths_of_the_project() {
        let options = Options::of(&args(&[
            "--restore-path",
            "./.github/workflows/",
            "--restore-path",
            "docs",
        ]))
        .unwrap();
        assert_eq!(options.restore, [".github/workflows", "docs"]);
        assert!(options.restores(".github/workflows/test.yml"));
        assert!(options.restores("docs"));
        assert!(!options.restores("docs.md"));
        assert!(!options.restores(".github/dependabot.yml"));
        for bad in ["", "/etc", "../x", "a/../b", "a//b", "."] {
            assert!(
                refusal(&["--restore-path", bad]).contains("not a path inside the project"),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn in_place_refuses_the_flags_of_branches() {
        for flag in [
            "--squash",
            "--show-commits",
            "--push",
            "--open-gh-issue",
            "--output-branch=x",
            "--from-branch=main",
            "--merge-message=m",
            "--conflict-message=m",
        ] {
            let name = flag.split('=').next().unwrap();
            assert_eq!(
                refusal(&["--in-place", flag]),
                format!("{name} names a branch or a commit, which --in-place does not make")
            );
        }
        // Restoring a path means leaving it alone, which the folder can do too.
        assert!(Options::of(&args(&["--in-place", "--restore-path", "docs"])).is_ok());
    }

    #[test]
    fn messages_are_kubebuilders_unless_given() {
        let versions = Versions {
            from: "0.1.0".into(),
            to: "0.2.0".into(),
        };
        let default = Options::of(&args(&[])).unwrap();
        assert_eq!(
            default.message(&versions, &[]),
            "chore(operator-rs): update scaffold 0.1.0 -> 0.2.0"
        );
        let conflicted = default.message(&versions, &["Makefile".into()]);
        assert!(conflicted.starts_with(
            "chore(operator-rs): (:warning: manual conflict resolution required) update scaffold 0.1.0 -> 0.2.0\n"
        ));
        assert!(conflicted.ends_with("- Makefile\n"));
        let given = Options::of(&args(&[
            "--merge-message",
            "up",
            "--conflict-message",
            "fix me",
        ]))
        .unwrap();
        assert_eq!(given.message(&versions, &[]), "up");
        assert_eq!(given.message(&versions, &["Makefile".into()]), "fix me");
        // An empty message is no message, as in kubebuilder.
        let empty = Options::of(&args(&["--merge-message="])).unwrap();
        assert_eq!(
            empty.message(&versions, &[]),
            "chore(operator-rs): update scaffold 0.1.0 -> 0.2.0"
        );
    }

    #[test]
    fn git_config_goes_on_top_of_the_defaults_unless_disabled() {
        let options = Options::of(&args(&["--git-config", "merge.conflictStyle=diff3"])).unwrap();
        assert_eq!(options.git.get("merge.conflictstyle"), Some("diff3"));
        assert_eq!(options.git.get("diff.renameLimit"), Some("999999"));
        let disabled = Options::of(&args(&[
            "--git-config",
            "disable",
            "--git-config",
            "rerere.enabled",
        ]))
        .unwrap();
        assert_eq!(disabled.git.get("diff.renameLimit"), None);
        assert_eq!(disabled.git.get("rerere.enabled"), Some("true"));
        assert!(
            Options::of(&args(&[
                "--git-config",
                "url.https://example.com/.insteadOf=gh:"
            ]))
            .is_ok()
        );
        for bad in ["rerere", "=x", "1a.b=c", "a.b c=d", ".x=y"] {
            assert!(
                refusal(&["--git-config", bad]).contains("is not a git setting"),
                "{bad:?}"
            );
        }
    }
}
