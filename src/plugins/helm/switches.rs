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
}

/// The values the switches of the areas read.
pub const CRD: &str = ".Values.crd.enabled";
pub const HELPERS: &str = ".Values.rbac.helpers.enabled";
pub const METRICS: &str = ".Values.metrics.enabled";
pub const WEBHOOK: &str = ".Values.webhook.enabled";
pub const CERT_MANAGER: &str = ".Values.certManager.enabled";
pub const PROMETHEUS: &str = ".Values.prometheus.enabled";
pub const NETWORK_POLICY: &str = ".Values.networkPolicy.enabled";
