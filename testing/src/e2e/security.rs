//! The "restricted" Pod Security Standard, checked on pod specs.
//!
//! The test namespaces enforce it, so the API server refuses a pod that breaks it, and a
//! Deployment with such a pod template just never becomes available. Checking the template says
//! why. <https://kubernetes.io/docs/concepts/security/pod-security-standards/#restricted>

use k8s_openapi::api::core::v1::{Container, PodSpec};

/// The security settings that a container runs with: its own, else its pod's for the settings
/// that a pod can set for all its containers.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EffectiveSecurity {
    /// `runAsNonRoot`, the container's or else the pod's.
    pub run_as_non_root: Option<bool>,
    /// `runAsUser`, the container's or else the pod's.
    pub run_as_user: Option<i64>,
    /// `seccompProfile.type`, the container's or else the pod's.
    pub seccomp_profile: Option<String>,
    /// The container's `allowPrivilegeEscalation`.
    pub allow_privilege_escalation: Option<bool>,
    /// The container's `privileged`.
    pub privileged: Option<bool>,
    /// The container's `capabilities.add`.
    pub capabilities_added: Vec<String>,
    /// The container's `capabilities.drop`.
    pub capabilities_dropped: Vec<String>,
}

impl EffectiveSecurity {
    /// The settings of `container` in `pod`.
    pub fn of(pod: &PodSpec, container: &Container) -> Self {
        let pod = pod.security_context.as_ref();
        let own = container.security_context.as_ref();
        let capabilities = own.and_then(|context| context.capabilities.as_ref());
        Self {
            run_as_non_root: own
                .and_then(|context| context.run_as_non_root)
                .or_else(|| pod.and_then(|context| context.run_as_non_root)),
            run_as_user: own
                .and_then(|context| context.run_as_user)
                .or_else(|| pod.and_then(|context| context.run_as_user)),
            seccomp_profile: own
                .and_then(|context| context.seccomp_profile.as_ref())
                .or_else(|| pod.and_then(|context| context.seccomp_profile.as_ref()))
                .map(|profile| profile.type_.clone()),
            allow_privilege_escalation: own.and_then(|context| context.allow_privilege_escalation),
            privileged: own.and_then(|context| context.privileged),
            capabilities_added: capabilities
                .and_then(|capabilities| capabilities.add.clone())
                .unwrap_or_default(),
            capabilities_dropped: capabilities
                .and_then(|capabilities| capabilities.drop.clone())
                .unwrap_or_default(),
        }
    }

    /// What breaks the restricted profile; empty when nothing does.
    pub fn restricted_violations(&self) -> Vec<&'static str> {
        let mut violations = Vec::new();
        if self.privileged == Some(true) {
            violations.push("privileged must not be true");
        }
        if self.allow_privilege_escalation != Some(false) {
            violations.push("allowPrivilegeEscalation must be false");
        }
        if self.run_as_non_root != Some(true) {
            violations.push("runAsNonRoot must be true");
        }
        if self.run_as_user == Some(0) {
            violations.push("runAsUser must not be 0");
        }
        if !matches!(
            self.seccomp_profile.as_deref(),
            Some("RuntimeDefault" | "Localhost")
        ) {
            violations.push("seccompProfile.type must be RuntimeDefault or Localhost");
        }
        if !self.capabilities_dropped.iter().any(|c| c == "ALL") {
            violations.push("capabilities.drop must include ALL");
        }
        if self
            .capabilities_added
            .iter()
            .any(|c| c != "NET_BIND_SERVICE")
        {
            violations.push("capabilities.add may only hold NET_BIND_SERVICE");
        }
        violations
    }
}

/// What keeps the pod from the restricted profile, container by container (init containers
/// too); empty when it complies.
///
/// ```
/// use k8s_openapi::api::core::v1::{Container, PodSpec};
/// use operator_rs_testing::e2e::security::restricted_violations;
///
/// let pod = PodSpec {
///     containers: vec![Container { name: "app".to_string(), ..Container::default() }],
///     ..PodSpec::default()
/// };
/// assert!(restricted_violations(&pod).contains(&"container app: runAsNonRoot must be true".to_string()));
/// ```
pub fn restricted_violations(pod: &PodSpec) -> Vec<String> {
    let containers = pod.init_containers.iter().flatten().chain(&pod.containers);
    containers
        .flat_map(|container| {
            let violations = EffectiveSecurity::of(pod, container).restricted_violations();
            violations
                .into_iter()
                .map(|violation| format!("container {}: {violation}", container.name))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::{
        Capabilities, PodSecurityContext, SeccompProfile, SecurityContext,
    };

    use super::*;

    /// A pod like the manager's: non-root and seccomp for the pod, the rest per container.
    fn restricted_pod() -> PodSpec {
        PodSpec {
            security_context: Some(PodSecurityContext {
                run_as_non_root: Some(true),
                seccomp_profile: Some(SeccompProfile {
                    type_: "RuntimeDefault".to_string(),
                    ..SeccompProfile::default()
                }),
                ..PodSecurityContext::default()
            }),
            containers: vec![Container {
                name: "manager".to_string(),
                security_context: Some(SecurityContext {
                    allow_privilege_escalation: Some(false),
                    capabilities: Some(Capabilities {
                        drop: Some(vec!["ALL".to_string()]),
                        ..Capabilities::default()
                    }),
                    ..SecurityContext::default()
                }),
                ..Container::default()
            }],
            ..PodSpec::default()
        }
    }

    fn container_context(pod: &mut PodSpec) -> &mut SecurityContext {
        pod.containers[0].security_context.get_or_insert_default()
    }

    #[test]
    fn a_restricted_pod_complies() {
        let pod = restricted_pod();
        assert_eq!(restricted_violations(&pod), Vec::<String>::new());
        let effective = EffectiveSecurity::of(&pod, &pod.containers[0]);
        assert_eq!(effective.run_as_non_root, Some(true));
        assert_eq!(effective.seccomp_profile.as_deref(), Some("RuntimeDefault"));
        assert_eq!(effective.capabilities_dropped, ["ALL"]);
    }

    #[test]
    fn container_settings_override_the_pod() {
        let mut pod = restricted_pod();
        container_context(&mut pod).run_as_non_root = Some(false);
        container_context(&mut pod).run_as_user = Some(1001);
        let effective = EffectiveSecurity::of(&pod, &pod.containers[0]);
        assert_eq!(effective.run_as_non_root, Some(false));
        assert_eq!(effective.run_as_user, Some(1001));
        assert_eq!(
            restricted_violations(&pod),
            ["container manager: runAsNonRoot must be true"]
        );
    }

    #[test]
    fn an_empty_pod_breaks_every_rule_that_has_no_safe_default() {
        let pod = PodSpec {
            containers: vec![Container {
                name: "app".to_string(),
                ..Container::default()
            }],
            ..PodSpec::default()
        };
        assert_eq!(
            restricted_violations(&pod),
            [
                "container app: allowPrivilegeEscalation must be false",
                "container app: runAsNonRoot must be true",
                "container app: seccompProfile.type must be RuntimeDefault or Localhost",
                "container app: capabilities.drop must include ALL",
            ]
        );
    }

    #[test]
    fn root_privileged_unconfined_and_added_capabilities_are_refused() {
        let mut pod = restricted_pod();
        let context = container_context(&mut pod);
        context.run_as_user = Some(0);
        context.privileged = Some(true);
        context.seccomp_profile = Some(SeccompProfile {
            type_: "Unconfined".to_string(),
            ..SeccompProfile::default()
        });
        context.capabilities = Some(Capabilities {
            add: Some(vec![
                "NET_BIND_SERVICE".to_string(),
                "SYS_ADMIN".to_string(),
            ]),
            drop: Some(vec!["ALL".to_string()]),
        });
        assert_eq!(
            restricted_violations(&pod),
            [
                "container manager: privileged must not be true",
                "container manager: runAsUser must not be 0",
                "container manager: seccompProfile.type must be RuntimeDefault or Localhost",
                "container manager: capabilities.add may only hold NET_BIND_SERVICE",
            ]
        );
    }

    #[test]
    fn init_containers_are_checked_too() {
        let mut pod = restricted_pod();
        pod.init_containers = Some(vec![Container {
            name: "setup".to_string(),
            ..Container::default()
        }]);
        let violations = restricted_violations(&pod);
        assert!(!violations.is_empty());
        assert!(
            violations
                .iter()
                .all(|v| v.starts_with("container setup: ")),
            "{violations:?}"
        );
    }
}
