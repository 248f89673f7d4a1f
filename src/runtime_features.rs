//! The features of operator-rs-runtime a project turns on: what its manager links beyond what
//! every manager needs (runtime/Cargo.toml's `[features]`). They follow the project as PROJECT
//! records it: `webhooks` once a kind has a webhook (the webhook server, its self-signed
//! certificates and `make run`'s `--webhook-url`), `migration` once one has a conversion (its hub's storage migration),
//! `sharding` with `--sharding`.
//!
//! The choice is the `features` of the `operator-rs-runtime` entry of the project's
//! `[dependencies]`; [`keep_in_step`] writes there after every command that changes PROJECT, and
//! leaves the rest of the file, and features it does not derive, as they are.

use anyhow::{Result, bail};
use toml_edit::{Array, DocumentMut, Item, Value};

use crate::project::Project;
use crate::scaffold::Plan;

/// The project's manifest.
const MANIFEST: &str = "Cargo.toml";

/// The dependency that takes the features.
const RUNTIME: &str = "operator-rs-runtime";

/// Whether a project uses a feature.
type Uses = fn(&Project) -> bool;

/// Each feature, with whether a project uses it.
const FEATURES: &[(&str, Uses)] = &[
    ("webhooks", Project::has_webhooks),
    ("migration", has_conversion),
    ("sharding", |project| project.sharding),
];

fn has_conversion(project: &Project) -> bool {
    let mut webhooks = project.resources.iter().filter_map(|r| r.webhooks.as_ref());
    webhooks.any(|webhooks| webhooks.conversion)
}

/// The features `project` uses, in the order of runtime/Cargo.toml.
pub fn needed(project: &Project) -> Vec<&'static str> {
    let used = FEATURES.iter().filter(|(_, uses)| uses(project));
    used.map(|(feature, _)| *feature).collect()
}

/// Plans the runtime's features in `Cargo.toml` for the project as it is `now`, after it was
/// `before` (`None` at `init`): what it uses now is turned on, what it used before and no longer
/// does (`edit --sharding=false`) turned off; other features stay.
pub fn keep_in_step(plan: &mut Plan, before: Option<&Project>, now: &Project) -> Result<()> {
    let on = needed(now);
    let off: Vec<&str> = match before {
        Some(before) => needed(before)
            .into_iter()
            .filter(|feature| !on.contains(feature))
            .collect(),
        None => Vec::new(),
    };
    let Some(text) = plan.read(MANIFEST)? else {
        return Ok(());
    };
    match set_in_manifest(&text, &on, &off)? {
        Some(edited) => plan.edit(MANIFEST, |_| Ok(edited)),
        None if on.is_empty() => Ok(()),
        None => {
            plan.note(format!(
                "{MANIFEST} has no {RUNTIME} in [dependencies]: the manager needs its features {}",
                quoted(&on)
            ));
            Ok(())
        }
    }
}

/// `text` (a project's `Cargo.toml`) with the features `on` in the runtime's dependency and none
/// of `off`, the others kept; `None` when it has no such dependency.
pub fn set_in_manifest(text: &str, on: &[&str], off: &[&str]) -> Result<Option<String>> {
    let mut doc: DocumentMut = match text.parse() {
        Ok(doc) => doc,
        Err(error) => bail!("cannot read {MANIFEST} as TOML: {}", error.message().trim()),
    };
    let entry = doc
        .get_mut("dependencies")
        .and_then(|deps| deps.get_mut(RUNTIME));
    let Some(entry) = entry.and_then(Item::as_table_like_mut) else {
        return Ok(None);
    };
    let mut features = match entry.get("features").and_then(Item::as_array) {
        Some(features) => features.clone(),
        None if on.is_empty() => return Ok(Some(text.to_owned())),
        None => Array::new(),
    };
    let before = names(&features);
    features.retain(|value| !value.as_str().is_some_and(|name| off.contains(&name)));
    for feature in on {
        if !names(&features).contains(&(*feature).to_owned()) {
            features.push(*feature);
        }
    }
    if names(&features) == before {
        return Ok(Some(text.to_owned()));
    }
    // In the order of runtime/Cargo.toml whatever the order of the commands, so that a project
    // is the same however it got there (`edit --sharding` or `init --sharding`); others after.
    let rank = |value: &Value| {
        let name = value.as_str().unwrap_or_default();
        FEATURES
            .iter()
            .position(|(feature, _)| *feature == name)
            .unwrap_or(FEATURES.len())
    };
    let mut sorted: Vec<Value> = features.iter().cloned().collect();
    sorted.sort_by_key(rank);
    let mut features: Array = sorted.into_iter().collect();
    if features.is_empty() {
        entry.remove("features");
    } else {
        features.fmt();
        entry.insert("features", Item::Value(Value::Array(features)));
    }
    // The spacing of `{ workspace = true, features = [...] }`, as cargo's documentation writes it.
    if let Some(Item::Value(Value::InlineTable(entry))) = doc["dependencies"].get_mut(RUNTIME) {
        entry.fmt();
    }
    Ok(Some(doc.to_string()))
}

fn names(features: &Array) -> Vec<String> {
    let names = features.iter().filter_map(Value::as_str);
    names.map(str::to_owned).collect()
}

fn quoted(features: &[&str]) -> String {
    let quoted: Vec<String> = features.iter().map(|f| format!("{f:?}")).collect();
    format!("[{}]", quoted.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    const PLAIN: &str = "[package]\nname = \"p\"\n\n[dependencies]\n# The runtime.\n\
                         operator-rs-runtime = { workspace = true }\nanyhow = \"1\"\n";

    /// Turning features on writes them on the runtime's line alone; the rest stays byte for byte.
    #[test]
    fn turns_features_on_in_the_runtime_line_only() {
        let text = set_in_manifest(PLAIN, &["webhooks", "migration"], &[])
            .unwrap()
            .unwrap();
        assert_eq!(
            text,
            PLAIN.replace(
                "{ workspace = true }",
                "{ workspace = true, features = [\"webhooks\", \"migration\"] }"
            )
        );
        // Again: nothing changes.
        let again = set_in_manifest(&text, &["webhooks", "migration"], &[])
            .unwrap()
            .unwrap();
        assert_eq!(again, text);
        // Nothing to turn on in a plain project: the file as it was.
        assert_eq!(set_in_manifest(PLAIN, &[], &[]).unwrap().unwrap(), PLAIN);
    }

    /// A feature the user added stays, after the runtime's (in the order of runtime/Cargo.toml
    /// whatever the order they came in); turning the last one off leaves the line as it was.
    #[test]
    fn keeps_the_users_features_and_removes_only_what_is_turned_off() {
        let mine = PLAIN.replace(
            "{ workspace = true }",
            "{ workspace = true, features = [\"extra\"] }",
        );
        let text = set_in_manifest(&mine, &["sharding"], &[]).unwrap().unwrap();
        assert!(
            text.contains("features = [\"sharding\", \"extra\"]"),
            "{text}"
        );
        let text = set_in_manifest(&text, &[], &["sharding"]).unwrap().unwrap();
        assert_eq!(text, mine);
        let text = set_in_manifest(PLAIN, &["sharding"], &[]).unwrap().unwrap();
        let text = set_in_manifest(&text, &["webhooks"], &[]).unwrap().unwrap();
        assert!(text.contains("[\"webhooks\", \"sharding\"]"), "{text}");
        let only = set_in_manifest(PLAIN, &["sharding"], &[]).unwrap().unwrap();
        assert_eq!(
            set_in_manifest(&only, &[], &["sharding"]).unwrap().unwrap(),
            PLAIN
        );
    }

    /// The dependency written as a table of its own, and a manifest without it.
    #[test]
    fn a_dependency_table_and_a_manifest_without_the_runtime() {
        let table = "[dependencies.operator-rs-runtime]\nworkspace = true\n";
        let text = set_in_manifest(table, &["webhooks"], &[]).unwrap().unwrap();
        assert_eq!(text, format!("{table}features = [\"webhooks\"]\n"));
        assert_eq!(
            set_in_manifest("[dependencies]\nanyhow = \"1\"\n", &["webhooks"], &[]).unwrap(),
            None
        );
        let error = set_in_manifest("[dependencies\n", &[], &[]).unwrap_err();
        assert!(
            error
                .to_string()
                .starts_with("cannot read Cargo.toml as TOML"),
            "{error}"
        );
    }
}
