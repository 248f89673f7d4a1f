//! Pieces shared by the commands that scaffold into an existing project (`create api`,
//! `create webhook`): template tables, insertion tables and the helpers that apply them.

use std::io::Write as _;
use std::path::Path;
use std::process::Command;

use anyhow::{Context as _, Result};
use tera::Context;

use crate::builtin::{self, BuiltinKind};
use crate::context::BOILERPLATE_FILE;
use crate::names::{Group, InvalidInput, Kind, Version};
use crate::scaffold::markers::Order;
use crate::scaffold::{Owner, Plan, line_endings, templates};

/// Which projects a row applies to.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Layout {
    Any,
    MultiGroupOnly,
}

/// A template (path under `templates/`, itself a tera expression for the output path), and
/// whose its file is once written.
pub(crate) struct TemplateRow {
    pub(crate) template: &'static str,
    pub(crate) owner: Owner,
    pub(crate) layout: Layout,
}

/// A file for the user's code (a kind's types, controller, sample, webhooks, conversions):
/// written once, never replaced once edited (see [`Owner::User`]).
pub(crate) const fn user_file(template: &'static str) -> TemplateRow {
    TemplateRow {
        template,
        owner: Owner::User,
        layout: Layout::Any,
    }
}
/// A file shared by kinds: written by the first command that needs it, then kept.
pub(crate) const fn shared_file(template: &'static str) -> TemplateRow {
    TemplateRow {
        template,
        owner: Owner::Shared,
        layout: Layout::Any,
    }
}
/// A shared file of multigroup projects only (a group's `mod.rs`).
pub(crate) const fn group_file(template: &'static str) -> TemplateRow {
    TemplateRow {
        template,
        owner: Owner::Shared,
        layout: Layout::MultiGroupOnly,
    }
}

/// Code added above a scaffold marker. File, marker and fragment are tera expressions.
pub(crate) struct InsertRow {
    pub(crate) file: &'static str,
    pub(crate) marker: &'static str,
    pub(crate) fragment: &'static str,
    pub(crate) layout: Layout,
    pub(crate) order: Order,
}

pub(crate) const fn insert(
    file: &'static str,
    marker: &'static str,
    fragment: &'static str,
) -> InsertRow {
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
pub(crate) const fn insert_sorted(
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
pub(crate) const fn insert_multigroup(
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

pub(crate) fn qualified(group: &Group, domain: &str) -> String {
    format!("{}.{domain}", group.as_str())
}

/// `--resource=false` on a built-in group: the kind has to exist in Kubernetes.
pub(crate) fn find_builtin(
    group: &Group,
    version: &Version,
    kind: &Kind,
) -> Result<Option<BuiltinKind>> {
    if !builtin::is_builtin_group(group.as_str()) {
        return Ok(None);
    }
    match builtin::find(group.as_str(), version.as_str(), kind.as_str()) {
        Some(b) => Ok(Some(b)),
        None => Err(InvalidInput::new(
            "--kind",
            kind.as_str(),
            format!(
                "is not a built-in kind of {}/{}; known: {}",
                group.as_str(),
                version.as_str(),
                builtin::kinds_of(group.as_str()).join(", ")
            ),
        )
        .into()),
    }
}

/// The license header of the project (empty when there is none), checked: it goes on top of every
/// generated Rust file, so it must be comment lines only. With LF line endings whatever the file's
/// (the files it heads are written with LF line endings).
pub(crate) fn read_boilerplate(dir: &Path) -> Result<String> {
    let text = match std::fs::read_to_string(dir.join(BOILERPLATE_FILE)) {
        Ok(text) => line_endings::to_lf(&text).into_owned(),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(err) => return Err(err).with_context(|| format!("reading {BOILERPLATE_FILE}")),
    };
    crate::boilerplate::check_header(&text).map_err(|problem| {
        anyhow::anyhow!(
            "{BOILERPLATE_FILE} {problem}; it goes on top of every generated Rust file: correct it, \
             or delete it to write no header"
        )
    })?;
    Ok(text)
}

pub(crate) fn render_rows(
    plan: &mut Plan,
    rows: &[TemplateRow],
    ctx: &Context,
    multigroup: bool,
) -> Result<()> {
    for (path, contents, owner) in render_each(rows, ctx, multigroup)? {
        // Long kind or group names can change rustfmt's layout: `.rs` files are formatted like
        // `cargo fmt` does, all at once when the plan is finished.
        plan.create_formatted(&path, contents, owner)?;
    }
    Ok(())
}

/// Tells `plan` what operator-rs wrote for the user files of `rows` when it ran with the options
/// of `before`, the context of what PROJECT recorded (see [`Plan::written`]).
pub(crate) fn record_written(
    plan: &mut Plan,
    rows: &[TemplateRow],
    before: &Context,
    multigroup: bool,
) -> Result<()> {
    for (path, contents, owner) in render_each(rows, before, multigroup)? {
        if owner == Owner::User {
            plan.written(&path, contents);
        }
    }
    Ok(())
}

/// The rows that apply to the layout, rendered: path, contents and owner.
fn render_each(
    rows: &[TemplateRow],
    ctx: &Context,
    multigroup: bool,
) -> Result<Vec<(String, String, Owner)>> {
    rows.iter()
        .filter(|row| row.layout == Layout::Any || multigroup)
        .map(|row| {
            // `api/src/api/…` → `src/api/…`: the first segment names the template set.
            let output = row
                .template
                .split_once('/')
                .map_or(row.template, |(_, rest)| rest);
            let path = templates::render_str(output, ctx)?;
            let contents = templates::render(row.template, ctx)?;
            Ok((path, contents, row.owner))
        })
        .collect()
}

pub(crate) fn apply_inserts(
    plan: &mut Plan,
    rows: &[InsertRow],
    ctx: &Context,
    multigroup: bool,
) -> Result<()> {
    for row in rows
        .iter()
        .filter(|row| row.layout == Layout::Any || multigroup)
    {
        let file = templates::render_str(row.file, ctx)?;
        let fragment = templates::render_str(row.fragment, ctx)?;
        plan.insert_ordered(&file, row.marker, &fragment, row.order)?;
    }
    Ok(())
}

/// kubebuilder's `--make`: bring the manifests in line right away. A failure is not fatal (the
/// scaffold is complete); it says how to retry. The output (cargo's, mostly) is shown only if it
/// fails, or as it comes with `--verbose`.
pub(crate) fn run_make_manifests(dir: &Path) {
    let mut make = Command::new("make");
    make.arg("manifests").current_dir(dir);
    let result = if super::verbose() {
        println!("$ make manifests");
        make.status()
    } else {
        println!(
            "running make manifests (the first build of a project compiles its dependencies and \
             can take a few minutes)…"
        );
        let _ = std::io::stdout().flush();
        super::run_quietly(make).map(|(status, output)| {
            if !status.success() {
                let _ = std::io::stderr().write_all(&output);
            }
            status
        })
    };
    match result {
        Ok(status) if status.success() => {}
        Ok(status) => {
            eprintln!("warning: `make manifests` failed ({status}); fix the error and run it again")
        }
        Err(err) => eprintln!("warning: could not run `make manifests` ({err}); run it yourself"),
    }
}
