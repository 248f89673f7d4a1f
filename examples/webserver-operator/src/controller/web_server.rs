// Copyright 2026 The operator-rs authors.
//
// Licensed under the Apache License, Version 2.0 (the "License");
// you may not use this file except in compliance with the License.
// You may obtain a copy of the License at
//
//     http://www.apache.org/licenses/LICENSE-2.0
//
// Unless required by applicable law or agreed to in writing, software
// distributed under the License is distributed on an "AS IS" BASIS,
// WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
// See the License for the specific language governing permissions and
// limitations under the License.

//! The WebServer controller: for every WebServer, an nginx Deployment of `spec.replicas` pods
//! running `spec.image`, and a NodePort Service in front of them; the WebServer's status says
//! whether the pods are available.
//!
//! `reconcile` gets no diff, only the WebServer as it is now. It builds the Deployment and the
//! Service the WebServer asks for and hands each to `Context::apply_owned`, every time: that
//! creates what is missing (a Service deleted by hand comes back), scales the Deployment,
//! changes its image (the Deployment controller then rolls the pods over), and writes nothing
//! when nothing differs. What was there before tells users what changed.
//!
//! A WebServer may name a ConfigMap whose files nginx serves (`spec.configMap`). The controller
//! watches ConfigMaps too, and a change of one reconciles the WebServers that name it, which an
//! index of WebServers by ConfigMap finds: controller-runtime's `IndexField` and `Watches` with
//! `EnqueueRequestsFromMapFunc`.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::apps::v1::{Deployment, DeploymentSpec};
use k8s_openapi::api::core::v1::{
    ConfigMap, ConfigMapVolumeSource, Container, ContainerPort, PodSpec, PodTemplateSpec, Service,
    ServicePort, ServiceSpec, Volume, VolumeMount,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kube::runtime::controller::Action;
use kube::runtime::events::EventType;
use kube::runtime::reflector::ObjectRef;
use kube::runtime::watcher;
use kube::{Resource as _, ResourceExt as _};
use operator_rs_runtime::controller::{
    Context, ControllerFuture, ControllerSetup, PolicyRule, RbacScope, Runner, Shared, condition,
    conditions_to_apply, hash_of, rule,
};
use serde_json::json;

use crate::api::v1::WebServer;

/// The controller's name in logs and metrics, the `reportingController` of its Events, and its
/// field manager name for server-side apply (the owner of the fields it writes, see `kubectl get
/// --show-managed-fields`).
const CONTROLLER_NAME: &str = "webserver-controller";

/// How long `reconcile` waits before it looks at an unchanged WebServer again. Changes of the
/// WebServer and of its Deployment and Service trigger a reconciliation right away; this catches
/// anything else.
const RESYNC_PERIOD: Duration = Duration::from_secs(5 * 60);

/// The `app.kubernetes.io/managed-by` label of the Deployments and Services of this controller:
/// it also selects the ones it watches.
const MANAGED_BY: &str = "webserver-operator";

/// The port nginx listens on, and the port of the Service.
const HTTP_PORT: i32 = 80;

/// The condition type that `reconcile` sets: whether every pod of the WebServer is available.
const AVAILABLE: &str = "Available";

/// The index of WebServers by the ConfigMap they serve (`spec.configMap`), which a change of a
/// ConfigMap looks up.
const BY_CONFIG_MAP: &str = "spec.configMap";

/// Where the pods mount the ConfigMap they serve: nginx's document root.
const DOCUMENT_ROOT: &str = "/usr/share/nginx/html";

/// The pod template annotation with a hash of the served ConfigMap's data: a new hash is a new
/// pod template, which the Deployment rolls out, so the pods serve the new content at once
/// rather than when the kubelet gets round to refreshing their mounted files.
const CONTENT_HASH: &str = "web.example.com/content-hash";

/// This controller, as listed in `controllers()` of `src/controller/mod.rs`.
pub const CONTROLLER: ControllerSetup = ControllerSetup {
    name: CONTROLLER_NAME,
    rbac_rules,
    rbac_scope: RbacScope::Project,
    setup,
};

/// Sets up the controller; the manager calls it once at startup.
///
/// The runner watches WebServers in the namespaces of `WATCH_NAMESPACE` (all by default), and
/// the Deployments and Services this controller made, and calls `reconcile` for each WebServer,
/// with metrics, retries and graceful shutdown.
fn setup(shared: &Shared) -> ControllerFuture {
    // Only the objects of this controller: far fewer watch events than all Deployments and
    // Services of the cluster.
    let managed =
        watcher::Config::default().labels(&format!("app.kubernetes.io/managed-by={MANAGED_BY}"));
    let runner = Runner::<WebServer>::new(CONTROLLER_NAME, shared)
        // A change of a Deployment or Service reconciles the WebServer in its controller owner
        // reference: a Deployment scaled or a Service deleted by hand is put back right away.
        .owns::<Deployment>(managed.clone())
        .owns::<Service>(managed)
        // The WebServers by the ConfigMap they serve, kept up to date with them.
        .index(BY_CONFIG_MAP, |web_server: &WebServer| {
            web_server.spec.config_map.iter().cloned().collect()
        });
    let web_servers = runner.cache::<WebServer>();
    runner
        // A change of a ConfigMap (or its creation, or deletion) reconciles the WebServers of its
        // namespace that serve it, as the index finds them. The ConfigMaps are cached too:
        // `reconcile` reads them from there.
        .watches(watcher::Config::default(), move |config_map: ConfigMap| {
            let (namespace, name) = (config_map.namespace(), config_map.name_any());
            let serving = web_servers.indexed(namespace.as_deref(), BY_CONFIG_MAP, &name);
            let references = serving.iter().map(|web_server| web_server.as_ref());
            references.map(ObjectRef::from_obj).collect::<Vec<_>>()
        })
        .run(reconcile, ())
}

/// The API permissions of this controller, right next to the code that needs them: `make
/// manifests` writes the rules of all controllers to `config/rbac/role.yaml`.
pub fn rbac_rules() -> Vec<PolicyRule> {
    // The group and plural of WebServer, from its `#[kube(...)]` attribute (`&()`: a typed
    // resource needs no runtime type information).
    let group = WebServer::group(&());
    let plural = WebServer::plural(&());
    vec![
        // Watching WebServers.
        rule(&[&group], &[&plural], &["get", "list", "watch"]),
        // Writing the status subresource.
        rule(
            &[&group],
            &[&format!("{plural}/status")],
            &["get", "update", "patch"],
        ),
        // Setting `blockOwnerDeletion` in the owner references of the Deployment and Service.
        rule(&[&group], &[&format!("{plural}/finalizers")], &["update"]),
        // Publishing Events (the recorder patches an Event when it repeats).
        rule(&["events.k8s.io"], &["events"], &["create", "patch"]),
        // The Deployments and Services of each WebServer: watched, read and applied.
        rule(
            &["apps"],
            &["deployments"],
            &["get", "list", "watch", "create", "patch"],
        ),
        rule(
            &[""],
            &["services"],
            &["get", "list", "watch", "create", "patch"],
        ),
        // The ConfigMaps that WebServers serve: watched and read.
        rule(&[""], &["configmaps"], &["get", "list", "watch"]),
    ]
}

/// Why a reconciliation failed. Every variant names the object, because the runner logs the
/// error and the log line should say which object it is about.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("cannot read ConfigMap {namespace}/{name}")]
    ReadConfigMap {
        namespace: String,
        name: String,
        #[source]
        source: kube::Error,
    },
    #[error("cannot apply {kind} {namespace}/{name}")]
    Apply {
        kind: &'static str,
        namespace: String,
        name: String,
        #[source]
        source: kube::Error,
    },
    #[error("cannot update the status of WebServer {namespace}/{name}")]
    UpdateStatus {
        namespace: String,
        name: String,
        #[source]
        source: kube::Error,
    },
}

/// Brings the Deployment and the Service of one WebServer in line with its spec, and reports in
/// its status whether its pods are available.
///
/// Each kind of change has an Event `action` of its own: the Event recorder counts an Event with
/// the same reason and action about the same object as a repeat of the last one, note and all.
async fn reconcile(web_server: Arc<WebServer>, ctx: Arc<Context>) -> Result<Action, Error> {
    if web_server.meta().deletion_timestamp.is_some() {
        // Kubernetes deletes the Deployment and the Service with it: they are owned by it.
        return Ok(Action::await_change());
    }
    // Always set: WebServers are namespaced.
    let namespace = web_server.namespace().unwrap_or_default();
    let name = web_server.name_any();
    tracing::info!(controller = CONTROLLER_NAME, namespace, name, "reconciling");
    let apply_error = |kind, name: &str| {
        let (namespace, name) = (namespace.clone(), name.to_owned());
        move |source| Error::Apply {
            kind,
            namespace,
            name,
            source,
        }
    };

    // The page nginx serves, if the WebServer names one: its ConfigMap, from the controller's
    // cache of ConfigMaps. One that does not exist yet is waited for: its creation reconciles
    // the WebServer (see `setup`).
    let page = match &web_server.spec.config_map {
        None => None,
        Some(config_map) => match ctx.get::<ConfigMap>(Some(&namespace), config_map).await {
            Ok(Some(page)) => Some(page),
            Ok(None) => {
                let message = format!("ConfigMap {config_map} not found");
                let missing = (false, "ConfigMapNotFound", message);
                set_available(&ctx, &web_server, missing).await?;
                return Ok(Action::requeue(RESYNC_PERIOD));
            }
            Err(source) => {
                let name = config_map.clone();
                let error = Error::ReadConfigMap {
                    namespace,
                    name,
                    source,
                };
                return Err(error);
            }
        },
    };

    // The Deployment. `apply_owned` reads it, applies it unless it is already as desired, and
    // returns it as it was before and as it is now: enough to tell users what changed.
    let desired = deployment(&web_server, page.as_deref());
    let deployment = ctx
        .apply_owned(web_server.as_ref(), desired)
        .await
        .map_err(apply_error("Deployment", &name))?;
    match &deployment.before {
        None => {
            tracing::info!(namespace, name, "Creating a new Deployment");
            let note = format!("Created Deployment {name}");
            let event = (EventType::Normal, "Created", "CreateDeployment");
            publish(&ctx, &web_server, event, note).await;
        }
        Some(before) => {
            // The two changes the kubebuilder tutorial logs: a new replica count and a new image.
            let after = &deployment.after;
            let (from, to) = (replicas(before), replicas(after));
            if from != to {
                let note = format!("Deployment spec.replicas change from {from} to {to}");
                tracing::info!(namespace, name, from, to, "{note}");
                let event = (EventType::Normal, "Scaled", "ScaleDeployment");
                publish(&ctx, &web_server, event, note).await;
            }
            let (from, to) = (image(before), image(after));
            if from != to {
                let note = format!(
                    "Deployment spec.template.spec.containers[0].image change from {from} to {to}"
                );
                tracing::info!(namespace, name, from, to, "{note}");
                let event = (EventType::Normal, "Upgraded", "UpdateImage");
                publish(&ctx, &web_server, event, note).await;
            }
        }
    }

    // The Service: applied the same way, so a deleted Service is created again.
    let service_name = service_name(&web_server);
    let service = ctx
        .apply_owned(web_server.as_ref(), service(&web_server))
        .await
        .map_err(apply_error("Service", &service_name))?;
    if service.created() {
        tracing::info!(
            namespace,
            name,
            service = service_name,
            "Creating a new Service"
        );
        let note = format!("Created Service {service_name}");
        let event = (EventType::Normal, "Created", "CreateService");
        publish(&ctx, &web_server, event, note).await;
    }

    // Available once the Deployment has all its pods available. Its status changes reconcile the
    // WebServer again (it is watched), so this turns True as soon as they are.
    let wanted = web_server.spec.replicas;
    let available = deployment
        .after
        .status
        .and_then(|status| status.available_replicas)
        .unwrap_or(0);
    let (status, reason) = if available >= wanted {
        (true, "ReplicasAvailable")
    } else {
        (false, "ReplicasUnavailable")
    };
    let message = format!("{available} of {wanted} pods are available");
    set_available(&ctx, &web_server, (status, reason, message)).await?;
    Ok(Action::requeue(RESYNC_PERIOD))
}

/// Sets the `Available` condition of `web_server` to `(status, reason, message)`, writing the
/// status only when it changes: the same conditions again would be a write for nothing.
async fn set_available(
    ctx: &Context,
    web_server: &WebServer,
    (status, reason, message): (bool, &str, String),
) -> Result<(), Error> {
    let generation = web_server.meta().generation;
    let current = web_server
        .status
        .as_ref()
        .map_or(&[][..], |status| &status.conditions);
    let desired = vec![condition(AVAILABLE, status, reason, message, generation)];
    if let Some(conditions) = conditions_to_apply(current, desired) {
        ctx.apply_status(web_server, json!({ "conditions": conditions }))
            .await
            .map_err(|source| Error::UpdateStatus {
                namespace: web_server.namespace().unwrap_or_default(),
                name: web_server.name_any(),
                source,
            })?;
    }
    Ok(())
}

/// Publishes an Event about `web_server`: its type, reason and action, and its note.
async fn publish(
    ctx: &Context,
    web_server: &WebServer,
    (type_, reason, action): (EventType, &str, &str),
    note: String,
) {
    ctx.publish(web_server, type_, reason, action, note).await;
}

/// The labels of the pods of `web_server`, which its Deployment and Service select: its own
/// pods only, and nothing that may change (a Deployment's selector cannot).
fn selector(web_server: &WebServer) -> BTreeMap<String, String> {
    BTreeMap::from([
        ("app.kubernetes.io/name".to_owned(), "webserver".to_owned()),
        (
            "app.kubernetes.io/instance".to_owned(),
            web_server.name_any(),
        ),
    ])
}

/// The labels of the objects of `web_server`: its selector, and the label this controller
/// watches them by.
fn labels(web_server: &WebServer) -> BTreeMap<String, String> {
    let mut labels = selector(web_server);
    labels.insert(
        "app.kubernetes.io/managed-by".to_owned(),
        MANAGED_BY.to_owned(),
    );
    labels
}

/// The Deployment of `web_server`: named like it, `spec.replicas` nginx pods of `spec.image`,
/// serving the files of `page` (the ConfigMap of `spec.configMap`) if there is one.
/// `apply_owned` puts it in the WebServer's namespace and makes the WebServer its owner.
pub fn deployment(web_server: &WebServer, page: Option<&ConfigMap>) -> Deployment {
    // The ConfigMap's files in nginx's document root, and a hash of them in the pod template.
    let volume = page.map(|page| Volume {
        name: "page".to_owned(),
        config_map: Some(ConfigMapVolumeSource {
            name: page.name_any(),
            ..ConfigMapVolumeSource::default()
        }),
        ..Volume::default()
    });
    let mount = volume.as_ref().map(|volume| VolumeMount {
        name: volume.name.clone(),
        mount_path: DOCUMENT_ROOT.to_owned(),
        read_only: Some(true),
        ..VolumeMount::default()
    });
    let content = page.map(|page| {
        let binary = page.binary_data.iter().flatten();
        let binary: Vec<(&String, &[u8])> =
            binary.map(|(key, bytes)| (key, &bytes.0[..])).collect();
        let hash = hash_of(&(&page.data, binary));
        BTreeMap::from([(CONTENT_HASH.to_owned(), format!("{hash:016x}"))])
    });
    Deployment {
        metadata: ObjectMeta {
            name: Some(web_server.name_any()),
            labels: Some(labels(web_server)),
            ..ObjectMeta::default()
        },
        spec: Some(DeploymentSpec {
            replicas: Some(web_server.spec.replicas),
            selector: LabelSelector {
                match_labels: Some(selector(web_server)),
                ..LabelSelector::default()
            },
            template: PodTemplateSpec {
                metadata: Some(ObjectMeta {
                    labels: Some(labels(web_server)),
                    annotations: content,
                    ..ObjectMeta::default()
                }),
                spec: Some(PodSpec {
                    containers: vec![Container {
                        name: "nginx".to_owned(),
                        image: Some(web_server.spec.image.clone()),
                        ports: Some(vec![ContainerPort {
                            container_port: HTTP_PORT,
                            // Named, because the API server keys ports by port and protocol.
                            protocol: Some("TCP".to_owned()),
                            ..ContainerPort::default()
                        }]),
                        volume_mounts: mount.map(|mount| vec![mount]),
                        ..Container::default()
                    }],
                    volumes: volume.map(|volume| vec![volume]),
                    ..PodSpec::default()
                }),
            },
            ..DeploymentSpec::default()
        }),
        ..Deployment::default()
    }
}

/// The name of the Service of `web_server`, as in the kubebuilder tutorial.
fn service_name(web_server: &WebServer) -> String {
    format!("{}-service", web_server.name_any())
}

/// The NodePort Service of `web_server`, in front of its pods. It sets no `clusterIP` and no
/// `nodePort`: the API server allocates them, and as the controller does not apply them, its
/// next applies leave them as they are. (`kubectl get service` shows the node port.)
pub fn service(web_server: &WebServer) -> Service {
    Service {
        metadata: ObjectMeta {
            name: Some(service_name(web_server)),
            labels: Some(labels(web_server)),
            ..ObjectMeta::default()
        },
        spec: Some(ServiceSpec {
            type_: Some("NodePort".to_owned()),
            selector: Some(selector(web_server)),
            ports: Some(vec![ServicePort {
                name: Some("http".to_owned()),
                port: HTTP_PORT,
                protocol: Some("TCP".to_owned()),
                target_port: Some(IntOrString::Int(HTTP_PORT)),
                ..ServicePort::default()
            }]),
            ..ServiceSpec::default()
        }),
        ..Service::default()
    }
}

/// The replicas of a Deployment (Kubernetes' default: 1).
fn replicas(deployment: &Deployment) -> i32 {
    deployment
        .spec
        .as_ref()
        .and_then(|spec| spec.replicas)
        .unwrap_or(1)
}

/// The image of the first container of a Deployment's pods.
fn image(deployment: &Deployment) -> &str {
    let pod = deployment
        .spec
        .as_ref()
        .and_then(|spec| spec.template.spec.as_ref());
    let container = pod.and_then(|pod| pod.containers.first());
    container
        .and_then(|container| container.image.as_deref())
        .unwrap_or_default()
}

/// The controller against the runtime's fake API server: a stateful, in-memory API server, so
/// each test drives the WebServer through the changes of the kubebuilder tutorial and looks at
/// the objects and Events the controller leaves, as `kubectl` would.
#[cfg(test)]
mod tests {
    use k8s_openapi::api::events::v1::Event;
    use kube::Api;
    use kube::CustomResourceExt as _;
    use kube::api::{DeleteParams, Patch, PatchParams, PostParams};
    use operator_rs_testing::fake::{FakeApiServer, Verb};
    use operator_rs_testing::wait_until;
    use serde_json::Value;

    use super::*;
    use crate::api::v1::WebServerSpec;

    const NAME: &str = "webserver-sample";

    /// A fake API server with the WebServer CRD installed and the sample of `config/samples/`
    /// created: 3 replicas of nginx:1.27.3.
    async fn cluster() -> (FakeApiServer, Api<WebServer>) {
        let fake = FakeApiServer::new();
        fake.register_crd(&WebServer::crd());
        let api = Api::<WebServer>::namespaced(fake.client(), "default");
        let spec = WebServerSpec {
            replicas: 3,
            image: "nginx:1.27.3".to_owned(),
            config_map: None,
        };
        let sample = WebServer::new(NAME, spec);
        api.create(&PostParams::default(), &sample).await.unwrap();
        (fake, api)
    }

    /// What the runner does on a change: reconcile the WebServer as stored now.
    async fn reconcile_sample(fake: &FakeApiServer, api: &Api<WebServer>) -> Action {
        let web_server = api.get(NAME).await.unwrap();
        let ctx = Context::new(fake.client(), CONTROLLER_NAME, ());
        reconcile(Arc::new(web_server), Arc::new(ctx))
            .await
            .unwrap()
    }

    /// A user's change of the spec, like `kubectl apply` of an edited sample.
    async fn edit_spec(api: &Api<WebServer>, spec: Value) {
        let patch = Patch::Merge(json!({ "spec": spec }));
        api.patch(NAME, &PatchParams::default(), &patch)
            .await
            .unwrap();
    }

    fn stored_deployment(fake: &FakeApiServer) -> Deployment {
        fake.get::<Deployment>(Some("default"), NAME).unwrap()
    }

    /// The notes of the Events about the WebServer, as `kubectl events` lists them.
    fn events(fake: &FakeApiServer) -> Vec<String> {
        let events = fake.list::<Event>().into_iter();
        events.filter_map(|event| event.note).collect()
    }

    #[tokio::test]
    async fn a_new_web_server_gets_an_nginx_deployment_and_a_node_port_service() {
        let (fake, api) = cluster().await;
        // The Deployment controller and the kubelet, which make the pods available.
        fake.simulate_deployments(true);
        assert_eq!(
            reconcile_sample(&fake, &api).await,
            Action::requeue(RESYNC_PERIOD)
        );

        let deployment = stored_deployment(&fake);
        let owner = &deployment.metadata.owner_references.as_ref().unwrap()[0];
        assert_eq!(
            (owner.kind.as_str(), owner.name.as_str()),
            ("WebServer", NAME)
        );
        assert_eq!(owner.controller, Some(true));
        assert_eq!(replicas(&deployment), 3);
        assert_eq!(image(&deployment), "nginx:1.27.3");

        let service = fake
            .get::<Service>(Some("default"), "webserver-sample-service")
            .unwrap();
        assert_eq!(service.metadata.owner_references.unwrap()[0].name, NAME);
        let spec = service.spec.unwrap();
        assert_eq!(spec.type_.as_deref(), Some("NodePort"));
        assert_eq!(spec.ports.unwrap()[0].port, 80);
        // The Service selects the pods of the Deployment.
        let pod_labels = deployment
            .spec
            .unwrap()
            .template
            .metadata
            .unwrap()
            .labels
            .unwrap();
        assert!(
            spec.selector
                .unwrap()
                .iter()
                .all(|(k, v)| pod_labels.get(k) == Some(v))
        );

        let created = [
            "Created Deployment webserver-sample",
            "Created Service webserver-sample-service",
        ];
        assert_eq!(events(&fake), created);

        // The pods are up: the next reconciliation (their Deployment changed) says so.
        reconcile_sample(&fake, &api).await;
        let status = api.get_status(NAME).await.unwrap().status.unwrap();
        assert_eq!(status.conditions[0].type_, AVAILABLE);
        assert_eq!(status.conditions[0].status, "True");
        assert_eq!(status.conditions[0].message, "3 of 3 pods are available");
    }

    #[tokio::test]
    async fn scaling_from_3_to_4_scales_the_deployment() {
        let (fake, api) = cluster().await;
        reconcile_sample(&fake, &api).await;

        edit_spec(&api, json!({ "replicas": 4 })).await;
        reconcile_sample(&fake, &api).await;
        assert_eq!(replicas(&stored_deployment(&fake)), 4);
        let scaled = "Deployment spec.replicas change from 3 to 4".to_owned();
        assert!(events(&fake).contains(&scaled), "{:?}", events(&fake));
    }

    /// A Deployment scaled by hand (`kubectl scale`) is put back to the WebServer's replicas.
    #[tokio::test]
    async fn a_deployment_scaled_by_hand_is_put_back() {
        let (fake, api) = cluster().await;
        reconcile_sample(&fake, &api).await;
        let mut scaled = stored_deployment(&fake);
        scaled.spec.as_mut().unwrap().replicas = Some(1);
        fake.put(&scaled);

        reconcile_sample(&fake, &api).await;
        assert_eq!(replicas(&stored_deployment(&fake)), 3);
        let put_back = "Deployment spec.replicas change from 1 to 3".to_owned();
        assert!(events(&fake).contains(&put_back), "{:?}", events(&fake));
    }

    /// Reconciling a WebServer that has what it asks for writes nothing: no apply, no status,
    /// no Event.
    #[tokio::test]
    async fn nothing_to_do_writes_nothing() {
        let (fake, api) = cluster().await;
        reconcile_sample(&fake, &api).await;
        fake.clear_requests();

        reconcile_sample(&fake, &api).await;
        assert_eq!(fake.writes(), 0, "{:?}", fake.requests());
    }

    #[tokio::test]
    async fn a_new_image_rolls_the_pods_over_to_it() {
        let (fake, api) = cluster().await;
        reconcile_sample(&fake, &api).await;
        let before = stored_deployment(&fake);

        edit_spec(&api, json!({ "image": "nginx:1.27.4" })).await;
        reconcile_sample(&fake, &api).await;
        // A new pod template (and so a new generation) with the same selector: the Deployment
        // controller replaces the pods a few at a time, as `kubectl get pods` shows.
        let after = stored_deployment(&fake);
        assert_eq!(image(&after), "nginx:1.27.4");
        assert_eq!(
            after.metadata.generation,
            before.metadata.generation.map(|g| g + 1)
        );
        assert_eq!(after.spec.unwrap().selector, before.spec.unwrap().selector);
        let upgraded = "Deployment spec.template.spec.containers[0].image change from nginx:1.27.3 to nginx:1.27.4";
        assert!(
            events(&fake).contains(&upgraded.to_owned()),
            "{:?}",
            events(&fake)
        );
    }

    #[tokio::test]
    async fn a_deleted_service_is_created_again() {
        let (fake, api) = cluster().await;
        reconcile_sample(&fake, &api).await;

        let services = Api::<Service>::namespaced(fake.client(), "default");
        services
            .delete("webserver-sample-service", &DeleteParams::default())
            .await
            .unwrap();
        // The runner reconciles the owner of a deleted Service it watches.
        reconcile_sample(&fake, &api).await;
        let service = fake.get::<Service>(Some("default"), "webserver-sample-service");
        assert_eq!(
            service.unwrap().metadata.owner_references.unwrap()[0].name,
            NAME
        );
    }

    /// The API server gives a NodePort Service a cluster IP and a node port; the controller does
    /// not set them, so its next applies keep them instead of fighting over them.
    #[tokio::test]
    async fn the_allocated_node_port_is_kept() {
        let (fake, api) = cluster().await;
        reconcile_sample(&fake, &api).await;
        let mut service = fake
            .get::<Service>(Some("default"), "webserver-sample-service")
            .unwrap();
        let spec = service.spec.as_mut().unwrap();
        spec.cluster_ip = Some("10.96.12.34".to_owned());
        spec.ports.as_mut().unwrap()[0].node_port = Some(30010);
        fake.put(&service);

        edit_spec(&api, json!({ "replicas": 4 })).await;
        reconcile_sample(&fake, &api).await;
        let spec = fake
            .get::<Service>(Some("default"), "webserver-sample-service")
            .unwrap()
            .spec
            .unwrap();
        assert_eq!(spec.cluster_ip.as_deref(), Some("10.96.12.34"));
        assert_eq!(spec.ports.unwrap()[0].node_port, Some(30010));
    }

    /// A WebServer that names a ConfigMap that does not exist says so in its status, and gets
    /// no Deployment until the ConfigMap comes.
    #[tokio::test]
    async fn a_missing_config_map_is_reported() {
        let (fake, api) = cluster().await;
        edit_spec(&api, json!({ "configMap": "page" })).await;
        reconcile_sample(&fake, &api).await;
        let status = api.get_status(NAME).await.unwrap().status.unwrap();
        assert_eq!(status.conditions[0].reason, "ConfigMapNotFound");
        assert_eq!(status.conditions[0].message, "ConfigMap page not found");
        assert!(fake.get::<Deployment>(Some("default"), NAME).is_none());
    }

    /// A page of its own: the whole controller, as the manager runs it (`setup`), serves the
    /// ConfigMap that a WebServer names once it exists, and rolls the pods over when it changes:
    /// the watch of ConfigMaps finds the WebServers that serve one through the index, and
    /// `reconcile` reads it from the controller's cache, never from the API server. The other
    /// WebServer, which serves nginx's own page, is left alone.
    #[tokio::test]
    async fn a_config_map_change_rolls_the_pods_of_the_web_servers_that_serve_it() {
        let (fake, api) = cluster().await;
        fake.simulate_deployments(true);
        edit_spec(&api, json!({ "configMap": "page" })).await;
        let spec = WebServerSpec {
            replicas: 1,
            image: "nginx:1.27.3".to_owned(),
            config_map: None,
        };
        let other = WebServer::new("other", spec);
        api.create(&PostParams::default(), &other).await.unwrap();
        fake.clear_requests();
        let shared = Shared::new(fake.client());
        let controller = tokio::spawn(setup(&shared));

        let content_hash = || {
            let deployment = fake.get::<Deployment>(Some("default"), NAME)?;
            let template = deployment.spec?.template.metadata?;
            template.annotations?.get(CONTENT_HASH).cloned()
        };
        let other_version = || {
            let deployment = fake.get::<Deployment>(Some("default"), "other");
            deployment.and_then(|deployment| deployment.metadata.resource_version)
        };
        wait_until("the other WebServer has its Deployment", WAIT, || {
            other_version().is_some()
        })
        .await;
        let other_before = other_version();

        // The ConfigMap comes: its creation reconciles the sample, which gets its Deployment.
        let page = |html: &str| ConfigMap {
            metadata: ObjectMeta {
                name: Some("page".to_owned()),
                namespace: Some("default".to_owned()),
                ..ObjectMeta::default()
            },
            data: Some(BTreeMap::from([("index.html".to_owned(), html.to_owned())])),
            ..ConfigMap::default()
        };
        fake.put(&page("<h1>Hello</h1>"));
        wait_until("the page's ConfigMap is served", WAIT, || {
            content_hash().is_some()
        })
        .await;
        let first = content_hash();
        let pod = stored_deployment(&fake)
            .spec
            .unwrap()
            .template
            .spec
            .unwrap();
        let volume = pod.volumes.unwrap()[0].config_map.clone().unwrap();
        assert_eq!(volume.name, "page");
        let mounted = &pod.containers[0].volume_mounts.as_ref().unwrap()[0];
        assert_eq!(mounted.mount_path, DOCUMENT_ROOT);

        // A new page: a new pod template, which the Deployment rolls out.
        fake.put(&page("<h1>Hello again</h1>"));
        wait_until("the new page is served", WAIT, || content_hash() != first).await;

        assert_eq!(
            other_version(),
            other_before,
            "the other WebServer's Deployment"
        );
        assert_eq!(fake.count(Verb::Get), 0, "every read from the caches");
        shared.shutdown.cancel();
        controller.await.unwrap().unwrap();
    }

    /// How long the whole controller may take to converge.
    const WAIT: Duration = Duration::from_secs(10);
}
