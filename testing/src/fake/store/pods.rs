//! The pods of the stand-in Deployment controller ([`Store::simulate_deployments`]): what the
//! Deployment controller, the ReplicaSet controller, the scheduler and the kubelet would make
//! of a Deployment, made at once: `spec.replicas` pods of its pod template, owned by the
//! Deployment, running and ready.
//!
//! Controllers that watch the pods of their Deployments (the deploy-image plugin's) then see,
//! and cache, what they would see on a cluster: a benchmark measures their memory with the pods.
//! There is no ReplicaSet: the pods are owned by the Deployment itself (the garbage collector
//! deletes them with it), and a change of the pod template replaces them all at once, as a
//! rollout would in the end.

use std::hash::{DefaultHasher, Hash as _, Hasher as _};

use serde_json::{Value, json};

use super::super::admission::User;
use super::super::fields::Scope;
use super::super::kinds::ResourceKey;
use super::{Caller, ObjectKey, Store, now};

/// The field manager and user of the pods' creation.
const REPLICA_SET_CONTROLLER: &str = "system:serviceaccount:kube-system:replicaset-controller";

impl Store {
    /// Makes the pods of the Deployment `deployment` (as stored, at `key`) what it asks for:
    /// one per replica of its current pod template; pods of an older template, or beyond the
    /// replicas, are deleted.
    pub(super) fn simulate_pods(&mut self, key: &ObjectKey, deployment: &Value) {
        let (namespace, name) = key;
        let Some(uid) = deployment["metadata"]["uid"].as_str() else {
            return;
        };
        let replicas = deployment["spec"]["replicas"].as_i64().unwrap_or(1).max(0);
        let template = &deployment["spec"]["template"];
        // The pod-template-hash of the ReplicaSet the pods would belong to.
        let mut hasher = DefaultHasher::new();
        template.to_string().hash(&mut hasher);
        let hash = format!("{:010x}", hasher.finish() & 0xff_ffff_ffff);
        let wanted: Vec<String> = (0..replicas)
            .map(|index| format!("{name}-{hash}-{index}"))
            .collect();
        let pods = pods();
        // The pods named after the Deployment that it owns: a range of the sorted keys.
        let prefix = format!("{name}-");
        let start = (namespace.clone(), prefix.clone());
        let existing: Vec<String> = self
            .objects
            .get(&pods.storage())
            .into_iter()
            .flat_map(|objects| objects.range(start.clone()..))
            .take_while(|((ns, pod), _)| ns == namespace && pod.starts_with(&prefix))
            .filter(|(_, stored)| owned_by(&stored.value, uid))
            .map(|((_, pod), _)| pod.clone())
            .collect();
        let namespace = Some(namespace.as_str());
        for stale in existing.iter().filter(|pod| !wanted.contains(pod)) {
            // Gone already is fine.
            let _ = self.delete(&pods, namespace, stale, &json!({}), false, None);
        }
        let caller = Caller {
            scope: Scope::Whole,
            manager: REPLICA_SET_CONTROLLER.to_owned(),
            dry_run: false,
            strict: false,
            user: User {
                name: REPLICA_SET_CONTROLLER.to_owned(),
                groups: vec!["system:serviceaccounts".to_owned()],
            },
        };
        for pod in &wanted {
            if existing.contains(pod) {
                continue;
            }
            let object = pod_of(deployment, pod, &hash);
            // Cannot fail but for a template that is not a valid pod: then there are no pods,
            // as the ReplicaSet controller would make none.
            let _ = self.create(&pods, namespace, object, &caller);
        }
    }
}

/// The resource of pods.
fn pods() -> ResourceKey {
    ResourceKey {
        group: String::new(),
        version: "v1".to_owned(),
        plural: "pods".to_owned(),
    }
}

/// Whether `object` has an owner reference to `uid`.
fn owned_by(object: &Value, uid: &str) -> bool {
    let owners = object["metadata"]["ownerReferences"].as_array();
    owners
        .into_iter()
        .flatten()
        .any(|owner| owner["uid"].as_str() == Some(uid))
}

/// The pod `name` of `deployment`'s template `hash`, as it is once running and ready: the
/// template's labels (and `pod-template-hash`) and annotations, the template's spec on a node,
/// and the status the kubelet reports.
fn pod_of(deployment: &Value, name: &str, hash: &str) -> Value {
    let template = &deployment["spec"]["template"];
    let mut labels = template["metadata"]["labels"].clone();
    if let Some(labels) = labels.as_object_mut() {
        labels.insert("pod-template-hash".to_owned(), json!(hash));
    }
    let mut spec = template["spec"].clone();
    if let Some(spec) = spec.as_object_mut() {
        spec.insert("nodeName".to_owned(), json!("fake-node"));
    }
    let started = now();
    let ready =
        |type_: &str| json!({ "type": type_, "status": "True", "lastTransitionTime": started });
    let containers = template["spec"]["containers"].as_array();
    let statuses: Vec<Value> = containers
        .into_iter()
        .flatten()
        .map(|container| {
            json!({
                "name": container["name"],
                "image": container["image"],
                "imageID": format!("{}@sha256:{:064x}", container["image"].as_str().unwrap_or(""), 0),
                "containerID": format!("containerd://{name}-{}", container["name"].as_str().unwrap_or("")),
                "ready": true,
                "started": true,
                "restartCount": 0,
                "state": { "running": { "startedAt": started } },
            })
        })
        .collect();
    let mut pod = json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "labels": labels,
            "ownerReferences": [{
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "name": deployment["metadata"]["name"],
                "uid": deployment["metadata"]["uid"],
                "controller": true,
                "blockOwnerDeletion": true,
            }],
        },
        "spec": spec,
        "status": {
            "phase": "Running",
            "conditions": [
                ready("PodReadyToStartContainers"),
                ready("Initialized"),
                ready("Ready"),
                ready("ContainersReady"),
                ready("PodScheduled"),
            ],
            "hostIP": "10.0.0.1",
            "podIP": pod_ip(name),
            "startTime": started,
            "containerStatuses": statuses,
            "qosClass": "BestEffort",
        },
    });
    if let Some(annotations) = template["metadata"].get("annotations") {
        pod["metadata"]["annotations"] = annotations.clone();
    }
    pod
}

/// An address in the pod network for the pod `name` (by a hash of the name: unique enough).
fn pod_ip(name: &str) -> String {
    let mut hasher = DefaultHasher::new();
    name.hash(&mut hasher);
    let bits = hasher.finish();
    format!("10.244.{}.{}", (bits >> 8) % 256, bits % 254 + 1)
}
