//! Patches applied as the API server applies them: JSON merge patches (RFC 7386), JSON patches
//! (RFC 6902, with the API server's one difference: a `test` for `null` of a missing path
//! succeeds, which kube's finalizer helper relies on; an operation that fails is `422` without
//! more words, as the API server answers), and strategic merge patches of built-in kinds: maps
//! merged key by key, lists merged by their patch merge key (`containers` by `name`) or as sets,
//! or replaced, as the kind's types say, with the `$patch: delete`/`replace` and
//! `$deleteFromPrimitiveList` directives.

use json_patch::PatchOperation;
use serde_json::{Map, Value};

use super::api_types::Ty;
use super::errors::ApiError;
use super::kinds::Kind;

/// A change to an existing object (or, for an apply, maybe a new one).
pub(super) enum Edit {
    /// `PUT`: the whole object.
    Replace(Value),
    /// A JSON merge patch (RFC 7386).
    Merge(Value),
    /// A strategic merge patch (built-in kinds only).
    Strategic(Value),
    /// A JSON patch (RFC 6902).
    Json(json_patch::Patch),
    /// A server-side apply.
    Apply { config: Value, force: bool },
}

/// `live` with `edit` (a patch) applied.
pub(super) fn apply(kind: &Kind, live: &Value, edit: Edit) -> Result<Value, ApiError> {
    match edit {
        Edit::Merge(patch) => {
            let mut object = live.clone();
            json_patch::merge(&mut object, &patch);
            Ok(object)
        }
        Edit::Json(patch) => json(live, &patch).map_err(|_| ApiError::unprocessable()),
        Edit::Strategic(patch) => {
            let ty = kind.built_in_type().unwrap_or(Ty::Scalar);
            let mut object = live.clone();
            strategic(ty, &mut object, &patch);
            Ok(object)
        }
        Edit::Replace(object) | Edit::Apply { config: object, .. } => Ok(object),
    }
}

/// Applies a JSON patch as the API server does.
fn json(live: &Value, patch: &json_patch::Patch) -> Result<Value, String> {
    let mut object = live.clone();
    for operation in &patch.0 {
        if let PatchOperation::Test(test) = operation
            && test.value.is_null()
            && object.pointer(test.path.as_str()).is_none()
        {
            continue;
        }
        json_patch::patch(&mut object, std::slice::from_ref(operation))
            .map_err(|error| error.to_string())?;
    }
    Ok(object)
}

/// Merges the strategic merge patch `patch` into `target`, of type `ty`.
fn strategic(ty: Ty, target: &mut Value, patch: &Value) {
    let Value::Object(patch) = patch else {
        *target = patch.clone();
        return;
    };
    if patch.get("$patch").and_then(Value::as_str) == Some("replace") {
        let mut replacement = patch.clone();
        replacement.remove("$patch");
        *target = Value::Object(replacement);
        return;
    }
    if !target.is_object() {
        *target = Value::Object(Map::new());
    }
    let fields = target.as_object_mut().expect("just made an object");
    for (key, value) in patch {
        if let Some(list) = key.strip_prefix("$deleteFromPrimitiveList/") {
            if let (Some(Value::Array(items)), Value::Array(gone)) = (fields.get_mut(list), value) {
                items.retain(|item| !gone.contains(item));
            }
            continue;
        }
        if key.starts_with('$') {
            continue;
        }
        if value.is_null() {
            fields.remove(key);
            continue;
        }
        let child = ty.child(Some(key));
        let merge = match ty {
            Ty::Named(api_type) => api_type.field(key).map(|field| field.patch),
            _ => None,
        };
        let existing = fields.entry(key.clone()).or_insert(Value::Null);
        match (merge, value) {
            (Some(strategy), Value::Array(items)) if strategy.merge => {
                merge_list(child.child(None), existing, items, strategy.key);
            }
            (_, Value::Object(_)) => strategic(child, existing, value),
            _ => *existing = value.clone(),
        }
    }
}

/// Merges the items of a patch into a list: by `key` (a patch item with `$patch: delete`
/// removes its item), or, without a key, as a set of scalars.
fn merge_list(item_ty: Ty, target: &mut Value, items: &[Value], key: &str) {
    if !target.is_array() {
        *target = Value::Array(Vec::new());
    }
    let list = target.as_array_mut().expect("just made an array");
    for item in items {
        if key.is_empty() {
            if !list.contains(item) {
                list.push(item.clone());
            }
            continue;
        }
        let id = &item[key];
        let position = list.iter().position(|existing| existing[key] == *id);
        let delete = item.get("$patch").and_then(Value::as_str) == Some("delete");
        match (position, delete) {
            (Some(index), true) => {
                list.remove(index);
            }
            (None, true) => {}
            (Some(index), false) => strategic(item_ty, &mut list[index], item),
            (None, false) => {
                let mut new = Value::Null;
                strategic(item_ty, &mut new, item);
                list.push(new);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn containers_merge_by_name_and_nulls_delete() {
        let ty = Ty::parse("io.k8s.api.apps.v1.Deployment");
        let mut object = json!({ "spec": { "replicas": 1, "template": { "spec": { "containers": [
            { "name": "app", "image": "a:1" }, { "name": "side", "image": "s:1" },
        ] } } } });
        let patch = json!({ "spec": { "replicas": null, "template": { "spec": { "containers": [
            { "name": "app", "image": "a:2" }, { "name": "side", "$patch": "delete" },
            { "name": "new", "image": "n:1" },
        ] } } } });
        strategic(ty, &mut object, &patch);
        assert_eq!(
            object,
            json!({ "spec": { "template": { "spec": { "containers": [
                { "name": "app", "image": "a:2" }, { "name": "new", "image": "n:1" },
            ] } } } })
        );
    }
}
