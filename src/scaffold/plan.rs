//! A plan: every file a command will write, computed before anything touches the disk.
//!
//! Commands build a [`Plan`] (reading only the files they must edit), then either print it
//! (`--dry-run`) or hand it to [`crate::scaffold::apply`], which writes it all or nothing.
//! Because a plan holds final file contents, the same planner feeds dry runs, snapshot tests and
//! real runs.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Component, Path, PathBuf};

use anyhow::{Context as _, Result, bail};

use super::{line_endings, markers, rustfmt};

/// What happens to one file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// A new file.
    Create,
    /// An existing file replaced by a fresh render (`--force`, for a file still as operator-rs
    /// wrote it).
    Overwrite,
    /// An existing file edited in place (marker insertions, PROJECT).
    Update,
    /// An existing file removed (`edit --multigroup` moves files: a delete and a create).
    Delete,
}

impl Action {
    fn verb(self) -> &'static str {
        match self {
            Action::Create => "create",
            Action::Overwrite => "overwrite",
            Action::Update => "update",
            Action::Delete => "delete",
        }
    }
}

/// Whose a file rendered from a template is once written: what a later command may do to it.
///
/// (A third kind of file is operator-rs's alone and rewritten by every command that changes it:
/// PROJECT, planned with [`Plan::write`]; `init` writes the runtime crate, and `make manifests`
/// the generated manifests.)
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Owner {
    /// A file for the user's code (a kind's types, controller, webhooks, conversions, sample):
    /// written once; later commands only add lines at its scaffold markers. With `--force` it is
    /// rendered again only while it is still what operator-rs wrote (see [`Plan::written`]) and
    /// the options it depends on changed; an edited file is never replaced.
    User,
    /// A file shared by kinds (a version's `mod.rs`, a kustomization): written by the first
    /// command that needs it, then kept, with or without `--force`; later commands add lines at
    /// its markers.
    Shared,
}

/// One planned file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    pub path: String,
    pub contents: String,
    pub action: Action,
}

/// The files a command will write, in the order it planned them.
#[derive(Debug, Clone)]
pub struct Plan {
    root: PathBuf,
    force: bool,
    changes: Vec<Change>,
    index: BTreeMap<String, usize>,
    /// Files planned with [`Plan::create_formatted`] that rustfmt has yet to format: the
    /// rendered text, by path (the planned text may have marker edits since).
    unformatted: BTreeMap<String, String>,
    /// Rust files on disk edited at their markers: formatted in [`Plan::format_rust`] if
    /// rustfmt leaves them as they were.
    edited: BTreeSet<String>,
    /// What operator-rs wrote at the paths of user files, as far as it can tell (see
    /// [`Plan::written`]).
    written: BTreeMap<String, String>,
    /// What the command prints once it has written the files (see [`Plan::note`]).
    notes: Vec<String>,
}

impl Plan {
    /// A plan against the project at `root`; `force` lets [`Owner::User`] files that are still as
    /// operator-rs wrote them be rendered again.
    pub fn new(root: impl Into<PathBuf>, force: bool) -> Self {
        Self {
            root: root.into(),
            force,
            changes: Vec::new(),
            index: BTreeMap::new(),
            unformatted: BTreeMap::new(),
            edited: BTreeSet::new(),
            written: BTreeMap::new(),
            notes: Vec::new(),
        }
    }

    /// Adds a line for the user about what the plan does that they would not expect, printed
    /// after the files are written.
    pub fn note(&mut self, text: String) {
        self.notes.push(text);
    }

    pub fn notes(&self) -> &[String] {
        &self.notes
    }

    /// Tells the plan what operator-rs wrote at `path`, a user file: `contents`, the template
    /// rendered from the options that PROJECT recorded before this command (unformatted, as
    /// [`Plan::create_formatted`] gets it). A file on disk that is that render (formatted or not,
    /// whatever its line endings) is operator-rs's still, and `--force` may render it again; one
    /// that differs was edited, and is never replaced. Without a record a file is the user's.
    pub fn written(&mut self, path: &str, contents: String) {
        self.written.insert(path.to_string(), contents);
    }

    /// Whether the command runs with `--force`.
    pub fn force(&self) -> bool {
        self.force
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
            let change = &self.changes[i];
            return Ok((change.action != Action::Delete).then(|| change.contents.clone()));
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

    /// Plans a file rendered from a template, following its [`Owner`]'s rules.
    pub fn create(&mut self, path: &str, contents: String, owner: Owner) -> Result<()> {
        check_relative(path)?;
        match self.decide(path, &contents, owner, false)? {
            Some((action, Some(existing))) => {
                let contents = line_endings::like(&existing, &contents);
                self.stage(path, contents, action)
            }
            Some((action, None)) => self.stage(path, contents, action),
            None => Ok(()),
        }
    }

    /// Like [`Plan::create`], for a Rust file rendered from a template: rustfmt formats it before
    /// it is written, as `cargo fmt` would (long kind or group names can change rustfmt's layout),
    /// all such files in one process, in [`Plan::format_rust`]. Until then [`Plan::read`] gives
    /// it unformatted. Other files are planned as [`Plan::create`] plans them.
    pub fn create_formatted(&mut self, path: &str, contents: String, owner: Owner) -> Result<()> {
        if !path.ends_with(".rs") {
            return self.create(path, contents, owner);
        }
        check_relative(path)?;
        if let Some((action, _)) = self.decide(path, &contents, owner, true)? {
            self.stage(path, contents.clone(), action)?;
            self.unformatted.insert(path.to_string(), contents);
        }
        Ok(())
    }

    /// Whether a template's file is written, and how: None keeps the file on disk as it is. The
    /// action comes with the text on disk, whose line endings a replacement keeps. `rust`: the
    /// file is formatted before it is written, so a file on disk that is a render formatted is
    /// that render.
    fn decide(
        &self,
        path: &str,
        contents: &str,
        owner: Owner,
        rust: bool,
    ) -> Result<Option<(Action, Option<String>)>> {
        let Some(existing) = self.read_disk(path)? else {
            return Ok(Some((Action::Create, None)));
        };
        if existing == contents || owner == Owner::Shared {
            return Ok(None);
        }
        let before = self.written.get(path);
        // The options the file depends on are unchanged: it stays as it is, edited or not.
        if before.is_some_and(|before| before == contents) {
            return Ok(None);
        }
        // Whether the file on disk is `render`: formatted or not, in any line endings.
        let on_disk = line_endings::to_lf(&existing);
        let is = |render: &str| {
            *on_disk == *render || (rust && format_one(&self.root, render) == *on_disk)
        };
        if is(contents) {
            return Ok(None);
        }
        match before {
            Some(_) if !self.force => {
                bail!("{path} already exists; rerun with --force to render it again")
            }
            Some(before) if is(before) => Ok(Some((Action::Overwrite, Some(existing)))),
            Some(_) => bail!(
                "{path} was edited since operator-rs wrote it, and these options would change \
                 it: operator-rs never replaces your code, even with --force; make the change by \
                 hand, or move the file away and run the command again to have it written afresh"
            ),
            None => bail!(
                "{path} already exists and is not a file operator-rs wrote for these options: \
                 operator-rs never replaces your code, even with --force; move it away and run \
                 the command again"
            ),
        }
    }

    /// Whether [`Plan::format_rust`] has work to do.
    pub fn needs_rustfmt(&self) -> bool {
        !self.unformatted.is_empty() || !self.edited.is_empty()
    }

    /// Formats Rust files as `cargo fmt` would, all in one rustfmt process: the files planned
    /// with [`Plan::create_formatted`], with the lines inserted at their markers since, and the
    /// files on disk edited at their markers if rustfmt leaves them as they were (a file the user
    /// does not format stays as it is, but for the inserted lines). Inserted lines that a long
    /// name makes too long are so reflowed as `cargo fmt` would; markers find them all the same.
    /// A file that ends up as it is on disk is dropped from the plan. Without rustfmt, the texts
    /// stay as they are.
    pub fn format_rust(&mut self) -> Result<()> {
        let rendered = std::mem::take(&mut self.unformatted);
        let edited = std::mem::take(&mut self.edited);
        self.format(rendered, edited)
    }

    fn format(
        &mut self,
        rendered: BTreeMap<String, String>,
        edited: BTreeSet<String>,
    ) -> Result<()> {
        // Two texts per file: the render alone and the planned text (a rendered file), or the
        // file on disk and the planned text (an edited one), both with LF line endings.
        let mut files = Vec::new();
        let mut texts = Vec::new();
        for (path, render) in rendered {
            let i = self.index[&path];
            texts.push(render);
            texts.push(self.changes[i].contents.clone());
            files.push((i, None));
        }
        for path in edited {
            let Some(&i) = self.index.get(&path) else {
                continue;
            };
            if self.changes[i].action != Action::Update {
                continue;
            }
            let Some(disk) = self.read_disk(&path)? else {
                continue;
            };
            texts.push(line_endings::to_lf(&disk).into_owned());
            texts.push(line_endings::to_lf(&self.changes[i].contents).into_owned());
            files.push((i, Some(disk)));
        }
        if files.is_empty() {
            return Ok(());
        }
        let mut formatted = rustfmt::format_all(&self.root, texts).into_iter();
        let mut dropped = Vec::new();
        for (i, disk) in files {
            let (Some(first), Some(planned)) = (formatted.next(), formatted.next()) else {
                break;
            };
            let path = self.changes[i].path.clone();
            let text = match disk {
                // An edited file: formatted only if it was before.
                Some(disk) => {
                    if first != *line_endings::to_lf(&disk) {
                        continue;
                    }
                    let text = line_endings::like(&disk, &planned);
                    if text == disk {
                        dropped.push(i);
                    }
                    text
                }
                // A rendered file replacing one on disk keeps its line endings. As if the
                // formatted render had been planned: the same as on disk is no change, and
                // inserting into the file on disk is an update.
                None => match self.read_disk(&path)? {
                    Some(disk) if self.changes[i].action == Action::Overwrite => {
                        let text = line_endings::like(&disk, &planned);
                        if disk == text {
                            dropped.push(i);
                        } else if disk == line_endings::like(&disk, &first) {
                            self.changes[i].action = Action::Update;
                        }
                        text
                    }
                    _ => planned,
                },
            };
            self.changes[i].contents = text;
        }
        self.drop_changes(&dropped);
        Ok(())
    }

    /// Takes the changes at `dropped` (indexes into `changes`) out of the plan.
    fn drop_changes(&mut self, dropped: &[usize]) {
        if dropped.is_empty() {
            return;
        }
        let mut i = 0;
        self.changes.retain(|_| {
            i += 1;
            !dropped.contains(&(i - 1))
        });
        self.index = (self.changes.iter().enumerate())
            .map(|(i, c)| (c.path.clone(), i))
            .collect();
    }

    /// Formats `path` now if it waits for rustfmt: before edits of the whole text (`edit`,
    /// `write`), which rustfmt must not undo.
    fn format_now(&mut self, path: &str) -> Result<()> {
        self.edited.remove(path);
        match self.unformatted.remove_entry(path) {
            Some(entry) => self.format(BTreeMap::from([entry]), BTreeSet::new()),
            None => Ok(()),
        }
    }

    /// Plans a file the tool owns and always rewrites (PROJECT).
    pub fn write(&mut self, path: &str, contents: String) -> Result<()> {
        check_relative(path)?;
        self.format_now(path)?;
        let action = match self.read(path)? {
            None => Action::Create,
            Some(existing) if existing == contents => return Ok(()),
            Some(_) => Action::Update,
        };
        self.stage(path, contents, action)
    }

    /// Plans removing `path`, a file that exists (a no-op if it does not). Planning it again
    /// afterwards (a file moved onto a path moved away) replaces the removal.
    pub fn delete(&mut self, path: &str) -> Result<()> {
        check_relative(path)?;
        self.unformatted.remove(path);
        if self.read_disk(path)?.is_none() {
            return Ok(());
        }
        match self.index.get(path) {
            Some(&i) => {
                self.changes[i].contents = String::new();
                self.changes[i].action = Action::Delete;
            }
            None => self.stage(path, String::new(), Action::Delete)?,
        }
        Ok(())
    }

    /// Plans inserting `fragment` above marker `marker` in `path` (a no-op if it is there).
    pub fn insert(&mut self, path: &str, marker: &str, fragment: &str) -> Result<()> {
        self.insert_ordered(path, marker, fragment, markers::Order::Appended)
    }

    /// [`Plan::insert`], with the fragment placed in `order` among the lines above the marker.
    pub fn insert_ordered(
        &mut self,
        path: &str,
        marker: &str,
        fragment: &str,
        order: markers::Order,
    ) -> Result<()> {
        self.edit_text(path, |text| {
            markers::insert_ordered(path, text, marker, fragment, order)
        })?;
        if path.ends_with(".rs") && !self.unformatted.contains_key(path) {
            self.edited.insert(path.to_string());
        }
        Ok(())
    }

    /// Plans uncommenting `block` in `path` (a no-op if it is active already).
    pub fn uncomment(&mut self, path: &str, block: &str) -> Result<()> {
        self.edit_text(path, |text| markers::uncomment(path, text, block))
    }

    /// Plans commenting out `block` in `path` (a no-op if it is commented out already).
    pub fn comment(&mut self, path: &str, block: &str) -> Result<()> {
        self.edit_text(path, |text| markers::comment(path, text, block))
    }

    /// Plans an edit of an existing file (or of one planned earlier): `f` gets its text and
    /// returns the new text.
    pub fn edit(&mut self, path: &str, f: impl FnOnce(&str) -> Result<String>) -> Result<()> {
        check_relative(path)?;
        self.format_now(path)?;
        self.edit_text(path, f)
    }

    fn edit_text(&mut self, path: &str, f: impl FnOnce(&str) -> Result<String>) -> Result<()> {
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
            Some(&i) => {
                if self.changes[i].action == Action::Delete {
                    self.changes[i].action = Action::Overwrite;
                }
                self.changes[i].contents = contents;
            }
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

fn format_one(root: &Path, text: &str) -> String {
    let mut formatted = rustfmt::format_all(root, vec![text.to_string()]);
    formatted.pop().unwrap_or_else(|| text.to_string())
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
        let err = plan.create("a.txt", "new".into(), Owner::User).unwrap_err();
        assert!(
            err.to_string().contains("never replaces your code"),
            "{err}"
        );
        plan.create("a.txt", "new".into(), Owner::Shared).unwrap();
        assert!(plan.changes().is_empty());

        // A file operator-rs wrote for other options: --force renders it again.
        plan.written("a.txt", "mine".into());
        let err = plan.create("a.txt", "new".into(), Owner::User).unwrap_err();
        assert!(err.to_string().contains("--force"), "{err}");
        let mut forced = Plan::new(dir.path(), true);
        forced.written("a.txt", "mine".into());
        forced.create("a.txt", "new".into(), Owner::User).unwrap();
        assert_eq!(forced.changes()[0].action, Action::Overwrite);
    }

    /// User code is never overwritten: a user file that differs from what operator-rs wrote is
    /// kept when the options are the same, and refused when they changed, even with --force.
    #[test]
    fn edited_user_files_are_never_replaced() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "written\nedited\n").unwrap();
        let mut plan = Plan::new(dir.path(), true);
        // Same options: the edited file stays as it is.
        plan.written("a.txt", "written\n".into());
        plan.create("a.txt", "written\n".into(), Owner::User)
            .unwrap();
        assert!(plan.changes().is_empty());
        // New options: refused, naming the file.
        let err = plan
            .create("a.txt", "new\n".into(), Owner::User)
            .unwrap_err();
        let err = err.to_string();
        assert!(err.starts_with("a.txt was edited"), "{err}");
        assert!(err.contains("even with --force"), "{err}");
        assert!(!err.contains('\n'), "{err}");
        // Not written by operator-rs at all: refused too.
        std::fs::write(dir.path().join("b.txt"), "mine\n").unwrap();
        let err = plan
            .create("b.txt", "new\n".into(), Owner::User)
            .unwrap_err();
        assert!(err.to_string().starts_with("b.txt already exists"), "{err}");
        assert!(plan.changes().is_empty());
    }

    /// A file checked out with CRLF line endings is still what operator-rs wrote, and keeps its
    /// line endings when --force renders it again.
    #[test]
    fn crlf_checkouts_are_unedited_and_keep_their_line_endings() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.yaml"), "a: 1\r\nb: 2\r\n").unwrap();
        let mut plan = Plan::new(dir.path(), true);
        plan.written("a.yaml", "a: 1\nb: 2\n".into());
        plan.create("a.yaml", "a: 1\nb: 3\n".into(), Owner::User)
            .unwrap();
        assert_eq!(plan.changes()[0].action, Action::Overwrite);
        assert_eq!(plan.changes()[0].contents, "a: 1\r\nb: 3\r\n");
        // Line endings alone are no change.
        let mut plan = Plan::new(dir.path(), true);
        plan.create("a.yaml", "a: 1\nb: 2\n".into(), Owner::User)
            .unwrap();
        assert!(plan.changes().is_empty());
    }

    #[test]
    fn inserts_see_earlier_planned_files() {
        let dir = tempfile::tempdir().unwrap();
        let mut plan = Plan::new(dir.path(), false);
        plan.create(
            "k.yaml",
            "r:\n# +operator-rs:scaffold:x\n".into(),
            Owner::User,
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

    const MESSY: &str = "fn f( ) {let x=1;}\n";
    const CLEAN: &str = "fn f() {\n    let x = 1;\n}\n";
    const MARKED: &str = "fn f( ) {let x=1;}\n// +operator-rs:scaffold:items\n";

    /// Whether rustfmt is there to format (the tests check the plan either way).
    fn rustfmt_formats() -> bool {
        format_one(Path::new("."), MESSY) == CLEAN
    }

    #[test]
    fn rust_files_are_formatted_with_their_insertions() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("edited.rs"), MARKED).unwrap();
        let formatted = format!("{CLEAN}// +operator-rs:scaffold:items\n");
        std::fs::write(dir.path().join("clean.rs"), &formatted).unwrap();
        let mut plan = Plan::new(dir.path(), false);
        plan.create_formatted("new.rs", MARKED.into(), Owner::User)
            .unwrap();
        plan.insert("new.rs", "items", "fn g(a:u8) {}").unwrap();
        plan.create("plain.rs", MESSY.into(), Owner::User).unwrap();
        plan.create_formatted("a.yaml", "a:  1\n".into(), Owner::User)
            .unwrap();
        plan.insert("edited.rs", "items", "fn g(a:u8) {}").unwrap();
        plan.insert("clean.rs", "items", "fn g(a:u8) {}").unwrap();
        assert!(plan.needs_rustfmt());
        assert_eq!(
            plan.read("new.rs").unwrap().unwrap(),
            "fn f( ) {let x=1;}\nfn g(a:u8) {}\n// +operator-rs:scaffold:items\n"
        );
        plan.format_rust().unwrap();
        assert!(!plan.needs_rustfmt());

        let contents = |path: &str| plan.read(path).unwrap().unwrap();
        if rustfmt_formats() {
            // Rendered files, and files that were formatted, are formatted with what was
            // inserted into them.
            let g = "fn g(a: u8) {}\n// +operator-rs:scaffold:items\n";
            assert_eq!(contents("new.rs"), format!("{CLEAN}{g}"));
            assert_eq!(contents("clean.rs"), format!("{CLEAN}{g}"));
        }
        // Not Rust files planned with create, nor files the user does not format.
        assert_eq!(contents("plain.rs"), MESSY);
        assert_eq!(contents("a.yaml"), "a:  1\n");
        assert_eq!(
            contents("edited.rs"),
            "fn f( ) {let x=1;}\nfn g(a:u8) {}\n// +operator-rs:scaffold:items\n"
        );
        let actions: Vec<Action> = plan.changes().iter().map(|c| c.action).collect();
        use Action::*;
        assert_eq!(actions, [Create, Create, Create, Update, Update]);
    }

    #[test]
    fn a_file_that_only_needs_formatting_is_no_change() {
        let dir = tempfile::tempdir().unwrap();
        let on_disk = format_one(dir.path(), MARKED);
        std::fs::write(dir.path().join("a.rs"), &on_disk).unwrap();
        std::fs::write(dir.path().join("b.rs"), &on_disk).unwrap();
        // Without --force: no conflict, nothing planned.
        let mut plan = Plan::new(dir.path(), false);
        plan.create_formatted("a.rs", MARKED.into(), Owner::User)
            .unwrap();
        assert!(plan.changes().is_empty());

        // With --force: an overwrite until formatted, then nothing (a.rs), or an update (b.rs,
        // where a fragment is inserted into the file on disk).
        let mut plan = Plan::new(dir.path(), true);
        for path in ["a.rs", "b.rs"] {
            plan.create_formatted(path, MARKED.into(), Owner::User)
                .unwrap();
        }
        plan.insert("b.rs", "items", "fn g() {}").unwrap();
        plan.format_rust().unwrap();
        let changes: Vec<(&str, Action)> = (plan.changes().iter())
            .map(|c| (c.path.as_str(), c.action))
            .collect();
        assert_eq!(changes, [("b.rs", Action::Update)]);
        assert_eq!(plan.read("a.rs").unwrap().unwrap(), on_disk);
    }

    #[test]
    fn other_edits_format_the_file_first() {
        let dir = tempfile::tempdir().unwrap();
        let mut plan = Plan::new(dir.path(), false);
        plan.create_formatted("a.rs", MESSY.into(), Owner::User)
            .unwrap();
        plan.edit("a.rs", |t| Ok(format!("{t}// end\n"))).unwrap();
        assert!(!plan.needs_rustfmt());
        let want = format!("{}// end\n", format_one(dir.path(), MESSY));
        assert_eq!(plan.read("a.rs").unwrap().unwrap(), want);
        plan.format_rust().unwrap();
        assert_eq!(plan.read("a.rs").unwrap().unwrap(), want);
    }

    #[test]
    fn paths_outside_the_project_are_refused() {
        let mut plan = Plan::new("/tmp", false);
        for bad in ["../x", "/etc/passwd", "a/../../b", ""] {
            assert!(plan.write(bad, String::new()).is_err(), "{bad}");
        }
    }
}
