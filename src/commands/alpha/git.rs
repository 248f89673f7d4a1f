//! The git plumbing of `alpha update`'s branches: trees are committed from scratch folders
//! through an index of their own, so that neither the user's work tree nor their index is
//! touched until the output branch is checked out.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context as _, Result, bail};

/// The settings every git command of one `alpha update` runs with (`--git-config`, as `git -c
/// key=value`): they reach the merge of each file too (`merge.conflictStyle=diff3`), and do not
/// touch the user's git configuration.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GitConfig(Vec<String>);

impl GitConfig {
    /// kubebuilder's settings when `--git-config disable` is not given: renames found however
    /// many files changed, and conflicts shown as two sides (whatever the user's
    /// merge.conflictStyle says).
    pub const DEFAULTS: [&'static str; 3] = [
        "merge.renameLimit=999999",
        "diff.renameLimit=999999",
        "merge.conflictStyle=merge",
    ];

    /// The settings of `--git-config` values, as kubebuilder reads them: [`Self::DEFAULTS`] then
    /// the values given in order (a later one wins), or only those if one of them is `disable`.
    /// A value is `section[.subsection].name[=value]`, as `git -c` takes it.
    pub fn from_flags(values: &[String]) -> Result<Self> {
        let disable = values.iter().any(|v| v == "disable");
        let mut settings: Vec<String> = if disable {
            Vec::new()
        } else {
            Self::DEFAULTS.iter().map(|s| s.to_string()).collect()
        };
        for value in values.iter().filter(|v| *v != "disable") {
            let key = value.split_once('=').map_or(value.as_str(), |(k, _)| k);
            if !is_config_key(key) {
                bail!(
                    "--git-config {value:?} is not a git setting: give key=value with a key                      section.name (e.g. rerere.enabled=true), or `disable` to drop the defaults"
                );
            }
            settings.push(value.clone());
        }
        Ok(Self(settings))
    }

    /// The value of setting `key` (git's keys are case-insensitive but for the subsection),
    /// the last one given; a key without a value is `true`, as git reads it.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.0.iter().rev().find_map(|setting| {
            let (k, v) = setting.split_once('=').unwrap_or((setting, "true"));
            k.eq_ignore_ascii_case(key).then_some(v)
        })
    }

    /// `git`, with the settings.
    pub fn git(&self) -> Command {
        let mut command = Command::new("git");
        for setting in &self.0 {
            command.arg("-c").arg(setting);
        }
        command
    }
}

/// A git configuration key: `section.name` or `section.subsection.name`, where the section and
/// the name are letters, digits and `-`, starting with a letter (the subsection may hold
/// anything but a newline).
fn is_config_key(key: &str) -> bool {
    let word = |w: &str| {
        w.starts_with(|c: char| c.is_ascii_alphabetic())
            && w.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
    };
    let Some((section, rest)) = key.split_once('.') else {
        return false;
    };
    let (subsection, name) = rest.rsplit_once('.').unwrap_or(("", rest));
    word(section) && word(name) && !subsection.contains('\n')
}

/// The git repository whose work tree is a project folder.
pub struct Repo {
    root: PathBuf,
    config: GitConfig,
    /// The scratch index of [`Repo::commit_folder`] and [`Repo::check_out`].
    index: PathBuf,
    _scratch: tempfile::TempDir,
}

/// Whether `git` runs here.
pub fn check_git() -> Result<()> {
    match Command::new("git").arg("--version").output() {
        Ok(output) if output.status.success() => Ok(()),
        _ => bail!(
            "alpha update merges with `git merge-file`, and git was not found: install git and run \
             it again"
        ),
    }
}

impl Repo {
    /// The repository of `dir`, which must be the top of a git work tree with a commit; its
    /// git commands run with `config`.
    pub fn open(dir: &Path, config: GitConfig) -> Result<Self> {
        check_git()?;
        let top = config
            .git()
            .args(["rev-parse", "--show-toplevel"])
            .current_dir(dir)
            .output()
            .context("running git rev-parse")?;
        if !top.status.success() {
            bail!(
                "{} is not in a git repository: alpha update commits the update on a branch \
                 (run `git init && git add -A && git commit`), or pass --in-place",
                dir.display()
            );
        }
        let top = PathBuf::from(String::from_utf8_lossy(&top.stdout).trim());
        if top.canonicalize()? != dir.canonicalize()? {
            bail!(
                "the project is not at the top of its git repository ({}): alpha update's \
                 branches hold the project alone; pass --in-place",
                top.display()
            );
        }
        let scratch = tempfile::tempdir().context("creating a scratch folder")?;
        let repo = Self {
            root: dir.to_path_buf(),
            config,
            index: scratch.path().join("index"),
            _scratch: scratch,
        };
        if repo
            .try_git(&["rev-parse", "--verify", "--quiet", "HEAD"])?
            .is_none()
        {
            bail!("the git repository has no commit yet: commit the project first");
        }
        Ok(repo)
    }

    /// Whether tracked files have uncommitted changes.
    pub fn is_dirty(&self) -> Result<bool> {
        Ok(!self
            .git(&[
                "--no-optional-locks",
                "status",
                "--porcelain",
                "--untracked-files=no",
            ])?
            .is_empty())
    }

    /// The files of `commit` (a revision: HEAD, a branch, a commit id).
    pub fn files_at(&self, commit: &str) -> Result<std::collections::BTreeSet<String>> {
        let out = self.git(&["ls-tree", "-r", "-z", "--name-only", commit])?;
        Ok(out
            .split('\0')
            .filter(|p| !p.is_empty())
            .map(String::from)
            .collect())
    }

    /// The work tree's files that git does not track and .gitignore does not name: those a
    /// checkout refuses to overwrite.
    pub fn untracked_files(&self) -> Result<Vec<String>> {
        let out = self.git(&["ls-files", "--others", "--exclude-standard", "-z"])?;
        Ok(out
            .split('\0')
            .filter(|p| !p.is_empty())
            .map(String::from)
            .collect())
    }

    /// Whether branch `name` exists; refuses names git does not take as branch names.
    pub fn branch_exists(&self, name: &str) -> Result<bool> {
        if self
            .try_git(&["check-ref-format", "--branch", name])?
            .is_none()
        {
            bail!("{name:?} is not a valid git branch name");
        }
        let reference = format!("refs/heads/{name}");
        Ok(self
            .try_git(&["show-ref", "--verify", "--quiet", &reference])?
            .is_some())
    }

    /// The commit HEAD names.
    pub fn head(&self) -> Result<String> {
        self.git(&["rev-parse", "HEAD"])
    }

    /// The name of the branch checked out, None on a detached HEAD.
    pub fn current_branch(&self) -> Result<Option<String>> {
        Ok(self
            .try_git(&["symbolic-ref", "--quiet", "--short", "HEAD"])?
            .filter(|name| !name.is_empty()))
    }

    /// The commit of local branch `name` (kubebuilder's --from-branch), refused with
    /// kubebuilder's words when there is none.
    pub fn branch_commit(&self, name: &str) -> Result<String> {
        let reference = format!("refs/heads/{name}");
        if name.starts_with('-')
            || self
                .try_git(&["show-ref", "--verify", "--quiet", &reference])?
                .is_none()
        {
            bail!(
                "--from-branch {name:?}: the branch does not exist locally; run 'git branch -a' to \
                 see all available branches"
            );
        }
        self.git(&["rev-parse", "--verify", &format!("{reference}^{{commit}}")])
    }

    /// Writes the files of `commit` into the empty folder `to` (modes and all), with the scratch
    /// index: the user's work tree and index are left alone.
    pub fn check_out(&self, commit: &str, to: &Path) -> Result<()> {
        self.with_index(None, &["read-tree", commit])?;
        self.with_index(Some(to), &["checkout-index", "--all", "--force"])?;
        Ok(())
    }

    /// Commits the files of `folder` (as `git add -A` takes them there, .gitignore and all) with
    /// `parents` and `message`; `from` starts from that commit's index, so that files it tracks
    /// though .gitignore names them stay.
    pub fn commit_folder(
        &self,
        folder: &Path,
        from: Option<&str>,
        parents: &[&str],
        message: &str,
    ) -> Result<String> {
        if let Some(commit) = from {
            self.with_index(None, &["read-tree", commit])?;
        } else {
            let _ = std::fs::remove_file(&self.index);
        }
        self.with_index(Some(folder), &["add", "--all", "."])?;
        let tree = self.with_index(None, &["write-tree"])?;
        self.commit_tree(&tree, parents, message)
    }

    /// A commit of `tree` (anything git names a tree by, such as `<commit>^{tree}`).
    pub fn commit_tree(&self, tree: &str, parents: &[&str], message: &str) -> Result<String> {
        let mut args = vec!["commit-tree", tree];
        for parent in parents {
            args.extend(["-p", parent]);
        }
        args.extend(["-m", message]);
        self.git(&args)
    }

    /// Creates branch `name` at `commit` (it must not exist).
    pub fn create_branch(&self, name: &str, commit: &str) -> Result<()> {
        self.git(&["branch", "--no-track", name, commit]).map(drop)
    }

    /// `git checkout <branch>`, in the user's work tree.
    pub fn switch(&self, branch: &str) -> Result<()> {
        self.git(&["checkout", "--quiet", branch]).map(drop)
    }

    /// Commits every change of the work tree on the current branch, amending its last commit
    /// if `amend`; `false` if there was nothing to commit.
    pub fn commit_work_tree(&self, message: &str, amend: bool) -> Result<bool> {
        // Not the lock of the command at work, which an old project's .gitignore may not name.
        self.git(&["add", "--all", "--", ".", ":(exclude).operator-rs.*"])?;
        if self.try_git(&["diff", "--cached", "--quiet"])?.is_some() {
            return Ok(false);
        }
        let mut args = vec!["commit", "--quiet", "--no-verify"];
        if amend {
            args.extend(["--amend", "--no-edit"]);
        } else {
            args.extend(["-m", message]);
        }
        self.git(&args).map(|_| true)
    }

    /// `git push -u origin <branch>`.
    pub fn push(&self, branch: &str) -> Result<()> {
        self.git(&["push", "--quiet", "-u", "origin", branch])
            .map(drop)
            .with_context(|| format!("pushing {branch} to origin"))
    }

    fn with_index(&self, work_tree: Option<&Path>, args: &[&str]) -> Result<String> {
        let mut command = self.config.git();
        if let Some(work_tree) = work_tree {
            command.arg("--work-tree").arg(work_tree);
            // `git add .` takes its paths from the folder it runs in.
            command.current_dir(work_tree);
            command.env("GIT_DIR", self.git(&["rev-parse", "--absolute-git-dir"])?);
        } else {
            command.current_dir(&self.root);
        }
        command.env("GIT_INDEX_FILE", &self.index).args(args);
        finish(command, args)
    }

    fn git(&self, args: &[&str]) -> Result<String> {
        let mut command = self.config.git();
        command.args(args).current_dir(&self.root);
        finish(command, args)
    }

    /// `Some(stdout)` if git succeeded, `None` if it said no.
    fn try_git(&self, args: &[&str]) -> Result<Option<String>> {
        let output = self
            .config
            .git()
            .args(args)
            .current_dir(&self.root)
            .output()
            .with_context(|| format!("running git {}", args.join(" ")))?;
        Ok(output
            .status
            .success()
            .then(|| String::from_utf8_lossy(&output.stdout).trim().to_string()))
    }
}

fn finish(mut command: Command, args: &[&str]) -> Result<String> {
    let output = command
        .output()
        .with_context(|| format!("running git {}", args.join(" ")))?;
    if !output.status.success() {
        bail!(
            "git {} failed: {}",
            args.first().copied().unwrap_or_default(),
            String::from_utf8_lossy(&output.stderr).trim()
        );
    }
    Ok(String::from_utf8_lossy(&output.stdout).trim().to_string())
}
