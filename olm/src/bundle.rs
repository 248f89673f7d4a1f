//! `generate bundle`: from the objects `kustomize build config/manifests` renders (the CSV base,
//! `config/default`, the samples, the scorecard configuration) to the files of an OLM bundle.
//!
//! This is a pure function of the rendered objects and the options; the command reads and
//! writes. What each rendered object becomes is decided by one table (`placement`): part of the
//! CSV, a file of its own in `bundle/manifests/`, something OLM does itself (left out), or an
//! error for kinds OLM cannot install from a bundle.

use std::collections::{BTreeMap, BTreeSet};

use anyhow::{Context as _, Result, bail};
use serde_yaml::{Mapping, Value};

use super::csv::{
    ClusterServiceVersion, CrdDescription, DeploymentSpec, Permission, WebhookDescription,
    WebhookType,
};
use super::descriptors;
use super::metadata::{Builder, Channels};
use super::yaml::{ObjectId, str_at, to_yaml, value_at};

/// Where OLM mounts the webhook serving certificate it makes (`tls.crt`, `tls.key`) in the
/// manager's pod: controller-runtime's default folder, which the runtime's webhook server
/// reads too (`--webhook-cert-path` in `config/default/manager_webhook_patch.yaml`).
pub const OLM_WEBHOOK_CERT_DIR: &str = "/tmp/k8s-webhook-server/serving-certs";

/// The annotation through which cert-manager injects CA bundles; OLM injects them instead.
const CERT_MANAGER_INJECT: &str = "cert-manager.io/inject-ca-from";

/// What OLM does with a Service port when a webhook names none (the API server's default).
const DEFAULT_SERVICE_PORT: i64 = 443;

/// The options of one bundle.
#[derive(Debug, Clone)]
pub struct Options {
    /// The CSV's version (and name); None keeps the base's (operator-sdk's `--version` unset).
    pub version: Option<semver::Version>,
    pub channels: Channels,
    /// The bundle's folder, relative to the project (`--output-dir`, by default `bundle`).
    pub dir: String,
    /// The CSV this one upgrades (`<package>.v<version>`); else the base's `spec.replaces`.
    pub replaces: Option<String>,
    /// `olm.skipRange`: the versions this one may replace directly, e.g. `<0.0.2`.
    pub skip_range: Option<String>,
    /// Service accounts besides the managers' whose roles go into the CSV's permissions
    /// (operator-sdk's `--extra-service-accounts`): OLM creates and binds them too.
    pub extra_service_accounts: Vec<String>,
    /// Every image must be pinned by digest (`--use-image-digests`).
    pub use_image_digests: bool,
    /// The tool building the bundle, named in the CSV's and the bundle's annotations.
    pub builder: Builder,
}

/// One file of the bundle, relative to the project root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct File {
    pub path: String,
    pub contents: String,
}

/// A bundle's files, in operator-sdk's two parts (`generate bundle --manifests`, `--metadata`).
#[derive(Debug, Clone)]
pub struct Bundle {
    /// `<dir>/manifests/`: the CSV first, the CRDs, the other objects; and the scorecard's
    /// configuration, `<dir>/tests/scorecard/config.yaml`, when there is one.
    pub manifests: Vec<File>,
    /// `<dir>/metadata/annotations.yaml` and `bundle.Dockerfile`.
    pub metadata: Vec<File>,
}

/// The bundle's metadata: its annotations and the Dockerfile of its image, which copies the
/// scorecard's folder when `scorecard` (the bundle has its configuration).
pub fn metadata(channels: &Channels, builder: &Builder, dir: &str, scorecard: bool) -> Vec<File> {
    vec![
        File {
            path: format!("{dir}/metadata/annotations.yaml"),
            contents: channels.annotations_yaml(builder, scorecard),
        },
        File {
            path: DOCKERFILE.into(),
            contents: channels.dockerfile(builder, dir, scorecard),
        },
    ]
}

pub const BUNDLE_DIR: &str = "bundle";
pub const DOCKERFILE: &str = "bundle.Dockerfile";

/// What becomes of a rendered object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Placement {
    Csv,
    Crd,
    Deployment,
    /// Rules for the CSV's permissions when bound to a manager's service account, else a file.
    Role,
    /// Consumed when it binds a manager's service account (OLM binds it), else a file.
    Binding,
    /// Left out when it is a manager's (OLM creates it), else a file.
    ServiceAccount,
    /// Left out when webhooks use it (OLM makes the webhook Service), else a file.
    Service,
    WebhookConfiguration,
    Scorecard,
    /// A file of its own in `bundle/manifests/`.
    File,
    /// Left out, for the reason given: OLM does this itself.
    Dropped(&'static str),
}

/// Kinds OLM installs from a bundle besides the CSV and CRDs (operator-registry's supported
/// kinds), and what happens to the kinds kustomize renders for `make deploy` that OLM replaces.
const KINDS: &[(&str, &str, Placement)] = &[
    (
        "operators.coreos.com",
        "ClusterServiceVersion",
        Placement::Csv,
    ),
    (
        "apiextensions.k8s.io",
        "CustomResourceDefinition",
        Placement::Crd,
    ),
    ("apps", "Deployment", Placement::Deployment),
    ("rbac.authorization.k8s.io", "Role", Placement::Role),
    ("rbac.authorization.k8s.io", "ClusterRole", Placement::Role),
    (
        "rbac.authorization.k8s.io",
        "RoleBinding",
        Placement::Binding,
    ),
    (
        "rbac.authorization.k8s.io",
        "ClusterRoleBinding",
        Placement::Binding,
    ),
    ("", "ServiceAccount", Placement::ServiceAccount),
    ("", "Service", Placement::Service),
    (
        "admissionregistration.k8s.io",
        "MutatingWebhookConfiguration",
        Placement::WebhookConfiguration,
    ),
    (
        "admissionregistration.k8s.io",
        "ValidatingWebhookConfiguration",
        Placement::WebhookConfiguration,
    ),
    (
        "scorecard.operatorframework.io",
        "Configuration",
        Placement::Scorecard,
    ),
    ("", "ConfigMap", Placement::File),
    ("", "Secret", Placement::File),
    ("monitoring.coreos.com", "ServiceMonitor", Placement::File),
    ("monitoring.coreos.com", "PrometheusRule", Placement::File),
    ("policy", "PodDisruptionBudget", Placement::File),
    ("scheduling.k8s.io", "PriorityClass", Placement::File),
    (
        "autoscaling.k8s.io",
        "VerticalPodAutoscaler",
        Placement::File,
    ),
    ("networking.k8s.io", "NetworkPolicy", Placement::File),
    ("console.openshift.io", "ConsoleYAMLSample", Placement::File),
    ("console.openshift.io", "ConsoleQuickStart", Placement::File),
    (
        "console.openshift.io",
        "ConsoleCLIDownload",
        Placement::File,
    ),
    ("console.openshift.io", "ConsoleLink", Placement::File),
    (
        "",
        "Namespace",
        Placement::Dropped("OLM installs into the namespace of the OperatorGroup"),
    ),
    (
        "cert-manager.io",
        "Certificate",
        Placement::Dropped("OLM makes the webhook certificates"),
    ),
    (
        "cert-manager.io",
        "Issuer",
        Placement::Dropped("OLM makes the webhook certificates"),
    ),
    (
        "cert-manager.io",
        "ClusterIssuer",
        Placement::Dropped("OLM makes the webhook certificates"),
    ),
];

fn placement(id: &ObjectId) -> Option<Placement> {
    KINDS
        .iter()
        .find(|(group, kind, _)| id.is(group, kind))
        .map(|&(_, _, placement)| placement)
}

/// The bundle for `objects`, kustomize's rendering of `config/manifests`.
pub fn generate(objects: &[Value], options: &Options) -> Result<Bundle> {
    let rendered = Rendered::classify(objects)?;
    let manager_accounts = manager_accounts(&rendered, options)?;
    let csv = cluster_service_version(&rendered, options, &manager_accounts)?;
    let files = manifest_files(&rendered, &csv, &manager_accounts, options)?;
    let metadata = metadata(
        &options.channels,
        &options.builder,
        &options.dir,
        rendered.scorecard.is_some(),
    );
    check_paths(&options.dir, &files, &metadata)?;
    Ok(Bundle {
        manifests: files,
        metadata,
    })
}

/// The service accounts the managers run as, and those `--extra-service-accounts` adds (each
/// must be a service account name).
fn manager_accounts(rendered: &Rendered, options: &Options) -> Result<BTreeSet<String>> {
    let mut manager_accounts = rendered.manager_accounts();
    for account in &options.extra_service_accounts {
        if let Some(err) = super::k8s_names::dns1123_subdomain(account).first() {
            bail!("--extra-service-accounts {account:?} is not a service account name: {err}");
        }
        manager_accounts.insert(account.clone());
    }
    Ok(manager_accounts)
}

/// The base CSV with the version, upgrade path, examples, builder annotations, owned CRDs,
/// install strategy, related images, permissions and webhooks of this bundle.
fn cluster_service_version(
    rendered: &Rendered,
    options: &Options,
    manager_accounts: &BTreeSet<String>,
) -> Result<ClusterServiceVersion> {
    let mut csv = rendered.csv.clone();
    let package = &options.channels.package;
    if let Some(version) = &options.version {
        csv.metadata.name = format!("{package}.v{version}");
        csv.spec.version = version.to_string();
    }
    if let Some(replaces) = &options.replaces {
        csv.spec.replaces = Some(replaces.clone());
    }
    if let Some(range) = &options.skip_range {
        super::gosemver::Range::parse(range).map_err(|err| {
            anyhow::anyhow!("--skip-range {range:?} is not a version range OLM reads: {err}")
        })?;
    }
    if let Some(replaces) = &csv.spec.replaces {
        super::validate::check_csv_name("--replaces", replaces, package)?;
        if *replaces == csv.metadata.name {
            bail!("--replaces {replaces}: a bundle cannot replace itself");
        }
    }
    let annotations = &mut csv.metadata.annotations;
    if let Some(range) = &options.skip_range {
        annotations.insert("olm.skipRange".into(), range.clone());
    }
    let owned = rendered.owned(&csv.spec.custom_resource_definitions.owned);
    annotations.insert("alm-examples".into(), rendered.examples(&owned)?);
    annotations.insert(
        "operators.operatorframework.io/builder".into(),
        options.builder.name.clone(),
    );
    annotations.insert(
        "operators.operatorframework.io/project_layout".into(),
        options.builder.project_layout.clone(),
    );
    if let Some(image) = rendered.manager_image() {
        annotations.insert("containerImage".into(), image);
    }
    csv.spec.custom_resource_definitions.owned = owned;
    let (permissions, cluster_permissions) = rendered.permissions(manager_accounts)?;
    csv.spec.install.strategy = "deployment".into();
    csv.spec.install.spec.deployments = rendered.deployments()?;
    related_images(&mut csv, options.use_image_digests)?;
    csv.spec.install.spec.permissions = permissions;
    csv.spec.install.spec.cluster_permissions = cluster_permissions;
    csv.spec.webhook_definitions = rendered.webhook_definitions()?;
    Ok(csv)
}

/// The files of `manifests/` (the CSV, the CRDs, the other objects OLM installs) and the
/// scorecard's configuration.
fn manifest_files(
    rendered: &Rendered,
    csv: &ClusterServiceVersion,
    manager_accounts: &BTreeSet<String>,
    options: &Options,
) -> Result<Vec<File>> {
    let dir = &options.dir;
    let package = &options.channels.package;
    let manifests = format!("{dir}/manifests");
    let mut files = vec![File {
        path: format!("{manifests}/{package}.clusterserviceversion.yaml"),
        contents: csv.to_yaml(),
    }];
    for crd in &rendered.crds {
        let id = ObjectId::of(crd)?;
        let (plural, group) = id.name.split_once('.').unwrap_or((&id.name, ""));
        files.push(File {
            path: format!("{manifests}/{group}_{plural}.yaml"),
            contents: to_yaml(&for_olm_crd(crd)),
        });
    }
    for object in rendered.extra_files(manager_accounts)? {
        let id = ObjectId::of(&object)?;
        let group = if id.group.is_empty() {
            String::new()
        } else {
            format!("{}_", id.group)
        };
        files.push(File {
            path: format!(
                "{manifests}/{}_{group}{}_{}.yaml",
                id.name,
                id.version,
                id.kind.to_lowercase()
            ),
            contents: to_yaml(&object),
        });
    }
    if let Some(scorecard) = &rendered.scorecard {
        files.push(File {
            path: format!("{dir}/tests/scorecard/config.yaml"),
            contents: to_yaml(scorecard),
        });
    }
    Ok(files)
}

/// Every file's path is a file name of the bundle directory, and no two files share one.
fn check_paths(dir: &str, files: &[File], metadata: &[File]) -> Result<()> {
    let mut seen = BTreeSet::new();
    for file in files.iter().chain(metadata) {
        check_file_name(dir, &file.path)?;
        if !seen.insert(&file.path) {
            bail!(
                "two objects would be written to {}; rename one of them",
                file.path
            );
        }
    }
    Ok(())
}

/// `relatedImages`: the base's, and the images the managers' environment names (operator-sdk
/// does the same); with `--use-image-digests` the managers' images too, and every image must be
/// pinned by digest, which needs no registry when the user gave digests.
fn related_images(csv: &mut ClusterServiceVersion, use_digests: bool) -> Result<()> {
    let specs: Vec<&Value> = csv
        .spec
        .install
        .spec
        .deployments
        .iter()
        .map(|d| &d.spec)
        .collect();
    let mut found = super::images::from_environment(&specs);
    if use_digests {
        for (container, image) in super::images::container_images(&specs) {
            if !found.iter().any(|r| r.image == image) {
                found.push(super::images::Related {
                    name: container,
                    image,
                });
            }
        }
    }
    csv.spec.related_images = super::images::merge(&csv.spec.related_images, &found);
    if use_digests {
        let images = csv.spec.related_images.iter().map(|r| r.image.as_str());
        let unpinned = super::images::unpinned(images);
        if !unpinned.is_empty() {
            bail!(
                "--use-image-digests: {} not pinned by digest. Resolving a tag needs a registry, which operator-rs does not query: find each digest (e.g. `skopeo inspect --format '{{{{.Digest}}}}' docker://IMAGE`) and give the image as name@sha256:… (make bundle IMG=…@sha256:…, and the image variables in config/manager/manager.yaml)",
                unpinned.join(", ")
            );
        }
    }
    Ok(())
}

/// The rendered objects, sorted by what becomes of them.
#[derive(Default)]
struct Rendered {
    csv: ClusterServiceVersion,
    crds: Vec<Value>,
    deployments: Vec<Value>,
    roles: Vec<Value>,
    bindings: Vec<Value>,
    accounts: Vec<Value>,
    services: Vec<Value>,
    webhook_configurations: Vec<Value>,
    scorecard: Option<Value>,
    files: Vec<Value>,
    /// Custom resources: the samples, for `alm-examples`.
    custom_resources: Vec<Value>,
    /// Secrets that cert-manager fills: volumes of them are OLM's to provide.
    certificate_secrets: BTreeSet<String>,
}

impl Rendered {
    fn classify(objects: &[Value]) -> Result<Self> {
        let mut out = Rendered::default();
        let mut csvs = Vec::new();
        let crd_kinds: BTreeSet<(String, String)> = objects
            .iter()
            .filter(|o| {
                ObjectId::of(o)
                    .is_ok_and(|id| id.is("apiextensions.k8s.io", "CustomResourceDefinition"))
            })
            .filter_map(|crd| {
                Some((
                    str_at(crd, &["spec", "group"])?.to_string(),
                    str_at(crd, &["spec", "names", "kind"])?.to_string(),
                ))
            })
            .collect();
        for object in objects {
            let id = ObjectId::of(object)?;
            let object = object.clone();
            match placement(&id) {
                Some(Placement::Csv) => csvs.push(object),
                Some(Placement::Crd) => out.crds.push(object),
                Some(Placement::Deployment) => out.deployments.push(object),
                Some(Placement::Role) => out.roles.push(object),
                Some(Placement::Binding) => out.bindings.push(object),
                Some(Placement::ServiceAccount) => out.accounts.push(object),
                Some(Placement::Service) => out.services.push(object),
                Some(Placement::WebhookConfiguration) => out.webhook_configurations.push(object),
                Some(Placement::Scorecard) => out.scorecard = Some(object),
                Some(Placement::File) => out.files.push(object),
                Some(Placement::Dropped(_)) => {
                    if id.is("cert-manager.io", "Certificate")
                        && let Some(secret) = str_at(&object, &["spec", "secretName"])
                    {
                        out.certificate_secrets.insert(secret.to_string());
                    }
                }
                None if crd_kinds.contains(&(id.group.clone(), id.kind.clone())) => {
                    out.custom_resources.push(object)
                }
                None => bail!(
                    "{id} ({}/{}) cannot go into a bundle: OLM installs only a CSV, CRDs and the kinds operator-registry supports (docs/olm.md); remove it from config/manifests",
                    id.group,
                    id.version
                ),
            }
        }
        out.csv = match csvs.as_slice() {
            [csv] => serde_yaml::from_value(csv.clone())
                .context("the ClusterServiceVersion in config/manifests does not parse")?,
            [] => bail!(
                "config/manifests renders no ClusterServiceVersion: run `operator-rs generate kustomize manifests` first"
            ),
            _ => bail!(
                "config/manifests renders {} ClusterServiceVersions; a bundle has one",
                csvs.len()
            ),
        };
        if out.deployments.is_empty() {
            bail!(
                "config/manifests renders no Deployment: the CSV needs the manager's (is ../default among its resources?)"
            );
        }
        Ok(out)
    }

    /// The service accounts the managers run as: OLM creates and binds them.
    fn manager_accounts(&self) -> BTreeSet<String> {
        self.deployments
            .iter()
            .map(|d| {
                str_at(d, &["spec", "template", "spec", "serviceAccountName"])
                    .unwrap_or("default")
                    .to_string()
            })
            .collect()
    }

    /// The owned CRDs: the base's entries for CRDs the bundle has (the user's words kept), and
    /// the descriptions read from the CRDs for versions the base does not list.
    fn owned(&self, base: &[CrdDescription]) -> Vec<CrdDescription> {
        let mut out: Vec<CrdDescription> = Vec::new();
        for crd in &self.crds {
            for derived in descriptors::owned(crd) {
                let entry = base
                    .iter()
                    .find(|b| b.name == derived.name && b.version == derived.version)
                    .cloned()
                    .unwrap_or(derived);
                out.push(entry);
            }
        }
        // Entries of the base for CRDs the bundle does not have stay: `bundle validate` names
        // them, rather than a silent drop hiding a CRD missing from config/crd.
        for entry in base {
            if !out
                .iter()
                .any(|o| o.name == entry.name && o.version == entry.version)
            {
                out.push(entry.clone());
            }
        }
        out
    }

    /// `alm-examples`: the samples of the owned kinds, as a JSON array.
    fn examples(&self, owned: &[CrdDescription]) -> Result<String> {
        let mut examples = Vec::new();
        for sample in &self.custom_resources {
            let id = ObjectId::of(sample)?;
            let is_owned = owned.iter().any(|o| {
                o.kind == id.kind
                    && o.version == id.version
                    && o.name.ends_with(&format!(".{}", id.group))
            });
            if is_owned {
                let mut sample = sample.clone();
                remove_namespace(&mut sample);
                examples.push(serde_json::to_value(&sample)?);
            }
        }
        Ok(serde_json::to_string_pretty(&examples)?)
    }

    fn manager_image(&self) -> Option<String> {
        let containers = value_at(
            &self.deployments[0],
            &["spec", "template", "spec", "containers"],
        )?;
        let manager = containers
            .as_sequence()?
            .iter()
            .find(|c| str_at(c, &["name"]) == Some("manager"))
            .or_else(|| containers.as_sequence()?.first())?;
        str_at(manager, &["image"]).map(str::to_string)
    }

    fn deployments(&self) -> Result<Vec<DeploymentSpec>> {
        self.deployments
            .iter()
            .map(|deployment| {
                let mut spec = deployment
                    .get("spec")
                    .cloned()
                    .context("a Deployment without spec")?;
                self.use_olm_certificates(&mut spec);
                Ok(DeploymentSpec {
                    label: value_at(deployment, &["metadata", "labels"])
                        .and_then(Value::as_mapping)
                        .cloned(),
                    name: ObjectId::of(deployment)?.name,
                    spec,
                })
            })
            .collect()
    }

    /// OLM mounts its own webhook certificate at [`OLM_WEBHOOK_CERT_DIR`]; the volumes that
    /// cert-manager's Secrets (or anything else) provide there would collide with its mount, and
    /// those Secrets do not exist without cert-manager. They go, with their mounts and the
    /// arguments that point into them (except the webhook folder, which OLM fills).
    fn use_olm_certificates(&self, spec: &mut Value) {
        let Some(pod) = spec.get_mut("template").and_then(|t| t.get_mut("spec")) else {
            return;
        };
        let mut dropped_volumes = BTreeSet::new();
        let mut dropped_paths = BTreeSet::new();
        if let Some(containers) = pod.get("containers").and_then(Value::as_sequence) {
            for mount in containers
                .iter()
                .filter_map(|c| c.get("volumeMounts")?.as_sequence())
                .flatten()
            {
                if str_at(mount, &["mountPath"]) == Some(OLM_WEBHOOK_CERT_DIR)
                    && let Some(name) = str_at(mount, &["name"])
                {
                    dropped_volumes.insert(name.to_string());
                }
            }
        }
        if let Some(volumes) = pod.get("volumes").and_then(Value::as_sequence) {
            for volume in volumes {
                if let Some(secret) = str_at(volume, &["secret", "secretName"])
                    && self.certificate_secrets.contains(secret)
                    && let Some(name) = str_at(volume, &["name"])
                {
                    dropped_volumes.insert(name.to_string());
                }
            }
        }
        if let Some(Value::Sequence(volumes)) = pod.get_mut("volumes") {
            volumes.retain(|v| !str_at(v, &["name"]).is_some_and(|n| dropped_volumes.contains(n)));
        }
        for key in ["containers", "initContainers"] {
            let Some(Value::Sequence(containers)) = pod.get_mut(key) else {
                continue;
            };
            for container in containers {
                if let Some(Value::Sequence(mounts)) = container.get_mut("volumeMounts") {
                    mounts.retain(|m| {
                        let dropped =
                            str_at(m, &["name"]).is_some_and(|n| dropped_volumes.contains(n));
                        if dropped && let Some(path) = str_at(m, &["mountPath"]) {
                            dropped_paths.insert(path.to_string());
                        }
                        !dropped
                    });
                }
                if let Some(Value::Sequence(args)) = container.get_mut("args") {
                    args.retain(|arg| {
                        let value = arg.as_str().and_then(|a| a.split_once('=')).map(|(_, v)| v);
                        !value
                            .is_some_and(|v| v != OLM_WEBHOOK_CERT_DIR && dropped_paths.contains(v))
                    });
                }
            }
        }
    }

    /// The rules of the roles bound to the managers' service accounts: `permissions` for
    /// Roles (and ClusterRoles granted in the namespace by a RoleBinding), `clusterPermissions`
    /// for ClusterRoles bound by ClusterRoleBindings, each merged per service account.
    fn permissions(
        &self,
        accounts: &BTreeSet<String>,
    ) -> Result<(Vec<Permission>, Vec<Permission>)> {
        let mut namespaced: BTreeMap<String, Vec<Value>> = BTreeMap::new();
        let mut cluster: BTreeMap<String, Vec<Value>> = BTreeMap::new();
        for binding in &self.bindings {
            let id = ObjectId::of(binding)?;
            let role_kind = str_at(binding, &["roleRef", "kind"]).unwrap_or_default();
            let role_name = str_at(binding, &["roleRef", "name"]).unwrap_or_default();
            let Some(role) = self.roles.iter().find(|r| {
                ObjectId::of(r).is_ok_and(|rid| rid.kind == role_kind && rid.name == role_name)
            }) else {
                continue;
            };
            let rules = role
                .get("rules")
                .and_then(Value::as_sequence)
                .cloned()
                .unwrap_or_default();
            for account in bound_accounts(binding, accounts) {
                let target = if id.kind == "ClusterRoleBinding" {
                    &mut cluster
                } else {
                    &mut namespaced
                };
                let entry = target.entry(account).or_default();
                for rule in &rules {
                    if !entry.contains(rule) {
                        entry.push(rule.clone());
                    }
                }
            }
        }
        let list = |map: BTreeMap<String, Vec<Value>>| {
            map.into_iter()
                .map(|(service_account_name, rules)| Permission {
                    rules,
                    service_account_name,
                })
                .collect()
        };
        Ok((list(namespaced), list(cluster)))
    }

    /// One webhook definition per admission webhook and per CRD converted by a webhook.
    fn webhook_definitions(&self) -> Result<Vec<WebhookDescription>> {
        let mut out = Vec::new();
        for configuration in &self.webhook_configurations {
            let kind = if ObjectId::of(configuration)?.kind == "MutatingWebhookConfiguration" {
                WebhookType::MutatingAdmissionWebhook
            } else {
                WebhookType::ValidatingAdmissionWebhook
            };
            let webhooks = configuration
                .get("webhooks")
                .and_then(Value::as_sequence)
                .cloned()
                .unwrap_or_default();
            for webhook in &webhooks {
                let name = str_at(webhook, &["name"]).context("a webhook without a name")?;
                let service = value_at(webhook, &["clientConfig", "service"])
                    .with_context(|| format!("webhook {name}: OLM serves webhooks through a Service, and clientConfig names none"))?;
                let (deployment, container_port, target_port) = self.served_by(service)?;
                let string = |key: &str| str_at(webhook, &[key]).map(str::to_string);
                out.push(WebhookDescription {
                    admission_review_versions: strings(webhook.get("admissionReviewVersions"))
                        .unwrap_or_else(|| vec!["v1".into()]),
                    container_port,
                    conversion_crds: Vec::new(),
                    deployment_name: deployment,
                    failure_policy: string("failurePolicy"),
                    generate_name: name.to_string(),
                    match_policy: string("matchPolicy"),
                    object_selector: webhook.get("objectSelector").cloned(),
                    reinvocation_policy: string("reinvocationPolicy"),
                    rules: webhook
                        .get("rules")
                        .and_then(Value::as_sequence)
                        .cloned()
                        .unwrap_or_default(),
                    side_effects: string("sideEffects").unwrap_or_else(|| "None".into()),
                    target_port,
                    timeout_seconds: webhook.get("timeoutSeconds").and_then(Value::as_i64),
                    kind,
                    webhook_path: str_at(service, &["path"]).map(str::to_string),
                });
            }
        }
        for crd in &self.crds {
            let conversion = value_at(crd, &["spec", "conversion"]);
            if conversion.and_then(|c| str_at(c, &["strategy"])) != Some("Webhook") {
                continue;
            }
            let name = ObjectId::of(crd)?.name;
            let webhook = conversion.and_then(|c| c.get("webhook"));
            let service = webhook
                .and_then(|w| value_at(w, &["clientConfig", "service"]))
                .with_context(|| {
                    format!("CRD {name}: a conversion webhook without a Service in clientConfig")
                })?;
            let (deployment, container_port, target_port) = self.served_by(service)?;
            out.push(WebhookDescription {
                admission_review_versions: strings(
                    webhook.and_then(|w| w.get("conversionReviewVersions")),
                )
                .unwrap_or_else(|| vec!["v1".into()]),
                container_port,
                conversion_crds: vec![name.clone()],
                deployment_name: deployment,
                generate_name: format!("c{name}"),
                side_effects: "None".into(),
                target_port,
                kind: WebhookType::ConversionWebhook,
                webhook_path: str_at(service, &["path"]).map(str::to_string),
                ..WebhookDescription::default()
            });
        }
        Ok(out)
    }

    /// The Deployment behind a webhook's Service, the Service's port and the pod port it
    /// forwards to: OLM makes its own Service from these.
    fn served_by(&self, service_ref: &Value) -> Result<(String, i64, Option<Value>)> {
        let name = str_at(service_ref, &["name"]).unwrap_or_default();
        let port = service_ref
            .get("port")
            .and_then(Value::as_i64)
            .unwrap_or(DEFAULT_SERVICE_PORT);
        let service = self
            .services
            .iter()
            .find(|s| str_at(s, &["metadata", "name"]) == Some(name))
            .with_context(|| {
                format!("the webhooks' Service {name} is not among the rendered objects")
            })?;
        let target_port = value_at(service, &["spec", "ports"])
            .and_then(Value::as_sequence)
            .and_then(|ports| {
                ports
                    .iter()
                    .find(|p| p.get("port").and_then(Value::as_i64) == Some(port))
            })
            .and_then(|p| p.get("targetPort").cloned());
        let selector = value_at(service, &["spec", "selector"]).and_then(Value::as_mapping);
        let deployment = self
            .deployments
            .iter()
            .find(|d| {
                let labels = value_at(d, &["spec", "template", "metadata", "labels"]).and_then(Value::as_mapping);
                match (selector, labels) {
                    (Some(selector), Some(labels)) => selector.iter().all(|(k, v)| labels.get(k) == Some(v)),
                    _ => false,
                }
            })
            .with_context(|| format!("no Deployment runs the pods of the webhooks' Service {name} (its selector matches none)"))?;
        Ok((ObjectId::of(deployment)?.name, port, target_port))
    }

    fn webhook_services(&self) -> BTreeSet<String> {
        let from_configurations = self
            .webhook_configurations
            .iter()
            .filter_map(|c| c.get("webhooks")?.as_sequence())
            .flatten()
            .filter_map(|w| str_at(w, &["clientConfig", "service", "name"]));
        let from_crds = self.crds.iter().filter_map(|c| {
            str_at(
                c,
                &[
                    "spec",
                    "conversion",
                    "webhook",
                    "clientConfig",
                    "service",
                    "name",
                ],
            )
        });
        from_configurations
            .chain(from_crds)
            .map(str::to_string)
            .collect()
    }

    /// The objects that are files of their own, without namespaces (OLM puts them in the
    /// operator's).
    fn extra_files(&self, accounts: &BTreeSet<String>) -> Result<Vec<Value>> {
        let webhook_services = self.webhook_services();
        let bound_roles: BTreeSet<(String, String)> = self
            .bindings
            .iter()
            .filter(|b| !bound_accounts(b, accounts).is_empty())
            .filter_map(|b| {
                Some((
                    str_at(b, &["roleRef", "kind"])?.to_string(),
                    str_at(b, &["roleRef", "name"])?.to_string(),
                ))
            })
            .collect();
        let mut out = Vec::new();
        for role in &self.roles {
            let id = ObjectId::of(role)?;
            if !bound_roles.contains(&(id.kind.clone(), id.name.clone())) {
                out.push(role.clone());
            }
        }
        out.extend(
            self.bindings
                .iter()
                .filter(|b| bound_accounts(b, accounts).is_empty())
                .cloned(),
        );
        out.extend(
            self.accounts
                .iter()
                .filter(|a| !str_at(a, &["metadata", "name"]).is_some_and(|n| accounts.contains(n)))
                .cloned(),
        );
        out.extend(
            self.services
                .iter()
                .filter(|s| {
                    !str_at(s, &["metadata", "name"]).is_some_and(|n| webhook_services.contains(n))
                })
                .cloned(),
        );
        out.extend(self.files.iter().cloned());
        for object in &mut out {
            remove_namespace(object);
        }
        out.sort_by_key(|o| ObjectId::of(o).ok());
        Ok(out)
    }
}

/// The managers' service accounts among `binding`'s subjects.
fn bound_accounts(binding: &Value, accounts: &BTreeSet<String>) -> Vec<String> {
    binding
        .get("subjects")
        .and_then(Value::as_sequence)
        .into_iter()
        .flatten()
        .filter(|s| str_at(s, &["kind"]) == Some("ServiceAccount"))
        .filter_map(|s| str_at(s, &["name"]))
        .filter(|name| accounts.contains(*name))
        .map(str::to_string)
        .collect()
}

/// A CRD as OLM wants it: OLM injects the CA bundle of conversion webhooks, not cert-manager.
fn for_olm_crd(crd: &Value) -> Value {
    let mut crd = crd.clone();
    if let Some(Value::Mapping(annotations)) = crd
        .get_mut("metadata")
        .and_then(|m| m.get_mut("annotations"))
    {
        annotations.remove(CERT_MANAGER_INJECT);
    }
    if let Some(metadata) = crd.get_mut("metadata").and_then(Value::as_mapping_mut)
        && metadata
            .get("annotations")
            .and_then(Value::as_mapping)
            .is_some_and(Mapping::is_empty)
    {
        metadata.remove("annotations");
    }
    if let Some(Value::Mapping(client)) = crd
        .get_mut("spec")
        .and_then(|s| s.get_mut("conversion"))
        .and_then(|c| c.get_mut("webhook"))
        .and_then(|w| w.get_mut("clientConfig"))
    {
        client.remove("caBundle");
    }
    crd
}

/// Object names become file names: one that could climb out of `bundle/manifests` or hide
/// (a `/`, a leading `.`, control characters) is refused; Kubernetes would refuse it too.
fn check_file_name(dir: &str, path: &str) -> Result<()> {
    let name = path.rsplit('/').next().unwrap_or(path);
    let depth_ok = match path.strip_prefix(&format!("{dir}/")) {
        Some(rest) => rest.matches('/').count() <= 2,
        None => path == DOCKERFILE,
    };
    if !depth_ok
        || name.starts_with('.')
        || path.contains('\\')
        || path.chars().any(char::is_control)
    {
        bail!("an object name cannot be a file name in the bundle: {path:?}");
    }
    Ok(())
}

fn remove_namespace(object: &mut Value) {
    if let Some(Value::Mapping(metadata)) = object.get_mut("metadata") {
        metadata.remove("namespace");
    }
}

fn strings(value: Option<&Value>) -> Option<Vec<String>> {
    value?
        .as_sequence()?
        .iter()
        .map(|v| v.as_str().map(str::to_string))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The rendered objects of a cluster-scoped project with webhooks, cert-manager and
    /// metrics certificates enabled, reduced to what the bundle reads.
    const RENDERED: &str = r#"
apiVersion: operators.coreos.com/v1alpha1
kind: ClusterServiceVersion
metadata: {name: demo.v0.0.0}
spec: {displayName: Demo, install: {strategy: deployment}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: demo-controller-manager, namespace: demo-system, labels: {control-plane: controller-manager}}
spec:
  template:
    metadata: {labels: {control-plane: controller-manager}}
    spec:
      serviceAccountName: demo-controller-manager
      containers:
      - name: manager
        image: example.com/demo:v0.0.1
        args:
        - --metrics-cert-path=/tmp/k8s-metrics-server/metrics-certs
        - --webhook-cert-path=/tmp/k8s-webhook-server/serving-certs
        volumeMounts:
        - {name: metrics-certs, mountPath: /tmp/k8s-metrics-server/metrics-certs}
        - {name: webhook-certs, mountPath: /tmp/k8s-webhook-server/serving-certs}
        - {name: cache, mountPath: /cache}
      volumes:
      - {name: metrics-certs, secret: {secretName: metrics-server-cert}}
      - {name: webhook-certs, secret: {secretName: webhook-server-cert}}
      - {name: cache, emptyDir: {}}
---
apiVersion: cert-manager.io/v1
kind: Certificate
metadata: {name: metrics-certs}
spec: {secretName: metrics-server-cert}
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: demo-controller-manager, namespace: demo-system}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: demo-manager-role}
rules: [{apiGroups: [""], resources: [pods], verbs: [get]}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: demo-manager-rolebinding}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: demo-manager-role}
subjects: [{kind: ServiceAccount, name: demo-controller-manager, namespace: demo-system}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: demo-leases}
rules: [{apiGroups: [coordination.k8s.io], resources: [leases], verbs: [get]}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: demo-leases, namespace: demo-system}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: demo-leases}
subjects: [{kind: ServiceAccount, name: demo-controller-manager, namespace: demo-system}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: demo-viewer-role}
rules: [{apiGroups: [""], resources: [pods], verbs: [list]}]
"#;

    fn builder() -> Builder {
        Builder {
            name: "operator-rs-v0.2.0".into(),
            project_layout: "rust.operator-rs.io/v1-alpha".into(),
        }
    }

    fn options() -> Options {
        Options {
            version: Some(semver::Version::new(0, 0, 1)),
            channels: Channels::new("demo", vec!["alpha".into()], None).unwrap(),
            dir: BUNDLE_DIR.into(),
            replaces: None,
            skip_range: None,
            extra_service_accounts: Vec::new(),
            use_image_digests: false,
            builder: builder(),
        }
    }

    fn generated() -> (ClusterServiceVersion, Vec<File>) {
        let objects = super::super::yaml::objects(RENDERED, "test").unwrap();
        let files = generate(&objects, &options()).unwrap().manifests;
        let csv = ClusterServiceVersion::parse(&files[0].contents).unwrap();
        (csv, files)
    }

    #[test]
    fn without_a_version_the_base_keeps_its_own_and_the_folder_is_the_one_given() {
        let objects = super::super::yaml::objects(RENDERED, "test").unwrap();
        let bundle = generate(
            &objects,
            &Options {
                version: None,
                dir: "out/bundle".into(),
                ..options()
            },
        )
        .unwrap();
        let csv = ClusterServiceVersion::parse(&bundle.manifests[0].contents).unwrap();
        let base = objects
            .iter()
            .find(|o| o["kind"] == "ClusterServiceVersion")
            .unwrap();
        assert_eq!(
            csv.metadata.name,
            base["metadata"]["name"].as_str().unwrap()
        );
        assert!(
            bundle
                .manifests
                .iter()
                .all(|f| f.path.starts_with("out/bundle/manifests/"))
        );
        assert_eq!(
            bundle.metadata[0].path,
            "out/bundle/metadata/annotations.yaml"
        );
        assert!(
            bundle.metadata[1]
                .contents
                .contains("COPY out/bundle/manifests /manifests/")
        );
    }

    #[test]
    fn certificates_are_olms_and_other_volumes_stay() {
        let (csv, _) = generated();
        let pod = &csv.spec.install.spec.deployments[0].spec["template"]["spec"];
        let volumes: Vec<_> = pod["volumes"]
            .as_sequence()
            .unwrap()
            .iter()
            .map(|v| v["name"].as_str().unwrap())
            .collect();
        assert_eq!(volumes, ["cache"]);
        let mounts = pod["containers"][0]["volumeMounts"].as_sequence().unwrap();
        assert_eq!(mounts.len(), 1);
        let args: Vec<_> = pod["containers"][0]["args"]
            .as_sequence()
            .unwrap()
            .iter()
            .map(|a| a.as_str().unwrap())
            .collect();
        // The metrics certificate is gone with its volume (the manager then serves a self-signed
        // one); the webhook folder stays, for OLM mounts its certificate there.
        assert_eq!(
            args,
            [format!("--webhook-cert-path={OLM_WEBHOOK_CERT_DIR}")]
        );
        assert_eq!(
            csv.metadata.annotations["containerImage"],
            "example.com/demo:v0.0.1"
        );
    }

    #[test]
    fn rbac_is_split_the_way_olm_grants_it() {
        let (csv, files) = generated();
        let install = &csv.spec.install.spec;
        assert_eq!(install.cluster_permissions.len(), 1);
        assert_eq!(
            install.cluster_permissions[0].rules[0]["resources"][0],
            "pods"
        );
        // A ClusterRole granted by a RoleBinding holds in the namespace only: `permissions`.
        assert_eq!(install.permissions.len(), 1);
        assert_eq!(install.permissions[0].rules[0]["resources"][0], "leases");
        assert_eq!(
            install.permissions[0].service_account_name,
            "demo-controller-manager"
        );
        let paths: Vec<_> = files.iter().map(|f| f.path.as_str()).collect();
        assert!(
            paths.contains(
                &"bundle/manifests/demo-viewer-role_rbac.authorization.k8s.io_v1_clusterrole.yaml"
            ),
            "{paths:?}"
        );
        assert!(
            !paths.iter().any(|p| p.contains("serviceaccount")
                || p.contains("binding")
                || p.contains("manager-role")),
            "{paths:?}"
        );
    }

    #[test]
    fn names_that_are_not_file_names_are_refused() {
        let hostile = RENDERED.replace("name: demo-viewer-role", "name: ../../../escape");
        let objects = super::super::yaml::objects(&hostile, "test").unwrap();
        let err = generate(&objects, &options()).unwrap_err();
        assert!(
            err.to_string()
                .starts_with("an object name cannot be a file name"),
            "{err}"
        );
    }
}
