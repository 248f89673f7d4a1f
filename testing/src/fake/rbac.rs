//! RBAC in the fake API server: who a client is ([`Identity`]), and whether its roles grant a
//! request, decided as Kubernetes' RBAC authorizer decides it (verbs, API groups, resources and
//! `resource/subresource`, resource names, `*`), with the API server's `403 Forbidden` when
//! they do not.

use k8s_openapi::api::rbac::v1::PolicyRule;

use operator_rs_runtime::controller::ControllerSetup;
use operator_rs_runtime::manifests::{RoleScope, normalize_rules};

/// Who the requests of a client of the fake API server come from, and what its RBAC roles let
/// it do.
///
/// [`FakeApiServer::client`](super::FakeApiServer::client) is [`Identity::admin`], allowed
/// everything. [`FakeApiServer::client_as`](super::FakeApiServer::client_as) with
/// [`Identity::controller`] runs a controller with exactly the rules it declares, as the manager
/// runs in a cluster: a request they do not grant is answered `403 Forbidden`, and the fake
/// prints the rule that is missing.
///
/// ```
/// use operator_rs_runtime::controller::rule;
/// use operator_rs_testing::fake::Identity;
///
/// let reader = Identity::service_account("default", "reader")
///     .with_cluster_rules(vec![rule(&[""], &["configmaps"], &["get", "list", "watch"])]);
/// assert_eq!(reader.user(), "system:serviceaccount:default:reader");
/// ```
#[derive(Clone, Debug)]
pub struct Identity {
    user: String,
    groups: Vec<String>,
    grants: Grants,
}

#[derive(Clone, Debug)]
enum Grants {
    /// The `system:masters` group: no RBAC check at all.
    Everything,
    /// The rules of the identity's roles: each rule with the namespace of its Role, or `None`
    /// for a ClusterRole bound with a ClusterRoleBinding.
    Rules(Vec<(PolicyRule, Option<String>)>),
}

/// The rules of the Role every generated project binds to its manager in the manager's
/// namespace (`config/rbac/leader_election_role.yaml`): its leader election Lease and Events
/// about it.
pub fn leader_election_rules() -> Vec<PolicyRule> {
    use operator_rs_runtime::controller::rule;
    vec![
        rule(
            &["coordination.k8s.io"],
            &["leases"],
            &[
                "get", "list", "watch", "create", "update", "patch", "delete",
            ],
        ),
        rule(&["", "events.k8s.io"], &["events"], &["create", "patch"]),
    ]
}

impl Identity {
    /// A cluster administrator (`kubernetes-admin` in `system:masters`, as kind's kubeconfig):
    /// every request is allowed.
    pub fn admin() -> Self {
        Self {
            user: "kubernetes-admin".to_owned(),
            groups: vec![
                "system:masters".to_owned(),
                "system:authenticated".to_owned(),
            ],
            grants: Grants::Everything,
        }
    }

    /// The service account `name` in `namespace`, with no roles yet.
    pub fn service_account(namespace: &str, name: &str) -> Self {
        Self {
            user: format!("system:serviceaccount:{namespace}:{name}"),
            groups: vec![
                "system:serviceaccounts".to_owned(),
                format!("system:serviceaccounts:{namespace}"),
                "system:authenticated".to_owned(),
            ],
            grants: Grants::Rules(Vec::new()),
        }
    }

    /// The manager of the project `project` (its crate name, `env!("CARGO_PKG_NAME")`) running
    /// only `controller`: the service account `config/` gives the manager
    /// (`<project>-controller-manager` in `<project>-system`), with the controller's
    /// `rbac_rules()` in a ClusterRole and the manager's [`leader_election_rules`] in a Role of
    /// its namespace, as `make deploy` binds them.
    ///
    /// # Panics
    ///
    /// If the controller's rules are not rules `make manifests` accepts (a wildcard).
    pub fn controller(project: &str, controller: &ControllerSetup) -> Self {
        let namespace = format!("{project}-system");
        let rules = normalize_rules((controller.rbac_rules)(), RoleScope::Cluster)
            .unwrap_or_else(|error| panic!("the RBAC rules of {}: {error}", controller.name));
        Self::service_account(&namespace, &format!("{project}-controller-manager"))
            .with_cluster_rules(rules)
            .with_namespace_rules(&namespace, leader_election_rules())
    }

    /// Adds `rules` as a ClusterRole bound to this identity: they apply in every namespace and
    /// to cluster-scoped resources.
    #[must_use]
    pub fn with_cluster_rules(self, rules: Vec<PolicyRule>) -> Self {
        self.with_rules(rules, None)
    }

    /// Adds `rules` as a Role in `namespace` bound to this identity.
    #[must_use]
    pub fn with_namespace_rules(self, namespace: &str, rules: Vec<PolicyRule>) -> Self {
        self.with_rules(rules, Some(namespace.to_owned()))
    }

    fn with_rules(mut self, rules: Vec<PolicyRule>, namespace: Option<String>) -> Self {
        if let Grants::Rules(granted) = &mut self.grants {
            granted.extend(rules.into_iter().map(|rule| {
                // `core` is how the manifests writer lets rules name the core group.
                let mut rule = rule;
                if let Some(groups) = &mut rule.api_groups {
                    for group in groups.iter_mut().filter(|group| *group == "core") {
                        group.clear();
                    }
                }
                (rule, namespace.clone())
            }));
        }
        self
    }

    /// The user name, as the API server sees it.
    pub fn user(&self) -> &str {
        &self.user
    }

    /// The groups of the user.
    pub fn groups(&self) -> &[String] {
        &self.groups
    }

    /// The identity's rules by the namespace of their Role (`None`: a ClusterRole), in the
    /// order they were added; none for [`Identity::admin`], whom no rule is needed for.
    pub fn roles(&self) -> Vec<(Option<String>, Vec<PolicyRule>)> {
        let mut roles: Vec<(Option<String>, Vec<PolicyRule>)> = Vec::new();
        let Grants::Rules(rules) = &self.grants else {
            return roles;
        };
        for (rule, namespace) in rules {
            match roles.iter_mut().find(|(n, _)| n == namespace) {
                Some((_, rules)) => rules.push(rule.clone()),
                None => roles.push((namespace.clone(), vec![rule.clone()])),
            }
        }
        roles
    }

    /// Whether the identity's roles grant `request`.
    pub(super) fn allows(&self, request: &Attributes) -> bool {
        match &self.grants {
            Grants::Everything => true,
            Grants::Rules(rules) => rules.iter().any(|(rule, namespace)| {
                namespace
                    .as_deref()
                    .is_none_or(|namespace| request.namespace.as_deref() == Some(namespace))
                    && grants(rule, request)
            }),
        }
    }
}

/// What RBAC decides on: a request's verb and the resource it touches.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Attributes {
    pub(super) verb: &'static str,
    pub(super) group: String,
    pub(super) resource: String,
    pub(super) subresource: Option<String>,
    pub(super) namespace: Option<String>,
    pub(super) name: Option<String>,
}

impl Attributes {
    /// `deployments` or `memcacheds/status`.
    fn resource_path(&self) -> String {
        match &self.subresource {
            Some(subresource) => format!("{}/{subresource}", self.resource),
            None => self.resource.clone(),
        }
    }

    /// Why the API server refuses the request to `user`, as its authorization filter says it.
    pub(super) fn forbidden_message(&self, user: &str) -> String {
        let (verb, resource, group) = (self.verb, self.resource_path(), &self.group);
        match &self.namespace {
            Some(namespace) => format!(
                "User \"{user}\" cannot {verb} resource \"{resource}\" in API group \"{group}\" in the namespace \"{namespace}\""
            ),
            None => format!(
                "User \"{user}\" cannot {verb} resource \"{resource}\" in API group \"{group}\" at the cluster scope"
            ),
        }
    }

    /// The smallest rule that would grant the request, as a controller's `rbac_rules()` writes
    /// it.
    pub(super) fn missing_rule(&self) -> String {
        format!(
            "rule(&[{:?}], &[{:?}], &[{:?}])",
            self.group,
            self.resource_path(),
            self.verb
        )
    }
}

/// The denial of a request to `user` that an API server refused, from its method and URL: what
/// the fake would say of it, for a client of a real API server (envtest's).
#[cfg(feature = "envtest")]
pub(crate) fn denial_of_request(
    user: &str,
    method: &http::Method,
    uri: &http::Uri,
) -> super::Denial {
    let attributes = request_attributes(method, uri);
    super::Denial {
        user: user.to_owned(),
        message: attributes.forbidden_message(user),
        missing_rule: attributes.missing_rule(),
    }
}

/// The RBAC attributes of a request, read from its URL alone: `/api/v1/…` or
/// `/apis/<group>/<version>/…`, then `namespaces/<namespace>/` for a namespaced resource, the
/// resource, the object's name and a subresource.
#[cfg(feature = "envtest")]
fn request_attributes(method: &http::Method, uri: &http::Uri) -> Attributes {
    let segments: Vec<&str> = uri.path().split('/').filter(|s| !s.is_empty()).collect();
    let (group, rest) = match segments.as_slice() {
        ["api", _version, rest @ ..] => (String::new(), rest),
        ["apis", group, _version, rest @ ..] => ((*group).to_owned(), rest),
        _ => (String::new(), &[][..]),
    };
    let (namespace, rest) = match rest {
        ["namespaces", namespace, rest @ ..] if !rest.is_empty() => {
            (Some((*namespace).to_owned()), rest)
        }
        rest => (None, rest),
    };
    let name = rest.get(1).map(|name| (*name).to_owned());
    let watch = uri
        .query()
        .unwrap_or_default()
        .split('&')
        .any(|pair| pair == "watch=true" || pair == "watch=1");
    let verb = match (method.as_str(), name.is_some()) {
        ("GET", true) => "get",
        ("GET", false) if watch => "watch",
        ("GET", false) => "list",
        ("POST", _) => "create",
        ("PUT", _) => "update",
        ("PATCH", _) => "patch",
        ("DELETE", true) => "delete",
        ("DELETE", false) => "deletecollection",
        _ => "unknown",
    };
    Attributes {
        verb,
        group,
        resource: rest.first().map(|r| (*r).to_owned()).unwrap_or_default(),
        subresource: rest.get(2).map(|s| (*s).to_owned()),
        namespace,
        name,
    }
}

/// Whether `rule` grants `request` (RBAC's `RuleAllows`).
fn grants(rule: &PolicyRule, request: &Attributes) -> bool {
    let has = |values: &Option<Vec<String>>, wanted: &str| {
        values
            .iter()
            .flatten()
            .any(|value| value == "*" || value == wanted)
    };
    let verbs = rule
        .verbs
        .iter()
        .any(|verb| verb == "*" || verb == request.verb);
    let resource_path = request.resource_path();
    let resources = rule.resources.iter().flatten().any(|resource| {
        resource == "*"
            || *resource == resource_path
            || request
                .subresource
                .as_ref()
                .is_some_and(|subresource| *resource == format!("*/{subresource}"))
    });
    let names = match (&rule.resource_names, &request.name) {
        (None, _) => true,
        (Some(names), _) if names.is_empty() => true,
        (Some(names), Some(name)) => names.contains(name),
        (Some(_), None) => false,
    };
    verbs && has(&rule.api_groups, &request.group) && resources && names
}

#[cfg(test)]
mod tests {
    use operator_rs_runtime::controller::rule;

    use super::*;

    fn request(verb: &'static str, group: &str, resource: &str, sub: Option<&str>) -> Attributes {
        Attributes {
            verb,
            group: group.to_owned(),
            resource: resource.to_owned(),
            subresource: sub.map(str::to_owned),
            namespace: Some("default".to_owned()),
            name: Some("x".to_owned()),
        }
    }

    #[test]
    fn rules_grant_as_rbac_does() {
        let identity = Identity::service_account("ns", "sa").with_cluster_rules(vec![
            rule(&["apps"], &["deployments"], &["get", "patch"]),
            rule(&["example.com"], &["widgets/status"], &["update"]),
            rule(&["core"], &["pods"], &["list"]),
        ]);
        assert!(identity.allows(&request("get", "apps", "deployments", None)));
        assert!(!identity.allows(&request("delete", "apps", "deployments", None)));
        assert!(!identity.allows(&request("get", "apps", "deployments", Some("scale"))));
        assert!(identity.allows(&request("update", "example.com", "widgets", Some("status"))));
        assert!(!identity.allows(&request("update", "example.com", "widgets", None)));
        assert!(identity.allows(&request("list", "", "pods", None)));
        assert!(Identity::admin().allows(&request("delete", "apps", "deployments", None)));

        let named = Identity::service_account("ns", "sa").with_namespace_rules(
            "other",
            vec![PolicyRule {
                resource_names: Some(vec!["x".to_owned()]),
                ..rule(&[""], &["configmaps"], &["get"])
            }],
        );
        let mut get = request("get", "", "configmaps", None);
        assert!(!named.allows(&get), "only in the namespace of the Role");
        get.namespace = Some("other".to_owned());
        assert!(named.allows(&get));
        get.name = Some("y".to_owned());
        assert!(!named.allows(&get), "only the names of the rule");
    }

    #[test]
    fn refusals_are_worded_as_the_api_server_words_them() {
        let request = request("patch", "apps", "deployments", None);
        assert_eq!(
            request.forbidden_message("system:serviceaccount:a:b"),
            r#"User "system:serviceaccount:a:b" cannot patch resource "deployments" in API group "apps" in the namespace "default""#
        );
        assert_eq!(
            request.missing_rule(),
            r#"rule(&["apps"], &["deployments"], &["patch"])"#
        );
    }
}
