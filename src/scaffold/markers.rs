//! Scaffold markers: the places later commands add code to.
//!
//! A marker is a line holding only a comment token and `+operator-rs:scaffold:<name>`, for example
//! `    // +operator-rs:scaffold:controllers` or `# +operator-rs:scaffold:crd-bases`. A fragment is
//! inserted just above its marker, indented like the marker, so the marker stays last and the
//! next insertion lands after this one. A fragment whose lines are already present in a row
//! (compared without surrounding white space) is not inserted again, which makes every insertion
//! idempotent: re-running a command, or `--force`, never duplicates code.

use anyhow::{Result, bail};

const PREFIX: &str = "+operator-rs:scaffold:";

/// The comment token of a file type, by extension.
fn comment_token(path: &str) -> &'static str {
    if path.ends_with(".rs") { "//" } else { "#" }
}

/// The exact marker text for `name` in the file at `path` (without indentation).
pub fn marker(path: &str, name: &str) -> String {
    format!("{} {PREFIX}{name}", comment_token(path))
}

/// Inserts `fragment` (one or more lines, without indentation) above the marker `name` in
/// `text`. Returns the new text, equal to `text` when the fragment is already there.
pub fn insert(path: &str, text: &str, name: &str, fragment: &str) -> Result<String> {
    let wanted = marker(path, name);
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let Some(at) = lines.iter().position(|line| line.trim() == wanted) else {
        bail!(
            "{path} has no `{wanted}` marker line; operator-rs adds code above it. Restore the line \
             (see the docs on scaffold markers) and run the command again"
        );
    };
    let fragment_lines: Vec<&str> = fragment.lines().collect();
    if fragment_lines.is_empty() || contains_run(&lines, &fragment_lines) {
        return Ok(text.to_string());
    }
    let indent: String = lines[at]
        .chars()
        .take_while(|c| c.is_whitespace())
        .collect();
    let mut out = String::with_capacity(text.len() + fragment.len() + 16);
    for line in &lines[..at] {
        out.push_str(line);
    }
    for line in fragment_lines {
        if !line.trim().is_empty() {
            out.push_str(&indent);
            out.push_str(line);
        }
        out.push('\n');
    }
    for line in &lines[at..] {
        out.push_str(line);
    }
    Ok(out)
}

/// True when `needle`'s lines appear consecutively in `haystack`, ignoring surrounding white space.
fn contains_run(haystack: &[&str], needle: &[&str]) -> bool {
    haystack
        .windows(needle.len())
        .any(|window| window.iter().zip(needle).all(|(a, b)| a.trim() == b.trim()))
}

/// Uncomments a block that a template ships commented out (kubebuilder's `#- ../crd` in
/// config/default): every line of `block` prefixed by `#` becomes active. Idempotent: an
/// already active block is left alone. Fails when neither form is present.
pub fn uncomment(path: &str, text: &str, block: &str) -> Result<String> {
    let commented: String = block.lines().map(|l| format!("#{l}\n")).collect();
    let active: String = block.lines().map(|l| format!("{l}\n")).collect();
    if text.contains(&commented) {
        return Ok(text.replacen(&commented, &active, 1));
    }
    if text.contains(&active) {
        return Ok(text.to_string());
    }
    bail!(
        "{path} no longer contains the block `{}` (commented or not); add it by hand",
        block.lines().next().unwrap_or("")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const MOD_RS: &str = "pub fn all() -> Vec<u8> {\n    vec![\n        // +operator-rs:scaffold:controllers\n    ]\n}\n";

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
    fn uncomment_is_idempotent() {
        let text = "resources:\n#- ../crd\n- ../rbac\n";
        let once = uncomment("k.yaml", text, "- ../crd").unwrap();
        assert_eq!(once, "resources:\n- ../crd\n- ../rbac\n");
        assert_eq!(uncomment("k.yaml", &once, "- ../crd").unwrap(), once);
        assert!(uncomment("k.yaml", "resources: []\n", "- ../crd").is_err());
    }
}
