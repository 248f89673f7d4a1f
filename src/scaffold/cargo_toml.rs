//! Edits to the generated project's Cargo.toml, with toml_edit so that the user's formatting,
//! comments and own dependencies stay exactly as they were.

use anyhow::{Context as _, Result, bail};
use toml_edit::{Array, DocumentMut, InlineTable, Item, Value};

/// Makes sure `[table]` (`dependencies`, `dev-dependencies`) has `name` with at least
/// `features`. An existing entry keeps its version and gains only the missing features; a new
/// one is added as `name = "version"` or `name = { version = "…", features = [...] }`.
pub fn ensure_dependency(
    text: &str,
    table: &str,
    name: &str,
    version: &str,
    features: &[&str],
) -> Result<String> {
    let mut doc: DocumentMut = text.parse().context("Cargo.toml is not valid TOML")?;
    let deps = doc
        .entry(table)
        .or_insert_with(toml_edit::table)
        .as_table_like_mut()
        .with_context(|| format!("[{table}] in Cargo.toml is not a table"))?;

    match deps.get_mut(name) {
        None => {
            let value = if features.is_empty() {
                Value::from(version)
            } else {
                let mut spec = InlineTable::new();
                spec.insert("version", Value::from(version));
                spec.insert(
                    "features",
                    Value::Array(features.iter().copied().collect::<Array>()),
                );
                Value::InlineTable(spec)
            };
            deps.insert(name, Item::Value(value));
        }
        Some(_) if features.is_empty() => {}
        Some(item) => {
            // `kube = "5"` has to become a table before it can carry features.
            if let Some(v) = item.as_str().map(str::to_string) {
                let mut spec = InlineTable::new();
                spec.insert("version", Value::from(v));
                *item = Item::Value(Value::InlineTable(spec));
            }
            let Some(spec) = item.as_table_like_mut() else {
                bail!(
                    "the {name} entry of [{table}] in Cargo.toml has an unexpected form; add features {features:?} by hand"
                );
            };
            let list = spec
                .entry("features")
                .or_insert(Item::Value(Value::Array(Array::new())));
            let Some(array) = list.as_array_mut() else {
                bail!("{name}.features in Cargo.toml is not a list; add {features:?} by hand");
            };
            for feature in features {
                if !array.iter().any(|f| f.as_str() == Some(feature)) {
                    array.push(*feature);
                }
            }
        }
    }
    Ok(doc.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    const CARGO: &str = "[package]\nname = \"demo\"\n\n[dependencies]\n# the client\nkube = { version = \"5\", features = [\"runtime\"] }\nserde = \"1\"\n";

    #[test]
    fn adds_missing_crates_and_features_and_keeps_the_rest() {
        let out = ensure_dependency(
            CARGO,
            "dependencies",
            "kube",
            "5",
            &["runtime", "admission"],
        )
        .unwrap();
        assert!(
            out.contains(
                "# the client\nkube = { version = \"5\", features = [\"runtime\", \"admission\"] }"
            ),
            "{out}"
        );
        let out = ensure_dependency(&out, "dependencies", "json-patch", "4", &[]).unwrap();
        assert!(out.contains("json-patch = \"4\""), "{out}");
        let out = ensure_dependency(&out, "dev-dependencies", "http", "1", &[]).unwrap();
        assert!(out.contains("[dev-dependencies]\nhttp = \"1\""), "{out}");
        let again = ensure_dependency(&out, "dependencies", "kube", "5", &["admission"]).unwrap();
        assert_eq!(again, out);
    }

    #[test]
    fn plain_versions_become_tables_when_features_are_needed() {
        let out = ensure_dependency(CARGO, "dependencies", "serde", "1", &["derive"]).unwrap();
        assert!(
            out.contains("serde = { version = \"1\", features = [\"derive\"] }"),
            "{out}"
        );
    }
}
