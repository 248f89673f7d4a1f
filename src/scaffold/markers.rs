//! Scaffold markers: the places later commands add code to.
//!
//! A marker is a line holding only a comment token and `+operator-rs:scaffold:<name>`, for example
//! `    // +operator-rs:scaffold:controllers` or `# +operator-rs:scaffold:crd-bases`. A fragment is
//! inserted just above its marker, indented like the marker, so the marker stays last and the
//! next insertion lands after this one.
//!
//! Markers and fragments survive ordinary editing of the files they are in:
//!
//! - a marker is found however its comment is spaced (`//+operator-rs:scaffold:x`,
//!   `//   +operator-rs:scaffold:x  `) and whatever its line ending;
//! - inserted lines get the line ending of the marker's line, so a file with CRLF line endings
//!   keeps them;
//! - a fragment already present is not inserted again, which makes every insertion idempotent:
//!   re-running a command, or `--force`, never duplicates code. In Rust, "present" compares
//!   tokens, not lines, so a fragment that `cargo fmt` reflowed over several lines (with the
//!   trailing comma rustfmt adds) is found, and a fragment declaring a module is present when
//!   the file declares that module, whatever its visibility (`pub(crate) mod v1;`): a module is
//!   never declared twice. Comments do not count: a fragment commented out is inserted again.
//!   In other files (YAML) lines compare with their white space collapsed.

use anyhow::{Result, bail};

const PREFIX: &str = "+operator-rs:scaffold:";

/// The comment token of a file type, by extension.
fn comment_token(path: &str) -> &'static str {
    if is_rust(path) { RUST_COMMENT } else { "#" }
}

/// A Rust line comment's start.
const RUST_COMMENT: &str = "//";

fn is_rust(path: &str) -> bool {
    path.ends_with(".rs")
}

/// The marker text for `name` in the file at `path` (without indentation), as templates write it.
pub fn marker(path: &str, name: &str) -> String {
    format!("{} {PREFIX}{name}", comment_token(path))
}

/// Whether `line` is the marker `name`: the comment token, then `+operator-rs:scaffold:<name>`,
/// with any white space around and between them.
fn is_marker(path: &str, line: &str, name: &str) -> bool {
    line.trim()
        .strip_prefix(comment_token(path))
        .and_then(|rest| rest.trim_start().strip_prefix(PREFIX))
        .is_some_and(|rest| rest == name)
}

/// The line ending of `line`, else the first one of `text`, else `\n`.
fn line_ending<'a>(line: &str, text: &str) -> &'a str {
    let crlf = if line.ends_with('\n') {
        line.ends_with("\r\n")
    } else {
        text.find('\n').is_some_and(|i| text[..i].ends_with('\r'))
    };
    if crlf { "\r\n" } else { "\n" }
}

/// Where [`insert`] puts a fragment among the lines above its marker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    /// Right above the marker: lists in the order the commands ran.
    Appended,
    /// A one-line list entry at its (version-)sorted place among the entries directly above the
    /// marker, so that the list is the same whatever order the commands ran in (which PROJECT
    /// does not record, and `alpha generate` cannot know).
    Sorted,
}

/// Inserts `fragment` (one or more lines, without indentation) right above the marker `name` in
/// `text`. Returns the new text, equal to `text` when the fragment is already there.
pub fn insert(path: &str, text: &str, name: &str, fragment: &str) -> Result<String> {
    insert_ordered(path, text, name, fragment, Order::Appended)
}

/// [`insert`], with the fragment placed in `order`.
pub fn insert_ordered(
    path: &str,
    text: &str,
    name: &str,
    fragment: &str,
    order: Order,
) -> Result<String> {
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let Some(at) = lines.iter().position(|line| is_marker(path, line, name)) else {
        bail!(
            "{path} has no `{}` marker line; operator-rs adds code above it. Restore the line \
             (see the docs on scaffold markers) and run the command again",
            marker(path, name)
        );
    };
    let fragment_lines: Vec<&str> = fragment.lines().collect();
    if fragment_lines.is_empty() || is_present(path, text, &fragment_lines) {
        return Ok(text.to_string());
    }
    let fragment_lines = with_inception_allowed(path, fragment_lines);
    let indent: String = lines[at]
        .chars()
        .take_while(|c| c.is_whitespace())
        .collect();
    let eol = line_ending(lines[at], text);
    // rustfmt keeps adjacent `mod` declarations sorted; insert a module where it would put it so
    // the generated project passes `cargo fmt --check` as written.
    let at = match fragment_lines.as_slice() {
        [line] | [INCEPTION, line] if module_name(line).is_some() => {
            sorted_position(&lines, at, line)
        }
        [line] if order == Order::Sorted => sorted_entry_position(&lines, at, line),
        _ => at,
    };
    let mut out = String::with_capacity(text.len() + fragment.len() + 16);
    for line in &lines[..at] {
        out.push_str(line);
    }
    for line in fragment_lines {
        if !line.trim().is_empty() {
            out.push_str(&indent);
            out.push_str(line);
        }
        out.push_str(eol);
    }
    for line in &lines[at..] {
        out.push_str(line);
    }
    Ok(out)
}

/// Whether the fragment is in `text` already (see the module's documentation).
fn is_present(path: &str, text: &str, fragment: &[&str]) -> bool {
    if is_rust(path) {
        let tokens = rust_tokens(text);
        let declared = fragment
            .iter()
            .filter_map(|line| module_name(line))
            .any(|module| declares_module(&tokens, module));
        declared || contains_tokens(&tokens, &rust_tokens(&fragment.join("\n")))
    } else {
        let lines: Vec<String> = text.lines().map(collapse).collect();
        let fragment: Vec<String> = fragment.iter().map(|l| collapse(l)).collect();
        lines
            .windows(fragment.len())
            .any(|window| window == fragment)
    }
}

/// A line with its white space collapsed: trimmed, inner runs of white space as one space.
fn collapse(line: &str) -> String {
    line.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The module name of a `mod x;` / `pub mod x;` line.
/// What a module named like the module it is in is declared with: clippy's `module_inception`
/// flags `ship::ship` (the controller of a kind `Ship` in group `ship`, a kind `V1` in version
/// `v1`), and the names are the kind's and the group's, not operator-rs's to change.
pub const INCEPTION: &str = "#[allow(clippy::module_inception)] // named like the module it is in";

/// The fragment's lines, with [`INCEPTION`] before a declaration of a module named like the
/// module of the file at `path` (`pub mod ship;` in `src/controller/ship/mod.rs`).
fn with_inception_allowed<'a>(path: &str, lines: Vec<&'a str>) -> Vec<&'a str> {
    let Some(parent) = file_module(path) else {
        return lines;
    };
    let mut out = Vec::with_capacity(lines.len() + 1);
    for line in lines {
        if module_name(line) == Some(parent) {
            out.push(INCEPTION);
        }
        out.push(line);
    }
    out
}

/// The name of the module a Rust file is: `ship` for `src/controller/ship/mod.rs` and
/// `src/controller/ship.rs`; None for a crate root.
fn file_module(path: &str) -> Option<&str> {
    let path = path.strip_suffix(".rs")?;
    let (dir, file) = path.rsplit_once('/').unwrap_or(("", path));
    let name = match file {
        "mod" => dir.rsplit('/').next()?,
        "lib" | "main" => return None,
        file => file,
    };
    (!name.is_empty() && !matches!(name, "src" | "tests" | "benches" | "examples")).then_some(name)
}

fn module_name(line: &str) -> Option<&str> {
    let rest = line.trim().strip_prefix("pub ").unwrap_or(line.trim());
    rest.strip_prefix("mod ")?
        .strip_suffix(';')
        .filter(|name| name.chars().all(|c| c.is_alphanumeric() || c == '_'))
}

/// Whether `tokens` declare the module `name` at the top level of the file (`mod name;` or
/// `mod name { … }`, any visibility): a module of that name inside another one is another module.
fn declares_module(tokens: &[&str], name: &str) -> bool {
    let mut depth = 0usize;
    tokens.iter().enumerate().any(|(i, &token)| {
        match token {
            "{" => depth += 1,
            "}" => depth = depth.saturating_sub(1),
            _ => {}
        }
        depth == 0
            && token == "mod"
            && tokens.get(i + 1) == Some(&name)
            && matches!(tokens.get(i + 2), Some(&";" | &"{"))
    })
}

fn is_closing(token: &str) -> bool {
    matches!(token, "}" | "]" | ")" | ">")
}

/// Tokens after which a fragment may start: it is an item or a list element of its own, not
/// the tail of a longer path (`captain::CONTROLLER,` is not in `crew::captain::CONTROLLER,`).
fn starts_an_item(previous: Option<&&str>) -> bool {
    previous.is_none_or(|t| matches!(*t, "," | ";" | "{" | "}" | "[" | "]" | "(" | ")"))
}

/// Whether the tokens of `needle` appear in `haystack`, starting an item. A comma before a
/// closing bracket is optional on either side: rustfmt adds one when it breaks a list over lines.
fn contains_tokens(haystack: &[&str], needle: &[&str]) -> bool {
    if needle.is_empty() {
        return true;
    }
    (0..haystack.len()).any(|start| {
        if start > 0 && !starts_an_item(haystack.get(start - 1)) {
            return false;
        }
        let (mut h, mut n) = (start, 0);
        while n < needle.len() {
            let Some(&token) = haystack.get(h) else {
                return false;
            };
            if token == needle[n] {
                h += 1;
                n += 1;
            } else if token == "," && haystack.get(h + 1).is_some_and(|t| is_closing(t)) {
                h += 1;
            } else if needle[n] == "," && needle.get(n + 1).is_some_and(|t| is_closing(t)) {
                n += 1;
            } else {
                return false;
            }
        }
        true
    })
}

/// The tokens of Rust source text, without white space and comments: identifiers, numbers and
/// string and character literals whole, any other character on its own. Enough to compare
/// fragments, not a Rust lexer (a lifetime is `'` and its name).
fn rust_tokens(text: &str) -> Vec<&str> {
    let mut tokens = Vec::new();
    let mut i = 0;
    while let Some(c) = text[i..].chars().next() {
        let rest = &text[i..];
        let len = if c.is_whitespace() {
            i += c.len_utf8();
            continue;
        } else if rest.starts_with("//") {
            i += rest.find('\n').unwrap_or(rest.len());
            continue;
        } else if rest.starts_with("/*") {
            i += block_comment_len(rest);
            continue;
        } else if c == '"' {
            string_len(rest, 0)
        } else if c == '\'' {
            char_len(rest)
        } else if c.is_alphanumeric() || c == '_' {
            let word = rest
                .find(|c: char| !(c.is_alphanumeric() || c == '_'))
                .unwrap_or(rest.len());
            match (&rest[..word], rest[word..].chars().next()) {
                ("r" | "br" | "cr", Some('"' | '#')) => raw_string_len(rest, word).unwrap_or(word),
                ("b" | "c", Some('"')) => string_len(rest, word),
                _ => word,
            }
        } else {
            c.len_utf8()
        };
        tokens.push(&rest[..len]);
        i += len;
    }
    tokens
}

/// The length of the (nested) block comment `text` starts with; all of `text` if unclosed.
fn block_comment_len(text: &str) -> usize {
    let mut depth = 0;
    let mut i = 0;
    while i < text.len() {
        if text[i..].starts_with("/*") {
            depth += 1;
            i += 2;
        } else if text[i..].starts_with("*/") {
            depth -= 1;
            i += 2;
            if depth == 0 {
                return i;
            }
        } else {
            i += text[i..].chars().next().map_or(1, char::len_utf8);
        }
    }
    text.len()
}

/// The length of the string literal whose opening quote is at `quote`, escapes included.
fn string_len(text: &str, quote: usize) -> usize {
    let mut escaped = false;
    for (i, c) in text[quote + 1..].char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            '"' => return quote + 1 + i + 1,
            _ => {}
        }
    }
    text.len()
}

/// The length of the raw string literal whose `#`s or opening quote start at `at`.
fn raw_string_len(text: &str, at: usize) -> Option<usize> {
    let hashes = text[at..].chars().take_while(|&c| c == '#').count();
    let body = at + hashes;
    if !text[body..].starts_with('"') {
        return None;
    }
    let close = format!("\"{}", "#".repeat(hashes));
    let end = text[body + 1..]
        .find(&close)
        .map_or(text.len(), |i| body + 1 + i + close.len());
    Some(end)
}

/// The length of the character literal `text` starts with, or 1 for the `'` of a lifetime.
fn char_len(text: &str) -> usize {
    let mut chars = text.char_indices().skip(1);
    match chars.next() {
        Some((_, '\\')) => text[2..].find('\'').map_or(1, |i| 2 + i + 1),
        Some((_, c)) => match chars.next() {
            Some((i, '\'')) if c != '\'' => i + 1,
            _ => 1,
        },
        None => 1,
    }
}

/// Where `line` goes among the `mod` lines directly above the marker at `marker`.
fn sorted_position(lines: &[&str], marker: usize, line: &str) -> usize {
    let name = module_name(line).unwrap_or_default();
    let inception = |l: &str| l.trim() == INCEPTION;
    let mut start = marker;
    while start > 0 && (module_name(lines[start - 1]).is_some() || inception(lines[start - 1])) {
        start -= 1;
    }
    let at = (start..marker)
        .find(|&i| {
            module_name(lines[i])
                .is_some_and(|m| version_cmp(m, name) == std::cmp::Ordering::Greater)
        })
        .unwrap_or(marker);
    // A declaration's attribute goes with it.
    if at > start && inception(lines[at - 1]) {
        at - 1
    } else {
        at
    }
}
/// Where the list entry `line` goes among the entries directly above the marker at `marker`:
/// the lines with the marker's indentation that are neither blank nor comments.
fn sorted_entry_position(lines: &[&str], marker: usize, line: &str) -> usize {
    let indent = |l: &str| l.len() - l.trim_start().len();
    let is_entry = |l: &str| {
        let t = l.trim();
        !t.is_empty()
            && !t.starts_with("//")
            && !t.starts_with('#')
            && indent(l) == indent(lines[marker])
    };
    let mut start = marker;
    while start > 0 && is_entry(lines[start - 1]) {
        start -= 1;
    }
    (start..marker)
        .find(|&i| version_cmp(lines[i].trim(), line.trim()) == std::cmp::Ordering::Greater)
        .unwrap_or(marker)
}

/// rustfmt's "version sorting" (style edition 2024): digit runs compare as numbers, so
/// `v1 < v1alpha1 < v2 < v10`.
fn version_cmp(a: &str, b: &str) -> std::cmp::Ordering {
    fn chunks(s: &str) -> Vec<(bool, &str)> {
        let mut out = Vec::new();
        let mut start = 0;
        let bytes = s.as_bytes();
        for i in 1..=bytes.len() {
            if i == bytes.len() || bytes[i].is_ascii_digit() != bytes[start].is_ascii_digit() {
                out.push((bytes[start].is_ascii_digit(), &s[start..i]));
                start = i;
            }
        }
        out
    }
    let (ca, cb) = (chunks(a), chunks(b));
    for ((da, sa), (db, sb)) in ca.iter().zip(&cb) {
        let ord = if *da && *db {
            let (na, nb) = (sa.trim_start_matches('0'), sb.trim_start_matches('0'));
            na.len().cmp(&nb.len()).then(na.cmp(nb))
        } else {
            sa.cmp(sb)
        };
        if ord != std::cmp::Ordering::Equal {
            return ord;
        }
    }
    ca.len().cmp(&cb.len())
}

/// Uncomments a block that a template ships commented out (kubebuilder's `#- ../crd` in
/// config/default): every line of `block` prefixed by `#` becomes active. Idempotent: an
/// already active block is left alone. Fails when neither form is present. Lines compare
/// without their line endings and trailing white space, so CRLF files keep their line endings.
pub fn uncomment(path: &str, text: &str, block: &str) -> Result<String> {
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let block: Vec<&str> = block.lines().map(str::trim_end).collect();
    if block.is_empty() {
        return Ok(text.to_string());
    }
    let find = |prefix: &str| {
        lines.windows(block.len()).position(|window| {
            window.iter().zip(&block).all(|(line, wanted)| {
                line.trim_end()
                    .strip_prefix(prefix)
                    .is_some_and(|rest| rest == *wanted)
            })
        })
    };
    if let Some(at) = find("#") {
        let mut out = String::with_capacity(text.len());
        for (i, line) in lines.iter().enumerate() {
            let active = i >= at && i < at + block.len();
            out.push_str(if active { &line[1..] } else { line });
        }
        return Ok(out);
    }
    if find("").is_some() {
        return Ok(text.to_string());
    }
    bail!(
        "{path} no longer contains the block `{}` (commented or not); add it by hand",
        block[0]
    )
}

/// The reverse of [`uncomment`]: comments out `block` (each line gets a `#`) in `text`, a no-op
/// if it is commented out already; an error naming `path` if it is in neither form.
pub fn comment(path: &str, text: &str, block: &str) -> Result<String> {
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let block: Vec<&str> = block.lines().map(str::trim_end).collect();
    if block.is_empty() {
        return Ok(text.to_string());
    }
    let find = |prefix: &str| {
        lines.windows(block.len()).position(|window| {
            window.iter().zip(&block).all(|(line, wanted)| {
                line.trim_end()
                    .strip_prefix(prefix)
                    .is_some_and(|rest| rest == *wanted)
            })
        })
    };
    if let Some(at) = find("") {
        let mut out = String::with_capacity(text.len() + block.len());
        for (i, line) in lines.iter().enumerate() {
            if i >= at && i < at + block.len() {
                out.push('#');
            }
            out.push_str(line);
        }
        return Ok(out);
    }
    if find("#").is_some() {
        return Ok(text.to_string());
    }
    bail!(
        "{path} no longer contains the block `{}` (commented or not); remove it by hand",
        block[0]
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comment_is_the_reverse_of_uncomment() {
        let text = "a:\n#- ../x\n#  y: 1\nb: 2\n";
        let live = uncomment("k.yaml", text, "- ../x\n  y: 1").unwrap();
        assert_eq!(live, "a:\n- ../x\n  y: 1\nb: 2\n");
        assert_eq!(comment("k.yaml", &live, "- ../x\n  y: 1").unwrap(), text);
        assert_eq!(comment("k.yaml", text, "- ../x\n  y: 1").unwrap(), text);
        let err = comment("k.yaml", text, "- ../z").unwrap_err().to_string();
        assert!(
            err.contains("k.yaml no longer contains the block `- ../z`"),
            "{err}"
        );
    }

    const MOD_RS: &str = "pub fn all() -> Vec<u8> {\n    vec![\n        // +operator-rs:scaffold:controllers\n    ]\n}\n";

    #[test]
    fn sorted_entries_go_where_they_sort_whatever_the_order_they_come_in() {
        let list = "    let all = vec![\n        // Not an entry.\n        // +operator-rs:scaffold:webhooks\n    ];\n";
        let entries = [
            "ship::v1::frigate::webhooks(),",
            "crew::v10::captain::webhooks(),",
            "crew::v2::captain::webhooks(),",
        ];
        let mut forward = list.to_string();
        for e in entries {
            forward = insert_ordered("src/webhook/mod.rs", &forward, "webhooks", e, Order::Sorted)
                .unwrap();
        }
        let mut backward = list.to_string();
        for e in entries.iter().rev() {
            backward = insert_ordered(
                "src/webhook/mod.rs",
                &backward,
                "webhooks",
                e,
                Order::Sorted,
            )
            .unwrap();
        }
        assert_eq!(forward, backward);
        assert_eq!(
            forward,
            "    let all = vec![\n        // Not an entry.\n        crew::v2::captain::webhooks(),\n        \
             crew::v10::captain::webhooks(),\n        ship::v1::frigate::webhooks(),\n        \
             // +operator-rs:scaffold:webhooks\n    ];\n"
        );
    }

    #[test]
    fn inserts_above_the_marker_with_its_indentation() {
        let out = insert("src/controller/mod.rs", MOD_RS, "controllers", "1,").unwrap();
        assert_eq!(
            out,
            "pub fn all() -> Vec<u8> {\n    vec![\n        1,\n        // +operator-rs:scaffold:controllers\n    ]\n}\n"
        );
        let out = insert("src/controller/mod.rs", &out, "controllers", "2,").unwrap();
        assert!(
            out.contains("        1,\n        2,\n        // +operator-rs"),
            "{out}"
        );
    }

    #[test]
    fn insertion_is_idempotent() {
        let once = insert("a.rs", MOD_RS, "controllers", "1,\n2,").unwrap();
        let twice = insert("a.rs", &once, "controllers", "1,\n2,").unwrap();
        assert_eq!(once, twice);
    }

    #[test]
    fn yaml_markers_use_hash_comments() {
        let text = "resources:\n# +operator-rs:scaffold:crd-bases\n";
        let out = insert(
            "config/crd/kustomization.yaml",
            text,
            "crd-bases",
            "- bases/a.yaml",
        )
        .unwrap();
        assert_eq!(
            out,
            "resources:\n- bases/a.yaml\n# +operator-rs:scaffold:crd-bases\n"
        );
    }

    #[test]
    fn a_missing_marker_is_an_error_that_names_it() {
        let err = insert("src/main.rs", "fn main() {}\n", "controllers", "x")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("// +operator-rs:scaffold:controllers"),
            "{err}"
        );
    }

    #[test]
    fn modules_are_inserted_in_rustfmt_order() {
        let mut text = "//! api\n\n// +operator-rs:scaffold:api-modules\n".to_string();
        for module in [
            "ship",
            "sea_creatures",
            "foo_policy",
            "foo",
            "fiz",
            "v10",
            "v2",
        ] {
            text = insert(
                "src/api/mod.rs",
                &text,
                "api-modules",
                &format!("pub mod {module};"),
            )
            .unwrap();
        }
        let modules: Vec<&str> = text.lines().filter_map(module_name).collect();
        assert_eq!(
            modules,
            [
                "fiz",
                "foo",
                "foo_policy",
                "sea_creatures",
                "ship",
                "v2",
                "v10"
            ]
        );
    }

    #[test]
    fn version_sorting() {
        let mut v = vec!["v10", "v2", "v1beta1", "v1alpha1", "v1", "a"];
        v.sort_by(|a, b| version_cmp(a, b));
        assert_eq!(v, ["a", "v1", "v1alpha1", "v1beta1", "v2", "v10"]);
    }

    #[test]
    fn uncomment_is_idempotent() {
        let text = "resources:\n#- ../crd\n- ../rbac\n";
        let once = uncomment("k.yaml", text, "- ../crd").unwrap();
        assert_eq!(once, "resources:\n- ../crd\n- ../rbac\n");
        assert_eq!(uncomment("k.yaml", &once, "- ../crd").unwrap(), once);
        assert!(uncomment("k.yaml", "resources: []\n", "- ../crd").is_err());
    }

    // Markers survive ordinary editing: reformatted marker comments.

    #[test]
    fn reformatted_markers_are_found() {
        for marker in [
            "        //+operator-rs:scaffold:controllers\n",
            "        //   +operator-rs:scaffold:controllers   \n",
            "        // +operator-rs:scaffold:controllers\t\n",
            "\t\t// +operator-rs:scaffold:controllers\n",
        ] {
            let text = MOD_RS.replace("        // +operator-rs:scaffold:controllers\n", marker);
            let out = insert("src/controller/mod.rs", &text, "controllers", "1,").unwrap();
            let indent: String = marker
                .chars()
                .take_while(|c| *c == ' ' || *c == '\t')
                .collect();
            assert_eq!(
                out,
                text.replace(marker, &format!("{indent}1,\n{marker}")),
                "{marker:?}"
            );
            let again = insert("src/controller/mod.rs", &out, "controllers", "1,").unwrap();
            assert_eq!(again, out, "{marker:?}");
        }
        let yaml = "resources:\n#+operator-rs:scaffold:crd-bases  \n";
        let out = insert("k.yaml", yaml, "crd-bases", "- bases/a.yaml").unwrap();
        assert_eq!(
            out,
            "resources:\n- bases/a.yaml\n#+operator-rs:scaffold:crd-bases  \n"
        );
    }

    #[test]
    fn other_markers_and_other_comments_are_not_markers() {
        for line in [
            "// +operator-rs:scaffold:controllers-extra",
            "// +operator-rs:scaffold:controller",
            "/// +operator-rs:scaffold:controllers",
            "# +operator-rs:scaffold:controllers",
            "// see +operator-rs:scaffold:controllers",
            "x; // +operator-rs:scaffold:controllers",
        ] {
            assert!(!is_marker("a.rs", line, "controllers"), "{line}");
            assert!(insert("a.rs", &format!("{line}\n"), "controllers", "1,").is_err());
        }
        assert!(!is_marker("a.yaml", "// +operator-rs:scaffold:x", "x"));
    }

    // CRLF line endings.

    #[test]
    fn crlf_files_keep_their_line_endings() {
        let text = MOD_RS.replace('\n', "\r\n");
        let once = insert(
            "src/controller/mod.rs",
            &text,
            "controllers",
            "a::X,\nb::Y,",
        )
        .unwrap();
        assert_eq!(
            once,
            "pub fn all() -> Vec<u8> {\r\n    vec![\r\n        a::X,\r\n        b::Y,\r\n        // +operator-rs:scaffold:controllers\r\n    ]\r\n}\r\n"
        );
        assert_eq!(
            insert(
                "src/controller/mod.rs",
                &once,
                "controllers",
                "a::X,\nb::Y,"
            )
            .unwrap(),
            once
        );
        // Modules are sorted among CRLF lines too.
        let api = "pub mod v1;\r\npub mod v3;\r\n// +operator-rs:scaffold:api-modules\r\n";
        let out = insert("src/api/mod.rs", api, "api-modules", "pub mod v2;").unwrap();
        assert_eq!(
            out,
            "pub mod v1;\r\npub mod v2;\r\npub mod v3;\r\n// +operator-rs:scaffold:api-modules\r\n"
        );
        // A marker on the last line, without a line break: the file's own line ending.
        let last = "a:\r\n# +operator-rs:scaffold:x";
        assert_eq!(
            insert("k.yaml", last, "x", "- b").unwrap(),
            "a:\r\n- b\r\n# +operator-rs:scaffold:x"
        );
        let yaml = "resources:\r\n- a.yaml\r\n# +operator-rs:scaffold:x\r\n";
        assert_eq!(insert("k.yaml", yaml, "x", "- a.yaml").unwrap(), yaml);
    }

    #[test]
    fn crlf_blocks_are_uncommented() {
        let text = "resources:\r\n#- ../crd\r\n#- path: p.yaml  \r\n#  target: x\r\n- ../rbac\r\n";
        let once = uncomment("k.yaml", text, "- ../crd").unwrap();
        assert_eq!(
            once,
            "resources:\r\n- ../crd\r\n#- path: p.yaml  \r\n#  target: x\r\n- ../rbac\r\n"
        );
        let twice = uncomment("k.yaml", &once, "- path: p.yaml\n  target: x").unwrap();
        assert_eq!(
            twice,
            "resources:\r\n- ../crd\r\n- path: p.yaml  \r\n  target: x\r\n- ../rbac\r\n"
        );
        assert_eq!(
            uncomment("k.yaml", &twice, "- path: p.yaml\n  target: x").unwrap(),
            twice
        );
        // A block is whole lines: a commented line that only contains it does not count.
        assert!(uncomment("k.yaml", "x: 1 #- ../crd\n", "- ../crd").is_err());
    }

    // Fragments that cargo fmt reflowed, or that were edited around.

    #[test]
    fn fragments_reflowed_by_rustfmt_are_found() {
        let marker = "// +operator-rs:scaffold:kind-modules\n";
        let fragment = "pub mod a_very_long_kind;\npub use a_very_long_kind::{AVeryLongKind, AVeryLongKindSpec, AVeryLongKindStatus};";
        let reflowed = format!(
            "pub mod a_very_long_kind;\npub use a_very_long_kind::{{\n    AVeryLongKind, AVeryLongKindSpec, AVeryLongKindStatus,\n}};\n{marker}"
        );
        assert_eq!(
            insert("m.rs", &reflowed, "kind-modules", fragment).unwrap(),
            reflowed
        );
        let one_per_line = reflowed.replace(
            "    AVeryLongKind, AVeryLongKindSpec, AVeryLongKindStatus,\n",
            "    AVeryLongKind,\n    AVeryLongKindSpec,\n    AVeryLongKindStatus,\n",
        );
        assert_eq!(
            insert("m.rs", &one_per_line, "kind-modules", fragment).unwrap(),
            one_per_line
        );
        // A generic argument list broken over lines.
        let spokes = "    let spokes = vec![\n        Spoke::new::<\n            crate::api::sea_creatures::v1beta1::Kraken,\n        >(),\n        // +operator-rs:scaffold:conversion-spokes\n    ];\n";
        let fragment = "Spoke::new::<crate::api::sea_creatures::v1beta1::Kraken>(),";
        assert_eq!(
            insert("c.rs", spokes, "conversion-spokes", fragment).unwrap(),
            spokes
        );
        // The same text, joined back onto one line by hand, with odd spacing.
        let joined = "vec![ v1 :: Captain :: crd ( ) ,\n// +operator-rs:scaffold:crds\n]";
        assert_eq!(
            insert("a.rs", joined, "crds", "v1::Captain::crd(),").unwrap(),
            joined
        );
    }

    #[test]
    fn a_module_is_never_declared_twice() {
        let marker = "// +operator-rs:scaffold:api-modules\n";
        for declared in [
            "pub(crate) mod v1;\n",
            "mod v1;\n",
            "pub mod v1 {\n    pub mod captain;\n}\n",
            "#[cfg(feature = \"v1\")]\npub mod v1;\n",
        ] {
            let text = format!("{declared}{marker}");
            assert_eq!(
                insert("m.rs", &text, "api-modules", "pub mod v1;").unwrap(),
                text
            );
        }
        // The module and its re-export go together: an edited re-export is not added again.
        let text = format!("pub mod captain;\npub use captain::Captain;\n{marker}");
        let fragment = "pub mod captain;\npub use captain::{Captain, CaptainSpec, CaptainStatus};";
        assert_eq!(
            insert("m.rs", &text, "api-modules", fragment).unwrap(),
            text
        );
        // A module of that name inside another one is another module.
        let text = format!("#[cfg(test)]\nmod tests {{\n    mod v1 {{}}\n}}\n{marker}");
        let out = insert("m.rs", &text, "api-modules", "pub mod v1;").unwrap();
        assert_eq!(out, text.replace(marker, &format!("pub mod v1;\n{marker}")));
        // Another module of a longer name is another module.
        let text = format!("pub mod v10;\npub mod v1alpha1;\n{marker}");
        let out = insert("m.rs", &text, "api-modules", "pub mod v1;").unwrap();
        assert_eq!(
            out,
            format!("pub mod v1;\npub mod v10;\npub mod v1alpha1;\n{marker}")
        );
    }

    #[test]
    fn look_alikes_and_comments_are_not_the_fragment() {
        let list =
            |items: &str| format!("vec![\n{items}    // +operator-rs:scaffold:controllers\n]\n");
        for (items, fragment) in [
            // A longer name that ends like the fragment.
            ("    first_mate::CONTROLLER,\n", "mate::CONTROLLER,"),
            // The tail of a longer path.
            ("    crew::captain::CONTROLLER,\n", "captain::CONTROLLER,"),
            // Commented out: the user's choice is kept as a comment, the code is added again.
            ("    // captain::CONTROLLER,\n", "captain::CONTROLLER,"),
            ("    /* captain::CONTROLLER, */\n", "captain::CONTROLLER,"),
            // In a string.
            ("    \"captain::CONTROLLER,\",\n", "captain::CONTROLLER,"),
        ] {
            let text = list(items);
            let out = insert("src/controller/mod.rs", &text, "controllers", fragment).unwrap();
            assert_ne!(out, text, "{fragment} found in {items:?}");
        }
        // A commented-out module does not count either.
        let text = "// pub mod v1;\n// +operator-rs:scaffold:api-modules\n";
        let out = insert("m.rs", text, "api-modules", "pub mod v1;").unwrap();
        assert_eq!(
            out,
            "// pub mod v1;\npub mod v1;\n// +operator-rs:scaffold:api-modules\n"
        );
        // YAML: a commented-out line is not the line, a re-indented one is.
        let yaml = "#- bases/a.yaml\n# +operator-rs:scaffold:x\n";
        assert_ne!(insert("k.yaml", yaml, "x", "- bases/a.yaml").unwrap(), yaml);
        let yaml = "  -   bases/a.yaml\n# +operator-rs:scaffold:x\n";
        assert_eq!(insert("k.yaml", yaml, "x", "- bases/a.yaml").unwrap(), yaml);
    }

    #[test]
    fn rust_tokens_skip_comments_and_keep_literals_whole() {
        let tokens = rust_tokens(
            "a::b(\"x // y\", '\"', r#\"q\"#, b\"z\") /* c /* d */ */ // e\n'a: loop {} x.0",
        );
        assert_eq!(
            tokens,
            [
                "a",
                ":",
                ":",
                "b",
                "(",
                "\"x // y\"",
                ",",
                "'\"'",
                ",",
                "r#\"q\"#",
                ",",
                "b\"z\"",
                ")",
                "'",
                "a",
                ":",
                "loop",
                "{",
                "}",
                "x",
                ".",
                "0"
            ]
        );
    }
}
