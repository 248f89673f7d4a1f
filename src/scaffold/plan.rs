//! A plan: every file a command will write, computed before anything touches the disk.
//!
//! Commands build a [`Plan`] (reading only the files they must edit), then either print it
//! (`--dry-run`) or hand it to [`crate::scaffold::apply`], which writes it all or nothing.
//! Because a plan holds final file contents, the same planner feeds dry runs, snapshot tests and
//! real runs.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Component, Path, PathBuf};

use anyhow::{Context as _, Result, bail};

use super::markers;

/// What happens to one file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// A new file.
    Create,
    /// An existing file replaced by a fresh render (only with `--force`, or for generated files).
    Overwrite,
    /// An existing file edited in place (marker insertions, PROJECT).
    Update,
}

impl Action {
    fn verb(self) -> &'static str {
        match self {
            Action::Create => "create",
            Action::Overwrite => "overwrite",
            Action::Update => "update",
        }
    }
}

/// What to do when a template's target already exists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IfExists {
    /// Refuse, unless the command runs with `--force` (files the user is expected to edit).
    Error,
    /// Keep the user's file (files written once and shared by later commands).
    Skip,
}

/// One planned file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    pub path: String,
    pub contents: String,
    pub action: Action,
}

/// The files a command will write, in the order it planned them.
#[derive(Debug)]
pub struct Plan {
    root: PathBuf,
    force: bool,
    changes: Vec<Change>,
    index: BTreeMap<String, usize>,
}

impl Plan {
    /// A plan against the project at `root`; `force` lets [`IfExists::Error`] files be overwritten.
    pub fn new(root: impl Into<PathBuf>, force: bool) -> Self {
        Self {
            root: root.into(),
            force,
            changes: Vec::new(),
            index: BTreeMap::new(),
        }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn changes(&self) -> &[Change] {
        &self.changes
    }

    /// The contents `path` will have after the plan: planned contents, else what is on disk.
    pub fn read(&self, path: &str) -> Result<Option<String>> {
        if let Some(&i) = self.index.get(path) {
            return Ok(Some(self.changes[i].contents.clone()));
        }
        self.read_disk(path)
    }

    fn read_disk(&self, path: &str) -> Result<Option<String>> {
        let full = self.root.join(path);
        match std::fs::read_to_string(&full) {
            Ok(text) => Ok(Some(text)),
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(err) => Err(err).with_context(|| format!("reading {}", full.display())),
        }
    }

    /// Plans a file rendered from a template, following its [`IfExists`] policy.
    pub fn create(&mut self, path: &str, contents: String, if_exists: IfExists) -> Result<()> {
        check_relative(path)?;
        match self.read_disk(path)? {
            None => self.stage(path, contents, Action::Create),
            Some(existing) if existing == contents => Ok(()),
            Some(_) => match if_exists {
                IfExists::Skip => Ok(()),
                IfExists::Error if self.force => self.stage(path, contents, Action::Overwrite),
                IfExists::Error => {
                    bail!("{path} already exists; rerun with --force to overwrite it")
                }
            },
        }
    }

    /// Plans a file the tool owns and always rewrites (PROJECT).
    pub fn write(&mut self, path: &str, contents: String) -> Result<()> {
        check_relative(path)?;
        let action = match self.read(path)? {
            None => Action::Create,
            Some(existing) if existing == contents => return Ok(()),
            Some(_) => Action::Update,
        };
        self.stage(path, contents, action)
    }

    /// Plans inserting `fragment` above marker `marker` in `path` (a no-op if it is there).
    pub fn insert(&mut self, path: &str, marker: &str, fragment: &str) -> Result<()> {
        self.edit(path, |text| markers::insert(path, text, marker, fragment))
    }

    /// Plans uncommenting `block` in `path` (a no-op if it is active already).
    pub fn uncomment(&mut self, path: &str, block: &str) -> Result<()> {
        self.edit(path, |text| markers::uncomment(path, text, block))
    }

    /// Plans an edit of an existing file (or of one planned earlier): `f` gets its text and
    /// returns the new text.
    pub fn edit(&mut self, path: &str, f: impl FnOnce(&str) -> Result<String>) -> Result<()> {
        check_relative(path)?;
        let Some(text) = self.read(path)? else {
            bail!(
                "{path} does not exist; operator-rs needs to add to it (was it deleted or moved?)"
            );
        };
        let edited = f(&text)?;
        if edited == text {
            return Ok(());
        }
        let action = if self.index.contains_key(path) {
            self.changes[self.index[path]].action
        } else {
            Action::Update
        };
        self.stage(path, edited, action)
    }

    fn stage(&mut self, path: &str, contents: String, action: Action) -> Result<()> {
        match self.index.get(path) {
            Some(&i) => self.changes[i].contents = contents,
            None => {
                self.index.insert(path.to_string(), self.changes.len());
                self.changes.push(Change {
                    path: path.to_string(),
                    contents,
                    action,
                });
            }
        }
        Ok(())
    }

    /// The `--dry-run` listing: one line per file.
    pub fn describe(&self) -> String {
        let mut out = String::new();
        for change in &self.changes {
            let _ = writeln!(out, "{:<9} {}", change.action.verb(), change.path);
        }
        if self.changes.is_empty() {
            out.push_str("nothing to change\n");
        }
        out
    }
}

/// Planned paths must stay inside the project: relative, no `..`, no root or drive prefix.
fn check_relative(path: &str) -> Result<()> {
    let p = Path::new(path);
    if path.is_empty() || p.components().any(|c| !matches!(c, Component::Normal(_))) {
        bail!("refusing to write outside the project: {path:?}");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn existing_files_are_refused_without_force() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "mine").unwrap();
        let mut plan = Plan::new(dir.path(), false);
        let err = plan
            .create("a.txt", "new".into(), IfExists::Error)
            .unwrap_err();
        assert!(err.to_string().contains("--force"), "{err}");
        plan.create("a.txt", "new".into(), IfExists::Skip).unwrap();
        assert!(plan.changes().is_empty());

        let mut forced = Plan::new(dir.path(), true);
        forced
            .create("a.txt", "new".into(), IfExists::Error)
            .unwrap();
        assert_eq!(forced.changes()[0].action, Action::Overwrite);
    }

    #[test]
    fn inserts_see_earlier_planned_files() {
        let dir = tempfile::tempdir().unwrap();
        let mut plan = Plan::new(dir.path(), false);
        plan.create(
            "k.yaml",
            "r:\n# +operator-rs:scaffold:x\n".into(),
            IfExists::Error,
        )
        .unwrap();
        plan.insert("k.yaml", "x", "- a").unwrap();
        assert_eq!(plan.changes().len(), 1);
        assert_eq!(plan.changes()[0].action, Action::Create);
        assert_eq!(
            plan.changes()[0].contents,
            "r:\n- a\n# +operator-rs:scaffold:x\n"
        );
    }

    #[test]
    fn paths_outside_the_project_are_refused() {
        let mut plan = Plan::new("/tmp", false);
        for bad in ["../x", "/etc/passwd", "a/../../b", ""] {
            assert!(plan.write(bad, String::new()).is_err(), "{bad}");
        }
    }
}
