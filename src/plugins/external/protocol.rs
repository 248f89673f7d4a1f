//! kubebuilder's external plugin protocol (its `pkg/plugin/external` types): a
//! [`PluginRequest`] as JSON on the plugin's stdin, a [`PluginResponse`] as JSON on its stdout,
//! with kubebuilder's field names, so that a plugin written for kubebuilder reads and answers
//! operator-rs the same way.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The only version of the protocol kubebuilder speaks.
pub const API_VERSION: &str = "v1alpha1";

/// What operator-rs tells the plugin.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PluginRequest {
    pub api_version: String,
    /// The flags of the command line, as kubebuilder passes them: every `--flag` and the value
    /// after it, `--plugins` left out.
    pub args: Vec<String>,
    /// `init`, `create api`, `create webhook`, `edit`, or `flags` and `metadata` (with the
    /// subcommand as `--init` … in `args`).
    pub command: String,
    /// The project's files by path, as the plugins before this one leave them.
    pub universe: BTreeMap<String, String>,
    /// The keys of the plugins of the command, in order.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub plugin_chain: Vec<String>,
    /// PROJECT, as a map (absent before there is one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub config: Option<serde_json::Value>,
}

impl PluginRequest {
    pub fn new(command: &str, args: Vec<String>) -> Self {
        Self {
            api_version: API_VERSION.into(),
            args,
            command: command.into(),
            universe: BTreeMap::new(),
            plugin_chain: Vec::new(),
            config: None,
        }
    }
}

/// What the plugin answers. Every field may be missing, as Go's zero values.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct PluginResponse {
    pub api_version: String,
    pub command: String,
    pub metadata: Metadata,
    /// The project's files after the plugin: the ones it was given, changed or not, and its own.
    pub universe: Option<BTreeMap<String, String>>,
    pub error: bool,
    pub error_msgs: Vec<String>,
    pub flags: Vec<Flag>,
}

/// The help of a subcommand (kubebuilder's `plugin.SubcommandMetadata`, whose Go fields have no
/// JSON names: a Go plugin writes `Description`, others `description`).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Metadata {
    #[serde(alias = "Description")]
    pub description: String,
    #[serde(alias = "Examples")]
    pub examples: String,
}

/// A flag the plugin takes (kubebuilder's `external.Flag`, fields without JSON names).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Flag {
    #[serde(alias = "Name")]
    pub name: String,
    /// `string`, `bool`, `int` or `float`; anything else is a string.
    #[serde(alias = "Type", rename = "type")]
    pub kind: String,
    #[serde(alias = "Default")]
    pub default: String,
    #[serde(alias = "Usage")]
    pub usage: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_have_kubebuilders_field_names() {
        let mut request = PluginRequest::new("init", vec!["--domain".into(), "my.domain".into()]);
        request.plugin_chain = vec!["sampleexternalplugin/v1".into()];
        let json = serde_json::to_value(&request).unwrap();
        assert_eq!(
            json,
            serde_json::json!({
                "apiVersion": "v1alpha1",
                "args": ["--domain", "my.domain"],
                "command": "init",
                "universe": {},
                "pluginChain": ["sampleexternalplugin/v1"],
            })
        );
    }

    #[test]
    fn responses_are_read_as_go_writes_them_and_as_the_docs_do() {
        // kubebuilder's docs (external-plugins.md), lower-case metadata.
        let docs: PluginResponse = serde_json::from_str(
            r#"{"apiVersion":"v1alpha1","command":"edit","metadata":{"description":"d","examples":"e"},
               "universe":{"a.yaml":"x"},"error":false,"errorMsgs":[]}"#,
        )
        .unwrap();
        assert_eq!(docs.metadata.description, "d");
        assert_eq!(docs.universe.unwrap()["a.yaml"], "x");
        // Go's encoding/json of kubebuilder's types: capitalized fields without tags.
        let go: PluginResponse = serde_json::from_str(
            r#"{"apiVersion":"v1alpha1","command":"flags","metadata":{"Description":"","Examples":""},
               "universe":null,"flags":[{"Name":"prometheus-namespace","Type":"string",
               "Default":"monitoring-system","Usage":"u"}]}"#,
        )
        .unwrap();
        assert_eq!(go.flags[0].name, "prometheus-namespace");
        assert_eq!(go.flags[0].default, "monitoring-system");
        assert!(go.universe.is_none());
    }
}
