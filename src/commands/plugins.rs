//! kubebuilder's plugin keys, as `--plugins` takes them on `init`, `create api` and `edit`: which
//! ones mean something here, and a one-line reason for those that do not.

use crate::names::InvalidInput;
use crate::project::LAYOUT;

use super::deploy_image;

/// What a `--plugins` key names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Plugin {
    /// kubebuilder's standard layout (`go/v4` and its parts) or this tool's own: the layout
    /// operator-rs writes, so nothing to do.
    Layout,
    /// The deploy-image plugin (`create api --image`).
    DeployImage,
}

/// Keys that name kubebuilder's go/v4 bundle or its parts (`go/v4` is
/// `base.go.kubebuilder.io/v4` + `kustomize.common.kubebuilder.io/v2`).
const LAYOUT_KEYS: &[&str] = &[
    "go/v4",
    "go.kubebuilder.io/v4",
    "base.go.kubebuilder.io/v4",
    "kustomize/v2",
    "kustomize.common.kubebuilder.io/v2",
    "rust/v1-alpha",
    LAYOUT,
];

/// Optional kubebuilder plugins that operator-rs does not have (yet).
const UNAVAILABLE: &[&str] = &[
    "grafana",
    "helm",
    "autoupdate",
    "kustomize/v1",
    "declarative",
];

/// Classifies one `--plugins` value; `flag_context` names the command for the error.
pub fn classify(key: &str, command: &str) -> Result<Plugin, InvalidInput> {
    let key = key.trim();
    if LAYOUT_KEYS.contains(&key) {
        return Ok(Plugin::Layout);
    }
    if [
        deploy_image::PLUGIN_SHORT,
        deploy_image::PLUGIN_KEY,
        "deploy-image.go.kubebuilder.io/v1-alpha",
    ]
    .contains(&key)
    {
        return Ok(Plugin::DeployImage);
    }
    let rule = if key.starts_with("go/v") || key.starts_with("go.kubebuilder.io/v") {
        "is an older kubebuilder Go layout; operator-rs writes the go/v4 layout (pass --plugins go/v4 or nothing)".to_string()
    } else if let Some(name) = UNAVAILABLE
        .iter()
        .find(|name| key.starts_with(*name) || key.split('.').next() == Some(**name))
    {
        format!(
            "is kubebuilder's {name} plugin, which operator-rs does not have; available for {command}: \
             go/v4 (this layout) and {} (create api --image)",
            deploy_image::PLUGIN_SHORT
        )
    } else {
        format!(
            "unknown plugin; available for {command}: go/v4 (this layout) and {} (create api --image)",
            deploy_image::PLUGIN_SHORT
        )
    };
    Err(InvalidInput::new("--plugins", key, rule))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kubebuilder_keys() {
        for key in [
            "go/v4",
            "go.kubebuilder.io/v4",
            "base.go.kubebuilder.io/v4",
            LAYOUT,
        ] {
            assert_eq!(classify(key, "init"), Ok(Plugin::Layout), "{key}");
        }
        for key in [
            "deploy-image/v1-alpha",
            "deploy-image.go.kubebuilder.io/v1-alpha",
            deploy_image::PLUGIN_KEY,
        ] {
            assert_eq!(classify(key, "edit"), Ok(Plugin::DeployImage), "{key}");
        }
        let err = classify("grafana.kubebuilder.io/v1-alpha", "edit").unwrap_err();
        assert!(err.to_string().contains("grafana plugin"), "{err}");
        let err = classify("go/v3", "init").unwrap_err();
        assert!(err.to_string().contains("older"), "{err}");
        assert!(classify("nope/v1", "init").is_err());
    }
}
