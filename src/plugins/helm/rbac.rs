//! The RBAC values, as kubebuilder's chart has them:
//! - `rbac.namespaced`: the manager's ClusterRole and ClusterRoleBinding (`manager-role`,
//!   `manager-rolebinding`) and the kinds' helper ClusterRoles become a Role and RoleBinding in
//!   the release's namespace. The roles of cluster-scoped APIs stay cluster roles: metrics
//!   authentication (`metrics-auth-role`, `metrics-reader`, as in kubebuilder's chart), the
//!   webhook configurations' CA (`webhook-certs-role`), the cluster-scoped kinds'
//!   (`manager-cluster-role`).
//! - `serviceAccount.enabled`, `.name`, `.annotations`, `.labels`: the manager's ServiceAccount
//!   made or not, and its name in the Deployment and in every binding's subjects.

use serde_yaml::Value;

use super::names::Names;
use super::switches::RBAC_NAMESPACED;
use super::yaml::{self, Doc, NAMESPACE};
use super::yaml::{kind_of, name_of};

/// Whether the cluster role or binding named `short` (without the prefix) becomes namespaced
/// with `rbac.namespaced`.
pub fn follows_namespaced(kind: &str, short: &str) -> bool {
    matches!(kind, "ClusterRole" | "ClusterRoleBinding")
        && (["manager-role", "manager-rolebinding"].contains(&short)
            || ["-admin-role", "-editor-role", "-viewer-role"]
                .iter()
                .any(|s| short.ends_with(s)))
}

/// A ClusterRole or ClusterRoleBinding that is a Role or RoleBinding in the release's namespace
/// while `rbac.namespaced` (a binding's roleRef too).
pub fn namespaced(doc: &mut Doc, value: &mut Value) {
    let cluster = kind_of(value).to_string();
    let Some(object) = value.as_mapping_mut() else {
        return;
    };
    let kind = |cluster: String| {
        move |indent: &str| {
            let local = cluster.trim_start_matches("Cluster").to_string();
            vec![
                format!("{indent}{{{{- if {RBAC_NAMESPACED} }}}}"),
                format!("{indent}kind: {local}"),
                format!("{indent}{{{{- else }}}}"),
                format!("{indent}kind: {cluster}"),
                format!("{indent}{{{{- end }}}}"),
            ]
        }
    };
    let (k, v) = doc.block(kind(cluster));
    yaml::put_at(object, "kind", k, v);
    let metadata = yaml::mapping(object, "metadata");
    let (k, v) = doc.block(|indent| {
        yaml::when(
            Some(RBAC_NAMESPACED),
            indent,
            vec![format!("{indent}namespace: {NAMESPACE}")],
        )
    });
    metadata.insert(k, v);
    if let Some(role_ref) = object.get_mut("roleRef").and_then(Value::as_mapping_mut)
        && let Some(role_kind) = role_ref.get("kind").and_then(Value::as_str)
        && role_kind == "ClusterRole"
    {
        let (k, v) = doc.block(kind(role_kind.to_string()));
        yaml::put_at(role_ref, "kind", k, v);
    }
}

/// Every reference to the manager's ServiceAccount (its own name, the Deployment's
/// `serviceAccountName`, the bindings' subjects) as `serviceAccountName`'s: before
/// [`Names::prepare`], which would name it as any other object.
pub fn service_account_references(doc: &mut Doc, value: &mut Value, names: &Names) {
    let Some(account) = names.service_account() else {
        return;
    };
    let kind = kind_of(value).to_string();
    let is_account = |v: &Value| v.as_str() == Some(account);
    if kind == "ServiceAccount" && name_of(value) == account {
        let token = doc.inline(names.service_account_name());
        if let Some(metadata) = value.get_mut("metadata").and_then(Value::as_mapping_mut) {
            metadata.insert("name".into(), Value::from(token));
        }
    }
    if let Some(subjects) = value.get_mut("subjects").and_then(Value::as_sequence_mut) {
        for subject in subjects.iter_mut().filter_map(Value::as_mapping_mut) {
            if subject.get("kind").and_then(Value::as_str) == Some("ServiceAccount")
                && subject.get("name").is_some_and(is_account)
            {
                let token = doc.inline(names.service_account_name());
                subject.insert("name".into(), Value::from(token));
            }
        }
    }
}

/// The manager's ServiceAccount: `serviceAccount.labels` and `.annotations` added to config/'s.
pub fn service_account(doc: &mut Doc, value: &mut Value) {
    let Some(metadata) = value.get_mut("metadata").and_then(Value::as_mapping_mut) else {
        return;
    };
    let helm = super::manager::HELM_LABELS;
    yaml::values_into(
        doc,
        metadata,
        "labels",
        &[".Values.serviceAccount.labels"],
        &helm,
    );
    yaml::values_into(
        doc,
        metadata,
        "annotations",
        &[".Values.serviceAccount.annotations"],
        &[],
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn which_roles_follow_rbac_namespaced() {
        for (kind, short, follows) in [
            ("ClusterRole", "manager-role", true),
            ("ClusterRoleBinding", "manager-rolebinding", true),
            ("ClusterRole", "memcached-editor-role", true),
            ("ClusterRole", "metrics-auth-role", false),
            ("ClusterRoleBinding", "metrics-auth-rolebinding", false),
            ("ClusterRole", "metrics-reader", false),
            ("ClusterRole", "webhook-certs-role", false),
            ("ClusterRole", "manager-cluster-role", false),
            ("Role", "manager-role", false),
        ] {
            assert_eq!(follows_namespaced(kind, short), follows, "{kind} {short}");
        }
    }

    #[test]
    fn a_binding_switches_its_kind_namespace_and_role() {
        let mut doc = Doc::default();
        let mut binding: Value = serde_yaml::from_str(
            "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata:\n  name: b\nroleRef:\n  apiGroup: rbac.authorization.k8s.io\n  kind: ClusterRole\n  name: r\n",
        )
        .unwrap();
        namespaced(&mut doc, &mut binding);
        assert_eq!(
            doc.text(&binding),
            "apiVersion: rbac.authorization.k8s.io/v1
{{- if .Values.rbac.namespaced }}
kind: RoleBinding
{{- else }}
kind: ClusterRoleBinding
{{- end }}
metadata:
  name: b
  {{- if .Values.rbac.namespaced }}
  namespace: {{ .Release.Namespace }}
  {{- end }}
roleRef:
  apiGroup: rbac.authorization.k8s.io
  {{- if .Values.rbac.namespaced }}
  kind: Role
  {{- else }}
  kind: ClusterRole
  {{- end }}
  name: r
"
        );
    }
}
