//! The RBAC rules the self-signed mode needs, for exactly its objects (by `resourceNames`), as
//! data the scaffolder renders into `config/rbac/` and tests give a fake API server's
//! `Identity` (`testing::fake`).

use k8s_openapi::api::rbac::v1::PolicyRule;

use super::Settings;

/// The rules of [`rbac_rules`]: a Role in the Secret's namespace and a ClusterRole.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CertsRbac {
    /// The namespace of the Role: the Secret's.
    pub namespace: String,
    /// The Role's rules: the Secret.
    pub namespaced: Vec<PolicyRule>,
    /// The ClusterRole's rules: the webhook configurations and CRDs (cluster-scoped).
    pub cluster: Vec<PolicyRule>,
}

/// The rules the manager's service account needs in the self-signed mode of `settings`:
///
/// - the Secret, by name: `get` (each pass reads it), `list` and `watch` (a watch with the field
///   selector `metadata.name=<name>`, which the API server authorizes as a request for that
///   name), and `update` (a new version, with the `resourceVersion` read);
/// - Secrets, with no name: `create`. RBAC cannot limit `create` by name (the name is in the
///   body, not the URL), so the Role lets the manager create Secrets in its own namespace;
/// - each webhook configuration and CRD, by name: `get`, `list` and `watch` (as the Secret) and
///   `patch` (its `caBundle`).
///
/// Kinds without names in `settings` get no rule.
///
/// ```
/// use operator_rs_runtime::webhook::certs::{Settings, rbac_rules};
///
/// let mut settings = Settings::new("memcached-system", "memcached-webhook-server-self-signed-cert", "memcached-webhook-service");
/// settings.targets.crds = vec!["memcacheds.cache.example.com".to_owned()];
/// let rbac = rbac_rules(&settings);
/// assert_eq!(rbac.namespace, "memcached-system");
/// assert_eq!(rbac.namespaced.len(), 2);
/// assert_eq!(rbac.cluster.len(), 1);
/// assert_eq!(rbac.cluster[0].resources.as_deref(), Some(&["customresourcedefinitions".to_owned()][..]));
/// ```
pub fn rbac_rules(settings: &Settings) -> CertsRbac {
    let named = |group: &str, resource: &str, names: &[String], verbs: &[&str]| PolicyRule {
        api_groups: Some(vec![group.to_owned()]),
        resources: Some(vec![resource.to_owned()]),
        resource_names: Some(names.to_vec()),
        verbs: verbs.iter().map(|verb| (*verb).to_owned()).collect(),
        ..PolicyRule::default()
    };
    let secret = std::slice::from_ref(&settings.secret_name);
    let namespaced = vec![
        named("", "secrets", secret, &["get", "list", "watch", "update"]),
        PolicyRule {
            api_groups: Some(vec![String::new()]),
            resources: Some(vec!["secrets".to_owned()]),
            verbs: vec!["create".to_owned()],
            ..PolicyRule::default()
        },
    ];
    let targets = &settings.targets;
    let verbs = ["get", "list", "watch", "patch"];
    let admission = "admissionregistration.k8s.io";
    let cluster = [
        (
            admission,
            "mutatingwebhookconfigurations",
            &targets.mutating,
        ),
        (
            admission,
            "validatingwebhookconfigurations",
            &targets.validating,
        ),
        (
            "apiextensions.k8s.io",
            "customresourcedefinitions",
            &targets.crds,
        ),
    ]
    .into_iter()
    .filter(|(_, _, names)| !names.is_empty())
    .map(|(group, resource, names)| named(group, resource, names, &verbs))
    .collect();
    CertsRbac {
        namespace: settings.secret_namespace.clone(),
        namespaced,
        cluster,
    }
}
