//! CRDs whose schema's `default`s the API server checks: each default pruned, then validated
//! against its node (bounds, types, enums, required fields, formats, items), then its CEL
//! rules; embedded resources' type and metadata; defaults the schema forbids; and the defaults
//! it takes as they are. Each case's errors come from one node: the API server walks a node's
//! properties in Go's random map order, so errors of sibling properties have no fixed order.

use serde_json::{Value, json};

use super::Case;
use super::cases::*;

/// A CRD of its own for the case (`widgets.c{n}.example.com`) whose root has `properties`.
fn crd_with_properties(properties: Value) -> Value {
    let mut crd = crd_with_rules(json!([]));
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"] = properties;
    crd
}

/// A CRD whose `spec` is an object with `properties` (and `more` of its own keys).
fn crd_with_spec(properties: Value, more: Value) -> Value {
    let mut spec = json!({ "type": "object", "properties": properties });
    for (key, value) in more.as_object().into_iter().flatten() {
        spec[key] = value.clone();
    }
    crd_with_properties(json!({ "spec": spec }))
}

fn created(name: &'static str, crd: Value) -> Case {
    case(name, vec![], post(CRDS, crd))
}

/// An embedded resource's schema, with `more` of its own keys.
fn embedded(more: Value) -> Value {
    let mut node = json!({
        "type": "object",
        "x-kubernetes-embedded-resource": true,
        "properties": {
            "apiVersion": { "type": "string" },
            "kind": { "type": "string" },
            "metadata": { "type": "object" },
            "spec": { "type": "object", "x-kubernetes-preserve-unknown-fields": true },
        },
    });
    for (key, value) in more.as_object().into_iter().flatten() {
        node[key] = value.clone();
    }
    node
}

pub(super) fn cases() -> Vec<Case> {
    [values(), junctors(), rules(), resources()]
        .into_iter()
        .flatten()
        .collect()
}

/// Defaults checked against their node's schema.
fn values() -> Vec<Case> {
    let integer = |more: Value| {
        let mut node = json!({ "type": "integer" });
        for (key, value) in more.as_object().into_iter().flatten() {
            node[key] = value.clone();
        }
        crd_with_spec(json!({ "size": node }), json!({}))
    };
    vec![
        created(
            "a CRD whose default is above its maximum",
            integer(json!({ "default": 1, "maximum": 0 })),
        ),
        created(
            "a CRD whose default breaks its multipleOf, minimum and maximum",
            crd_with_spec(
                json!({ "n": { "type": "number", "default": 7, "multipleOf": 2, "minimum": 10, "maximum": 5 } }),
                json!({}),
            ),
        ),
        created(
            "a CRD whose default is of the wrong type",
            integer(json!({ "default": "big" })),
        ),
        created(
            "a CRD whose integer default is a fraction",
            integer(json!({ "default": 1.5 })),
        ),
        created(
            "a CRD whose object default has unknown fields and a field above its maximum",
            crd_with_spec(
                json!({ "size": { "type": "integer", "maximum": 0 } }),
                json!({ "default": { "size": 7, "extra": 1 } }),
            ),
        ),
        created(
            "a CRD whose default has unknown fields deep down",
            crd_with_spec(
                json!({ "list": {
                    "type": "array",
                    "items": { "type": "object", "properties": { "a": { "type": "integer" } } },
                    "default": [{ "a": 1, "b": 2 }],
                } }),
                json!({}),
            ),
        ),
        created(
            "a CRD whose list default breaks its items' schema",
            crd_with_spec(
                json!({ "list": {
                    "type": "array",
                    "items": { "type": "integer", "minimum": 3, "default": 1 },
                    "default": [1, "x"],
                } }),
                json!({}),
            ),
        ),
        differs(
            "a CRD whose string default is too long and does not match its pattern",
            vec![],
            post(
                CRDS,
                crd_with_spec(
                    json!({ "name": { "type": "string", "default": "ab", "maxLength": 1, "pattern": "^z" } }),
                    json!({}),
                ),
            ),
            "Kubernetes 1.33 (the fake's) words a string over its maxLength 'Too long: may not be more than 1 byte', 1.28 'Too long: may not be longer than 1' (apimachinery's field.TooLong)",
        ),
        created(
            "a CRD whose string default does not match its pattern",
            crd_with_spec(
                json!({ "name": { "type": "string", "default": "ab", "pattern": "^z" } }),
                json!({}),
            ),
        ),
        created(
            "a CRD whose default is not among its enum",
            crd_with_spec(
                json!({ "mode": { "type": "string", "enum": ["a", "b"], "default": "c" } }),
                json!({}),
            ),
        ),
        created(
            "a CRD whose object default lacks a required field",
            crd_with_spec(
                json!({ "size": { "type": "integer" } }),
                json!({ "required": ["size"], "default": {} }),
            ),
        ),
        created(
            "a CRD whose default is not of its format",
            crd_with_spec(
                json!({ "when": { "type": "string", "format": "date-time", "default": "yesterday" } }),
                json!({}),
            ),
        ),
        created(
            "a CRD whose list default has too many items",
            crd_with_spec(
                json!({ "l": { "type": "array", "items": { "type": "integer" }, "maxItems": 1, "default": [1, 2] } }),
                json!({}),
            ),
        ),
        created(
            "a CRD whose default of a list's items is above its maximum",
            crd_with_spec(
                json!({ "list": { "type": "array", "items": {
                    "type": "object",
                    "properties": { "a": { "type": "integer", "maximum": 2, "default": 5 } },
                } } }),
                json!({}),
            ),
        ),
        created(
            "a CRD whose status default is of the wrong type",
            crd_with_properties(json!({
                "spec": { "type": "object" },
                "status": { "type": "object", "properties": { "ready": { "type": "boolean", "default": "yes" } } },
            })),
        ),
        created(
            "a CRD whose per-version schema has a default above its maximum",
            {
                let mut crd = integer(json!({ "default": 5, "maximum": 1 }));
                let mut v2 = crd["spec"]["versions"][0].clone();
                v2["name"] = json!("v2");
                v2["storage"] = json!(false);
                v2["schema"]["openAPIV3Schema"]["properties"]["spec"] = json!({ "type": "object" });
                crd["spec"]["versions"].as_array_mut().unwrap().push(v2);
                crd
            },
        ),
        created(
            "a CRD whose map default has too many properties",
            crd_with_spec(
                json!({ "m": {
                    "type": "object",
                    "additionalProperties": { "type": "string" },
                    "maxProperties": 1,
                    "default": { "a": "x", "b": "y" },
                } }),
                json!({}),
            ),
        ),
        created(
            "a CRD whose object default has a null field",
            crd_with_spec(
                json!({ "a": { "type": "integer" } }),
                json!({ "default": { "a": null } }),
            ),
        ),
        created(
            "a CRD whose int32 default is out of its range",
            crd_with_spec(
                json!({ "n": { "type": "integer", "format": "int32", "default": 3_000_000_000_i64 } }),
                json!({}),
            ),
        ),
        created(
            "a CRD whose set and map-list defaults repeat items",
            crd_with_spec(
                json!({
                    "set": { "type": "array", "x-kubernetes-list-type": "set", "items": { "type": "integer" }, "default": [1, 1] },
                    "map": {
                        "type": "array",
                        "x-kubernetes-list-type": "map",
                        "x-kubernetes-list-map-keys": ["k"],
                        "items": { "type": "object", "required": ["k"], "properties": { "k": { "type": "string" } } },
                        "default": [{ "k": "a" }, { "k": "a" }],
                    },
                }),
                json!({}),
            ),
        ),
        created(
            "a CRD whose valid defaults are taken",
            crd_with_spec(
                json!({
                    "size": { "type": "integer", "default": 1, "maximum": 3 },
                    "free": { "type": "object", "x-kubernetes-preserve-unknown-fields": true, "default": { "any": 1 } },
                    "labels": { "type": "object", "additionalProperties": { "type": "string", "maxLength": 1, "default": "abc" } },
                    "maybe": { "type": "integer", "default": null },
                }),
                json!({ "default": {} }),
            ),
        ),
    ]
}

/// Defaults checked against `anyOf`, `oneOf`, `allOf` and `not`, as kube-openapi words them.
fn junctors() -> Vec<Case> {
    let n = |junctor: &str, branches: Value| {
        let mut node = json!({ "type": "integer", "default": 5 });
        node[junctor] = branches;
        crd_with_spec(json!({ "n": node }), json!({}))
    };
    let outside = || json!([{ "maximum": 2 }, { "minimum": 10 }]);
    vec![
        created(
            "a CRD whose default matches no anyOf branch",
            n("anyOf", outside()),
        ),
        created(
            "a CRD whose default matches no oneOf branch",
            n("oneOf", outside()),
        ),
        created(
            "a CRD whose default matches two oneOf branches",
            n("oneOf", json!([{ "maximum": 10 }, { "minimum": 1 }])),
        ),
        created(
            "a CRD whose default matches its not",
            n("not", json!({ "maximum": 10 })),
        ),
        created(
            "a CRD whose default matches one of two allOf branches",
            n("allOf", json!([{ "maximum": 2 }, { "minimum": 1 }])),
        ),
        created(
            "a CRD whose object default's field matches no anyOf branch",
            crd_with_spec(
                json!({ "o": {
                    "type": "object",
                    "properties": { "a": { "type": "integer" } },
                    "default": { "a": 5 },
                    "anyOf": [
                        { "properties": { "a": { "maximum": 2 } } },
                        { "properties": { "a": { "minimum": 10 } } },
                    ],
                } }),
                json!({}),
            ),
        ),
    ]
}

/// Defaults checked against their node's CEL rules.
fn rules() -> Vec<Case> {
    vec![
        created(
            "a CRD whose default breaks its node's CEL rule",
            crd_with_spec(
                json!({ "size": { "type": "integer" } }),
                json!({
                    "default": { "size": 9 },
                    "x-kubernetes-validations": [{ "rule": "self.size < 5", "message": "small" }],
                }),
            ),
        ),
        created(
            "a CRD whose default breaks a CEL rule below its node",
            crd_with_spec(
                json!({ "size": { "type": "integer", "x-kubernetes-validations": [{ "rule": "self < 5" }] } }),
                json!({ "default": { "size": 9 } }),
            ),
        ),
        created(
            "a CRD whose default breaks a rule with a messageExpression",
            crd_with_spec(
                json!({ "size": {
                    "type": "integer",
                    "default": 9,
                    "x-kubernetes-validations": [{ "rule": "self < 5", "messageExpression": "'got ' + string(self)" }],
                } }),
                json!({}),
            ),
        ),
        created(
            "a CRD whose default breaks a rule with a fieldPath and a reason",
            crd_with_spec(
                json!({ "a": { "type": "integer" } }),
                json!({
                    "default": { "a": 9 },
                    "x-kubernetes-validations": [{
                        "rule": "self.a < 5",
                        "message": "a small",
                        "fieldPath": ".a",
                        "reason": "FieldValueForbidden",
                    }],
                }),
            ),
        ),
        created(
            "a CRD whose default breaks a transition rule against itself",
            crd_with_spec(
                json!({ "size": {
                    "type": "integer",
                    "default": 3,
                    "x-kubernetes-validations": [{ "rule": "self > oldSelf", "message": "grow" }],
                } }),
                json!({}),
            ),
        ),
        created(
            "a CRD with a default whose node's CEL rule does not compile",
            crd_with_spec(
                json!({ "size": { "type": "integer", "default": 3, "x-kubernetes-validations": [{ "rule": "self >" }] } }),
                json!({}),
            ),
        ),
        created(
            "a CRD with a default whose node's CEL rule names a field it does not have",
            crd_with_spec(
                json!({ "size": { "type": "integer" } }),
                json!({
                    "default": { "size": 1 },
                    "x-kubernetes-validations": [{ "rule": "self.colour == 'red'" }],
                }),
            ),
        ),
        created(
            "a CRD with an invalid default and a CEL rule that does not compile",
            crd_with_spec(
                json!({ "size": {
                    "type": "integer",
                    "default": 3,
                    "maximum": 1,
                    "x-kubernetes-validations": [{ "rule": "self >" }],
                } }),
                json!({}),
            ),
        ),
    ]
}

/// Defaults of embedded resources and of the resource's type and metadata.
fn resources() -> Vec<Case> {
    vec![
        created(
            "a CRD whose embedded resource's default has no apiVersion or kind",
            crd_with_spec(
                json!({ "tpl": embedded(json!({ "default": { "spec": {} } })) }),
                json!({}),
            ),
        ),
        created(
            "a CRD whose embedded resource's default has an invalid kind",
            crd_with_spec(
                json!({ "tpl": embedded(json!({ "default": { "apiVersion": "v1", "kind": "no_good" } })) }),
                json!({}),
            ),
        ),
        created(
            "a CRD whose embedded resource's kind has an invalid default",
            crd_with_spec(
                json!({ "tpl": {
                    "type": "object",
                    "x-kubernetes-embedded-resource": true,
                    "properties": {
                        "apiVersion": { "type": "string" },
                        "kind": { "type": "string", "default": "no_good" },
                        "metadata": { "type": "object" },
                    },
                } }),
                json!({}),
            ),
        ),
        created(
            "a CRD whose embedded resource's default has an invalid label",
            crd_with_spec(
                json!({ "tpl": embedded(json!({ "default": {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "metadata": { "labels": { "bad key!": "x" } },
                } })) }),
                json!({}),
            ),
        ),
        created(
            "a CRD whose embedded resource's default is not of its kind's enum",
            crd_with_spec(
                json!({ "tpl": {
                    "type": "object",
                    "x-kubernetes-embedded-resource": true,
                    "properties": {
                        "apiVersion": { "type": "string" },
                        "kind": { "type": "string", "enum": ["Pod"] },
                        "metadata": { "type": "object" },
                    },
                    "default": { "apiVersion": "v1", "kind": "Job" },
                } }),
                json!({}),
            ),
        ),
        created(
            "a CRD whose embedded resource's metadata has a default with a name that is no path segment",
            crd_with_spec(
                json!({ "tpl": {
                    "type": "object",
                    "x-kubernetes-embedded-resource": true,
                    "properties": {
                        "apiVersion": { "type": "string" },
                        "kind": { "type": "string" },
                        "metadata": { "type": "object", "default": { "name": "a/b" } },
                    },
                } }),
                json!({}),
            ),
        ),
        created(
            "a CRD whose embedded resource's default keeps its metadata as it is",
            crd_with_spec(
                json!({ "tpl": embedded(json!({ "default": {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "metadata": { "name": "a", "whatever": 1 },
                } })) }),
                json!({}),
            ),
        ),
        created(
            "a CRD with a default in its top-level metadata",
            crd_with_properties(json!({
                "spec": { "type": "object" },
                "metadata": { "type": "object", "properties": { "name": { "type": "string", "default": "a" } } },
            })),
        ),
        created(
            "a CRD with an invalid default in its top-level kind",
            crd_with_properties(json!({
                "spec": { "type": "object" },
                "kind": { "type": "string", "default": "no_good" },
            })),
        ),
        created(
            "a CRD with a default inside additionalProperties of an embedded resource's metadata",
            crd_with_spec(
                json!({ "tpl": {
                    "type": "object",
                    "x-kubernetes-embedded-resource": true,
                    "properties": {
                        "apiVersion": { "type": "string" },
                        "kind": { "type": "string" },
                        "metadata": { "type": "object", "properties": { "labels": {
                            "type": "object",
                            "additionalProperties": { "type": "string", "default": "x" },
                        } } },
                    },
                } }),
                json!({}),
            ),
        ),
        created("a CRD whose root has a default", {
            let mut crd = crd_with_spec(json!({ "size": { "type": "integer" } }), json!({}));
            crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["default"] =
                json!({ "spec": { "size": 1 } });
            crd
        }),
    ]
}
