//! What the project has, and the values of `values.yaml` that switch the chart's parts on.

/// What the project has, which decides the blocks of `values.yaml` and the switches.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Features {
    pub webhooks: bool,
    pub cert_manager: bool,
    /// config/default installs a ServiceMonitor (the user uncommented `../prometheus`).
    pub prometheus_by_default: bool,
    /// config/default installs the network policies.
    pub network_policy_by_default: bool,
    /// The manager's ServiceAccount is one of the objects (the `serviceAccount` values).
    pub service_account: bool,
    /// The manager's ports, as config/ sets them: the defaults of their values.
    pub ports: Ports,
    /// The manager's metrics server serves HTTPS (no `--metrics-secure=false` in config/).
    pub metrics_secure: bool,
}

/// The ports of the manager's servers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ports {
    /// `--metrics-bind-address`'s (kubebuilder's default 8443 when config/ turns metrics off).
    pub metrics: u16,
    /// `--health-probe-bind-address`'s.
    pub health: u16,
    /// The webhook server's (`--webhook-port`, or the `webhook-server` container port).
    pub webhook: u16,
}

impl Default for Ports {
    /// kubebuilder's and the manager's defaults.
    fn default() -> Self {
        Self {
            metrics: 8443,
            health: 8081,
            webhook: 9443,
        }
    }
}

/// The values the switches of the areas read.
pub const CRD: &str = ".Values.crd.enabled";
pub const HELPERS: &str = ".Values.rbac.helpers.enabled";
pub const METRICS: &str = ".Values.metrics.enabled";
pub const METRICS_SECURE: &str = ".Values.metrics.secure";
pub const WEBHOOK: &str = ".Values.webhook.enabled";
pub const CERT_MANAGER: &str = ".Values.certManager.enabled";
pub const PROMETHEUS: &str = ".Values.prometheus.enabled";
pub const NETWORK_POLICY: &str = ".Values.networkPolicy.enabled";
pub const RBAC_NAMESPACED: &str = ".Values.rbac.namespaced";
pub const SERVICE_ACCOUNT: &str = ".Values.serviceAccount.enabled";
/// The manager's Deployment: on unless `manager.enabled` is there and false (kubebuilder's test,
/// so that a values file without the key installs it).
pub const MANAGER: &str = "(or (not (hasKey .Values.manager \"enabled\")) .Values.manager.enabled)";

/// The values that set the ports.
pub const METRICS_PORT: &str = "{{ .Values.metrics.port }}";
pub const HEALTH_PORT: &str = "{{ .Values.manager.healthProbe.port }}";
pub const WEBHOOK_PORT: &str = "{{ .Values.webhook.port }}";
/// The metrics port's name in a Service or ServiceMonitor: `https` while secure.
pub const METRICS_SCHEME: &str = "{{ if .Values.metrics.secure }}https{{ else }}http{{ end }}";

/// `{{- if … }}` of all `conditions` (none: None).
pub fn all(conditions: &[&str]) -> Option<String> {
    match conditions {
        [] => None,
        [one] => Some((*one).to_string()),
        many => Some(format!("and {}", many.join(" "))),
    }
}
