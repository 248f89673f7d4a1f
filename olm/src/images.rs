//! The images a bundle runs besides the manager's, for the CSV's `relatedImages` (what
//! disconnected installs mirror), and the digest check of `generate bundle --use-image-digests`.
//!
//! Related images come from the managers' environment, as operator-sdk finds them: variables
//! named `RELATED_IMAGE_<NAME>` (operator-sdk's convention), and the `<KIND>_IMAGE` variables
//! through which the deploy-image plugin's controllers get their operand's image. Resolving a
//! tag to a digest needs a registry, which operator-rs does not reach: an image given by digest
//! (`name@sha256:…`) is kept as it is, and `--use-image-digests` refuses a bundle with an image
//! given by tag, naming it.

use serde_yaml::Value;

pub use super::csv::RelatedImage as Related;
use super::image_ref;
use super::yaml::str_at;

const RELATED_PREFIX: &str = "RELATED_IMAGE_";
const IMAGE_SUFFIX: &str = "_IMAGE";

/// The containers (and init containers) of a Deployment's pod template.
fn containers(spec: &Value) -> impl Iterator<Item = &Value> {
    ["containers", "initContainers"]
        .into_iter()
        .flat_map(move |key| {
            spec.get("template")
                .and_then(|t| t.get("spec"))
                .and_then(|s| s.get(key))
                .and_then(Value::as_sequence)
                .into_iter()
                .flatten()
        })
}

/// The images the managers' environment names: `RELATED_IMAGE_FOO_BAR` is `foo-bar`,
/// `MEMCACHED_IMAGE` (deploy-image) is `memcached`. Values that are no image reference, and
/// variables filled from elsewhere (`valueFrom`), are skipped. One entry per image.
pub fn from_environment(deployment_specs: &[&Value]) -> Vec<Related> {
    let mut out: Vec<Related> = Vec::new();
    for spec in deployment_specs {
        for container in containers(spec) {
            for env in container
                .get("env")
                .and_then(Value::as_sequence)
                .into_iter()
                .flatten()
            {
                let (Some(name), Some(image)) = (str_at(env, &["name"]), str_at(env, &["value"]))
                else {
                    continue;
                };
                let short = if let Some(rest) = name.strip_prefix(RELATED_PREFIX) {
                    rest
                } else if let Some(rest) = name.strip_suffix(IMAGE_SUFFIX) {
                    rest
                } else {
                    continue;
                };
                if short.is_empty() || image_ref::parse(image).is_err() {
                    continue;
                }
                if out.iter().any(|r| r.image == image) {
                    continue;
                }
                out.push(Related {
                    name: short.to_lowercase().replace('_', "-"),
                    image: image.to_string(),
                });
            }
        }
    }
    out
}

/// Every container image of the Deployments.
pub fn container_images(deployment_specs: &[&Value]) -> Vec<(String, String)> {
    deployment_specs
        .iter()
        .flat_map(|spec| containers(spec))
        .filter_map(|c| {
            Some((
                str_at(c, &["name"])?.to_string(),
                str_at(c, &["image"])?.to_string(),
            ))
        })
        .collect()
}

/// The base's `relatedImages` followed by `found` (images the base already lists are not
/// repeated; a name the base uses for another image gets a number).
pub fn merge(base: &[Related], found: &[Related]) -> Vec<Related> {
    let mut items = base.to_vec();
    for related in found {
        if items.iter().any(|i| i.image == related.image) {
            continue;
        }
        let mut name = related.name.clone();
        let mut n = 2;
        while items.iter().any(|i| i.name == name) {
            name = format!("{}-{n}", related.name);
            n += 1;
        }
        items.push(Related {
            name,
            image: related.image.clone(),
        });
    }
    items
}

/// The images not pinned by digest, for `--use-image-digests`.
pub fn unpinned<'a>(images: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    let mut out: Vec<String> = images
        .into_iter()
        .filter(|image| image_ref::parse(image).map_or(true, |r| r.digest.is_none()))
        .map(str::to_string)
        .collect();
    out.sort();
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const DIGEST: &str = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

    fn deployment() -> Value {
        serde_yaml::from_str(&format!(
            r#"
template:
  spec:
    containers:
    - name: manager
      image: example.com/op@{DIGEST}
      env:
      - {{name: MEMCACHED_IMAGE, value: "memcached:1.6.26-alpine3.19"}}
      - {{name: RELATED_IMAGE_BUSY_BOX, value: "busybox@{DIGEST}"}}
      - {{name: WATCH_NAMESPACE, valueFrom: {{fieldRef: {{fieldPath: metadata.namespace}}}}}}
      - {{name: LOG_IMAGE, value: "not an image"}}
"#
        ))
        .unwrap()
    }

    #[test]
    fn related_images_come_from_the_environment() {
        let spec = deployment();
        let found = from_environment(&[&spec]);
        assert_eq!(
            found,
            [
                Related {
                    name: "memcached".into(),
                    image: "memcached:1.6.26-alpine3.19".into()
                },
                Related {
                    name: "busy-box".into(),
                    image: format!("busybox@{DIGEST}")
                },
            ]
        );
        let base = [Related {
            name: "memcached".into(),
            image: "memcached:1.5".into(),
        }];
        let merged = merge(&base, &found);
        let names: Vec<_> = merged.iter().map(|i| i.name.as_str()).collect();
        assert_eq!(names, ["memcached", "memcached-2", "busy-box"]);
    }

    #[test]
    fn tags_are_not_digests() {
        let spec = deployment();
        let mut images: Vec<String> = container_images(&[&spec])
            .into_iter()
            .map(|(_, i)| i)
            .collect();
        images.extend(from_environment(&[&spec]).into_iter().map(|r| r.image));
        assert_eq!(
            unpinned(images.iter().map(String::as_str)),
            ["memcached:1.6.26-alpine3.19"]
        );
    }
}
