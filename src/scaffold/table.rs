//! Tables of templates: the files a command writes and the lines it inserts, rendered with
//! variables of one type.
//!
//! A [`Table<V>`] lists template files (paths under `templates/`, each also a tera expression for
//! the path it is written to) and insertions (lines added above a scaffold marker), all rendered
//! with the fields of `V`, a `Serialize` struct. One table, one type: the test
//! `every_template_names_only_fields_of_its_variables` (src/commands/mod.rs) checks every name a
//! template uses against the fields of its table's type, so a misspelt name fails the test suite
//! instead of rendering as false in an `{% if %}`.

use std::marker::PhantomData;

use anyhow::Result;
use serde::Serialize;
use tera::Context;

use super::markers::Order;
use super::templates::{self, Rendered};
use super::{Owner, Plan};

/// Which projects a row applies to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    Any,
    MultiGroupOnly,
}

/// A template (its path under `templates/`, whose first segment names the template set and
/// whose rest is a tera expression for the output path), and whose file it is once written.
#[derive(Debug)]
pub struct TemplateRow {
    pub template: &'static str,
    pub owner: Owner,
    pub layout: Layout,
}

/// A file for the user's code (a kind's types, controller, sample, webhooks, conversions):
/// written once, never replaced once edited (see [`Owner::User`]).
pub const fn user_file(template: &'static str) -> TemplateRow {
    TemplateRow {
        template,
        owner: Owner::User,
        layout: Layout::Any,
    }
}

/// A file shared by kinds: written by the first command that needs it, then kept.
pub const fn shared_file(template: &'static str) -> TemplateRow {
    TemplateRow {
        template,
        owner: Owner::Shared,
        layout: Layout::Any,
    }
}

/// A shared file of multigroup projects only (a group's `mod.rs`).
pub const fn group_file(template: &'static str) -> TemplateRow {
    TemplateRow {
        template,
        owner: Owner::Shared,
        layout: Layout::MultiGroupOnly,
    }
}

/// Lines added above a scaffold marker. File and fragment are tera expressions.
#[derive(Debug)]
pub struct InsertRow {
    pub file: &'static str,
    pub marker: &'static str,
    pub fragment: &'static str,
    pub layout: Layout,
    pub order: Order,
}

pub const fn insert(file: &'static str, marker: &'static str, fragment: &'static str) -> InsertRow {
    InsertRow {
        file,
        marker,
        fragment,
        layout: Layout::Any,
        order: Order::Appended,
    }
}

/// An entry of a list whose order must not depend on the order of the commands (see
/// [`Order::Sorted`]).
pub const fn insert_sorted(
    file: &'static str,
    marker: &'static str,
    fragment: &'static str,
) -> InsertRow {
    InsertRow {
        file,
        marker,
        fragment,
        layout: Layout::Any,
        order: Order::Sorted,
    }
}

/// An insertion into a file of multigroup projects only.
pub const fn insert_multigroup(
    file: &'static str,
    marker: &'static str,
    fragment: &'static str,
) -> InsertRow {
    InsertRow {
        file,
        marker,
        fragment,
        layout: Layout::MultiGroupOnly,
        order: Order::Appended,
    }
}

/// Template files and insertions rendered with variables of type `V`.
pub struct Table<V> {
    pub files: &'static [TemplateRow],
    pub inserts: &'static [InsertRow],
    vars: PhantomData<fn(&V)>,
}

impl<V> Table<V> {
    pub const fn new(files: &'static [TemplateRow], inserts: &'static [InsertRow]) -> Self {
        Self {
            files,
            inserts,
            vars: PhantomData,
        }
    }
}

impl<V: Serialize> Table<V> {
    /// Plans the table's files, then its insertions (the files first: an insertion may go into
    /// a file the table creates).
    pub fn render(&self, plan: &mut Plan, vars: &V, multigroup: bool) -> Result<()> {
        self.render_files(plan, vars, multigroup)?;
        self.render_inserts(plan, vars, multigroup)
    }

    /// Plans the table's files that apply to the layout.
    pub fn render_files(&self, plan: &mut Plan, vars: &V, multigroup: bool) -> Result<()> {
        for (path, contents, owner) in self.rendered_files(vars, multigroup)? {
            // Long kind or group names can change rustfmt's layout: `.rs` files are formatted
            // like `cargo fmt` does, all at once when the plan is finished.
            plan.create_formatted(&path, contents, owner)?;
        }
        Ok(())
    }

    /// Plans the table's insertions that apply to the layout.
    pub fn render_inserts(&self, plan: &mut Plan, vars: &V, multigroup: bool) -> Result<()> {
        let context = context(vars)?;
        for row in self
            .inserts
            .iter()
            .filter(|row| applies(row.layout, multigroup))
        {
            let file = templates::render_str(row.file, &context)?;
            let fragment = templates::render_str(row.fragment, &context)?;
            plan.insert_ordered(&file, row.marker, &fragment, row.order)?;
        }
        Ok(())
    }

    /// Tells `plan` what operator-rs wrote for the user files of the table when it ran with
    /// `vars`, the variables of what PROJECT recorded (see [`Plan::written`]).
    pub fn record_written(&self, plan: &mut Plan, vars: &V, multigroup: bool) -> Result<()> {
        for (path, contents, owner) in self.rendered_files(vars, multigroup)? {
            if owner == Owner::User {
                plan.written(&path, contents);
            }
        }
        Ok(())
    }

    /// The files of the rows that apply to the layout, rendered: (path, contents).
    pub fn texts(&self, vars: &V, multigroup: bool) -> Result<Vec<(String, String)>> {
        let files = self.rendered_files(vars, multigroup)?;
        Ok(files
            .into_iter()
            .map(|(path, text, _)| (path, text))
            .collect())
    }

    /// The rows that apply to the layout, rendered: path, contents and owner.
    fn rendered_files(&self, vars: &V, multigroup: bool) -> Result<Vec<(String, String, Owner)>> {
        let context = context(vars)?;
        self.files
            .iter()
            .filter(|row| applies(row.layout, multigroup))
            .map(|row| {
                let path = templates::render_str(output_path(row.template), &context)?;
                let contents = templates::render(row.template, &context)?;
                Ok((path, contents, row.owner))
            })
            .collect()
    }
}

/// Every template under `templates/<prefix>/`, rendered with variables of type `V`: the files
/// of `init` (and of the project-wide plugins), which a command writes all at once.
pub struct DirTable<V> {
    pub prefix: &'static str,
    vars: PhantomData<fn(&V)>,
}

impl<V> DirTable<V> {
    pub const fn new(prefix: &'static str) -> Self {
        Self {
            prefix,
            vars: PhantomData,
        }
    }
}

impl<V: Serialize> DirTable<V> {
    /// Every file, rendered; paths relative to the prefix.
    pub fn render(&self, vars: &V) -> Result<Vec<Rendered>> {
        templates::render_dir(self.prefix, &context(vars)?)
    }
}

/// A table and the variables to render it with: what a plugin gives a command in place of the
/// command's own table, whatever the type of its variables.
pub trait Renderer {
    fn render(&self, plan: &mut Plan, multigroup: bool) -> Result<()>;
    fn record_written(&self, plan: &mut Plan, multigroup: bool) -> Result<()>;
}

/// A table of type `V` and its variables, as a [`Renderer`].
pub struct Bound<V: 'static> {
    pub table: &'static Table<V>,
    pub vars: V,
}

impl<V: Serialize> Renderer for Bound<V> {
    fn render(&self, plan: &mut Plan, multigroup: bool) -> Result<()> {
        self.table.render(plan, &self.vars, multigroup)
    }

    fn record_written(&self, plan: &mut Plan, multigroup: bool) -> Result<()> {
        self.table.record_written(plan, &self.vars, multigroup)
    }
}

fn applies(layout: Layout, multigroup: bool) -> bool {
    layout == Layout::Any || multigroup
}

/// `api/src/api/…` → `src/api/…`: the first segment of a template's path names its set (and a
/// stored `Cargo.toml.in` is written as `Cargo.toml`).
fn output_path(template: &str) -> &str {
    crate::stored_names::written_path(template.split_once('/').map_or(template, |(_, rest)| rest))
}

/// The variables as tera takes them.
fn context(vars: &impl Serialize) -> Result<Context> {
    Ok(Context::from_serialize(vars)?)
}

/// What the test of template names needs of a table, whatever its type: the texts it renders
/// and the variables they may use.
#[cfg(test)]
pub trait Checked {
    /// Every text the table renders: (what it is, for messages; the text).
    fn texts(&self) -> Vec<(String, &'static str)>;
    /// The template paths (under `templates/`) of its files.
    fn templates(&self) -> Vec<&'static str>;
    /// An instance of its variables, serialized: the names a text may use.
    fn fields(&self) -> serde_json::Value;
}

#[cfg(test)]
impl<V: Serialize + Default> Checked for Table<V> {
    fn texts(&self) -> Vec<(String, &'static str)> {
        let mut texts = Vec::new();
        for row in self.files {
            texts.push((
                format!("the path of {}", row.template),
                output_path(row.template),
            ));
            let source = templates::source(row.template).expect("embedded");
            texts.push((row.template.to_string(), source));
        }
        for row in self.inserts {
            let what = format!("the insertion at {} in {}", row.marker, row.file);
            texts.push((format!("the file of {what}"), row.file));
            texts.push((what, row.fragment));
        }
        texts
    }

    fn templates(&self) -> Vec<&'static str> {
        self.files.iter().map(|row| row.template).collect()
    }

    fn fields(&self) -> serde_json::Value {
        serde_json::to_value(V::default()).expect("variables serialize")
    }
}

#[cfg(test)]
impl<V: Serialize + Default> Checked for DirTable<V> {
    fn texts(&self) -> Vec<(String, &'static str)> {
        let mut texts = Vec::new();
        for template in templates::list(self.prefix) {
            let path = template
                .strip_prefix(self.prefix)
                .unwrap_or(template)
                .trim_start_matches('/');
            texts.push((format!("the path of {template}"), path));
            texts.push((
                template.to_string(),
                templates::source(template).expect("embedded"),
            ));
        }
        texts
    }

    fn templates(&self) -> Vec<&'static str> {
        templates::list(self.prefix)
    }

    fn fields(&self) -> serde_json::Value {
        serde_json::to_value(V::default()).expect("variables serialize")
    }
}
