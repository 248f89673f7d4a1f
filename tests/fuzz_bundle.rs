//! `bundle validate` on bundles of any shape, made up by proptest: whatever a folder holds, the
//! validators give a verdict, each problem on one line, without a panic and without hanging.
//!
//! A bundle here is a few folders of entries, each of which may be a manifest (an object of the
//! kinds a bundle holds, more or less broken), YAML at its oddest (tags, anchors and alias
//! bombs, merge keys, nesting past the parser's limit, separators with text, CRLF, a BOM, NUL
//! bytes, bytes that are not UTF-8, megabyte scalars, many documents), a named pipe, a socket,
//! a folder, or a symbolic link (to a sibling, to a device, out of the bundle, to nothing, to
//! itself), under names hidden, spaced, non-ASCII or 255 bytes long. Every case runs the
//! default validators and every optional suite with OLM v1's check.
//!
//! Sized by `PROPTEST_CASES` (default 96) and a time budget, `FUZZ_BUNDLE_SECONDS` (default
//! 20): past the budget the remaining cases pass without running, so CI stays well under a
//! minute; run longer locally with both raised. A panic found here becomes a case of
//! `regressions` below.
#![cfg(unix)]

use std::path::Path;
use std::sync::LazyLock;
use std::time::{Duration, Instant};

use operator_rs::olm::validate::{self, Options};
use proptest::prelude::*;

/// How long one bundle may take before the run counts as hung.
const HANG: Duration = Duration::from_secs(30);

static START: LazyLock<Instant> = LazyLock::new(Instant::now);

fn budget() -> Duration {
    let seconds = std::env::var("FUZZ_BUNDLE_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20);
    Duration::from_secs(seconds)
}

fn config() -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(96);
    ProptestConfig {
        cases,
        // The shrunk case is what a regression test needs; shrinking must not eat the budget.
        max_shrink_iters: 64,
        // A case found is kept as a test of `regressions`, not in a file beside the sources.
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// What an entry of the bundle is.
#[derive(Debug, Clone)]
enum Entry {
    File(Vec<u8>),
    Pipe,
    Socket,
    Folder(Vec<(String, Vec<u8>)>),
    Link(String),
}

/// A manifest, more or less whole, of the kinds a bundle holds.
fn manifest() -> impl Strategy<Value = String> {
    let kind = prop::sample::select(vec![
        "ClusterServiceVersion",
        "CustomResourceDefinition",
        "ConfigMap",
        "Service",
        "ServiceAccount",
        "Secret",
        "Deployment",
        "",
    ]);
    let api_version = prop::sample::select(vec![
        "v1",
        "operators.coreos.com/v1alpha1",
        "apiextensions.k8s.io/v1",
        "apiextensions.k8s.io/v1beta1",
        "a/b/c",
        "",
    ]);
    let name = prop::sample::select(vec![
        "memcached-operator.v0.0.1",
        "widgets.example.com",
        "Bad_Name",
        "",
        "123",
    ]);
    (
        kind,
        api_version,
        name,
        prop::collection::vec(body_field(), 0..6),
    )
        .prop_map(|(kind, api_version, name, fields)| {
            let mut text =
                format!("apiVersion: {api_version}\nkind: {kind}\nmetadata:\n  name: {name}\n");
            for field in fields {
                text.push_str(&field);
            }
            text
        })
}

/// Top-level fields a CSV, a CRD or another object may have, right or wrong.
fn body_field() -> impl Strategy<Value = String> {
    prop::sample::select(vec![
        "spec:\n  displayName: D\n  version: 0.0.1\n  installModes: [{type: AllNamespaces, supported: true}]\n",
        "spec:\n  install: {strategy: deployment, spec: {deployments: [{name: d, spec: {template: {spec: {serviceAccountName: sa}}}}]}}\n",
        "spec:\n  customresourcedefinitions: {owned: [{name: widgets.example.com, kind: Widget, version: v1}, {name: nodot}]}\n",
        "spec:\n  group: example.com\n  names: {kind: Widget, plural: widgets, singular: wid_get}\n  scope: Namespaced\n  versions: [{name: v1, served: true, storage: true}, {name: v1}]\n",
        "spec:\n  version: v1\n  conversion: {strategy: Webhook, webhookClientConfig: {url: 'http://x?y#z'}}\n  preserveUnknownFields: true\n",
        "spec:\n  relatedImages: [{name: a, image: ''}, {image: 'oci://x'}, 3]\n  maintainers: me\n  minKubeVersion: 1.2\n",
        "metadata:\n  annotations: {alm-examples: '[{\"kind\": 1}]', olm.skiprange: x, capabilities: 7}\n  namespace: 0\n",
        "metadata:\n  generateName: g-\n  labels: {a: 1, 'b c': d}\n  ownerReferences: [{controller: true}, {controller: true}, 3]\n  finalizers: [x, 1]\n",
        "metadata:\n  managedFields: [{operation: Delete, manager: \"\\u0007\"}]\n  generation: -1\n",
        "status: {storedVersions: [v9]}\n",
        "spec: [1, 2]\n",
        "spec: null\n",
        "spec: ~\nkind: [a]\n",
    ])
    .prop_map(str::to_string)
}

/// YAML at its oddest.
fn odd_yaml() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        manifest().prop_map(String::into_bytes),
        (manifest(), manifest()).prop_map(|(a, b)| format!("{a}---\n{b}").into_bytes()),
        (manifest(), 1..40usize).prop_map(|(a, n)| format!("# c\n---\n---\n{}", format!("{a}---\n").repeat(n)).into_bytes()),
        prop::sample::select(vec![
            "a: &a [x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c]\ne: [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\n",
            "b: &b {x: 1}\nm:\n  !!merge <<: *b\n  <<: [*b, *b]\n  '<<': q\n",
            "a: !!binary '%%'\nb: !!int abc\nc: !!float x\nd: !!timestamp 1\ne: !!merge x\nf: !foo bar\n",
            "? [complex, key]\n: v\n",
            "a: 1\n--- not a comment\nb: 2\n",
            "\u{feff}kind: ConfigMap\r\nmetadata:\r\n  name: bom\r\n",
            "kind: \u{0}\n",
            "kind:\n\t- tab\n",
            "%YAML 1.1\n---\nkind: X\n...\n---\nkind: Y\n",
            "*undefined\n",
            "a: &x 1\nb: *x\nc: &x 2\n",
            "{\"kind\": \"ConfigMap\", \"metadata\": {\"name\": \"json\"}}",
            "[1, 2, 3]\n",
            "just a string\n",
            "0x1F: 010\n1e999: .inf\n-.inf: 18446744073709551616\n",
            "----\n",
            "---",
            "",
            "\n\n\n",
        ])
        .prop_map(|s| s.as_bytes().to_vec()),
        (1..600usize, prop::bool::ANY).prop_map(|(depth, flow)| deep(depth, flow)),
        (1..3_000_000usize).prop_map(|n| format!("kind: ConfigMap\nmetadata: {{name: big}}\ndata: {{x: '{}'}}\n", "x".repeat(n)).into_bytes()),
        prop::collection::vec(any::<u8>(), 0..512),
    ]
}

/// Nesting `depth` deep, in block or flow style.
fn deep(depth: usize, flow: bool) -> Vec<u8> {
    if flow {
        format!("kind: {}{}\n", "[".repeat(depth), "]".repeat(depth)).into_bytes()
    } else {
        let mut text = String::from("kind: Deep\nspec:\n");
        for level in 0..depth {
            text.push_str(&" ".repeat(level + 1));
            text.push_str("- k:\n");
        }
        text.into_bytes()
    }
}

fn entry_name() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => "[a-z]{1,8}\\.yaml",
        1 => Just(".hidden.yaml".to_string()),
        1 => Just("with space.yaml".to_string()),
        1 => Just("été ✓.yml".to_string()),
        1 => Just("annotations.yaml".to_string()),
        1 => Just(format!("{}.yaml", "n".repeat(250))),
    ]
}

fn entry() -> impl Strategy<Value = Entry> {
    prop_oneof![
        8 => odd_yaml().prop_map(Entry::File),
        1 => Just(Entry::Pipe),
        1 => Just(Entry::Socket),
        1 => prop::collection::vec(("[a-z]{1,4}\\.yaml", odd_yaml()), 0..3).prop_map(Entry::Folder),
        2 => prop::sample::select(vec![
            "/dev/zero", "/dev/urandom", "/dev/null", "/", "/etc", "../metadata/annotations.yaml",
            "annotations.yaml", "nowhere", "self", "../manifests", "../../outside.yaml",
        ])
        .prop_map(|to| Entry::Link(to.to_string())),
    ]
}

fn annotations() -> impl Strategy<Value = Entry> {
    let good = "annotations:\n  operators.operatorframework.io.bundle.mediatype.v1: registry+v1\n  operators.operatorframework.io.bundle.manifests.v1: manifests/\n  operators.operatorframework.io.bundle.metadata.v1: metadata/\n  operators.operatorframework.io.bundle.package.v1: p\n  operators.operatorframework.io.bundle.channels.v1: alpha\n";
    prop_oneof![
        4 => Just(Entry::File(good.as_bytes().to_vec())),
        1 => Just(Entry::File(good.replace("manifests/", "../../etc/").into_bytes())),
        1 => Just(Entry::File(format!("# c\n---\n{good}").into_bytes())),
        1 => Just(Entry::File(b"dependencies:\n- type: olm.package\n- type: olm.constraint\n  value: {cel: {rule: 1}}\n- {}\n".to_vec())),
        2 => entry(),
    ]
}

/// A bundle: entries of manifests/ and metadata/, and whether those folders are there at all.
fn bundle() -> impl Strategy<Value = (Vec<(String, Entry)>, Option<Entry>, bool)> {
    (
        prop::collection::vec((entry_name(), entry()), 0..7),
        prop::option::weighted(0.9, annotations()),
        prop::bool::weighted(0.95),
    )
}

fn write_entry(path: &Path, entry: &Entry) {
    match entry {
        Entry::File(bytes) => std::fs::write(path, bytes).unwrap(),
        Entry::Pipe => {
            let name = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
            // SAFETY: a NUL-terminated path; mkfifo touches nothing else.
            assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o644) }, 0, "{path:?}");
        }
        Entry::Socket => {
            // A socket's path has at most 107 bytes: bound under a short name, then renamed.
            // The listener is dropped at once; the socket file stays.
            let short = path.with_file_name("s");
            std::os::unix::net::UnixListener::bind(&short).unwrap();
            std::fs::rename(&short, path).unwrap();
        }
        Entry::Folder(files) => {
            std::fs::create_dir(path).unwrap();
            for (name, bytes) in files {
                std::fs::write(path.join(name), bytes).unwrap();
            }
        }
        Entry::Link(to) if to == "self" => std::os::unix::fs::symlink(path, path).unwrap(),
        Entry::Link(to) => std::os::unix::fs::symlink(to, path).unwrap(),
    }
}

/// The bundle written under `root/bundle` (with a file outside it, for links to leave by).
fn write_bundle(
    root: &Path,
    case: &(Vec<(String, Entry)>, Option<Entry>, bool),
) -> std::path::PathBuf {
    let (manifests, annotations, has_manifests) = case;
    let dir = root.join("bundle");
    std::fs::create_dir_all(dir.join("metadata")).unwrap();
    std::fs::write(
        root.join("outside.yaml"),
        "kind: ConfigMap\nmetadata: {name: out}\n",
    )
    .unwrap();
    if *has_manifests {
        std::fs::create_dir(dir.join("manifests")).unwrap();
        for (name, entry) in manifests {
            let path = dir.join("manifests").join(name);
            if std::fs::symlink_metadata(&path).is_err() {
                write_entry(&path, entry);
            }
        }
    }
    if let Some(entry) = annotations {
        write_entry(&dir.join("metadata/annotations.yaml"), entry);
    }
    dir
}

/// Every validator on `dir`, in a thread of the size a program's main thread has, watched for
/// hanging: the problems, or why there is no verdict.
fn verdict(dir: &Path) -> Result<Vec<String>, String> {
    let dir = dir.to_path_buf();
    let (send, receive) = std::sync::mpsc::channel();
    std::thread::Builder::new()
        .stack_size(8 << 20)
        .spawn(move || {
            let options = Options {
                select_optional: Some("name".into()),
                olmv1: true,
                ..Options::default()
            };
            let outcome = std::panic::catch_unwind(|| validate::validate(&dir, &options));
            let _ = send.send(outcome);
        })
        .unwrap();
    match receive.recv_timeout(HANG) {
        Err(_) => Err(format!("no verdict within {HANG:?}: it hangs")),
        Ok(Err(panic)) => Err(format!(
            "panicked: {}",
            panic
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| panic.downcast_ref::<&str>().copied())
                .unwrap_or("?")
        )),
        Ok(Ok(Err(err))) => Err(format!("no verdict: {err}")),
        Ok(Ok(Ok(problems))) => Ok(problems.iter().map(ToString::to_string).collect()),
    }
}

fn assert_verdict(dir: &Path) {
    let problems = verdict(dir).unwrap_or_else(|why| panic!("{}: {why}", dir.display()));
    for problem in &problems {
        assert!(
            !problem.contains('\n'),
            "a problem on more than one line: {problem:?}"
        );
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn every_bundle_gets_a_verdict(case in bundle()) {
        if START.elapsed() > budget() {
            return Ok(());
        }
        let tmp = tempfile::tempdir().unwrap();
        let dir = write_bundle(tmp.path(), &case);
        assert_verdict(&dir);
    }
}

/// What the fuzzing found, kept.
mod regressions {
    use super::*;

    fn bundle_of(files: &[(&str, &[u8])]) -> tempfile::TempDir {
        let tmp = tempfile::tempdir().unwrap();
        for (path, bytes) in files {
            let path = tmp.path().join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, bytes).unwrap();
        }
        tmp
    }

    /// Nesting past the parser's limit is an error of the file, not a crash of the run.
    #[test]
    fn nesting_past_the_limit_is_a_problem_of_the_file() {
        let tmp = bundle_of(&[
            ("manifests/deep.yaml", &deep(100_000, true)),
            ("manifests/block.yaml", &deep(2_000, false)),
        ]);
        assert_verdict(tmp.path());
    }
}
