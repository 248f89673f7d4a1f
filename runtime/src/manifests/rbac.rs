//! The manager's RBAC rules, cleaned up like controller-gen's.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::rbac::v1::PolicyRule;

use super::{Error, RoleScope};

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
/// Rules for `nonResourceURLs` are only allowed in a ClusterRole ([`RoleScope::Cluster`]), and
/// then without API groups, resources or resource names.
///
/// ```
/// use operator_rs_runtime::k8s_openapi::api::rbac::v1::PolicyRule;
/// use operator_rs_runtime::manifests::{RoleScope, normalize_rules};
///
/// let rule = |verb: &str| PolicyRule {
///     api_groups: Some(vec!["core".to_owned()]),
///     resources: Some(vec!["events".to_owned()]),
///     verbs: vec![verb.to_owned()],
///     ..PolicyRule::default()
/// };
/// let rules = normalize_rules(vec![rule("patch"), rule("create")], RoleScope::Cluster).unwrap();
/// assert_eq!(
///     rules,
///     [PolicyRule {
///         api_groups: Some(vec![String::new()]),
///         resources: Some(vec!["events".to_owned()]),
///         verbs: vec!["create".to_owned(), "patch".to_owned()],
///         ..PolicyRule::default()
///     }]
/// );
/// ```
pub fn normalize_rules(rules: Vec<PolicyRule>, scope: RoleScope) -> Result<Vec<PolicyRule>, Error> {
    let rules = rules
        .iter()
        .map(|rule| Rule::from_policy_rule(rule, scope))
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
    fn from_policy_rule(rule: &PolicyRule, scope: RoleScope) -> Result<Self, Error> {
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
            match scope {
                RoleScope::Namespace => {
                    return Err(invalid(
                        "nonResourceURLs need cluster-wide permissions, which a namespaced operator's Role cannot grant",
                    ));
                }
                RoleScope::Cluster => {
                    if !converted.api_groups.is_empty()
                        || !converted.resources.is_empty()
                        || !converted.resource_names.is_empty()
                    {
                        return Err(invalid(
                            "a rule with nonResourceURLs cannot also have apiGroups, resources or resourceNames",
                        ));
                    }
                }
            }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::manifests::tests::rule;

    const SCOPES: [RoleScope; 2] = [RoleScope::Cluster, RoleScope::Namespace];

    /// A rule for non-resource URLs, like `/metrics`.
    fn url_rule(urls: &[&str], verbs: &[&str]) -> PolicyRule {
        let strings = |list: &[&str]| list.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        PolicyRule {
            non_resource_urls: Some(strings(urls)),
            verbs: strings(verbs),
            ..PolicyRule::default()
        }
    }

    #[test]
    fn merges_and_sorts_rules_like_controller_gen() {
        for scope in SCOPES {
            let rules = normalize_rules(
                vec![
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
                ],
                scope,
            )
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
                ],
                "{scope:?}"
            );
        }
    }

    #[test]
    fn rejects_wildcards_and_empty_rules() {
        for scope in SCOPES {
            for bad in [
                rule(&["*"], &["ships"], &["get"]),
                rule(&["apps"], &["*"], &["get"]),
                rule(&["apps"], &["deployments"], &["*"]),
                rule(&["apps"], &["deployments"], &[]),
                rule(&[], &["deployments"], &["get"]),
                url_rule(&["/metrics*"], &["get"]),
            ] {
                assert!(
                    matches!(
                        normalize_rules(vec![bad.clone()], scope),
                        Err(Error::InvalidRule { .. })
                    ),
                    "{bad:?} should be rejected in a {scope:?} role"
                );
            }
        }
    }

    #[test]
    fn a_cluster_role_grants_non_resource_urls_on_their_own() {
        let rules = normalize_rules(
            vec![
                url_rule(&["/metrics"], &["get"]),
                url_rule(&["/metrics"], &["head", "get"]),
            ],
            RoleScope::Cluster,
        )
        .unwrap();
        assert_eq!(rules, [url_rule(&["/metrics"], &["get", "head"])]);

        let mut mixed = url_rule(&["/metrics"], &["get"]);
        mixed.api_groups = Some(vec![String::new()]);
        mixed.resources = Some(vec!["pods".to_owned()]);
        let error = normalize_rules(vec![mixed], RoleScope::Cluster).unwrap_err();
        assert!(
            error.to_string().contains("cannot also have apiGroups"),
            "{error}"
        );
    }

    #[test]
    fn a_namespaced_role_cannot_grant_non_resource_urls() {
        let error = normalize_rules(
            vec![url_rule(&["/metrics"], &["get"])],
            RoleScope::Namespace,
        )
        .unwrap_err();
        assert!(
            error.to_string().contains("a namespaced operator's Role"),
            "{error}"
        );
    }
}
