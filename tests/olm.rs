//! OLM packaging: `generate kustomize manifests`, `generate bundle`, `bundle validate`.
//!
//! Two projects, the deploy-image Memcached operator and one with defaulting, validating and
//! conversion webhooks, are scaffolded here; what `make manifests` and kustomize would render for
//! them comes from tests/data/olm (building the projects takes minutes: hack/test-generated
//! runs `make bundle` on built ones). Their bundles are snapshotted, validated, and checked
//! against OLM's ClusterServiceVersion schema; then each class of fault `bundle validate` knows
//! is planted in a good bundle and must be named.

mod support;

use std::path::{Path, PathBuf};

use serde_yaml::Value;
use support::{assert_refused, assert_tree_parses, folder, openapi, operator_rs, run_ok, tree};

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/olm");

struct Scenario {
    name: &'static str,
    commands: &'static [&'static [&'static str]],
}

const MEMCACHED: Scenario = Scenario {
    name: "memcached-operator",
    commands: &[&[
        "create",
        "api",
        "--group",
        "cache",
        "--version",
        "v1alpha1",
        "--kind",
        "Memcached",
        "--image=memcached:1.6.26-alpine3.19",
        "--image-container-command=memcached,--memory-limit=64,-o,modern,-v",
        "--image-container-port=11211",
        "--run-as-user=1001",
        "--make=false",
    ]],
};

const WEBHOOKS: Scenario = Scenario {
    name: "crew-webhooks",
    commands: &[
        &[
            "create",
            "api",
            "--group",
            "crew",
            "--version",
            "v1",
            "--kind",
            "Captain",
            "--make=false",
        ],
        &[
            "create",
            "webhook",
            "--group",
            "crew",
            "--version",
            "v1",
            "--kind",
            "Captain",
            "--defaulting",
            "--programmatic-validation",
            "--make=false",
        ],
        &[
            "create",
            "api",
            "--group",
            "crew",
            "--version",
            "v1",
            "--kind",
            "FirstMate",
            "--make=false",
        ],
        &[
            "create",
            "api",
            "--group",
            "crew",
            "--version",
            "v2",
            "--kind",
            "FirstMate",
            "--controller=false",
            "--make=false",
        ],
        &[
            "create",
            "webhook",
            "--group",
            "crew",
            "--version",
            "v1",
            "--kind",
            "FirstMate",
            "--conversion",
            "--spoke",
            "v2",
            "--make=false",
        ],
        &[
            "create",
            "api",
            "--group",
            "crew",
            "--version",
            "v1",
            "--kind",
            "Admiral",
            "--plural",
            "admirales",
            "--namespaced=false",
            "--make=false",
        ],
        &[
            "create",
            "webhook",
            "--group",
            "crew",
            "--version",
            "v1",
            "--kind",
            "Admiral",
            "--plural",
            "admirales",
            "--defaulting",
            "--make=false",
        ],
        &[
            "create",
            "webhook",
            "--group",
            "apps",
            "--version",
            "v1",
            "--kind",
            "Deployment",
            "--defaulting",
            "--programmatic-validation",
            "--make=false",
        ],
    ],
};

const MANIFESTS_FLAGS: &[&str] = &[
    "generate",
    "kustomize",
    "manifests",
    "--interactive=false",
    "--provider",
    "Acme",
    "--maintainers",
    "Jane Doe <jane@example.com>",
];

/// The fixture's rendered objects, each a YAML document.
fn fixture_objects(scenario: &Scenario) -> Vec<Value> {
    let path = format!("{FIXTURES}/{}.rendered.yaml", scenario.name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_yaml::Deserializer::from_str(&text)
        .map(|doc| <Value as serde::Deserialize>::deserialize(doc).unwrap())
        .filter(|v| !v.is_null())
        .collect()
}

/// The project, scaffolded, with the CRDs `make manifests` would write.
fn project(scenario: &Scenario) -> (tempfile::TempDir, PathBuf) {
    let (tmp, dir) = folder(scenario.name);
    run_ok(
        &dir,
        &["init", "--domain", "example.com", "--owner", "Acme"],
    );
    for command in scenario.commands {
        run_ok(&dir, command);
    }
    let bases = dir.join("config/crd/bases");
    std::fs::create_dir_all(&bases).unwrap();
    for crd in fixture_objects(scenario)
        .into_iter()
        .filter(|o| o["kind"] == "CustomResourceDefinition")
    {
        let name = crd["metadata"]["name"].as_str().unwrap();
        let (plural, group) = name.split_once('.').unwrap();
        std::fs::write(
            bases.join(format!("{group}_{plural}.yaml")),
            serde_yaml::to_string(&crd).unwrap(),
        )
        .unwrap();
    }
    (tmp, dir)
}

/// What `kubectl kustomize config/manifests` renders: the fixture, with the CSV base on disk in
/// place of the fixture's (config/manifests adds no prefix or namespace to it). Written next to
/// the project; returns its path.
fn render(scenario: &Scenario, dir: &Path) -> PathBuf {
    let base = std::fs::read_to_string(dir.join(format!(
        "config/manifests/bases/{}.clusterserviceversion.yaml",
        scenario.name
    )))
    .unwrap();
    let mut out = String::new();
    for object in fixture_objects(scenario) {
        if object["kind"] != "ClusterServiceVersion" {
            out.push_str("---\n");
            out.push_str(&serde_yaml::to_string(&object).unwrap());
        }
    }
    out.push_str("---\n");
    out.push_str(&base);
    let path = dir.parent().unwrap().join("rendered.yaml");
    std::fs::write(&path, out).unwrap();
    path
}

fn generate_bundle(scenario: &Scenario, dir: &Path, flags: &[&str]) -> String {
    let input = render(scenario, dir);
    let mut argv = vec!["generate", "bundle", "--input", input.to_str().unwrap()];
    argv.extend(flags);
    let out = operator_rs(dir).args(&argv).output().unwrap();
    assert!(
        out.status.success(),
        "{argv:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// `bundle validate`'s output and whether it passed.
fn validate(dir: &Path, bundle: &str) -> (bool, String) {
    let out = operator_rs(dir)
        .args(["bundle", "validate", bundle])
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!text.contains("panicked"), "{text}");
    (out.status.success(), text)
}

fn read(dir: &Path, path: &str) -> String {
    std::fs::read_to_string(dir.join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn csv_path(scenario: &Scenario) -> String {
    format!(
        "bundle/manifests/{}.clusterserviceversion.yaml",
        scenario.name
    )
}

/// Every file OLM packaging wrote, for one snapshot.
fn packaging_files(dir: &Path) -> String {
    let mut out = String::new();
    for (path, bytes) in tree(dir) {
        let ours = ["bundle/", "config/manifests/", "config/scorecard/"]
            .iter()
            .any(|p| path.starts_with(p))
            || path == "bundle.Dockerfile";
        if ours {
            out.push_str(&format!(
                "==> {path} <==\n{}\n",
                String::from_utf8_lossy(&bytes)
            ));
        }
    }
    out
}

fn assert_csv_fits_olm_schema(csv: &str) {
    let crd = std::fs::read_to_string(format!(
        "{FIXTURES}/operators.coreos.com_clusterserviceversions.yaml"
    ))
    .unwrap();
    let schema = openapi::crd_schema(&crd, "v1alpha1");
    let value: serde_json::Value = serde_yaml::from_str(csv).unwrap();
    let problems = openapi::problems(&schema, &value);
    assert!(
        problems.is_empty(),
        "the CSV does not fit OLM's schema:\n{}",
        problems.join("\n")
    );
}

fn bundle_of(scenario: &Scenario) -> (tempfile::TempDir, PathBuf) {
    let (tmp, dir) = project(scenario);
    run_ok(&dir, MANIFESTS_FLAGS);
    generate_bundle(scenario, &dir, &["--version", "0.0.1"]);
    (tmp, dir)
}

fn check_bundle(scenario: &Scenario) {
    let (_tmp, dir) = bundle_of(scenario);
    insta::assert_snapshot!(format!("{}_bundle", scenario.name), packaging_files(&dir));
    assert_tree_parses(&dir);
    let csv = read(&dir, &csv_path(scenario));
    assert_csv_fits_olm_schema(&csv);
    let (ok, report) = validate(&dir, "./bundle");
    assert!(ok, "{report}");
    assert!(!report.contains("ERROR"), "{report}");
    assert!(
        report.contains("All validation tests have completed successfully"),
        "{report}"
    );
}

#[test]
fn memcached_bundle() {
    check_bundle(&MEMCACHED);
}

#[test]
fn webhooks_bundle() {
    check_bundle(&WEBHOOKS);
    let (_tmp, dir) = bundle_of(&WEBHOOKS);
    let csv: Value = serde_yaml::from_str(&read(&dir, &csv_path(&WEBHOOKS))).unwrap();
    let deployment = &csv["spec"]["install"]["spec"]["deployments"][0]["spec"]["template"]["spec"];
    // OLM mounts its certificate where cert-manager's Secret was: that volume must be gone, and
    // the manager must still read the folder OLM mounts.
    let text = serde_yaml::to_string(deployment).unwrap();
    assert!(!text.contains("webhook-server-cert"), "{text}");
    assert!(
        text.contains("--webhook-cert-path=/tmp/k8s-webhook-server/serving-certs"),
        "{text}"
    );
    let kinds: Vec<&str> = csv["spec"]["webhookdefinitions"]
        .as_sequence()
        .unwrap()
        .iter()
        .map(|w| w["type"].as_str().unwrap())
        .collect();
    for kind in [
        "MutatingAdmissionWebhook",
        "ValidatingAdmissionWebhook",
        "ConversionWebhook",
    ] {
        assert!(kinds.contains(&kind), "{kinds:?}");
    }
    let files: Vec<String> = tree(&dir)
        .into_keys()
        .filter(|p| p.starts_with("bundle/manifests/"))
        .collect();
    for gone in [
        "certificate",
        "issuer",
        "webhook-service",
        "_namespace",
        "serviceaccount",
        "binding",
    ] {
        assert!(!files.iter().any(|f| f.contains(gone)), "{gone}: {files:?}");
    }
}

/// A good bundle with one fault planted, and the words `bundle validate` must say about it.
struct Fault {
    name: &'static str,
    plant: fn(&Path),
    expected: &'static str,
}

fn edit(path: &Path, f: impl FnOnce(&mut Value)) {
    let mut value: Value = serde_yaml::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    f(&mut value);
    std::fs::write(path, serde_yaml::to_string(&value).unwrap()).unwrap();
}

fn csv_file(bundle: &Path) -> PathBuf {
    bundle.join("manifests/crew-webhooks.clusterserviceversion.yaml")
}

fn annotations_file(bundle: &Path) -> PathBuf {
    bundle.join("metadata/annotations.yaml")
}

fn set(value: &mut Value, path: &[&str], new: Value) {
    let mut at = value;
    for key in &path[..path.len() - 1] {
        at = at.get_mut(*key).unwrap();
    }
    at[path[path.len() - 1]] = new;
}

const FAULTS: &[Fault] = &[
    Fault {
        name: "required field",
        plant: |b| {
            edit(&csv_file(b), |v| {
                set(v, &["spec", "displayName"], "".into())
            })
        },
        expected: "spec.displayName: required",
    },
    Fault {
        name: "semver",
        plant: |b| edit(&csv_file(b), |v| set(v, &["spec", "version"], "1.0".into())),
        expected: "spec.version: \"1.0\" is not a semantic version",
    },
    Fault {
        name: "CSV name",
        plant: |b| {
            edit(&csv_file(b), |v| {
                set(v, &["metadata", "name"], "crew-webhooks".into())
            })
        },
        expected: "must have the format <package>.v<X.Y.Z>",
    },
    Fault {
        name: "CRD not owned",
        plant: |b| {
            edit(&csv_file(b), |v| {
                v["spec"]["customresourcedefinitions"]["owned"]
                    .as_sequence_mut()
                    .unwrap()
                    .retain(|o| o["kind"] != "Captain")
            })
        },
        expected: "Captain crew.example.com/v1 is not owned by the CSV",
    },
    Fault {
        name: "owned CRD missing",
        plant: |b| {
            std::fs::remove_file(b.join("manifests/crew.example.com_admirales.yaml")).unwrap()
        },
        expected: "Admiral crew.example.com/v1 has no CRD in the bundle",
    },
    Fault {
        name: "mediatype",
        plant: |b| {
            edit(&annotations_file(b), |v| {
                v["annotations"]["operators.operatorframework.io.bundle.mediatype.v1"] =
                    "plain+v0".into()
            })
        },
        expected: "operators.operatorframework.io.bundle.mediatype.v1 is \"plain+v0\", OLM needs \"registry+v1\"",
    },
    Fault {
        name: "annotations missing",
        plant: |b| std::fs::remove_file(annotations_file(b)).unwrap(),
        expected: "metadata/annotations.yaml: cannot read it",
    },
    Fault {
        name: "package name",
        plant: |b| {
            edit(&annotations_file(b), |v| {
                v["annotations"]["operators.operatorframework.io.bundle.package.v1"] =
                    "Crew_Webhooks".into()
            })
        },
        expected: "package \"Crew_Webhooks\" is not a valid name",
    },
    Fault {
        name: "channel name",
        plant: |b| {
            edit(&annotations_file(b), |v| {
                v["annotations"]["operators.operatorframework.io.bundle.channels.v1"] =
                    "alpha,Stable!".into()
            })
        },
        expected: "channel \"Stable!\" is not a valid name",
    },
    Fault {
        name: "default channel",
        plant: |b| {
            edit(&annotations_file(b), |v| {
                v["annotations"]["operators.operatorframework.io.bundle.channel.default.v1"] =
                    "stable".into()
            })
        },
        expected: "the default channel \"stable\" is not one of the channels (alpha)",
    },
    Fault {
        name: "no install mode supported",
        plant: |b| {
            edit(&csv_file(b), |v| {
                for mode in v["spec"]["installModes"].as_sequence_mut().unwrap() {
                    mode["supported"] = false.into();
                }
            })
        },
        expected: "spec.installModes: none is supported",
    },
    Fault {
        name: "install modes with conversion",
        plant: |b| {
            edit(&csv_file(b), |v| {
                v["spec"]["installModes"][0]["supported"] = true.into();
            })
        },
        expected: "with conversion webhooks (conversionCRDs), OLM supports only the AllNamespaces install mode",
    },
    Fault {
        name: "conversion webhook missing",
        plant: |b| {
            edit(&csv_file(b), |v| {
                v["spec"]["webhookdefinitions"]
                    .as_sequence_mut()
                    .unwrap()
                    .retain(|w| w["type"] != "ConversionWebhook")
            })
        },
        expected: "firstmates.crew.example.com converts through a webhook, and no ConversionWebhook of the CSV lists it",
    },
    Fault {
        name: "conversion of a CRD that does not convert",
        plant: |b| {
            edit(&b.join("manifests/crew.example.com_firstmates.yaml"), |v| {
                v["spec"]["conversion"] = serde_yaml::from_str("strategy: None").unwrap();
            })
        },
        expected: "is in a ConversionWebhook's conversionCRDs, and its conversion strategy is not Webhook",
    },
    Fault {
        name: "webhook deployment",
        plant: |b| {
            edit(&csv_file(b), |v| {
                v["spec"]["webhookdefinitions"][0]["deploymentName"] = "elsewhere".into();
            })
        },
        expected: "deploymentName \"elsewhere\" is none of the CSV's deployments",
    },
    Fault {
        name: "example of a kind not owned",
        plant: |b| {
            edit(&csv_file(b), |v| {
                let examples = v["metadata"]["annotations"]["alm-examples"]
                    .as_str()
                    .unwrap();
                let fixed =
                    examples.replacen("\"kind\": \"Admiral\"", "\"kind\": \"Commodore\"", 1);
                v["metadata"]["annotations"]["alm-examples"] = fixed.into();
            })
        },
        expected: "the example of Commodore crew.example.com/v1 is not of a kind the CSV owns",
    },
    Fault {
        name: "manager service account in the bundle",
        plant: |b| {
            std::fs::write(
                b.join("manifests/sa.yaml"),
                "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: crew-webhooks-controller-manager\n",
            )
            .unwrap()
        },
        expected: "manifests/sa.yaml: the service account of a CSV deployment",
    },
    Fault {
        name: "file that does not parse",
        plant: |b| std::fs::write(b.join("manifests/broken.yaml"), "kind: [\n").unwrap(),
        expected: "manifests/broken.yaml: document 1 is not valid YAML",
    },
];

#[test]
fn each_class_of_fault_is_named() {
    let (tmp, dir) = bundle_of(&WEBHOOKS);
    let good = dir.join("bundle");
    for fault in FAULTS {
        let bundle = tmp.path().join(fault.name.replace(' ', "-"));
        copy_dir(&good, &bundle);
        (fault.plant)(&bundle);
        let (ok, report) = validate(&dir, bundle.to_str().unwrap());
        assert!(!ok, "{}: the bundle passed:\n{report}", fault.name);
        assert!(
            report
                .lines()
                .any(|l| l.starts_with("ERROR: ") && l.contains(fault.expected)),
            "{}: no error says {:?}:\n{report}",
            fault.name,
            fault.expected
        );
    }
}

fn copy_dir(from: &Path, to: &Path) {
    for (path, bytes) in tree(from) {
        let target = to.join(path);
        std::fs::create_dir_all(target.parent().unwrap()).unwrap();
        std::fs::write(target, bytes).unwrap();
    }
}

#[test]
fn an_upgrade_replaces_the_first_bundle_and_keeps_the_base() {
    let scenario = &MEMCACHED;
    let (_tmp, dir) = bundle_of(scenario);
    let base_path =
        dir.join("config/manifests/bases/memcached-operator.clusterserviceversion.yaml");
    // What a user fills in by hand, operator-rs's fields and others.
    edit(&base_path, |v| {
        v["spec"]["description"] =
            "Memcached, run by an operator.\n\n## Usage\nCreate a Memcached.".into();
        v["spec"]["links"] =
            serde_yaml::from_str("- name: Source\n  url: https://example.com/src").unwrap();
        v["spec"]["relatedImages"] =
            serde_yaml::from_str("- name: memcached\n  image: memcached:1.6.26-alpine3.19")
                .unwrap();
        v["spec"]["customresourcedefinitions"]["owned"][0]["displayName"] =
            "Memcached cluster".into();
    });
    std::fs::write(
        dir.join("bundle/manifests/stale.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n",
    )
    .unwrap();
    run_ok(
        &dir,
        &[
            "generate",
            "kustomize",
            "manifests",
            "--interactive=false",
            "--keywords",
            "cache,memcached",
        ],
    );
    generate_bundle(
        scenario,
        &dir,
        &[
            "--version",
            "0.0.2",
            "--replaces",
            "memcached-operator.v0.0.1",
            "--skip-range",
            "<0.0.2",
        ],
    );
    let csv: Value = serde_yaml::from_str(&read(&dir, &csv_path(scenario))).unwrap();
    assert_eq!(csv["metadata"]["name"], "memcached-operator.v0.0.2");
    assert_eq!(csv["spec"]["version"], "0.0.2");
    assert_eq!(csv["spec"]["replaces"], "memcached-operator.v0.0.1");
    assert_eq!(csv["metadata"]["annotations"]["olm.skipRange"], "<0.0.2");
    assert!(
        csv["spec"]["description"]
            .as_str()
            .unwrap()
            .contains("## Usage")
    );
    assert_eq!(csv["spec"]["links"][0]["name"], "Source");
    assert_eq!(csv["spec"]["relatedImages"][0]["name"], "memcached");
    assert_eq!(
        csv["spec"]["customresourcedefinitions"]["owned"][0]["displayName"],
        "Memcached cluster"
    );
    assert_eq!(csv["spec"]["keywords"][1], "memcached");
    assert_eq!(
        csv["spec"]["provider"]["name"], "Acme",
        "set by the first run, kept"
    );
    assert!(
        !dir.join("bundle/manifests/stale.yaml").exists(),
        "a file of the old bundle is left"
    );
    assert_csv_fits_olm_schema(&read(&dir, &csv_path(scenario)));
    let (ok, report) = validate(&dir, "bundle");
    assert!(ok, "{report}");
}

#[test]
fn bad_input_is_refused_and_changes_nothing() {
    let (_tmp, dir) = bundle_of(&MEMCACHED);
    let input = render(&MEMCACHED, &dir);
    let input = input.to_str().unwrap();
    let bundle = |flags: &[&'static str]| {
        let mut argv = vec!["generate", "bundle", "--input", input];
        argv.extend(flags);
        argv
    };
    assert_refused(
        &dir,
        &bundle(&["--version", "1.0"]),
        &["--version \"1.0\" is not a semantic version"],
    );
    assert_refused(
        &dir,
        &bundle(&["--version", "v0.0.1"]),
        &["--version \"v0.0.1\""],
    );
    assert_refused(
        &dir,
        &bundle(&["--version", "0.0.2", "--replaces", "other-operator.v0.0.1"]),
        &["--replaces other-operator.v0.0.1", "same package"],
    );
    assert_refused(
        &dir,
        &bundle(&[
            "--version",
            "0.0.2",
            "--replaces",
            "memcached-operator.v0.0.2",
        ]),
        &["cannot replace itself"],
    );
    assert_refused(
        &dir,
        &bundle(&["--version", "0.0.2", "--skip-range", "not a range"]),
        &["--skip-range"],
    );
    assert_refused(
        &dir,
        &bundle(&["--version", "0.0.2", "--channels", "Alpha"]),
        &["--channels \"Alpha\""],
    );
    assert_refused(
        &dir,
        &bundle(&["--version", "0.0.2", "--default-channel", "stable"]),
        &["--default-channel \"stable\" is not one of the bundle's channels"],
    );
    assert_refused(
        &dir,
        &bundle(&["--version", "0.0.2", "--package", "../x"]),
        &["--package \"../x\""],
    );

    let job = dir.parent().unwrap().join("with-job.yaml");
    let mut text = std::fs::read_to_string(input).unwrap();
    text.push_str("---\napiVersion: batch/v1\nkind: Job\nmetadata:\n  name: migrate\n");
    std::fs::write(&job, text).unwrap();
    assert_refused(
        &dir,
        &[
            "generate",
            "bundle",
            "--version",
            "0.0.2",
            "--input",
            job.to_str().unwrap(),
        ],
        &["Job migrate (batch/v1) cannot go into a bundle"],
    );
    let no_csv = dir.parent().unwrap().join("no-csv.yaml");
    let without_csv: String = fixture_objects(&MEMCACHED)
        .iter()
        .filter(|o| o["kind"] != "ClusterServiceVersion")
        .map(|o| format!("---\n{}", serde_yaml::to_string(o).unwrap()))
        .collect();
    std::fs::write(&no_csv, without_csv).unwrap();
    assert_refused(
        &dir,
        &[
            "generate",
            "bundle",
            "--version",
            "0.0.2",
            "--input",
            no_csv.to_str().unwrap(),
        ],
        &["renders no ClusterServiceVersion"],
    );

    let manifests = |flags: &[&'static str]| {
        let mut argv = vec!["generate", "kustomize", "manifests", "--interactive=false"];
        argv.extend(flags);
        argv
    };
    assert_refused(
        &dir,
        &manifests(&["--capabilities", "Magic"]),
        &["--capabilities \"Magic\""],
    );
    assert_refused(
        &dir,
        &manifests(&["--install-modes", "Everywhere"]),
        &["--install-modes \"Everywhere\""],
    );
    assert_refused(
        &dir,
        &manifests(&["--maintainers", "Jane <jane"]),
        &["\"Name <email>\""],
    );
    assert_refused(
        &dir,
        &manifests(&["--icon", "logo.bmp"]),
        &["--icon logo.bmp"],
    );
    assert_refused(
        &dir,
        &manifests(&["--display-name", " "]),
        &["--display-name is empty"],
    );
    let base = "config/manifests/bases/memcached-operator.clusterserviceversion.yaml";
    std::fs::write(dir.join(base), "apiVersion: apps/v1\nkind: Deployment\n").unwrap();
    assert_refused(
        &dir,
        &manifests(&[]),
        &[base, "not a ClusterServiceVersion"],
    );

    assert_refused(
        &dir,
        &["bundle", "validate", "no-such-bundle"],
        &["no-such-bundle is not a directory"],
    );
}

#[test]
fn before_make_manifests_there_is_nothing_to_describe() {
    let (_tmp, dir) = folder("memcached-operator");
    run_ok(&dir, &["init", "--domain", "example.com"]);
    run_ok(&dir, MEMCACHED.commands[0]);
    assert_refused(
        &dir,
        &["generate", "kustomize", "manifests", "--interactive=false"],
        &["config/crd/bases holds no CRDs: run `make manifests` first"],
    );
    assert_refused(
        &dir,
        &["generate", "bundle", "--version", "0.0.1"],
        &["config/manifests/kustomization.yaml does not exist"],
    );
}

#[test]
fn dry_runs_write_nothing() {
    let (_tmp, dir) = project(&MEMCACHED);
    let before = tree(&dir);
    let out = operator_rs(&dir)
        .args([
            "generate",
            "kustomize",
            "manifests",
            "--interactive=false",
            "--dry-run",
        ])
        .output()
        .unwrap();
    assert!(out.status.success());
    let listing = String::from_utf8_lossy(&out.stdout);
    assert!(
        listing.contains(
            "create    config/manifests/bases/memcached-operator.clusterserviceversion.yaml"
        ),
        "{listing}"
    );
    assert_eq!(before, tree(&dir));
}
