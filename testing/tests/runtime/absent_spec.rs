//! A kind whose CRD does not require a spec, read through `spec_or_default!` from an API server
//! that stores objects without one and with `spec: null`: each reads as the default spec, and a
//! list of them (what a watch starts with) reads whole, on the fake and on envtest's
//! kube-apiserver.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, ApiResource, DynamicObject, ListParams};
use kube::{CustomResource, ResourceExt};
use operator_rs_runtime::manifests::Manifests;
use operator_rs_testing::cluster::TestCluster;
use operator_rs_testing::from_yaml;
use serde::{Deserialize, Serialize};

/// The types of a Gadget as `operator-rs create api --external-api-path` writes them for the
/// CRD below, whose schema neither requires the spec nor forbids it to be null.
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[kube(
    group = "absent-spec.example.com",
    version = "v1",
    kind = "Gadget",
    plural = "gadgets"
)]
#[kube(namespaced, schema = "disabled", derive = "PartialEq")]
#[serde(remote = "Self")]
pub(crate) struct GadgetSpec {
    /// Required when there is a spec.
    #[serde(rename = "secretName")]
    pub(crate) secret_name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) replicas: Option<i32>,
}

operator_rs_runtime::spec_or_default!(GadgetSpec);

const CRD: &str = "
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: gadgets.absent-spec.example.com
spec:
  group: absent-spec.example.com
  names: {kind: Gadget, listKind: GadgetList, plural: gadgets, singular: gadget}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          apiVersion: {type: string}
          kind: {type: string}
          metadata: {type: object}
          spec:
            type: object
            nullable: true
            required: [secretName]
            properties:
              secretName: {type: string}
              replicas: {type: integer, format: int32}
";

fn gadget(name: &str, spec: &str) -> String {
    format!(
        "apiVersion: absent-spec.example.com/v1\nkind: Gadget\nmetadata:\n  name: \"{name}\"\n  \
         labels: {{kept: \"yes\"}}\n{spec}"
    )
}

async fn absent_specs_read_as_the_default(cluster: TestCluster) {
    let crd: CustomResourceDefinition = from_yaml(CRD).unwrap();
    cluster
        .install(Manifests {
            crds: vec![crd],
            ..Manifests::default()
        })
        .await;
    for (name, spec) in [
        ("missing", ""),
        ("null", "spec: null\n"),
        ("set", "spec: {secretName: s, replicas: 2}\n"),
    ] {
        let created = cluster.create_yaml::<Gadget>(&gadget(name, spec)).await;
        created.unwrap_or_else(|error| panic!("{name}: {error}"));
    }
    // The API server keeps what it was given: the spec is not there, or null.
    let untyped = Api::<DynamicObject>::namespaced_with(
        cluster.client(),
        cluster.namespace(),
        &ApiResource::erase::<Gadget>(&()),
    );
    let stored = untyped.get("missing").await.unwrap().data;
    assert!(stored.get("spec").is_none(), "{stored}");
    let stored = untyped.get("null").await.unwrap().data;
    assert_eq!(
        stored.get("spec"),
        Some(&serde_json::Value::Null),
        "{stored}"
    );

    let api = Api::<Gadget>::namespaced(cluster.client(), cluster.namespace());
    for name in ["missing", "null"] {
        let gadget = api.get(name).await.unwrap();
        assert_eq!(gadget.spec, GadgetSpec::default(), "{name}");
        assert_eq!(gadget.labels()["kept"], "yes", "{name}");
    }
    let set = api.get("set").await.unwrap().spec;
    assert_eq!((set.secret_name.as_str(), set.replicas), ("s", Some(2)));
    // One list with all three, as a watch's first request reads them.
    let listed = api.list(&ListParams::default()).await.unwrap();
    let mut names: Vec<String> = listed.items.iter().map(ResourceExt::name_any).collect();
    names.sort();
    assert_eq!(names, ["missing", "null", "set"]);
}

#[tokio::test]
async fn absent_specs_read_as_the_default_on_the_fake() {
    absent_specs_read_as_the_default(TestCluster::fake()).await;
}

#[cfg(feature = "envtest")]
#[tokio::test]
#[ignore = "needs envtest's binaries: KUBEBUILDER_ASSETS (see docs/e2e.md)"]
async fn envtest_absent_specs_read_as_the_default() {
    absent_specs_read_as_the_default(TestCluster::envtest().await).await;
}
