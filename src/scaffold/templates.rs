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
    let mut tera = Tera::default();
    // Generated files are code and YAML, never HTML.
    tera.autoescape_on(vec![]);
    tera.add_raw_template(name, source)
        .map_err(|e| tera_error(name, e))?;
    tera.render(name, context).map_err(|e| tera_error(name, e))
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

    #[test]
    fn undefined_variables_are_errors() {
        let err = render_str("{{ nope }}", &Context::new())
            .unwrap_err()
            .to_string();
        assert!(err.contains("nope"), "{err}");
    }
}
