//! The embedded templates.
//!
//! `templates/<command>/` mirrors the tree a command writes: the template of a generated file
//! sits at the same relative path, so `templates/init/config/manager/manager.yaml` becomes
//! `config/manager/manager.yaml`. Paths may hold tera expressions too (for instance
//! `src/api/{{ api_dir }}/{{ kind_file }}.rs`). Contents and paths are rendered with tera.

use anyhow::{Context as _, Result};
use include_dir::{Dir, DirEntry, include_dir};
use tera::{Context, Tera};

static TEMPLATES: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/templates");

/// One rendered file: its path in the generated project and its contents.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rendered {
    pub path: String,
    pub contents: String,
}

/// Paths (relative to `templates/`) of every template under `prefix`, sorted.
pub fn list(prefix: &str) -> Vec<&'static str> {
    let mut out = Vec::new();
    if let Some(dir) = TEMPLATES.get_dir(prefix) {
        collect(dir, &mut out);
    }
    out.sort_unstable();
    out
}

fn collect(dir: &'static Dir<'static>, out: &mut Vec<&'static str>) {
    for entry in dir.entries() {
        match entry {
            DirEntry::Dir(sub) => collect(sub, out),
            DirEntry::File(file) => {
                if let Some(path) = file.path().to_str() {
                    out.push(path);
                }
            }
        }
    }
}

/// Renders every template under `templates/<prefix>/`; paths in the result are relative to
/// that prefix.
pub fn render_dir(prefix: &str, context: &Context) -> Result<Vec<Rendered>> {
    list(prefix)
        .into_iter()
        .map(|template| {
            let relative = template
                .strip_prefix(prefix)
                .unwrap_or(template)
                .trim_start_matches('/');
            Ok(Rendered {
                path: render_str(relative, context)?,
                contents: render(template, context)?,
            })
        })
        .collect()
}

/// Renders one template by its path relative to `templates/`.
pub fn render(template: &str, context: &Context) -> Result<String> {
    let source = TEMPLATES
        .get_file(template)
        .and_then(|f| f.contents_utf8())
        .with_context(|| format!("template {template} is missing from this build"))?;
    render_named(template, source, context)
}

/// Renders a template given as text (used for paths and fragments).
pub fn render_str(source: &str, context: &Context) -> Result<String> {
    render_named("inline", source, context)
}

fn render_named(name: &str, source: &str, context: &Context) -> Result<String> {
    if let Some(rendered) = substitute_plain_variables(source, context) {
        return Ok(rendered);
    }
    let mut tera = Tera::default();
    // Generated files are code and YAML, never HTML.
    tera.autoescape_on(vec![]);
    tera.add_raw_template(name, source)
        .map_err(|e| tera_error(name, e))?;
    tera.render(name, context).map_err(|e| tera_error(name, e))
}

/// The fast path for the most common template: text whose only tera syntax is `{{ name }}` with
/// a string variable. Parsing with tera costs about as much as the rest of `init` together, and
/// most generated files (Rust sources with a license header and a crate name) need nothing more.
/// Returns `None` whenever the template uses anything else (blocks, comments, filters,
/// expressions, non-string or unknown variables), and tera renders it; a test checks that both
/// paths agree on every embedded template.
fn substitute_plain_variables(source: &str, context: &Context) -> Option<String> {
    if source.contains("{%") || source.contains("{#") {
        return None;
    }
    let mut out = String::with_capacity(source.len() + 1024);
    let mut rest = source;
    while let Some(start) = rest.find("{{") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let end = after.find("}}")?;
        let name = after[..end].trim();
        if !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') || name.is_empty() {
            return None;
        }
        out.push_str(context.get(name)?.as_str()?);
        rest = &after[end + 2..];
    }
    out.push_str(rest);
    Some(out)
}

/// tera nests the useful part of its errors in `source()`; flatten them into one line.
fn tera_error(name: &str, err: tera::Error) -> anyhow::Error {
    let mut message = format!("template {name}: {err}");
    let mut source = std::error::Error::source(&err);
    while let Some(inner) = source {
        message.push_str(&format!(": {inner}"));
        source = inner.source();
    }
    anyhow::anyhow!(message)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn init_templates_are_embedded() {
        let files = list("init");
        assert!(files.contains(&"init/Makefile"), "{files:?}");
        assert!(files.contains(&"init/src/main.rs"), "{files:?}");
    }

    #[test]
    fn paths_and_contents_are_rendered() {
        let mut ctx = Context::new();
        ctx.insert("kind", "captain");
        assert_eq!(
            render_str("src/{{ kind }}.rs", &ctx).unwrap(),
            "src/captain.rs"
        );
    }

    /// The fast path and tera agree on every embedded template (with a full project context).
    #[test]
    fn the_fast_path_renders_like_tera() {
        let mut ctx = Context::new();
        for key in [
            "project_name",
            "crate_name",
            "domain",
            "owner",
            "year",
            "license",
            "leader_election_id",
            "operator_rs_version",
        ] {
            ctx.insert(key, &format!("value-of-{key}"));
        }
        ctx.insert("boilerplate", "// header\n");
        ctx.insert("rust_header", "// header\n\n");
        ctx.insert("namespaced", &true);
        ctx.insert("multigroup", &false);
        let mut fast = 0;
        let mut all = Vec::new();
        collect(&TEMPLATES, &mut all);
        for template in all {
            let source = TEMPLATES
                .get_file(template)
                .and_then(|f| f.contents_utf8())
                .unwrap();
            if let Some(rendered) = substitute_plain_variables(source, &ctx) {
                fast += 1;
                let mut tera = Tera::default();
                tera.autoescape_on(vec![]);
                tera.add_raw_template(template, source).unwrap();
                assert_eq!(rendered, tera.render(template, &ctx).unwrap(), "{template}");
            }
        }
        assert!(fast > 10, "only {fast} templates took the fast path");
        assert_eq!(
            substitute_plain_variables("{{ namespaced }}", &ctx),
            None,
            "booleans go to tera"
        );
        assert_eq!(substitute_plain_variables("{{ x | upper }}", &ctx), None);
    }

    #[test]
    fn undefined_variables_are_errors() {
        let err = render_str("{{ nope }}", &Context::new())
            .unwrap_err()
            .to_string();
        assert!(err.contains("nope"), "{err}");
    }
}
