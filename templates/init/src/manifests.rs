{{ rust_header }}//! The Kubernetes manifests that are derived from the code: the CRDs of [`crate::api`] and the RBAC
//! role built from the rules of [`crate::controller`].
//!
//! Everything here is a pure function from Rust values to file contents. `make manifests`
//! (`src/bin/manifests.rs`) writes the result to `config/`, and `tests/manifests.rs` checks that the
//! files there are up to date, so you never edit these YAML files by hand.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::admissionregistration::v1::{
    MutatingWebhookConfiguration, ValidatingWebhookConfiguration,
};
{% if namespaced -%}
use k8s_openapi::api::rbac::v1::{PolicyRule, Role};
{% else -%}
use k8s_openapi::api::rbac::v1::{ClusterRole, PolicyRule};
{% endif -%}
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::ObjectMeta;
use kube::core::crd::{MergeError, merge_crds};
use serde::Serialize;

/// The folder the CRDs are written to, one file per kind: `<group>_<plural>.yaml`.
pub const CRD_DIR: &str = "config/crd/bases";

/// The file the manager's RBAC role is written to.
pub const ROLE_PATH: &str = "config/rbac/role.yaml";

/// The file the webhook configurations are written to (once the project has webhooks).
pub const WEBHOOK_MANIFESTS_PATH: &str = "config/webhook/manifests.yaml";

/// The name of the manager's {% if namespaced %}Role{% else %}ClusterRole{% endif %}; `config/rbac/role_binding.yaml` binds it to the manager's service account.
pub const ROLE_NAME: &str = "manager-role";

/// One generated file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Manifest {
    /// Where the file goes, relative to the project root, with `/` separators.
    pub path: String,
    /// The complete file contents.
    pub contents: String,
}

/// Why the manifests cannot be generated from the code. Each message says what to fix.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// No version of a kind keeps `storage` true.
    #[error(
        "CRD {crd}: no version is the storage version; remove `#[kube(storage = false)]` from exactly one version"
    )]
    NoStorageVersion {
        /// The CRD name, `<plural>.<group>`.
        crd: String,
    },
    /// Several versions of a kind keep `storage` true.
    #[error(
        "CRD {crd}: versions {versions:?} are all storage versions; add `#[kube(storage = false)]` to all but one"
    )]
    SeveralStorageVersions {
        /// The CRD name, `<plural>.<group>`.
        crd: String,
        /// The versions that claim to be the storage version.
        versions: Vec<String>,
    },
    /// The same version of a kind is listed twice in [`crate::api::crds`].
    #[error("CRD {crd}: version {version} is listed more than once in api::crds()")]
    DuplicateVersion {
        /// The CRD name, `<plural>.<group>`.
        crd: String,
        /// The repeated version.
        version: String,
    },
    /// The versions of a kind disagree on their group, kind or scope.
    #[error("CRD {crd}: cannot merge its versions into one CRD: {source}")]
    Merge {
        /// The CRD name, `<plural>.<group>`.
        crd: String,
        /// What kube's merge found wrong.
        source: MergeError,
    },
    /// An RBAC rule that the role cannot contain.
    #[error("RBAC rule {rule}: {reason}")]
    InvalidRule {
        /// The offending rule, as declared in the code.
        rule: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// A manifest could not be serialized to YAML.
    #[error("cannot write {path} as YAML: {source}")]
    Yaml {
        /// The manifest being written.
        path: String,
        /// The serializer's error.
        source: serde_saphyr::SerializeError,
    },
}

/// Renders every generated manifest of this project: the CRDs of [`crate::api::crds`], then the
/// role with the rules of [`crate::controller::rbac_rules`], then (once `operator-rs create
/// webhook` adds them) the webhook configurations with [`render_webhooks`].
pub fn render() -> Result<Vec<Manifest>, Error> {
    let mut manifests = render_crds(crate::api::crds())?;
    manifests.push(render_role(crate::controller::rbac_rules())?);
    // +operator-rs:scaffold:manifests
    Ok(manifests)
}

/// Renders one file per kind into [`CRD_DIR`], sorted by path, after merging the versions of each
/// kind with [`merge_versions`].
pub fn render_crds(crds: Vec<CustomResourceDefinition>) -> Result<Vec<Manifest>, Error> {
    merge_versions(crds)?
        .into_iter()
        .map(|crd| {
            let path = format!(
                "{CRD_DIR}/{}_{}.yaml",
                crd.spec.group, crd.spec.names.plural
            );
            let header = "# Edit the Rust types in src/api/ instead, then run `make manifests`.\n";
            to_yaml(path, header, &crd)
        })
        .collect()
}

/// Merges CRDs that share a name (one per version of a kind, as `Kind::crd()` returns them) into a
/// single CRD per kind, sorted by name.
///
/// Exactly one version of each kind must be the storage version, that is, keep the derive's
/// default `storage = true`; the versions keep the order in which they are listed.
pub fn merge_versions(
    crds: Vec<CustomResourceDefinition>,
) -> Result<Vec<CustomResourceDefinition>, Error> {
    let mut by_name: BTreeMap<String, Vec<CustomResourceDefinition>> = BTreeMap::new();
    for crd in crds {
        let name = crd.metadata.name.clone().unwrap_or_default();
        by_name.entry(name).or_default().push(crd);
    }
    by_name
        .into_iter()
        .map(|(name, versions)| merge_kind(name, versions))
        .collect()
}

/// Merges the versions of one kind; see [`merge_versions`].
fn merge_kind(
    crd: String,
    crds: Vec<CustomResourceDefinition>,
) -> Result<CustomResourceDefinition, Error> {
    let versions: Vec<(String, bool)> = crds
        .iter()
        .flat_map(|crd| &crd.spec.versions)
        .map(|version| (version.name.clone(), version.storage))
        .collect();
    let mut seen = BTreeSet::new();
    if let Some((version, _)) = versions.iter().find(|(name, _)| !seen.insert(name)) {
        return Err(Error::DuplicateVersion {
            crd,
            version: version.clone(),
        });
    }
    let storage: Vec<String> = versions
        .iter()
        .filter(|(_, storage)| *storage)
        .map(|(name, _)| name.clone())
        .collect();
    let storage = match storage.as_slice() {
        [] => return Err(Error::NoStorageVersion { crd }),
        [storage] => storage.clone(),
        _ => {
            return Err(Error::SeveralStorageVersions {
                crd,
                versions: storage,
            });
        }
    };

    let mut merged = match merge_crds(crds, &storage) {
        Ok(merged) => merged,
        Err(source) => return Err(Error::Merge { crd, source }),
    };
    // `merge_crds` puts the storage version first; keep the order of `api::crds()` instead.
    merged
        .spec
        .versions
        .sort_by_key(|version| versions.iter().position(|(name, _)| *name == version.name));
    Ok(merged)
}

/// Renders the manager's role ({% if namespaced %}a Role, as this project was created with
/// `--namespaced`{% else %}a ClusterRole{% endif %}) from the rules the controllers declare, after
/// [`normalize_rules`].
pub fn render_role(rules: Vec<PolicyRule>) -> Result<Manifest, Error> {
    let role = {% if namespaced %}Role{% else %}ClusterRole{% endif %} {
        metadata: ObjectMeta {
            name: Some(ROLE_NAME.to_owned()),
            ..ObjectMeta::default()
        },
        rules: Some(normalize_rules(rules)?),
{%- if not namespaced %}
        aggregation_rule: None,
{%- endif %}
    };
    let header = "# Edit the `rbac_rules()` of the controllers in src/controller/ instead, then run `make manifests`.\n";
    to_yaml(ROLE_PATH.to_owned(), header, &role)
}

/// Renders [`WEBHOOK_MANIFESTS_PATH`]: the configurations that register the admission webhooks
/// with the API server, each in its own YAML document. The file is written even when both are
/// `None` (a project with conversion webhooks only), because `config/webhook` lists it.
pub fn render_webhooks(
    mutating: Option<MutatingWebhookConfiguration>,
    validating: Option<ValidatingWebhookConfiguration>,
) -> Result<Manifest, Error> {
    let path = WEBHOOK_MANIFESTS_PATH.to_owned();
    let mut contents = String::from(
        "# Code generated by `make manifests` (cargo run --bin manifests). DO NOT EDIT.\n\
         # Edit the webhooks' REGISTRATION in src/webhook/ instead, then run `make manifests`.\n",
    );
    let documents = [
        mutating.map(|m| serde_saphyr::to_string(&m)),
        validating.map(|v| serde_saphyr::to_string(&v)),
    ];
    for yaml in documents.into_iter().flatten() {
        match yaml {
            Ok(yaml) => {
                contents.push_str("---\n");
                contents.push_str(&yaml);
            }
            Err(source) => return Err(Error::Yaml { path, source }),
        }
    }
    Ok(Manifest { path, contents })
}

/// Cleans up RBAC rules the way controller-gen does, so that the role stays small and stable:
///
/// - `core` is accepted as a name for the core API group (`""`);
/// - rules for the same API groups and resources are merged and their verbs combined;
/// - then rules with the same API groups and verbs are merged and their resources combined;
/// - then rules with the same resources and verbs are merged and their API groups combined;
/// - every list is sorted and free of duplicates, and the rules are sorted.
///
/// Each merge grants exactly the union of what the merged rules granted. Wildcards (`*`) are
/// rejected: list the verbs and resources the controllers need, so that the role shows them.
pub fn normalize_rules(rules: Vec<PolicyRule>) -> Result<Vec<PolicyRule>, Error> {
    let rules = rules
        .iter()
        .map(Rule::from_policy_rule)
        .collect::<Result<Vec<_>, _>>()?;

    // The three merges below each key the rules by all fields but one, and combine that one.
    let mut by_resources: BTreeMap<Rule, BTreeSet<String>> = BTreeMap::new();
    for mut rule in rules {
        let verbs = std::mem::take(&mut rule.verbs);
        by_resources.entry(rule).or_default().extend(verbs);
    }
    let mut by_verbs: BTreeMap<Rule, BTreeSet<String>> = BTreeMap::new();
    for (mut rule, verbs) in by_resources {
        rule.verbs = verbs;
        let resources = std::mem::take(&mut rule.resources);
        by_verbs.entry(rule).or_default().extend(resources);
    }
    let mut by_groups: BTreeMap<Rule, BTreeSet<String>> = BTreeMap::new();
    for (mut rule, resources) in by_verbs {
        rule.resources = resources;
        let groups = std::mem::take(&mut rule.api_groups);
        by_groups.entry(rule).or_default().extend(groups);
    }
    let normalized: BTreeSet<Rule> = by_groups
        .into_iter()
        .map(|(rule, api_groups)| Rule { api_groups, ..rule })
        .collect();
    Ok(normalized.into_iter().map(Rule::into_policy_rule).collect())
}

/// A policy rule as sets, which makes merging, deduplicating and sorting straightforward. The
/// field order is the sort order of the rules in the role.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
struct Rule {
    api_groups: BTreeSet<String>,
    resources: BTreeSet<String>,
    resource_names: BTreeSet<String>,
    non_resource_urls: BTreeSet<String>,
    verbs: BTreeSet<String>,
}

impl Rule {
    fn from_policy_rule(rule: &PolicyRule) -> Result<Self, Error> {
        let invalid = |reason| Error::InvalidRule {
            rule: describe(rule),
            reason,
        };
        let set = |list: &Option<Vec<String>>| -> BTreeSet<String> {
            list.iter().flatten().cloned().collect()
        };
        let converted = Rule {
            api_groups: rule
                .api_groups
                .iter()
                .flatten()
                .map(|group| {
                    if group == "core" {
                        String::new()
                    } else {
                        group.clone()
                    }
                })
                .collect(),
            resources: set(&rule.resources),
            resource_names: set(&rule.resource_names),
            non_resource_urls: set(&rule.non_resource_urls),
            verbs: rule.verbs.iter().cloned().collect(),
        };
        let all = [
            &converted.api_groups,
            &converted.resources,
            &converted.resource_names,
            &converted.non_resource_urls,
            &converted.verbs,
        ];
        if all
            .iter()
            .flat_map(|set| set.iter())
            .any(|value| value.contains('*'))
        {
            return Err(invalid(
                "wildcards (*) are not allowed; list what is needed",
            ));
        }
        if converted.verbs.is_empty() {
            return Err(invalid("verbs must not be empty"));
        }
        if converted.non_resource_urls.is_empty() {
            if converted.resources.is_empty() {
                return Err(invalid("resources must not be empty"));
            }
            if converted.api_groups.is_empty() {
                return Err(invalid(
                    "apiGroups must not be empty; use \"\" for the core group",
                ));
            }
        } else {
{%- if namespaced %}
            return Err(invalid(
                "nonResourceURLs need cluster-wide permissions, which a namespaced operator's Role cannot grant",
            ));
{%- else %}
            if !converted.api_groups.is_empty()
                || !converted.resources.is_empty()
                || !converted.resource_names.is_empty()
            {
                return Err(invalid(
                    "a rule with nonResourceURLs cannot also have apiGroups, resources or resourceNames",
                ));
            }
{%- endif %}
        }
        Ok(converted)
    }

    fn into_policy_rule(self) -> PolicyRule {
        let list = |set: BTreeSet<String>| (!set.is_empty()).then(|| set.into_iter().collect());
        let is_resource_rule = !self.resources.is_empty();
        PolicyRule {
            // `""` (the core group) must be written out for resource rules, even when alone.
            api_groups: if is_resource_rule {
                Some(self.api_groups.into_iter().collect())
            } else {
                None
            },
            resources: list(self.resources),
            resource_names: list(self.resource_names),
            non_resource_urls: list(self.non_resource_urls),
            verbs: self.verbs.into_iter().collect(),
        }
    }
}

/// A one-line description of a rule for error messages.
fn describe(rule: &PolicyRule) -> String {
    let list = |list: &Option<Vec<String>>| format!("{:?}", list.as_deref().unwrap_or_default());
    format!(
        "(apiGroups: {}, resources: {}, resourceNames: {}, nonResourceURLs: {}, verbs: {:?})",
        list(&rule.api_groups),
        list(&rule.resources),
        list(&rule.resource_names),
        list(&rule.non_resource_urls),
        rule.verbs,
    )
}

/// Serializes `value` to YAML below the comment that marks the file as generated.
fn to_yaml(path: String, header: &str, value: &impl Serialize) -> Result<Manifest, Error> {
    match serde_saphyr::to_string(value) {
        Ok(yaml) => Ok(Manifest {
            contents: format!(
                "# Code generated by `make manifests` (cargo run --bin manifests). DO NOT EDIT.\n{header}---\n{yaml}"
            ),
            path,
        }),
        Err(source) => Err(Error::Yaml { path, source }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::controller::rule;
    use kube::CustomResourceExt as _;

    /// Two versions of a test-only kind, laid out like `operator-rs create api` lays out versions.
    mod v1 {
        use kube::CustomResource;
        use schemars::JsonSchema;
        use serde::{Deserialize, Serialize};

        #[derive(CustomResource, Clone, Debug, Deserialize, Serialize, JsonSchema)]
        #[kube(group = "test.example.com", version = "v1", kind = "Ship", namespaced)]
        pub struct ShipSpec {
            pub name: String,
        }
    }

    mod v2 {
        use kube::CustomResource;
        use schemars::JsonSchema;
        use serde::{Deserialize, Serialize};

        #[derive(CustomResource, Clone, Debug, Deserialize, Serialize, JsonSchema)]
        #[kube(group = "test.example.com", version = "v2", kind = "Ship", namespaced)]
        #[kube(storage = false)]
        pub struct ShipSpec {
            pub name: String,
            pub crew: u32,
        }
    }

    #[test]
    fn merges_versions_of_a_kind_into_one_crd() {
        let crds = merge_versions(vec![v1::Ship::crd(), v2::Ship::crd()]).unwrap();
        assert_eq!(crds.len(), 1);
        let versions: Vec<(&str, bool)> = crds[0]
            .spec
            .versions
            .iter()
            .map(|version| (version.name.as_str(), version.storage))
            .collect();
        assert_eq!(versions, [("v1", true), ("v2", false)]);

        let manifests = render_crds(vec![v2::Ship::crd(), v1::Ship::crd()]).unwrap();
        assert_eq!(manifests.len(), 1);
        assert_eq!(
            manifests[0].path,
            "config/crd/bases/test.example.com_ships.yaml"
        );
        assert!(manifests[0].contents.contains("DO NOT EDIT"));
        assert!(
            manifests[0]
                .contents
                .contains("kind: CustomResourceDefinition")
        );
    }

    #[test]
    fn requires_exactly_one_storage_version() {
        let several = merge_versions(vec![v1::Ship::crd(), v1::Ship::crd()]);
        assert!(matches!(several, Err(Error::DuplicateVersion { .. })));

        let mut also_storage = v2::Ship::crd();
        also_storage.spec.versions[0].storage = true;
        let several = merge_versions(vec![v1::Ship::crd(), also_storage]);
        assert!(matches!(several, Err(Error::SeveralStorageVersions { .. })));

        let none = merge_versions(vec![v2::Ship::crd()]);
        assert!(matches!(none, Err(Error::NoStorageVersion { .. })));
    }

    #[test]
    fn merges_and_sorts_rules_like_controller_gen() {
        let rules = normalize_rules(vec![
            rule(&["test.example.com"], &["ships"], &["list", "get"]),
            rule(&["test.example.com"], &["ships"], &["watch", "get"]),
            rule(
                &["test.example.com"],
                &["ships/status"],
                &["get", "list", "watch"],
            ),
            rule(&["core"], &["events"], &["create"]),
            rule(&["events.k8s.io"], &["events"], &["create"]),
            rule(&[""], &["configmaps"], &["get"]),
        ])
        .unwrap();
        assert_eq!(
            rules,
            [
                rule(&[""], &["configmaps"], &["get"]),
                rule(&["", "events.k8s.io"], &["events"], &["create"]),
                rule(
                    &["test.example.com"],
                    &["ships", "ships/status"],
                    &["get", "list", "watch"]
                ),
            ]
        );
    }

    #[test]
    fn rejects_wildcards_and_empty_rules() {
        for bad in [
            rule(&["*"], &["ships"], &["get"]),
            rule(&["apps"], &["*"], &["get"]),
            rule(&["apps"], &["deployments"], &["*"]),
            rule(&["apps"], &["deployments"], &[]),
            rule(&[], &["deployments"], &["get"]),
        ] {
            assert!(
                matches!(
                    normalize_rules(vec![bad.clone()]),
                    Err(Error::InvalidRule { .. })
                ),
                "{bad:?} should be rejected"
            );
        }
    }

    #[test]
    fn renders_webhook_configurations_one_document_each() {
        let empty = render_webhooks(None, None).unwrap();
        assert_eq!(empty.path, WEBHOOK_MANIFESTS_PATH);
        assert!(!empty.contents.contains("---"), "{}", empty.contents);

        let named = |name: &str| ObjectMeta {
            name: Some(name.to_owned()),
            ..ObjectMeta::default()
        };
        let both = render_webhooks(
            Some(MutatingWebhookConfiguration {
                metadata: named("mutating-webhook-configuration"),
                webhooks: None,
            }),
            Some(ValidatingWebhookConfiguration {
                metadata: named("validating-webhook-configuration"),
                webhooks: None,
            }),
        )
        .unwrap();
        let contents = &both.contents;
        assert_eq!(contents.matches("---\n").count(), 2);
        assert!(contents.contains("kind: MutatingWebhookConfiguration\n"));
        assert!(contents.contains("kind: ValidatingWebhookConfiguration\n"));
    }

    #[test]
    fn renders_an_empty_role() {
        let role = render_role(Vec::new()).unwrap();
        assert_eq!(role.path, ROLE_PATH);
        assert!(role.contents.contains("kind: {% if namespaced %}Role{% else %}ClusterRole{% endif %}\n"));
        assert!(role.contents.contains("name: manager-role\n"));
        assert!(role.contents.contains("rules: []\n"));
    }
}
