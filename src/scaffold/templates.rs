//! The embedded templates.
//!
//! `templates/<command>/` mirrors the tree a command writes: the template of a generated file
//! sits at the same relative path, so `templates/init/config/manager/manager.yaml` becomes
//! `config/manager/manager.yaml`. Paths may hold tera expressions too (for instance
//! `src/api/{{ api_dir }}/{{ kind_file }}.rs`). Contents, paths and inserted fragments are all
//! rendered by one tera instance, which parses each of them once per process. One exception to
//! "the same path": a generated `Cargo.toml` is stored as `Cargo.toml.in` (see
//! [`crate::stored_names`]).

use std::sync::{LazyLock, Mutex, MutexGuard, PoisonError};

use anyhow::{Context as _, Result};
use include_dir::{Dir, DirEntry, include_dir};
use tera::{Context, Tera};

use crate::stored_names::written_path;

static TEMPLATES: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/templates");

/// Every template parsed so far: embedded files under their path (`init/src/main.rs`), texts
/// given to [`render_str`] (paths, fragments) under [`inline_name`]. Parsing is most of the cost
/// of rendering, and the same path and fragment expressions come back for every file and kind.
static TERA: LazyLock<Mutex<Tera>> = LazyLock::new(|| {
    let mut tera = Tera::default();
    // Generated files are code and YAML, never HTML.
    tera.autoescape_on(vec![]);
    Mutex::new(tera)
});

/// One rendered file: its path in the generated project and its contents.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rendered {
    pub path: String,
    pub contents: String,
}

/// Paths (relative to `templates/`) of every template under `prefix` (all of them for `""`),
/// sorted.
pub fn list(prefix: &str) -> Vec<&'static str> {
    let mut out = Vec::new();
    let dir = if prefix.is_empty() {
        Some(&TEMPLATES)
    } else {
        TEMPLATES.get_dir(prefix)
    };
    if let Some(dir) = dir {
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
    let mut tera = tera();
    list(prefix)
        .into_iter()
        .map(|template| {
            let relative = written_path(
                template
                    .strip_prefix(prefix)
                    .unwrap_or(template)
                    .trim_start_matches('/'),
            );
            Ok(Rendered {
                path: render_with(&mut tera, &inline_name(relative), relative, context)?,
                contents: render_with(&mut tera, template, source(template)?, context)?,
            })
        })
        .collect()
}

/// Renders one template by its path relative to `templates/`.
pub fn render(template: &str, context: &Context) -> Result<String> {
    render_with(&mut tera(), template, source(template)?, context)
}

/// Renders a template given as text (used for paths and fragments).
pub fn render_str(text: &str, context: &Context) -> Result<String> {
    render_with(&mut tera(), &inline_name(text), text, context)
}

/// Renders `source`, registered as `name` (and parsed) the first time.
///
/// A text without tera's delimiters is its own rendering, and is not handed to tera: parsing is
/// most of the cost of rendering (about 10 MB/s), and files such as a Cargo.lock would be parsed
/// for nothing. Nothing else is rendered outside tera.
fn render_with(tera: &mut Tera, name: &str, source: &str, context: &Context) -> Result<String> {
    if !["{{", "{%", "{#"].iter().any(|d| source.contains(d)) {
        return Ok(source.to_string());
    }
    if !tera.templates.contains_key(name) {
        tera.add_raw_template(name, source)
            .map_err(|e| tera_error(name, e))?;
    }
    tera.render(name, context).map_err(|e| tera_error(name, e))
}

/// The name of an inline text: the text quoted (on one line, for error messages). No template
/// path starts with a quote, so a text never stands for a file.
fn inline_name(text: &str) -> String {
    format!("{text:?}")
}

fn tera() -> MutexGuard<'static, Tera> {
    // Templates are only ever added whole: a panic elsewhere cannot leave one half-parsed.
    TERA.lock().unwrap_or_else(PoisonError::into_inner)
}

pub(crate) fn source(template: &str) -> Result<&'static str> {
    TEMPLATES
        .get_file(template)
        .and_then(|f| f.contents_utf8())
        .with_context(|| format!("template {template} is missing from this build"))
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

    /// Variables of the tests.
    #[derive(serde::Serialize)]
    struct Vars {
        kind: &'static str,
        namespaced: bool,
    }

    fn context(kind: &'static str) -> Context {
        Context::from_serialize(Vars {
            kind,
            namespaced: true,
        })
        .unwrap()
    }

    #[test]
    fn paths_and_contents_are_rendered() {
        assert_eq!(
            render_str("src/{{ kind }}.rs", &context("captain")).unwrap(),
            "src/captain.rs"
        );
        // The second time from the parsed template, with other variables.
        assert_eq!(
            render_str("src/{{ kind }}.rs", &context("admiral")).unwrap(),
            "src/admiral.rs"
        );
    }

    #[test]
    fn blocks_and_filters_are_rendered() {
        let ctx = context("Captain");
        assert_eq!(
            render_str(
                "{% if namespaced %}{{ kind | lower }}{% else %}no{% endif %}",
                &ctx
            )
            .unwrap(),
            "captain"
        );
    }

    /// Files and inline texts have separate names: a text equal to a template's path is text.
    #[test]
    fn inline_texts_never_shadow_files() {
        let ctx = Context::new();
        // Parses and registers the file (rendering fails: the context is empty).
        let _ = render("init/Makefile", &ctx);
        assert_eq!(render_str("init/Makefile", &ctx).unwrap(), "init/Makefile");
        assert!(render("init/Makefile", &ctx).is_err(), "still the file");
    }

    /// What `render_with` relies on: tera renders a text without its delimiters as it is.
    #[test]
    fn texts_without_tera_syntax_are_their_own_rendering() {
        let mut all = Vec::new();
        collect(&TEMPLATES, &mut all);
        let ctx = Context::new();
        let mut plain = 0;
        let mut tera = Tera::default();
        tera.autoescape_on(vec![]);
        for template in all {
            let text = source(template).unwrap();
            if render(template, &ctx).ok().as_deref() == Some(text) {
                tera.add_raw_template(template, text).unwrap();
                assert_eq!(tera.render(template, &ctx).unwrap(), text, "{template}");
                plain += 1;
            }
        }
        assert!(plain > 0);
        for text in ["a { b } c", "{ {", "%}", "#}", "}}", "{", ""] {
            assert_eq!(render_str(text, &ctx).unwrap(), text);
            assert_eq!(Tera::one_off(text, &ctx, false).unwrap(), text);
        }
    }

    #[test]
    fn undefined_variables_are_errors() {
        let err = render_str("{{ nope }}", &Context::new())
            .unwrap_err()
            .to_string();
        assert!(err.contains("nope"), "{err}");
        assert!(err.contains("\"{{ nope }}\""), "{err}");
    }

    #[test]
    fn syntax_errors_are_errors_every_time() {
        for _ in 0..2 {
            let err = render_str("{% if %}", &Context::new()).unwrap_err();
            assert!(err.to_string().contains("{% if %}"), "{err}");
        }
    }

    #[test]
    fn missing_templates_are_errors() {
        let err = render("init/no-such-file", &Context::new()).unwrap_err();
        assert!(err.to_string().contains("missing"), "{err}");
    }
}
