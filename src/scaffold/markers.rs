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
    // rustfmt keeps adjacent `mod` declarations sorted; insert a module where it would put it so
    // the generated project passes `cargo fmt --check` as written.
    let at = match fragment_lines.as_slice() {
        [line] if module_name(line).is_some() => sorted_position(&lines, at, line),
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
        out.push('\n');
    }
    for line in &lines[at..] {
        out.push_str(line);
    }
    Ok(out)
}

/// The module name of a `mod x;` / `pub mod x;` line.
fn module_name(line: &str) -> Option<&str> {
    let rest = line.trim().strip_prefix("pub ").unwrap_or(line.trim());
    rest.strip_prefix("mod ")?
        .strip_suffix(';')
        .filter(|name| name.chars().all(|c| c.is_alphanumeric() || c == '_'))
}

/// Where `line` goes among the `mod` lines directly above the marker at `marker`.
fn sorted_position(lines: &[&str], marker: usize, line: &str) -> usize {
    let name = module_name(line).unwrap_or_default();
    let mut start = marker;
    while start > 0 && module_name(lines[start - 1]).is_some() {
        start -= 1;
    }
    (start..marker)
        .find(|&i| {
            version_cmp(module_name(lines[i]).unwrap_or_default(), name)
                == std::cmp::Ordering::Greater
        })
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
}
