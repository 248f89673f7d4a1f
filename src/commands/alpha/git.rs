//! The git plumbing of `alpha update`'s branches: trees are committed from scratch folders
//! through an index of their own, so that neither the user's work tree nor their index is
//! touched until the output branch is checked out.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context as _, Result, bail};

/// The git repository whose work tree is a project folder.
pub struct Repo {
    root: PathBuf,
    /// The scratch index of [`Repo::commit_folder`] and [`Repo::check_out_head`].
    index: PathBuf,
    _scratch: tempfile::TempDir,
}

impl Repo {
    /// The repository of `dir`, which must be the top of a git work tree with a commit.
    pub fn open(dir: &Path) -> Result<Self> {
        super::merge::check_git()?;
        let top = Command::new("git")
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

    /// The files HEAD's commit has.
    pub fn files_at_head(&self) -> Result<std::collections::BTreeSet<String>> {
        let out = self.git(&["ls-tree", "-r", "-z", "--name-only", "HEAD"])?;
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

    /// Writes the files of HEAD's commit into the empty folder `to` (modes and all), with the
    /// scratch index: the user's work tree and index are left alone.
    pub fn check_out_head(&self, to: &Path) -> Result<()> {
        self.with_index(None, &["read-tree", "HEAD"])?;
        self.with_index(Some(to), &["checkout-index", "--all", "--force"])?;
        Ok(())
    }

    /// Commits the files of `folder` (as `git add -A` takes them there, .gitignore and all) with
    /// `parents` and `message`; `from_head` starts from HEAD's index, so that files HEAD
    /// tracks though .gitignore names them stay.
    pub fn commit_folder(
        &self,
        folder: &Path,
        from_head: bool,
        parents: &[&str],
        message: &str,
    ) -> Result<String> {
        if from_head {
            self.with_index(None, &["read-tree", "HEAD"])?;
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
        let mut command = Command::new("git");
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
        let mut command = Command::new("git");
        command.args(args).current_dir(&self.root);
        finish(command, args)
    }

    /// `Some(stdout)` if git succeeded, `None` if it said no.
    fn try_git(&self, args: &[&str]) -> Result<Option<String>> {
        let output = Command::new("git")
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
