//! operator-framework/api's `BundleValidator`: the owned CRDs and the bundle's CRDs are the
//! same group/version/kinds (other versions of an owned kind aside), no service account of the
//! bundle is one OLM creates for a deployment, the bundle fits in OLM's ConfigMap (1 MiB
//! gzipped), a bundle with a release version is named after it, related images are images.

use std::collections::{BTreeMap, BTreeSet};

use super::Report;
use super::fields::{gvk_text, list, text};
use super::load::{Bundle, Typed};
use crate::image_ref;

/// The largest bundle OLM stores (in one ConfigMap): 1 MiB, gzipped and base64-encoded.
pub const MAX_BUNDLE_SIZE: u64 = 1 << 20;

pub fn check(bundle: &Bundle, csv: &Typed, report: &mut Report) {
    check_owned_crds(bundle, csv, report);
    check_service_accounts(bundle, csv, report);
    check_size(bundle, report);
    check_name(bundle, csv, report);
    check_related_images(csv, report);
}

type Gvk = (String, String, String);

/// Every group/version/kind of the bundle's CRDs (v1beta1's `spec.version` when it lists no
/// versions), with its file.
fn bundle_crd_keys(bundle: &Bundle) -> Vec<(Gvk, String)> {
    let mut keys = Vec::new();
    for crd in &bundle.crds {
        let group = text(&crd.value, &["spec", "group"]).to_string();
        let kind = text(&crd.value, &["spec", "names", "kind"]).to_string();
        let versions = list(&crd.value, &["spec", "versions"]);
        if versions.is_empty() {
            let version = text(&crd.value, &["spec", "version"]);
            if text(&crd.value, &["apiVersion"]).ends_with("v1beta1") {
                keys.push((
                    (group.clone(), version.to_string(), kind.clone()),
                    crd.file.clone(),
                ));
            }
        }
        for version in versions {
            keys.push((
                (
                    group.clone(),
                    text(version, &["name"]).to_string(),
                    kind.clone(),
                ),
                crd.file.clone(),
            ));
        }
    }
    keys
}

/// The owned CRDs' group/version/kinds: the group is the CRD name after its plural.
pub fn owned_keys(csv: &Typed) -> Vec<Gvk> {
    list(&csv.value, &["spec", "customresourcedefinitions", "owned"])
        .iter()
        .map(|owned| {
            let name = text(owned, &["name"]);
            let group = name.split_once('.').map_or(name, |(_, g)| g);
            (
                group.to_string(),
                text(owned, &["version"]).to_string(),
                text(owned, &["kind"]).to_string(),
            )
        })
        .collect()
}

fn check_owned_crds(bundle: &Bundle, csv: &Typed, report: &mut Report) {
    let name = bundle.name();
    let mut in_bundle: BTreeMap<Gvk, String> = BTreeMap::new();
    for (key, file) in bundle_crd_keys(bundle) {
        if in_bundle.contains_key(&key) {
            report.error(
                &file,
                format!(
                    "duplicate CRD {:?} in bundle {name:?}",
                    gvk_text(&key.0, &key.1, &key.2)
                ),
            );
        }
        in_bundle.insert(key, file);
    }
    let mut owned_kinds = BTreeSet::new();
    for key in owned_keys(csv) {
        if in_bundle.remove(&key).is_none() {
            report.error(
                format!("{}: spec.customresourcedefinitions.owned", csv.file),
                format!(
                    "owned CRD {:?} not found in bundle {name:?}",
                    gvk_text(&key.0, &key.1, &key.2)
                ),
            );
        } else {
            owned_kinds.insert((key.0, key.2));
        }
    }
    for ((group, version, kind), file) in in_bundle {
        // Other versions of an owned kind need no entry of their own.
        if owned_kinds.contains(&(group.clone(), kind.clone())) {
            continue;
        }
        report.error(
            file,
            format!(
                "CRD {:?} is present in bundle {name:?} but not defined in CSV (spec.customresourcedefinitions.owned)",
                gvk_text(&group, &version, &kind)
            ),
        );
    }
}

/// OLM creates the service accounts the CSV's deployments run as; one in the bundle collides.
fn check_service_accounts(bundle: &Bundle, csv: &Typed, report: &mut Report) {
    let accounts: BTreeSet<&str> = list(&csv.value, &["spec", "install", "spec", "deployments"])
        .iter()
        .map(|d| text(d, &["spec", "template", "spec", "serviceAccountName"]))
        .collect();
    for object in &bundle.objects {
        if object.kind == "ServiceAccount"
            && object.api_version == "v1"
            && accounts.contains(object.name.as_str())
        {
            report.error(
                &object.file,
                format!(
                    "invalid service account found in bundle. This service account {} in your bundle is not valid, because a service account with the same name was already specified in your CSV (OLM creates it). Remove it from the bundle, or rename one of them.",
                    object.name
                ),
            );
        }
    }
}

fn check_size(bundle: &Bundle, report: &mut Report) {
    let at = format!("{}/", bundle.manifests);
    let describe = || {
        format!(
            "size=~{} , max={}. Bundle uncompressed size is {}",
            bytes(bundle.compressed_size),
            bytes(MAX_BUNDLE_SIZE),
            bytes(bundle.size)
        )
    };
    if bundle.compressed_size == 0 {
        report.warn(at, "unable to check the bundle compressed size");
    } else if bundle.compressed_size > MAX_BUNDLE_SIZE {
        report.error(
            at,
            format!(
                "maximum bundle compressed size with gzip size exceeded: {}",
                describe()
            ),
        );
    } else if bundle.compressed_size as f64 > MAX_BUNDLE_SIZE as f64 * 0.85 {
        report.warn(
            at,
            format!(
                "nearing maximum bundle compressed size with gzip: {}",
                describe()
            ),
        );
    }
}

/// Bytes as the peer prints them: `948.6 kB`, `1.0 MB`.
fn bytes(b: u64) -> String {
    if b < 1000 {
        return format!("{b} B");
    }
    let mut div = 1000u64;
    let mut exp = 0;
    let mut n = b / 1000;
    while n >= 1000 {
        div *= 1000;
        exp += 1;
        n /= 1000;
    }
    format!(
        "{:.1} {}B",
        b as f64 / div as f64,
        "kMGTPE".as_bytes()[exp] as char
    )
}

/// A bundle with `spec.release` is named `<package>-v<version>-<release>`.
fn check_name(bundle: &Bundle, csv: &Typed, report: &mut Report) {
    let release = text(&csv.value, &["spec", "release"]);
    if release.is_empty() {
        return;
    }
    let version = text(&csv.value, &["spec", "version"]);
    let version = crate::gosemver::Version::parse_tolerant(version)
        .map(|v| v.to_string())
        .unwrap_or_else(|_| "0.0.0".into());
    let expected = format!("{}-v{version}-{release}", bundle.package());
    if bundle.name() != expected {
        report.error(
            format!("{}: metadata.name", csv.file),
            format!(
                "bundle name with release versioning {:?} does not match expected name {expected:?}",
                bundle.name()
            ),
        );
    }
}

fn check_related_images(csv: &Typed, report: &mut Report) {
    for (i, related) in list(&csv.value, &["spec", "relatedImages"])
        .iter()
        .enumerate()
    {
        let at = format!("{}: spec.relatedImages[{i}].image", csv.file);
        let image = text(related, &["image"]);
        if image.is_empty() {
            report.error(at, format!("relatedImages[{i}] has an empty image field"));
        } else if let Err(err) = image_ref::parse(image) {
            report.error(
                at,
                format!("relatedImages[{i}] has an invalid image pullspec {image:?}: {err}"),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::bytes;

    /// The figures of operator-framework/api's TestBundleSize.
    #[test]
    fn sizes_are_printed_as_the_peer_prints_them() {
        assert_eq!(bytes(948_576), "948.6 kB");
        assert_eq!(bytes(1 << 20), "1.0 MB");
        assert_eq!(bytes(9_485_760), "9.5 MB");
        assert_eq!(bytes(999), "999 B");
    }
}
