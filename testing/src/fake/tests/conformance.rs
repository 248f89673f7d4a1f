//! The fake measured against the real thing: every request of a table goes to the fake API
//! server and to a real kube-apiserver (envtest's, from `KUBEBUILDER_ASSETS`), and their answers
//! must agree: the status code, the `Status` of an error (reason, message, causes), and the
//! object of a success, but for what a server makes up (uid, resourceVersion, timestamps).
//!
//! The table holds what a user's code and tests send for custom resources and the built-in
//! kinds an operator touches: creates, replaces, patches of every type, status writes, deletes
//! with finalizers and preconditions, lists and selectors, server-side apply and its conflicts,
//! dry runs, field validation, and their misuses (a missing or stale `resourceVersion`, a
//! strategic-merge patch of a custom resource, a duplicate field under
//! `fieldValidation=Strict`, ownerReferences without a uid, names, labels, annotations and
//! finalizers the API server refuses, a namespace that does not exist, CRDs whose CEL rules do
//! not compile or cost too much, CRDs whose schema's defaults break it). Where the two cannot agree because they serve different
//! Kubernetes versions (envtest's binaries here are 1.28; the fake follows k8s-openapi's 1.33),
//! the case says so and is counted apart.
//!
//! Runs where envtest's binaries are: `cargo test -p operator-rs-testing --lib -- --ignored
//! envtest` (as hack/test runs it), which prints `fake agrees with kube-apiserver on A/N cases`.

use std::path::{Path, PathBuf};

use http::{Method, Request};
use k8s_openapi::api::core::v1::Namespace;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::Client;
use kube::api::ObjectMeta;
use regex::Regex;
use serde_json::Value;
use std::sync::LazyLock;

use crate::envtest::{Envtest, Options};
use crate::fake::FakeApiServer;
use crate::from_yaml;

mod built_in;
mod cases;
mod defaults;
mod more;

pub(super) use cases::table;

/// One request: a method, a path under the API server in which `{ns}` is the case's namespace
/// and `{n}` the case's number (for the names of cluster-scoped objects), and a body.
#[derive(Clone, Debug)]
pub(super) struct Call {
    pub(super) method: Method,
    pub(super) path: String,
    pub(super) content_type: &'static str,
    pub(super) body: Option<String>,
}

/// One case: requests that set it up (each must succeed on both servers), then the request
/// whose answers are compared.
#[derive(Clone, Debug)]
pub(super) struct Case {
    pub(super) name: &'static str,
    pub(super) setup: Vec<Call>,
    pub(super) call: Call,
    /// Why the servers' answers differ by Kubernetes version, if they do: such cases are
    /// reported, not failed.
    pub(super) version_difference: Option<&'static str>,
}

/// The CRDs that both servers serve before the cases run: the Memcached operator's (the
/// deploy-image scaffold), the WebServer and At examples', and cert-manager's Certificate.
const CRD_FILES: &[&str] = &[
    "tests/data/memcached/cache.example.com_memcacheds.yaml",
    "examples/webserver-operator/config/crd/bases/web.example.com_webservers.yaml",
    "examples/at-operator/config/crd/bases/at.example.com_ats.yaml",
    "tests/data/cert-manager/cert-manager.io_certificates.yaml",
];

fn crd_paths() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    CRD_FILES.iter().map(|file| root.join(file)).collect()
}

/// What a server answered, with what servers make up taken out.
#[derive(Clone, Debug, PartialEq)]
struct Answer {
    code: u16,
    body: Value,
}

impl std::fmt::Display for Answer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let body = serde_json::to_string(&self.body).unwrap_or_default();
        write!(f, "{} {body}", self.code)
    }
}

fn expand(text: &str, namespace: &str, n: usize) -> String {
    text.replace("{ns}", namespace)
        .replace("{n}", &n.to_string())
}

async fn send(client: &Client, call: &Call, namespace: &str, n: usize) -> Answer {
    let mut request = Request::builder()
        .method(call.method.clone())
        .uri(expand(&call.path, namespace, n));
    if call.body.is_some() {
        request = request.header(http::header::CONTENT_TYPE, call.content_type);
    }
    let body = call
        .body
        .as_deref()
        .map(|body| expand(body, namespace, n))
        .unwrap_or_default();
    let request = request.body(body.into_bytes()).expect("a valid request");
    let response = client
        .send(request.map(Into::into))
        .await
        .unwrap_or_else(|error| panic!("{} {}: {error}", call.method, call.path));
    let code = response.status().as_u16();
    let bytes = response.into_body().collect_bytes().await.expect("a body");
    let body = serde_json::from_slice(&bytes)
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&bytes).into_owned()));
    let sent: Option<Value> = call
        .body
        .as_deref()
        .and_then(|body| serde_json::from_str(body).ok());
    let generate_name = sent
        .as_ref()
        .and_then(|sent| sent["metadata"]["generateName"].as_str());
    Answer {
        code,
        body: normalized(body, generate_name),
    }
}

/// Takes out what each server makes up: uids, resourceVersions, times, continue tokens, the
/// random suffix of a generated name (of `generate_name`, the request's), and, in messages,
/// uids and the addresses of Go pointers (`(*bool)(0xc004163e94)` in a value printed with
/// `%#v`).
fn normalized(mut body: Value, generate_name: Option<&str>) -> Value {
    metadata(&mut body);
    if let Some(items) = body.get_mut("items").and_then(Value::as_array_mut) {
        items.iter_mut().for_each(metadata);
    }
    if let Some(object) = body.get_mut("object") {
        metadata(object);
    }
    if let Some(causes) = body
        .pointer_mut("/details/causes")
        .and_then(Value::as_array_mut)
    {
        causes.sort_by_key(|cause| cause.to_string());
    }
    made_up_in_text(&mut body, generate_name);
    body
}

/// What a server makes up in an object's metadata (and a CRD's conditions, a Service's
/// cluster IPs).
fn metadata(object: &mut Value) {
    if object["kind"] == "Service" {
        if let Some(ip) = object.pointer_mut("/spec/clusterIP")
            && ip != "None"
        {
            *ip = Value::from("<ip>");
        }
        for ip in object
            .pointer_mut("/spec/clusterIPs")
            .and_then(Value::as_array_mut)
            .into_iter()
            .flatten()
            .filter(|ip| *ip != "None")
        {
            *ip = Value::from("<ip>");
        }
    }
    let is_crd = object["kind"] == "CustomResourceDefinition";
    if let (true, Some(conditions)) = (
        is_crd,
        object
            .pointer_mut("/status/conditions")
            .and_then(Value::as_array_mut),
    ) {
        for condition in conditions.iter_mut().filter_map(Value::as_object_mut) {
            condition.remove("lastTransitionTime");
        }
    }
    let Some(metadata) = object.get_mut("metadata").and_then(Value::as_object_mut) else {
        return;
    };
    for key in [
        "uid",
        "resourceVersion",
        "creationTimestamp",
        "deletionTimestamp",
        "continue",
        "selfLink",
    ] {
        metadata.remove(key);
    }
    if let (Some(prefix), Some(name)) = (
        metadata.get("generateName").and_then(Value::as_str),
        metadata.get("name").and_then(Value::as_str),
    ) && let Some(suffix) = name.strip_prefix(prefix)
        && suffix.len() == 5
    {
        let name = format!("{prefix}<suffix>");
        metadata.insert("name".to_owned(), Value::String(name));
    }
    if let Some(fields) = metadata
        .get_mut("managedFields")
        .and_then(Value::as_array_mut)
    {
        for entry in fields {
            if let Some(entry) = entry.as_object_mut() {
                entry.remove("time");
            }
        }
    }
}

/// What servers make up, in every string of `value`: uids, pointer addresses, times, resource
/// versions (in a message's preconditions, or in an object written into a message), and the
/// suffixes of names generated from `generate_name`.
fn made_up_in_text(value: &mut Value, generate_name: Option<&str>) {
    static PATTERNS: LazyLock<Vec<(Regex, &str)>> = LazyLock::new(|| {
        [
            (
                "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}",
                "<uid>",
            ),
            (r"\(0x[0-9a-f]+\)", "(<pointer>)"),
            (r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z", "<time>"),
            (r"in record \(\d+\)", "in record (<rv>)"),
            (
                r#"resourceVersion(\\*)":(\\*)"\d+"#,
                r#"resourceVersion$1":$2"<rv>"#,
            ),
        ]
        .into_iter()
        .map(|(pattern, replacement)| (Regex::new(pattern).unwrap(), replacement))
        .collect()
    });
    match value {
        Value::String(text) => {
            for (pattern, replacement) in PATTERNS.iter() {
                *text = pattern.replace_all(text, *replacement).into_owned();
            }
            if let Some(prefix) = generate_name.filter(|prefix| !prefix.is_empty()) {
                let suffix = format!(
                    "{}[bcdfghjklmnpqrstvwxz2456789]{{5}}",
                    regex::escape(prefix)
                );
                let generated = Regex::new(&suffix).unwrap();
                *text = generated
                    .replace_all(text, format!("{prefix}<suffix>"))
                    .into_owned();
            }
        }
        Value::Array(items) => items
            .iter_mut()
            .for_each(|item| made_up_in_text(item, generate_name)),
        Value::Object(fields) => fields
            .values_mut()
            .for_each(|field| made_up_in_text(field, generate_name)),
        _ => {}
    }
}

/// Where two answers differ: the JSON pointer of each differing value, with both values (at
/// most a few hundred characters of each).
fn differences(expected: &Value, got: &Value, at: &str, out: &mut Vec<String>) {
    match (expected, got) {
        (Value::Object(a), Value::Object(b)) => {
            let keys: std::collections::BTreeSet<&String> = a.keys().chain(b.keys()).collect();
            for key in keys {
                let (a, b) = (a.get(key), b.get(key));
                let at = format!("{at}/{key}");
                match (a, b) {
                    (Some(a), Some(b)) => differences(a, b, &at, out),
                    _ => out.push(difference(&at, a, b)),
                }
            }
        }
        (Value::Array(a), Value::Array(b)) if a.len() == b.len() => {
            for (index, (a, b)) in a.iter().zip(b).enumerate() {
                differences(a, b, &format!("{at}/{index}"), out);
            }
        }
        (a, b) if a != b => out.push(difference(at, Some(a), Some(b))),
        _ => {}
    }
}

fn difference(at: &str, expected: Option<&Value>, got: Option<&Value>) -> String {
    let show = |value: Option<&Value>| {
        let text = value.map_or("(none)".to_owned(), Value::to_string);
        if text.chars().count() > 3000 {
            format!("{}…", text.chars().take(3000).collect::<String>())
        } else {
            text
        }
    };
    format!(
        "    {at}:\n      kube-apiserver: {}\n      fake:           {}",
        show(expected),
        show(got)
    )
}

/// One case on one server: its setup, which must succeed, then its request.
async fn run(client: &Client, case: &Case, namespace: &str, n: usize, server: &str) -> Answer {
    for call in &case.setup {
        let answer = send(client, call, namespace, n).await;
        assert!(
            answer.code < 300,
            "{server}: case {:?}: setup {} {}: {answer}",
            case.name,
            call.method,
            call.path
        );
    }
    send(client, &case.call, namespace, n).await
}

async fn fake_answer(
    crds: &[CustomResourceDefinition],
    case: &Case,
    namespace: &str,
    n: usize,
) -> Answer {
    let fake = FakeApiServer::new();
    for crd in crds {
        fake.register_crd(crd);
    }
    fake.put(&Namespace {
        metadata: ObjectMeta {
            name: Some(namespace.to_owned()),
            ..ObjectMeta::default()
        },
        ..Namespace::default()
    });
    run(&fake.client(), case, namespace, n, "fake").await
}

#[tokio::test]
#[ignore = "needs envtest's binaries: KUBEBUILDER_ASSETS (see docs/e2e.md)"]
async fn envtest_the_fake_agrees_with_kube_apiserver() {
    let options = Options {
        crd_paths: crd_paths(),
        ..Options::default()
    };
    let envtest = Envtest::start(options).unwrap_or_else(|error| panic!("{error:#}"));
    let real = envtest.client();
    let crds: Vec<_> = crd_paths()
        .iter()
        .map(|path| from_yaml(&std::fs::read_to_string(path).unwrap()).unwrap())
        .collect();
    let table = table();
    let (mut agree, mut versions, mut disagreements) = (0, Vec::new(), Vec::new());
    for (n, case) in table.iter().enumerate() {
        let namespace = envtest.create_namespace("conformance").await;
        let expected = run(&real, case, &namespace, n, "kube-apiserver").await;
        let got = fake_answer(&crds, case, &namespace, n).await;
        if got == expected {
            agree += 1;
        } else if let Some(why) = case.version_difference {
            versions.push(format!("{}: {why}", case.name));
        } else {
            let mut lines = Vec::new();
            if expected.code != got.code {
                lines.push(format!(
                    "    code: kube-apiserver {}, fake {}",
                    expected.code, got.code
                ));
            }
            differences(&expected.body, &got.body, "", &mut lines);
            disagreements.push(format!("{}:\n{}", case.name, lines.join("\n")));
        }
    }
    println!(
        "fake agrees with kube-apiserver on {agree}/{} cases ({} differ by Kubernetes version)",
        table.len(),
        versions.len()
    );
    for difference in &versions {
        println!("  version difference: {difference}");
    }
    assert!(
        disagreements.is_empty(),
        "{} disagreements:\n{}",
        disagreements.len(),
        disagreements.join("\n")
    );
}
