//! The bundle's metadata: `bundle/metadata/annotations.yaml` and the labels of
//! `bundle.Dockerfile`, which must say the same thing. Both come from one table, with
//! operator-sdk's keys, so they cannot disagree.

use anyhow::{Result, bail};

/// The prefix of every bundle annotation and label.
pub const PREFIX: &str = "operators.operatorframework.io.";
pub const MEDIATYPE: &str = "operators.operatorframework.io.bundle.mediatype.v1";
pub const MANIFESTS: &str = "operators.operatorframework.io.bundle.manifests.v1";
pub const METADATA: &str = "operators.operatorframework.io.bundle.metadata.v1";
pub const PACKAGE: &str = "operators.operatorframework.io.bundle.package.v1";
pub const CHANNELS: &str = "operators.operatorframework.io.bundle.channels.v1";
pub const DEFAULT_CHANNEL: &str = "operators.operatorframework.io.bundle.channel.default.v1";
const BUILDER: &str = "operators.operatorframework.io.metrics.builder";
const METRICS_MEDIATYPE: &str = "operators.operatorframework.io.metrics.mediatype.v1";
const PROJECT_LAYOUT: &str = "operators.operatorframework.io.metrics.project_layout";
const TEST_MEDIATYPE: &str = "operators.operatorframework.io.test.mediatype.v1";
const TEST_CONFIG: &str = "operators.operatorframework.io.test.config.v1";

/// The only bundle format OLM installs (a CSV, CRDs and other objects in `manifests/`).
pub const REGISTRY_V1: &str = "registry+v1";

/// Where the bundle image keeps each part (the annotations say the same).
pub const MANIFESTS_DIR: &str = "manifests/";
pub const METADATA_DIR: &str = "metadata/";
pub const SCORECARD_DIR: &str = "tests/scorecard/";

/// The tool that builds a bundle, which its annotations name as operator-sdk names itself:
/// `operators.operatorframework.io.metrics.builder` (and the CSV's
/// `operators.operatorframework.io/builder`) and `...metrics.project_layout`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Builder {
    /// The tool and its version, e.g. `operator-rs-v0.2.0` (operator-sdk: `operator-sdk-v1.39.1`).
    pub name: String,
    /// The project layout it scaffolds, e.g. `rust.operator-rs.io/v1-alpha` (operator-sdk:
    /// `go.kubebuilder.io/v4`).
    pub project_layout: String,
}

/// What a bundle is published as: its package and channels.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Channels {
    pub package: String,
    pub channels: Vec<String>,
    pub default_channel: Option<String>,
}

impl Channels {
    /// Checks the names the way OLM's catalogs need them; `default` must be one of `channels`.
    pub fn new(package: &str, channels: Vec<String>, default: Option<String>) -> Result<Self> {
        check_name("--package", package)?;
        if channels.is_empty() {
            bail!("--channels: at least one channel is needed (operator-sdk's default is alpha)");
        }
        for channel in &channels {
            check_name("--channels", channel)?;
        }
        if let Some(default) = &default
            && !channels.contains(default)
        {
            bail!(
                "--default-channel {default:?} is not one of the bundle's channels ({})",
                channels.join(",")
            );
        }
        Ok(Self {
            package: package.to_string(),
            channels,
            default_channel: default,
        })
    }

    /// Every annotation, in the order operator-sdk writes them: `(key, value)`, with the
    /// comment that starts each group; the scorecard's only when the bundle has its
    /// configuration (`tests/scorecard/config.yaml`), as operator-sdk does.
    fn entries(
        &self,
        builder: &Builder,
        scorecard: bool,
    ) -> Vec<(Option<&'static str>, &'static str, String)> {
        let mut out = vec![
            (
                Some("Core bundle annotations."),
                MEDIATYPE,
                REGISTRY_V1.to_string(),
            ),
            (None, MANIFESTS, MANIFESTS_DIR.to_string()),
            (None, METADATA, METADATA_DIR.to_string()),
            (None, PACKAGE, self.package.clone()),
            (None, CHANNELS, self.channels.join(",")),
        ];
        if let Some(default) = &self.default_channel {
            out.push((None, DEFAULT_CHANNEL, default.clone()));
        }
        out.extend([
            (None, BUILDER, builder.name.clone()),
            (None, METRICS_MEDIATYPE, "metrics+v1".to_string()),
            (None, PROJECT_LAYOUT, builder.project_layout.clone()),
        ]);
        if scorecard {
            out.extend([
                (
                    Some("Annotations for testing."),
                    TEST_MEDIATYPE,
                    "scorecard+v1".to_string(),
                ),
                (None, TEST_CONFIG, SCORECARD_DIR.to_string()),
            ]);
        }
        out
    }

    /// `<bundle>/metadata/annotations.yaml`, of a bundle that `builder` builds; `scorecard`:
    /// the bundle has the scorecard's configuration.
    pub fn annotations_yaml(&self, builder: &Builder, scorecard: bool) -> String {
        let mut out = String::from("annotations:\n");
        for (comment, key, value) in self.entries(builder, scorecard) {
            if let Some(comment) = comment {
                out.push_str(&format!("  # {comment}\n"));
            }
            out.push_str(&format!("  {key}: {}\n", yaml_scalar(&value)));
        }
        out
    }

    /// `bundle.Dockerfile`: a scratch image with the files of the bundle folder `bundle_dir`
    /// (relative to the project, where the image is built) where the labels say, of a bundle
    /// that `builder` builds.
    pub fn dockerfile(&self, builder: &Builder, bundle_dir: &str, scorecard: bool) -> String {
        let mut out = String::from("FROM scratch\n");
        for (comment, key, value) in self.entries(builder, scorecard) {
            if let Some(comment) = comment {
                let comment = comment
                    .replace("annotations", "labels")
                    .replace("Annotations", "Labels");
                out.push_str(&format!("\n# {comment}\n"));
            }
            out.push_str(&format!("LABEL {key}={value}\n"));
        }
        out.push_str("\n# Copy files to locations specified by labels.\n");
        let parts = [MANIFESTS_DIR, METADATA_DIR, SCORECARD_DIR];
        for dir in &parts[..if scorecard { 3 } else { 2 }] {
            out.push_str(&format!(
                "COPY {bundle_dir}/{} /{dir}\n",
                dir.trim_end_matches('/')
            ));
        }
        out
    }
}

/// Package and channel names: lowercase letters, digits, `-` and `.`, starting and ending with
/// a letter or digit, at most 63 characters (they end up in labels and object names).
pub fn check_name(what: &str, name: &str) -> Result<()> {
    let valid_chars = name
        .chars()
        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '.');
    let ends_ok = name.starts_with(|c: char| c.is_ascii_alphanumeric())
        && name.ends_with(|c: char| c.is_ascii_alphanumeric());
    if name.is_empty() || name.len() > 63 || !valid_chars || !ends_ok {
        bail!(
            "{what} {name:?} is not a valid name: use 1 to 63 lowercase letters, digits, '-' and '.', starting and ending with a letter or digit"
        );
    }
    Ok(())
}

/// A value as YAML writes it: quoted only when plain text would read as something else.
fn yaml_scalar(value: &str) -> String {
    serde_yaml::to_string(value)
        .expect("strings serialize")
        .trim_end()
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn channels() -> Channels {
        Channels::new(
            "memcached-operator",
            vec!["alpha".into(), "stable".into()],
            Some("stable".into()),
        )
        .unwrap()
    }

    #[test]
    fn annotations_and_labels_say_the_same() {
        let meta = channels();
        let builder = Builder {
            name: "operator-rs-v0.2.0".into(),
            project_layout: "rust.operator-rs.io/v1-alpha".into(),
        };
        let annotations = meta.annotations_yaml(&builder, true);
        let dockerfile = meta.dockerfile(&builder, "bundle", true);
        let parsed: serde_yaml::Value = serde_yaml::from_str(&annotations).unwrap();
        let map = parsed["annotations"].as_mapping().unwrap();
        assert_eq!(map.len(), 11);
        for (key, value) in map {
            let label = format!(
                "LABEL {}={}\n",
                key.as_str().unwrap(),
                value.as_str().unwrap()
            );
            assert!(
                dockerfile.contains(&label),
                "{label} missing from\n{dockerfile}"
            );
        }
        assert_eq!(
            parsed["annotations"][CHANNELS].as_str(),
            Some("alpha,stable")
        );
        assert!(dockerfile.contains("COPY bundle/tests/scorecard /tests/scorecard/\n"));
    }

    #[test]
    fn without_a_scorecard_configuration_nothing_names_it() {
        let meta = channels();
        let builder = Builder {
            name: "operator-rs-v0.2.0".into(),
            project_layout: "rust.operator-rs.io/v1-alpha".into(),
        };
        let dockerfile = meta.dockerfile(&builder, "out/bundle", false);
        assert!(!meta.annotations_yaml(&builder, false).contains("scorecard"));
        assert!(!dockerfile.contains("scorecard"), "{dockerfile}");
        assert!(dockerfile.ends_with(
            "COPY out/bundle/manifests /manifests/\nCOPY out/bundle/metadata /metadata/\n"
        ));
    }

    #[test]
    fn the_default_channel_must_be_a_channel() {
        let err = Channels::new("demo", vec!["alpha".into()], Some("beta".into())).unwrap_err();
        assert_eq!(
            err.to_string(),
            "--default-channel \"beta\" is not one of the bundle's channels (alpha)"
        );
    }

    #[test]
    fn names_are_checked() {
        for bad in ["", "Alpha", "-a", "a_b", "a b", &"a".repeat(64)] {
            assert!(check_name("--channels", bad).is_err(), "{bad:?}");
        }
        for good in ["alpha", "stable-v1.2", "a"] {
            check_name("--channels", good).unwrap();
        }
    }
}
