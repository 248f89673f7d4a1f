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
    validate_with(dir, bundle, &[])
}

fn validate_with(dir: &Path, bundle: &str, flags: &[&str]) -> (bool, String) {
    let out = operator_rs(dir)
        .args(["bundle", "validate", bundle])
        .args(flags)
        // A run that hangs (a named pipe read) fails the test instead of blocking it.
        .timeout(std::time::Duration::from_secs(120))
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

fn firstmates_crd(bundle: &Path) -> PathBuf {
    bundle.join("manifests/crew.example.com_firstmates.yaml")
}

fn set(value: &mut Value, path: &[&str], new: Value) {
    let mut at = value;
    for key in &path[..path.len() - 1] {
        at = at.get_mut(*key).unwrap();
    }
    at[path[path.len() - 1]] = new;
}

fn yaml(text: &str) -> Value {
    serde_yaml::from_str(text).unwrap()
}

fn write(bundle: &Path, file: &str, text: &str) {
    let path = bundle.join(file);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn dependencies(bundle: &Path, text: &str) {
    write(bundle, "metadata/dependencies.yaml", text);
}

/// What operator-framework's default validators refuse (the defects of their tests, and the
/// issue's), planted one at a time in a good bundle.
const FAULTS: &[Fault] = &[
    Fault {
        name: "required field",
        plant: |b| {
            edit(&csv_file(b), |v| {
                set(v, &["spec", "displayName"], "".into())
            })
        },
        expected: "spec.displayName: required field missing",
    },
    Fault {
        name: "version that is no version",
        plant: |b| edit(&csv_file(b), |v| set(v, &["spec", "version"], "one".into())),
        expected: "spec.version: \"one\" is not a semantic version",
    },
    Fault {
        name: "CSV name that is no DNS name",
        plant: |b| {
            edit(&csv_file(b), |v| {
                set(v, &["metadata", "name"], "Crew_Webhooks.v0.0.1".into())
            })
        },
        expected: "metadata.name: \"Crew_Webhooks.v0.0.1\" is invalid",
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
        expected: "CRD \"crew.example.com/v1, Kind=Captain\" is present in bundle \"crew-webhooks.v0.0.1\" but not defined in CSV",
    },
    Fault {
        name: "owned CRD missing",
        plant: |b| {
            std::fs::remove_file(b.join("manifests/crew.example.com_admirales.yaml")).unwrap()
        },
        expected: "owned CRD \"crew.example.com/v1, Kind=Admiral\" not found in bundle",
    },
    Fault {
        name: "mediatype",
        plant: |b| {
            edit(&annotations_file(b), |v| {
                v["annotations"]["operators.operatorframework.io.bundle.mediatype.v1"] =
                    "plain+v0".into()
            })
        },
        expected: "to have value \"registry+v1\" instead of \"plain+v0\"",
    },
    Fault {
        name: "annotations missing",
        plant: |b| std::fs::remove_file(annotations_file(b)).unwrap(),
        expected: "Could not find annotations file",
    },
    Fault {
        name: "channels missing",
        plant: |b| {
            edit(&annotations_file(b), |v| {
                v["annotations"]
                    .as_mapping_mut()
                    .unwrap()
                    .remove("operators.operatorframework.io.bundle.channels.v1");
            })
        },
        expected: "Missing annotation \"operators.operatorframework.io.bundle.channels.v1\"",
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
        expected: "none of InstallModeTypes are supported",
    },
    Fault {
        name: "install modes with conversion",
        plant: |b| {
            edit(&csv_file(b), |v| {
                v["spec"]["installModes"][0]["supported"] = true.into()
            })
        },
        expected: "only AllNamespaces InstallModeType is supported when conversionCRDs is present",
    },
    Fault {
        name: "webhook conversion without conversionReviewVersions",
        plant: |b| {
            edit(&firstmates_crd(b), |v| {
                v["spec"]["conversion"]["webhook"]
                    .as_mapping_mut()
                    .unwrap()
                    .remove("conversionReviewVersions");
            })
        },
        expected: "spec.conversion.conversionReviewVersions: Required value",
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
        expected: "example must have a provided API: crew.example.com/v1, Kind=Commodore",
    },
    Fault {
        name: "manager service account in the bundle",
        plant: |b| {
            write(
                b,
                "manifests/sa.yaml",
                "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: crew-webhooks-controller-manager\n",
            )
        },
        expected: "manifests/sa.yaml: invalid service account found in bundle",
    },
    Fault {
        name: "file that does not parse",
        plant: |b| write(b, "manifests/broken.yaml", "kind: [\n"),
        expected: "manifests/broken.yaml: unable to decode object",
    },
    Fault {
        name: "subfolder in manifests",
        plant: |b| {
            write(
                b,
                "manifests/extra/cm.yaml",
                "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n",
            )
        },
        expected: "manifests/extra: bundle manifests dir contains directory",
    },
    Fault {
        name: "a ConfigMap with only a generateName",
        plant: |b| {
            write(
                b,
                "manifests/cm.yaml",
                "apiVersion: v1\nkind: ConfigMap\nmetadata: {generateName: cm-}\n",
            )
        },
        expected: "manifests/cm.yaml: metadata.name: Required value: name or generateName is required",
    },
    Fault {
        name: "a namespaced object with a namespace",
        plant: |b| {
            edit(
                &b.join(
                    "manifests/crew-webhooks-controller-manager-metrics-service_v1_service.yaml",
                ),
                |v| set(v, &["metadata", "namespace"], "crew-system".into()),
            )
        },
        expected: "metadata.namespace: Forbidden: not allowed on this type",
    },
    Fault {
        name: "a comment before the CSV's first document separator",
        plant: |b| {
            let text = std::fs::read_to_string(csv_file(b)).unwrap();
            std::fs::write(csv_file(b), format!("# generated\n---\n{text}")).unwrap();
        },
        expected: "unable to find a csv in bundle directory",
    },
    Fault {
        name: "a separator with text after it",
        plant: |b| {
            write(
                b,
                "manifests/cm.yaml",
                "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\n--- text\n",
            )
        },
        expected: "manifests/cm.yaml: unable to decode object: invalid Yaml document separator: text",
    },
    Fault {
        name: "an alias bomb",
        plant: |b| {
            let mut text = String::from(
                "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\nx:\n  a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n",
            );
            for i in 1..8 {
                let refs = vec![format!("*a{}", i - 1); 10].join(", ");
                text.push_str(&format!("  a{i}: &a{i} [{refs}]\n"));
            }
            write(b, "manifests/cm.yaml", &text)
        },
        expected: "manifests/cm.yaml: unable to decode object: error converting YAML to JSON: yaml: document contains excessive aliasing",
    },
    Fault {
        name: "hidden file in manifests",
        plant: |b| {
            write(
                b,
                "manifests/.notes.yaml",
                "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n",
            )
        },
        expected: "manifests/.notes.yaml: bundle manifests dir has hidden file",
    },
    Fault {
        name: "dependency of an unknown type",
        plant: |b| {
            dependencies(
                b,
                "dependencies:\n- type: olm.crd\n  value: {group: a.io, version: v1, kind: A}\n",
            )
        },
        expected: "couldn't parse dependency of type olm.crd",
    },
    Fault {
        name: "gvk dependency without value",
        plant: |b| dependencies(b, "dependencies:\n- type: olm.gvk\n"),
        expected: "couldn't parse dependency of type olm.gvk",
    },
    Fault {
        name: "gvk dependency without kind",
        plant: |b| {
            dependencies(
                b,
                "dependencies:\n- type: olm.gvk\n  value: {group: a.io, version: v1}\n",
            )
        },
        expected: "API Kind is empty",
    },
    Fault {
        name: "package dependency without name",
        plant: |b| {
            dependencies(
                b,
                "dependencies:\n- type: olm.package\n  value: {version: '0.2.0'}\n",
            )
        },
        expected: "Package name is empty",
    },
    Fault {
        name: "package dependency with a bad range",
        plant: |b| {
            dependencies(
                b,
                "dependencies:\n- type: olm.package\n  value: {packageName: etcd, version: '>!0.2.0'}\n",
            )
        },
        expected: "Invalid semver format version",
    },
    Fault {
        name: "package dependency without version",
        plant: |b| {
            dependencies(
                b,
                "dependencies:\n- type: olm.package\n  value: {packageName: etcd}\n",
            )
        },
        expected: "Package version is empty",
    },
    Fault {
        name: "label dependency without label",
        plant: |b| dependencies(b, "dependencies:\n- type: olm.label\n  value:\n"),
        expected: "Label information is missing",
    },
    Fault {
        name: "constraint without cel",
        plant: |b| {
            dependencies(
                b,
                "dependencies:\n- type: olm.constraint\n  value: {failureMessage: needs x}\n",
            )
        },
        expected: "The CEL field is missing",
    },
    Fault {
        name: "a ResourceQuota",
        plant: |b| {
            write(
                b,
                "manifests/quota.yaml",
                "apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: q}\nspec: {hard: {pods: '1'}}\n",
            )
        },
        expected: "ResourceQuota (v1) is not supported in a registry+v1 bundle",
    },
    Fault {
        name: "a Deployment of its own",
        plant: |b| {
            write(
                b,
                "manifests/extra-deployment.yaml",
                "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec: {}\n",
            )
        },
        expected: "Deployment (apps/v1) is not supported in a registry+v1 bundle",
    },
    Fault {
        name: "an object with a namespace",
        plant: |b| {
            write(
                b,
                "manifests/cm.yaml",
                "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x, namespace: crew-system}\n",
            )
        },
        expected: "manifests/cm.yaml: metadata.namespace: Forbidden: not allowed on this type",
    },
    Fault {
        name: "invalid related image",
        plant: |b| {
            edit(&csv_file(b), |v| {
                v["spec"]["relatedImages"] = yaml("[{name: x, image: 'Not An Image'}]")
            })
        },
        expected: "relatedImages[0] has an invalid image pullspec \"Not An Image\"",
    },
    Fault {
        name: "related image without image",
        plant: |b| {
            edit(&csv_file(b), |v| {
                v["spec"]["relatedImages"] = yaml("[{name: x, image: ''}]")
            })
        },
        expected: "relatedImages[0] has an empty image field",
    },
    Fault {
        name: "minKubeVersion with a v",
        plant: |b| {
            edit(&csv_file(b), |v| {
                set(v, &["spec", "minKubeVersion"], "v1.21.0".into())
            })
        },
        expected: "csv.Spec.MinKubeVersion has an invalid value: v1.21.0",
    },
    Fault {
        name: "minKubeVersion 1.21, a number",
        plant: |b| {
            let path = csv_file(b);
            let text = std::fs::read_to_string(&path).unwrap();
            let text = text.replacen("minKubeVersion: 1.33.0", "minKubeVersion: 1.21", 1);
            std::fs::write(path, text).unwrap();
        },
        expected: "csv.Spec.MinKubeVersion has an invalid value: 1.21",
    },
    Fault {
        name: "a field of the wrong type",
        plant: |b| {
            edit(&csv_file(b), |v| {
                v["spec"]["installModes"][3]["supported"] = "maybe".into()
            })
        },
        expected: "spec.installModes[3].supported: a string where a boolean is expected",
    },
    Fault {
        name: "a release that does not name the bundle",
        plant: |b| edit(&csv_file(b), |v| set(v, &["spec", "release"], "1".into())),
        expected: "bundle name with release versioning \"crew-webhooks.v0.0.1\" does not match expected name \"crew-webhooks-v0.0.1-1\"",
    },
    Fault {
        name: "no install modes",
        plant: |b| {
            edit(&csv_file(b), |v| {
                v["spec"].as_mapping_mut().unwrap().remove("installModes");
            })
        },
        expected: "spec.installModes: install modes not found",
    },
    Fault {
        name: "an annotation in the wrong case",
        plant: |b| {
            edit(&csv_file(b), |v| {
                v["metadata"]["annotations"]["olm.skiprange"] = "<0.0.1".into()
            })
        },
        expected: "provided annotation olm.skiprange uses wrong case and should be olm.skipRange instead",
    },
    Fault {
        name: "a name over 63 characters",
        plant: |b| {
            edit(&csv_file(b), |v| {
                let name = format!("crew-webhooks{}.v0.0.1", "-x".repeat(30));
                set(v, &["metadata", "name"], name.into())
            })
        },
        expected: "must be no more than 63 bytes",
    },
    Fault {
        name: "alm-examples that are no JSON",
        plant: |b| {
            edit(&csv_file(b), |v| {
                v["metadata"]["annotations"]["alm-examples"] = "[{\"kind\": ".into()
            })
        },
        expected: "invalid example",
    },
    Fault {
        name: "a CRD version listed twice",
        plant: |b| {
            edit(&firstmates_crd(b), |v| {
                let first = v["spec"]["versions"][0].clone();
                v["spec"]["versions"].as_sequence_mut().unwrap().push(first);
            })
        },
        expected: "must contain unique version names",
    },
    Fault {
        name: "no storage version",
        plant: |b| {
            edit(&firstmates_crd(b), |v| {
                for version in v["spec"]["versions"].as_sequence_mut().unwrap() {
                    version["storage"] = false.into();
                }
            })
        },
        expected: "must have exactly one version marked as storage version",
    },
    Fault {
        name: "the same CRD twice",
        plant: |b| {
            std::fs::copy(firstmates_crd(b), b.join("manifests/firstmates-again.yaml")).unwrap();
        },
        expected: "duplicate CRD \"crew.example.com/v1, Kind=FirstMate\"",
    },
    Fault {
        name: "a bundle over the size limit",
        plant: |b| {
            // Text that gzip cannot shrink: 1.6 MB of pseudo-random base64.
            let mut state: u64 = 0x9e3779b97f4a7c15;
            let data: String = (0..1_600_000)
                .map(|_| {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
                        [(state % 64) as usize] as char
                })
                .collect();
            write(
                b,
                "manifests/big.yaml",
                &format!(
                    "apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: big}}\ndata: {{blob: {data}}}\n"
                ),
            );
        },
        expected: "maximum bundle compressed size with gzip size exceeded",
    },
];

#[test]
fn each_class_of_fault_is_named() {
    let (tmp, dir) = bundle_of(&WEBHOOKS);
    for fault in FAULTS {
        let (ok, report) = validate_planted(&dir, &tmp, fault.name, fault.plant, &[]);
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

/// What operator-framework's default validators accept, and operator-rs used to refuse: each,
/// planted in a good bundle, passes the default run.
const ACCEPTED: &[Fault] = &[
    Fault {
        name: "a v1beta1 CRD with preserveUnknownFields false",
        plant: |b| {
            write(
                b,
                "manifests/widgets.crew.example.com.yaml",
                "apiVersion: apiextensions.k8s.io/v1beta1\nkind: CustomResourceDefinition\nmetadata: {name: widgets.crew.example.com}\nspec:\n  group: crew.example.com\n  names: {kind: Widget, plural: widgets}\n  scope: Namespaced\n  version: v1\n  preserveUnknownFields: false\n  validation: {openAPIV3Schema: {type: object}}\n",
            );
            edit(&csv_file(b), |v| {
                v["spec"]["customresourcedefinitions"]["owned"]
                    .as_sequence_mut()
                    .unwrap()
                    .push(yaml("{name: widgets.crew.example.com, kind: Widget, version: v1, displayName: Widget, description: A widget.}"))
            })
        },
        expected: "",
    },
    Fault {
        name: "a default channel that is not among the channels",
        plant: |b| {
            edit(&annotations_file(b), |v| {
                v["annotations"]["operators.operatorframework.io.bundle.channel.default.v1"] =
                    "stable".into()
            })
        },
        expected: "",
    },
    Fault {
        name: "a CRD with webhook conversion and no ConversionWebhook",
        plant: |b| {
            edit(&csv_file(b), |v| {
                v["spec"]["webhookdefinitions"]
                    .as_sequence_mut()
                    .unwrap()
                    .retain(|w| w["type"] != "ConversionWebhook")
            })
        },
        expected: "",
    },
    Fault {
        name: "an empty maintainer",
        plant: |b| edit(&csv_file(b), |v| v["spec"]["maintainers"] = yaml("[{}]")),
        expected: "",
    },
    Fault {
        name: "empty alm-examples",
        plant: |b| {
            edit(&csv_file(b), |v| {
                v["metadata"]["annotations"]["alm-examples"] = "".into()
            })
        },
        expected: "",
    },
    Fault {
        name: "a CSV name without the version",
        plant: |b| {
            edit(&csv_file(b), |v| {
                set(v, &["metadata", "name"], "crew-webhooks".into())
            })
        },
        expected: "",
    },
    Fault {
        name: "a CSV name that differs from spec.version",
        plant: |b| {
            edit(&csv_file(b), |v| {
                set(v, &["metadata", "name"], "crew-webhooks.v9.9.9".into())
            })
        },
        expected: "",
    },
    Fault {
        name: "replaces not shaped <package>.v<version>",
        plant: |b| {
            edit(&csv_file(b), |v| {
                set(v, &["spec", "replaces"], "crew-webhooks-old".into())
            })
        },
        expected: "",
    },
    Fault {
        name: "skipRange with || and spaces",
        plant: |b| {
            edit(&csv_file(b), |v| {
                v["metadata"]["annotations"]["olm.skipRange"] = ">= 0.0.1 < 0.0.5 || 1.x".into()
            })
        },
        expected: "",
    },
    Fault {
        name: "a spec.version of 1.0 in quotes (read tolerantly)",
        plant: |b| edit(&csv_file(b), |v| set(v, &["spec", "version"], "1.0".into())),
        expected: "",
    },
    Fault {
        name: "YAML 1.1 booleans and a key given twice",
        plant: |b| {
            let path = csv_file(b);
            let text = std::fs::read_to_string(&path).unwrap();
            let text = text
                .replace("supported: true", "supported: yes")
                .replace("supported: false", "supported: off")
                .replacen("spec:\n", "spec:\n  displayName: First\n", 1);
            std::fs::write(path, text).unwrap();
        },
        expected: "",
    },
    Fault {
        name: "a merge key tagged !!merge",
        plant: |b| {
            let path = b
                .join("manifests/crew-webhooks-controller-manager-metrics-service_v1_service.yaml");
            let text = std::fs::read_to_string(&path).unwrap();
            let text = text
                .replacen("  labels:\n", "  labels: &labels\n", 1)
                .replacen("  selector:\n", "  selector:\n    !!merge <<: *labels\n", 1);
            std::fs::write(path, text).unwrap();
        },
        expected: "",
    },
    Fault {
        name: "a label whose value is a number (operator-sdk reads no labels then)",
        plant: |b| {
            edit(
                &b.join(
                    "manifests/crew-webhooks-controller-manager-metrics-service_v1_service.yaml",
                ),
                |v| set(v, &["metadata", "labels", "replicas"], 3.into()),
            )
        },
        expected: "",
    },
    Fault {
        name: "the CSV file with another document after it",
        plant: |b| {
            let text = std::fs::read_to_string(csv_file(b)).unwrap();
            std::fs::write(
                csv_file(b),
                format!("{text}---\napiVersion: v1\nkind: Service\nmetadata: {{name: extra}}\n"),
            )
            .unwrap();
        },
        expected: "",
    },
    Fault {
        name: "null alm-examples",
        plant: |b| {
            edit(&csv_file(b), |v| {
                v["metadata"]["annotations"]["alm-examples"] = "null".into()
            })
        },
        expected: "",
    },
    Fault {
        name: "a CSV whose apiVersion has another group (OLM reads it by kind)",
        plant: |b| {
            edit(&csv_file(b), |v| {
                v["apiVersion"] = "operators.example.com/v1alpha1".into()
            })
        },
        expected: "",
    },
];

#[test]
fn what_operator_framework_accepts_passes() {
    let (tmp, dir) = bundle_of(&WEBHOOKS);
    for accepted in ACCEPTED {
        let (ok, report) = validate_planted(&dir, &tmp, accepted.name, accepted.plant, &[]);
        assert!(
            ok && !report.contains("ERROR"),
            "{}: refused:\n{report}",
            accepted.name
        );
    }
}

/// What operator-framework accepts and OLM gets wrong or catalogs refuse: the `operator-rs`
/// suite names it.
const OPERATOR_RS_FAULTS: &[Fault] = &[
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
        expected: "the default channel \"stable\" is not one of the bundle's channels (alpha)",
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
            edit(&firstmates_crd(b), |v| {
                v["spec"]["conversion"] = yaml("strategy: None");
            })
        },
        expected: "is in a ConversionWebhook's conversionCRDs, and its conversion strategy is not Webhook",
    },
    Fault {
        name: "webhook deployment",
        plant: |b| {
            edit(&csv_file(b), |v| {
                v["spec"]["webhookdefinitions"][0]["deploymentName"] = "elsewhere".into()
            })
        },
        expected: "deploymentName \"elsewhere\" is none of the CSV's deployments",
    },
    Fault {
        name: "skipRange OLM cannot read",
        plant: |b| {
            edit(&csv_file(b), |v| {
                v["metadata"]["annotations"]["olm.skipRange"] = "~0.0.1".into()
            })
        },
        expected: "\"~0.0.1\" is not a version range OLM reads",
    },
    Fault {
        name: "install mode twice",
        plant: |b| {
            edit(&csv_file(b), |v| {
                let first = v["spec"]["installModes"][3].clone();
                v["spec"]["installModes"]
                    .as_sequence_mut()
                    .unwrap()
                    .push(first)
            })
        },
        expected: "AllNamespaces is listed twice",
    },
    Fault {
        name: "a v1beta1 CRD",
        plant: |b| {
            write(
                b,
                "manifests/widgets.crew.example.com.yaml",
                "apiVersion: apiextensions.k8s.io/v1beta1\nkind: CustomResourceDefinition\nmetadata: {name: widgets.crew.example.com}\nspec:\n  group: crew.example.com\n  names: {kind: Widget, plural: widgets}\n  version: v1\n  preserveUnknownFields: false\n",
            )
        },
        expected: "apiextensions.k8s.io/v1beta1 is not served by Kubernetes 1.22 and later",
    },
];

#[test]
fn the_operator_rs_suite_names_what_breaks_installs() {
    let (tmp, dir) = bundle_of(&WEBHOOKS);
    let (ok, report) = validate_with(&dir, "./bundle", &["--select-optional", "name=operator-rs"]);
    assert!(ok && !report.contains("ERROR"), "{report}");
    for fault in OPERATOR_RS_FAULTS {
        let suite = ["--select-optional", "name=operator-rs"];
        let (ok, report) = validate_planted(&dir, &tmp, fault.name, fault.plant, &suite);
        assert!(!ok, "{}: the bundle passed:\n{report}", fault.name);
        assert!(
            report
                .lines()
                .any(|l| l.starts_with("ERROR: [operator-rs] ") && l.contains(fault.expected)),
            "{}: no error says {:?}:\n{report}",
            fault.name,
            fault.expected
        );
    }
}

/// Links are followed as the image build follows them, inside the bundle only: a loop, a link
/// to nothing and a link out of the bundle are named; a linked manifest is checked like any.
#[cfg(unix)]
#[test]
fn symbolic_links_are_followed_inside_the_bundle_only() {
    use std::os::unix::fs::symlink;
    let (tmp, dir) = bundle_of(&WEBHOOKS);
    let good = dir.join("bundle");
    let outside = tmp.path().join("outside.yaml");
    std::fs::write(&outside, "kind: [\n").unwrap();
    type Plant<'a> = &'a dyn Fn(&Path);
    let cases: [(&str, Plant, &str); 5] = [
        (
            "loop",
            &|b| symlink("loop.yaml", b.join("manifests/loop.yaml")).unwrap(),
            "manifests/loop.yaml: a symbolic link that cannot be followed (a loop, or a link to nothing)",
        ),
        (
            "dangling",
            &|b| symlink("gone.yaml", b.join("manifests/gone-link.yaml")).unwrap(),
            "manifests/gone-link.yaml: a symbolic link that cannot be followed",
        ),
        (
            "out",
            &|b| symlink(&outside, b.join("manifests/out.yaml")).unwrap(),
            "manifests/out.yaml: a symbolic link out of the bundle",
        ),
        (
            "annotations-out",
            &|b| {
                let annotations = annotations_file(b);
                std::fs::rename(&annotations, tmp.path().join("annotations.yaml")).unwrap();
                symlink(tmp.path().join("annotations.yaml"), &annotations).unwrap();
            },
            "metadata/annotations.yaml: a symbolic link out of the bundle",
        ),
        (
            "followed",
            &|b| {
                std::fs::create_dir(b.join("extra")).unwrap();
                std::fs::write(b.join("extra/broken.yaml"), "kind: [\n").unwrap();
                symlink("../extra/broken.yaml", b.join("manifests/linked.yaml")).unwrap();
            },
            "manifests/linked.yaml: unable to decode object",
        ),
    ];
    for (name, plant, expected) in cases {
        let (ok, report) = validate_planted(&dir, &tmp, name, plant, &[]);
        assert!(!ok, "{name}: the bundle passed:\n{report}");
        assert!(
            report
                .lines()
                .any(|l| l.starts_with("ERROR: ") && l.contains(expected)),
            "{name}: no error says {expected:?}:\n{report}"
        );
    }
    // A manifest linked from inside the bundle is a manifest like any other.
    let bundle = tmp.path().join("links-inside");
    copy_dir(&good, &bundle);
    let csv = csv_file(&bundle);
    std::fs::create_dir(bundle.join("extra")).unwrap();
    std::fs::rename(&csv, bundle.join("extra/csv.yaml")).unwrap();
    symlink("../extra/csv.yaml", &csv).unwrap();
    let (ok, report) = validate(&dir, bundle.to_str().unwrap());
    assert!(ok, "{report}");
}

/// What is not a regular file is named and never read, wherever it is in the bundle: a named
/// pipe (which would hang the run), a socket, a link to a device (which would feed it without
/// end), a file over the size limit. Each is one line, and the run ends.
#[cfg(unix)]
#[test]
fn special_files_are_named_and_never_read() {
    use std::os::unix::fs::symlink;
    fn fifo(path: &Path) {
        let name = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a NUL-terminated path; mkfifo touches nothing else.
        assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o644) }, 0);
    }
    let (tmp, dir) = bundle_of(&WEBHOOKS);
    type Plant<'a> = &'a dyn Fn(&Path);
    let cases: [(&str, Plant, &str); 6] = [
        (
            "pipe",
            &|b| fifo(&b.join("manifests/pipe.yaml")),
            "manifests/pipe.yaml: a named pipe (FIFO), not a regular file",
        ),
        (
            "pipe-in-metadata",
            &|b| fifo(&b.join("metadata/dependencies.yaml")),
            "metadata/dependencies.yaml: a named pipe (FIFO), not a regular file",
        ),
        (
            "socket",
            &|b| {
                let short = b.join("manifests/s");
                std::os::unix::net::UnixListener::bind(&short).unwrap();
                std::fs::rename(&short, b.join("manifests/socket.yaml")).unwrap();
            },
            "manifests/socket.yaml: a socket, not a regular file",
        ),
        (
            "zero",
            &|b| symlink("/dev/zero", b.join("manifests/zero.yaml")).unwrap(),
            "manifests/zero.yaml: a symbolic link out of the bundle (to /dev/zero)",
        ),
        (
            "link-to-pipe",
            &|b| {
                fifo(&b.join("pipe"));
                symlink("../pipe", b.join("manifests/linked.yaml")).unwrap();
            },
            "manifests/linked.yaml: a symbolic link to a named pipe (FIFO)",
        ),
        (
            "big",
            &|b| {
                let file = std::fs::File::create(b.join("manifests/big.yaml")).unwrap();
                file.set_len(operator_rs::olm::files::MAX_FILE_SIZE + 1)
                    .unwrap();
            },
            "manifests/big.yaml: 16777217 bytes, more than the 16 MiB a manifest may have",
        ),
    ];
    for (name, plant, expected) in cases {
        let (ok, report) = validate_planted(&dir, &tmp, name, plant, &[]);
        assert!(!ok, "{name}: the bundle passed:\n{report}");
        let errors: Vec<&str> = report.lines().filter(|l| l.contains(expected)).collect();
        assert_eq!(
            errors.len(),
            1,
            "{name}: not one error says {expected:?}:\n{report}"
        );
        assert!(errors[0].starts_with("ERROR: [files] "), "{report}");
    }
}

/// The commands that read a project's manifests refuse a named pipe among them with one line,
/// and change nothing: `generate bundle --input`, `generate kustomize manifests` (the CRDs of
/// config/crd/bases), `generate catalog` (the catalog it adds to) and `generate bundle` again
/// (the bundle it rewrites).
#[cfg(unix)]
#[test]
fn pipes_among_the_inputs_are_refused() {
    fn fifo(path: &Path) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let name = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a NUL-terminated path; mkfifo touches nothing else.
        assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o644) }, 0);
    }
    fn refused(dir: &Path, args: &[&str], expected: &str) {
        let before = tree(dir);
        let out = operator_rs(dir)
            .args(args)
            .timeout(std::time::Duration::from_secs(120))
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?} succeeded");
        assert_eq!(stderr.trim_end().lines().count(), 1, "{args:?}: {stderr}");
        assert!(stderr.contains(expected), "{args:?}: {stderr}");
        assert!(before == tree(dir), "{args:?} changed the tree");
    }
    let (_tmp, dir) = bundle_of(&MEMCACHED);
    let pipe = dir.parent().unwrap().join("rendered.pipe");
    fifo(&pipe);
    refused(
        &dir,
        &[
            "generate",
            "bundle",
            "--version",
            "0.0.2",
            "--input",
            pipe.to_str().unwrap(),
        ],
        "a named pipe (FIFO), not a regular file: only regular files are read (give a pipe's output on stdin: --input -)",
    );
    fifo(&dir.join("catalog/memcached-operator/index.yaml"));
    refused(
        &dir,
        &[
            "generate",
            "catalog",
            "--bundle",
            "bundle",
            "--image",
            "example.com/b:v0.0.1",
        ],
        "catalog/memcached-operator/index.yaml is not a regular file (a named pipe, a socket or a device)",
    );
    fifo(&dir.join("config/crd/bases/extra.yaml"));
    refused(
        &dir,
        MANIFESTS_FLAGS,
        "config/crd/bases/extra.yaml: a named pipe (FIFO)",
    );
    std::fs::remove_file(dir.join("config/crd/bases/extra.yaml")).unwrap();
    let input = render(&MEMCACHED, &dir);
    std::fs::remove_file(dir.join("bundle/metadata/annotations.yaml")).unwrap();
    fifo(&dir.join("bundle/metadata/annotations.yaml"));
    refused(
        &dir,
        &[
            "generate",
            "bundle",
            "--version",
            "0.0.2",
            "--input",
            input.to_str().unwrap(),
        ],
        "bundle/metadata/annotations.yaml is not a regular file",
    );
    std::fs::remove_file(dir.join("bundle/metadata/annotations.yaml")).unwrap();
    // A folder of manifests (operator-sdk's --input-dir, --deploy-dir): only its regular files.
    std::fs::create_dir_all(dir.join("deploy")).unwrap();
    std::fs::copy(&input, dir.join("deploy/all.yaml")).unwrap();
    fifo(&dir.join("deploy/extra.yaml"));
    let bundle_from =
        |flag: &'static str| ["generate", "bundle", "--version", "0.0.2", flag, "deploy"];
    refused(
        &dir,
        &bundle_from("--input-dir"),
        "deploy/extra.yaml: a named pipe (FIFO), not a regular file",
    );
    std::fs::remove_file(dir.join("deploy/extra.yaml")).unwrap();
    std::os::unix::fs::symlink("/dev/zero", dir.join("deploy/extra.yaml")).unwrap();
    refused(
        &dir,
        &bundle_from("--deploy-dir"),
        "deploy/extra.yaml: a symbolic link out of the folder (to /dev/zero)",
    );
}

/// `bundle validate` (with `flags`) of a copy of the project's bundle (`dir`/bundle), made under
/// `tmp` for the case `name` and changed by `plant`: whether it passed, and what it said.
fn validate_planted(
    dir: &Path,
    tmp: &tempfile::TempDir,
    name: &str,
    plant: impl FnOnce(&Path),
    flags: &[&str],
) -> (bool, String) {
    let bundle = tmp.path().join(name.replace([' ', '<', '>', '|'], "-"));
    copy_dir(&dir.join("bundle"), &bundle);
    plant(&bundle);
    validate_with(dir, bundle.to_str().unwrap(), flags)
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
    // Manifests without a CSV take the base of config/manifests, as operator-sdk's do; a
    // --kustomize-dir without one is refused.
    let no_csv = dir.parent().unwrap().join("no-csv.yaml");
    let without_csv: String = fixture_objects(&MEMCACHED)
        .iter()
        .filter(|o| o["kind"] != "ClusterServiceVersion")
        .map(|o| format!("---\n{}", serde_yaml::to_string(o).unwrap()))
        .collect();
    std::fs::write(&no_csv, without_csv).unwrap();
    let empty = dir.join("empty");
    std::fs::create_dir_all(empty.join("bases")).unwrap();
    std::fs::write(
        empty.join("bases/memcached-operator.clusterserviceversion.yaml"),
        "kind: ConfigMap\napiVersion: v1\nmetadata: {name: x}\n",
    )
    .unwrap();
    assert_refused(
        &dir,
        &[
            "generate",
            "bundle",
            "--version",
            "0.0.2",
            "--input",
            no_csv.to_str().unwrap(),
            "--kustomize-dir",
            "empty",
        ],
        &[
            "empty/bases/memcached-operator.clusterserviceversion.yaml holds no ClusterServiceVersion",
        ],
    );
    std::fs::remove_dir_all(&empty).unwrap();

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

// ---------------------------------------------------------------------------------------------
// operator-framework's own test data (tests/data/olm/README.md), with the verdicts of its own
// tests: each case names the peer's test, the data, the validators the verdict is about, and
// what the peer expects (errors, warnings, and the words of the problem).

const PEER_DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/olm");

/// How a case's data becomes a bundle directory.
#[derive(Clone, Copy)]
enum Data {
    /// A bundle directory (manifests/ and metadata/).
    Bundle(&'static str),
    /// A folder of manifests (the peer's `GetBundleFromDir` reads such folders): they become
    /// manifests/, with a metadata/annotations.yaml that names no package or channel, as the
    /// peer's folder has none.
    Manifests(&'static str),
    /// One file (a CSV or a CRD), alone in manifests/.
    File(&'static str),
}

/// At least one.
const SOME: i32 = -1;
/// Not what the peer's test looks at.
const ANY: i32 = -2;

struct PeerCase {
    /// The peer's repository, test and case.
    test: &'static str,
    data: Data,
    /// Our validators whose problems the peer's verdict is about (the default ones by name,
    /// optional suites by theirs).
    checks: &'static [&'static str],
    /// Edits to the CSV, as the peer's test makes them: a dotted path and a JSON value.
    edits: &'static [(&'static str, &'static str)],
    /// `--optional-values`; `@` starts a path under tests/data/olm.
    values: &'static [(&'static str, &'static str)],
    errors: i32,
    warnings: i32,
    /// Words each of which some problem of those validators says.
    says: &'static [&'static str],
}

const DEFAULT: &[&str] = &["format", "load", "objects", "bundle", "csv", "crd"];
const CONTENT: &[&str] = &["load", "objects", "bundle", "csv", "crd"];

const fn case(
    test: &'static str,
    data: Data,
    checks: &'static [&'static str],
    errors: i32,
    warnings: i32,
    says: &'static [&'static str],
) -> PeerCase {
    PeerCase {
        test,
        data,
        checks,
        edits: &[],
        values: &[],
        errors,
        warnings,
        says,
    }
}

const V1BETA1_CRDS: &str = "CRD: ([\"etcdbackups.etcd.database.coreos.com\" \"etcdclusters.etcd.database.coreos.com\" \"etcdrestores.etcd.database.coreos.com\"])";
const DIGEST: &str = "sha256:abcd1234abcd1234abcd1234abcd1234abcd1234abcd1234abcd1234abcd1234";

use Data::{Bundle, File, Manifests};

const PEER_CASES: &[PeerCase] = &[
    // operator-framework/api pkg/validation/internal/bundle_test.go (BundleValidator)
    case(
        "api TestValidateBundle: registryv1 valid bundle",
        Manifests("api/valid_bundle"),
        &["bundle"],
        0,
        ANY,
        &[],
    ),
    case(
        "api TestValidateBundle: valid bundle with multiple versions in CRD",
        Manifests("api/valid_bundle_2"),
        &["bundle"],
        0,
        ANY,
        &[],
    ),
    case(
        "api TestValidateBundle: without CRD etcdclusters v1beta2 in bundle",
        Manifests("api/invalid_bundle"),
        &["bundle"],
        SOME,
        ANY,
        &["owned CRD \"etcd.database.coreos.com/v1beta2, Kind=EtcdCluster\" not found in bundle"],
    ),
    case(
        "api TestValidateBundle: without CRD etcdclusters v1beta2 in CSV",
        Manifests("api/invalid_bundle_2"),
        &["bundle"],
        SOME,
        ANY,
        &[
            "CRD \"etcd.database.coreos.com/v1beta2, Kind=EtcdCluster\" is present in bundle \"etcdoperator.v0.9.4\" but not defined in CSV",
        ],
    ),
    case(
        "api TestValidateBundle: duplicate CRD etcdclusters in bundle",
        Manifests("api/invalid_bundle_3"),
        &["bundle"],
        SOME,
        ANY,
        &[
            "duplicate CRD \"test.example.com/v1alpha1, Kind=Test\" in bundle \"test-operator.v0.0.1\"",
        ],
    ),
    case(
        "api TestValidateBundle: service account can't match sa in csv",
        Manifests("api/invalid_bundle_sa"),
        &["bundle"],
        SOME,
        ANY,
        &[
            "invalid service account found in bundle. This service account etcd-operator in your bundle is not valid",
        ],
    ),
    case(
        "api Test_EnsureGetBundleSizeValue: valid bundle, size measured, no warning",
        Manifests("api/valid_bundle"),
        &["bundle"],
        0,
        0,
        &[],
    ),
    PeerCase {
        edits: &[(
            "spec.relatedImages",
            "[{\"name\":\"a\",\"image\":\"quay.io/operator-framework/my-operator:v1.0.0\"},{\"name\":\"b\",\"image\":\"gcr.io/my-project/my-operand@sha256:abcd1234abcd1234abcd1234abcd1234abcd1234abcd1234abcd1234abcd1234\"},{\"name\":\"c\",\"image\":\"quay.io/operator-framework/my-operator:v1.0.0@sha256:abcd1234abcd1234abcd1234abcd1234abcd1234abcd1234abcd1234abcd1234\"},{\"name\":\"d\",\"image\":\"quay.io/operator-framework/my-operator\"},{\"name\":\"e\",\"image\":\"docker.io/library/busybox:latest\"}]",
        )],
        values: &[],
        ..case(
            "api TestValidateRelatedImages: valid images (tag, digest, tag and digest, none, several)",
            Manifests("api/valid_bundle"),
            &["bundle"],
            0,
            ANY,
            &[],
        )
    },
    PeerCase {
        edits: &[(
            "spec.relatedImages",
            "[{\"name\":\"operator\",\"image\":\"\"}]",
        )],
        values: &[],
        ..case(
            "api TestValidateRelatedImages: empty image field",
            Manifests("api/valid_bundle"),
            &["bundle"],
            1,
            ANY,
            &["relatedImages[0] has an empty image field"],
        )
    },
    PeerCase {
        edits: &[(
            "spec.relatedImages",
            "[{\"name\":\"a\",\"image\":\"invalid image name\"},{\"name\":\"b\",\"image\":\"quay.io/Operator-Framework/my-operator:v1.0.0\"},{\"name\":\"c\",\"image\":\"quay.io/operator-framework/my-operator:v1.0.0!\"},{\"name\":\"d\",\"image\":\"quay.io/operator-framework/my-operator@ssha256:abcd1234abcd1234abcd1234abcd1234abcd1234abcd1234abcd1234abcd1234\"}]",
        )],
        values: &[],
        ..case(
            "api TestValidateRelatedImages: spaces, uppercase, special characters, unknown digest algorithm",
            Manifests("api/valid_bundle"),
            &["bundle"],
            4,
            ANY,
            &[
                "relatedImages[0] has an invalid image pullspec",
                "relatedImages[1] has an invalid image pullspec \"quay.io/Operator-Framework",
                "relatedImages[2]",
                "relatedImages[3]",
            ],
        )
    },
    PeerCase {
        edits: &[(
            "spec.relatedImages",
            "[{\"name\":\"operator\",\"image\":\"quay.io/operator-framework/my-operator:v1.0.0\"},{\"name\":\"bad\",\"image\":\"invalid image\"}]",
        )],
        values: &[],
        ..case(
            "api TestValidateRelatedImages: mixed valid and invalid images",
            Manifests("api/valid_bundle"),
            &["bundle"],
            1,
            ANY,
            &["relatedImages[1]", "invalid image pullspec"],
        )
    },
    // api pkg/validation/internal/csv_test.go (ClusterServiceVersionValidator)
    case(
        "api TestValidateCSV: successfully validated",
        File("api/correct.csv.yaml"),
        &["csv"],
        0,
        0,
        &[],
    ),
    case(
        "api TestValidateCSV: invalid install modes",
        File("api/noInstallMode.csv.yaml"),
        &["csv"],
        1,
        ANY,
        &["install modes not found"],
    ),
    case(
        "api TestValidateCSV: valid install modes when dealing with conversionCRDs",
        File("api/correct.csv.with.conversion.webhook.yaml"),
        &["csv"],
        0,
        0,
        &[],
    ),
    case(
        "api TestValidateCSV: invalid install modes when dealing with conversionCRDs",
        File("api/incorrect.csv.with.conversion.webhook.yaml"),
        &["csv"],
        1,
        ANY,
        &["only AllNamespaces InstallModeType is supported when conversionCRDs is present"],
    ),
    case(
        "api TestValidateCSV: invalid annotation name for csv",
        File("api/badAnnotationNames.csv.yaml"),
        &["csv"],
        3,
        ANY,
        &[
            "provided annotation olm.skiprange uses wrong case and should be olm.skipRange instead",
            "provided annotation olm.operatorgroup uses wrong case and should be olm.operatorGroup instead",
            "provided annotation olm.operatornamespace uses wrong case and should be olm.operatorNamespace instead",
        ],
    ),
    case(
        "api TestValidateCSV: csv with name over 63 characters limit",
        File("api/badName.csv.yaml"),
        &["csv"],
        1,
        ANY,
        &[
            "metadata.name: \"someoperatorwithanextremelylongnamethatmakenosensewhatsoever.v999.999.999\" is invalid: must be no more than 63 bytes",
        ],
    ),
    case(
        "api TestValidateCSV: alm-examples is pretty format and is invalid",
        File("api/invalid.alm-examples.csv.yaml"),
        &["csv"],
        1,
        ANY,
        &["invalid example"],
    ),
    case(
        "api TestValidateCSV: alm-examples is not informed",
        File("api/correct.csv.empty.example.yaml"),
        &["csv"],
        ANY,
        1,
        &[
            "provided API should have an example annotation: etcd.database.coreos.com/v1beta2, Kind=EtcdCluster",
        ],
    ),
    case(
        "api TestValidateCSV: olm.properties defined in the annotations",
        File("api/correct.csv.olm.properties.annotation.yaml"),
        &["csv"],
        ANY,
        1,
        &[
            "found olm.properties annotation, please define these properties in metadata/properties.yaml instead",
        ],
    ),
    case(
        "api TestValidateCSV: spec.minKubeVersion is not in semantic version format",
        File("api/invalid_min_kube_version.csv.yaml"),
        &["csv"],
        1,
        ANY,
        &["csv.Spec.MinKubeVersion has an invalid value: 1.21"],
    ),
    case(
        "api testdata/dataTypeMismatch.csv.yaml (in no test: maintainers, a string, fails Go's decoding of the CSV)",
        File("api/dataTypeMismatch.csv.yaml"),
        &["load"],
        1,
        ANY,
        &["spec.maintainers: a string where a list is expected"],
    ),
    // api pkg/validation/internal/crd_test.go (CustomResourceDefinitionValidator)
    case(
        "api TestValidateCRD: valid v1beta1 CRD",
        File("api/v1beta1.crd.yaml"),
        &["crd"],
        0,
        ANY,
        &[],
    ),
    case(
        "api TestValidateCRD: invalid v1beta1 CRD duplicate version",
        File("api/duplicateVersions.crd.yaml"),
        &["crd"],
        SOME,
        ANY,
        &["must contain unique version names"],
    ),
    case(
        "api TestValidateCRD: valid v1 CRD",
        File("api/v1.crd.yaml"),
        &["crd"],
        0,
        ANY,
        &[],
    ),
    case(
        "api TestValidateCRD: invalid v1 CRD deprecated .spec.version field",
        File("api/deprecatedVersion.crd.yaml"),
        &["crd"],
        SOME,
        ANY,
        &["must have exactly one version marked as storage version"],
    ),
    case(
        "api TestValidateCRD: invalid CRD no conversionReviewVersions",
        File("api/noConversionReviewVersions.crd.yaml"),
        &["crd"],
        SOME,
        ANY,
        &["spec.conversion.conversionReviewVersions: Required value"],
    ),
    // api operatorhubv2_test.go, standardcapabilities_test.go, standardcategories_test.go, operatorhub_test.go
    case(
        "api TestValidateBundleOperatorHubV2: valid bundle",
        Manifests("api/valid_bundle"),
        &["operatorhubv2"],
        0,
        ANY,
        &[],
    ),
    case(
        "api TestValidateBundleOperatorHubV2: invalid bundle operatorhubio",
        Manifests("api/invalid_bundle_operatorhub"),
        &["operatorhubv2"],
        7,
        ANY,
        &[
            "csv.Spec.Provider.Name not specified",
            "csv.Spec.Maintainers elements should contain both name and email",
            "csv.Spec.Maintainers email invalidemail is invalid: mail: missing '@' or angle-addr",
            "csv.Spec.Links elements should contain both name and url",
            "csv.Spec.Links url https//coreos.com/operators/etcd/docs/latest/ is invalid: parse \"https//coreos.com/operators/etcd/docs/latest/\": invalid URI for request",
            "csv.Spec.Icon should only have one element",
            "csv.Spec.Version must be set",
        ],
    ),
    case(
        "api TestValidateBundleCapabilities: valid bundle",
        Manifests("api/valid_bundle"),
        &["capabilities"],
        0,
        ANY,
        &[],
    ),
    case(
        "api TestValidateBundleCapabilities: invalid bundle operatorhubio",
        Manifests("api/invalid_bundle_operatorhub"),
        &["capabilities"],
        1,
        ANY,
        &[
            "csv.Metadata.Annotations.Capabilities \"Installs and stuff\" is not a valid capabilities level",
        ],
    ),
    case(
        "api TestValidateBundleCategories: valid bundle",
        Manifests("api/valid_bundle"),
        &["categories"],
        0,
        ANY,
        &[],
    ),
    case(
        "api TestValidateBundleCategories: invalid bundle operatorhubio",
        Manifests("api/invalid_bundle_operatorhub"),
        &["categories"],
        1,
        ANY,
        &[
            "csv.Metadata.Annotations[\"categories\"] value \"Magic\" is not in the set of standard categories",
        ],
    ),
    case(
        "api TestValidateBundleOperatorHub: valid bundle",
        Manifests("api/valid_bundle"),
        &["operatorhub"],
        0,
        ANY,
        &[],
    ),
    case(
        "api TestValidateBundleOperatorHub: invalid bundle operatorhubio",
        Manifests("api/invalid_bundle_operatorhub"),
        &["operatorhub"],
        9,
        ANY,
        &[
            "csv.Spec.Provider.Name not specified",
            "is not a valid capabilities level",
            "value \"Magic\" is not in the set of standard categories",
            "csv.Spec.Version must be set",
        ],
    ),
    // api community_test.go (CommunityOperatorValidator)
    case(
        "api TestValidateCommunityBundle: no deprecated apis",
        Manifests("api/valid_bundle_v1"),
        &["community"],
        0,
        ANY,
        &[],
    ),
    PeerCase {
        edits: &[(
            "metadata.annotations.olm.properties",
            "\"[{\\\"type\\\": \\\"olm.maxOpenShiftVersion\\\", \\\"value\\\": \\\"4.8\\\"}]\"",
        )],
        values: &[("index-path", "@api/dockerfile/valid_bundle.Dockerfile")],
        ..case(
            "api TestValidateCommunityBundle: annotation and index label < 4.9 with deprecated apis",
            Manifests("api/valid_bundle_v1beta1"),
            &["community"],
            0,
            0,
            &[],
        )
    },
    PeerCase {
        edits: &[],
        values: &[("index-path", "@api/dockerfile/valid_bundle.Dockerfile")],
        ..case(
            "api TestValidateCommunityBundle: missing olm.properties with deprecated apis",
            Manifests("api/valid_bundle_v1beta1"),
            &["community"],
            1,
            ANY,
            &[
                "csv.Annotations not specified olm.maxOpenShiftVersion for an OCP version < 4.9",
                V1BETA1_CRDS,
            ],
        )
    },
    PeerCase {
        edits: &[(
            "metadata.annotations.olm.properties",
            "\"[{\\\"type\\\": \\\"olm.invalid\\\", \\\"value\\\": \\\"4.9\\\"}]\"",
        )],
        values: &[("index-path", "@api/dockerfile/valid_bundle.Dockerfile")],
        ..case(
            "api TestValidateCommunityBundle: olm.properties without maxOpenShiftVersion",
            Manifests("api/valid_bundle_v1beta1"),
            &["community"],
            1,
            ANY,
            &[
                "with the key `olm.maxOpenShiftVersion` and a value with an OCP version which is < 4.9 is required",
            ],
        )
    },
    PeerCase {
        edits: &[(
            "metadata.annotations.olm.properties",
            "\"[{\\\"type\\\": \\\"olm.maxOpenShiftVersion\\\", \\\"value\\\": \\\"4.9\\\"}]\"",
        )],
        values: &[("index-path", "@api/dockerfile/valid_bundle.Dockerfile")],
        ..case(
            "api TestValidateCommunityBundle: maxOpenShiftVersion >= 4.9",
            Manifests("api/valid_bundle_v1beta1"),
            &["community"],
            1,
            ANY,
            &["has the OCP version value 4.9 which is >= of 4.9"],
        )
    },
    PeerCase {
        edits: &[(
            "metadata.annotations.olm.properties",
            "\"[{\\\"type\\\": \\\"olm.maxOpenShiftVersion\\\", \\\"value\\\": \\\"4.8\\\"}]\"",
        )],
        values: &[],
        ..case(
            "api TestValidateCommunityBundle: missing index-path",
            Manifests("api/valid_bundle_v1beta1"),
            &["community"],
            0,
            1,
            &[
                "please, inform the path of its index image file via the the optional key values and the key index-path",
            ],
        )
    },
    PeerCase {
        edits: &[(
            "metadata.annotations.olm.properties",
            "\"[{\\\"type\\\": \\\"olm.maxOpenShiftVersion\\\", \\\"value\\\": \\\"4.8.1\\\"}]\"",
        )],
        values: &[("index-path", "@api/dockerfile/valid_bundle.Dockerfile")],
        ..case(
            "api TestValidateCommunityBundle: patch version in maxOpenShiftVersion",
            Manifests("api/valid_bundle_v1beta1"),
            &["community"],
            0,
            1,
            &[
                "olm.maxOpenShiftVersion must specify only major.minor versions, 4.8.1 will be truncated to 4.8.0",
            ],
        )
    },
    PeerCase {
        edits: &[(
            "metadata.annotations.olm.properties",
            "\"[{\\\"type\\\": \\\"olm.maxOpenShiftVersion\\\", \\\"value\\\": \\\"4.8.0+build\\\"}]\"",
        )],
        values: &[("index-path", "@api/dockerfile/valid_bundle.Dockerfile")],
        ..case(
            "api TestValidateCommunityBundle: maxOpenShiftVersion 4.8.0+build",
            Manifests("api/valid_bundle_v1beta1"),
            &["community"],
            0,
            0,
            &[],
        )
    },
    PeerCase {
        edits: &[(
            "metadata.annotations.olm.properties",
            "\"[{\\\"type\\\": \\\"olm.maxOpenShiftVersion\\\", \\\"value\\\": \\\"4.8\\\"}]\"",
        )],
        values: &[("index-path", "@api/dockerfile/valid_bundle_4_8.Dockerfile")],
        ..case(
            "api TestValidateCommunityBundle: index label 4.8 (valid_bundle_4_8.Dockerfile)",
            Manifests("api/valid_bundle_v1beta1"),
            &["community"],
            0,
            0,
            &[],
        )
    },
    PeerCase {
        edits: &[(
            "metadata.annotations.olm.properties",
            "\"[{\\\"type\\\": \\\"olm.maxOpenShiftVersion\\\", \\\"value\\\": \\\"4.8\\\"}]\"",
        )],
        values: &[(
            "index-path",
            "@api/dockerfile/bundle_without_label.Dockerfile",
        )],
        ..case(
            "api Test_checkOCPLabelsWithHasDeprecatedAPIs: OCP label not found",
            Manifests("api/valid_bundle_v1beta1"),
            &["community"],
            1,
            ANY,
            &["provide compatible version(s) via the labels"],
        )
    },
    PeerCase {
        edits: &[(
            "metadata.annotations.olm.properties",
            "\"[{\\\"type\\\": \\\"olm.maxOpenShiftVersion\\\", \\\"value\\\": \\\"4.8\\\"}]\"",
        )],
        values: &[("index-path", "@api/dockerfile/invalid")],
        ..case(
            "api Test_checkOCPLabelsWithHasDeprecatedAPIs: index path invalid",
            Manifests("api/valid_bundle_v1beta1"),
            &["community"],
            1,
            ANY,
            &["was not found"],
        )
    },
    PeerCase {
        edits: &[(
            "metadata.annotations.olm.properties",
            "\"[{\\\"type\\\": \\\"olm.maxOpenShiftVersion\\\", \\\"value\\\": \\\"4.8\\\"}]\"",
        )],
        values: &[(
            "index-path",
            "@api/dockerfile/invalid_bundle_equals_upper.Dockerfile",
        )],
        ..case(
            "api Test_checkOCPLabelsWithHasDeprecatedAPIs: OCP label = 4.9",
            Manifests("api/valid_bundle_v1beta1"),
            &["community"],
            1,
            ANY,
            &["com.redhat.openshift.versions"],
        )
    },
    PeerCase {
        edits: &[(
            "metadata.annotations.olm.properties",
            "\"[{\\\"type\\\": \\\"olm.maxOpenShiftVersion\\\", \\\"value\\\": \\\"4.8\\\"}]\"",
        )],
        values: &[(
            "index-path",
            "@api/dockerfile/invalid_bundle_range_upper.Dockerfile",
        )],
        ..case(
            "api Test_checkOCPLabelsWithHasDeprecatedAPIs: OCP label range up to >= 4.9",
            Manifests("api/valid_bundle_v1beta1"),
            &["community"],
            1,
            ANY,
            &["com.redhat.openshift.versions"],
        )
    },
    // api good_practices_test.go (GoodPracticesValidator)
    case(
        "api TestValidateGoodPractices: resource requests set for all containers",
        Manifests("api/valid_bundle"),
        &["good-practices"],
        0,
        0,
        &[],
    ),
    case(
        "api TestValidateGoodPractices: resource requests NOT set",
        Manifests("api/valid_bundle_v1"),
        &["good-practices"],
        0,
        2,
        &[
            "unable to find the resource requests for the container: (kube-rbac-proxy)",
            "unable to find the resource requests for the container: (manager)",
        ],
    ),
    PeerCase {
        edits: &[("spec.install.spec.deployments", "null")],
        values: &[],
        ..case(
            "api TestValidateGoodPractices: DeploymentSpecs nil",
            Manifests("api/valid_bundle"),
            &["good-practices"],
            1,
            ANY,
            &["unable to find a deployment to install in the CSV"],
        )
    },
    case(
        "api TestValidateGoodPractices: channel not following the convention",
        Bundle("api/bundle_with_metadata"),
        &["good-practices"],
        0,
        1,
        &["channel(s) [\"alpha\"] are not following the recommended naming convention"],
    ),
    PeerCase {
        edits: &[(
            "spec.customresourcedefinitions.owned[0].description",
            "\"\"",
        )],
        values: &[],
        ..case(
            "api TestValidateGoodPractices: CRD without description",
            Manifests("api/valid_bundle"),
            &["good-practices"],
            0,
            1,
            &["owned CRD \"etcdclusters.etcd.database.coreos.com\" has an empty description"],
        )
    },
    PeerCase {
        edits: &[(
            "spec.install.spec.permissions[0].rules[0]",
            "{\"apiGroups\":[\"apiextensions.k8s.io\"],\"resources\":[\"*\"],\"verbs\":[\"*\"]}",
        )],
        values: &[],
        ..case(
            "api TestValidateRBACForCRDsWith: all verbs on all resources of apiextensions.k8s.io",
            Manifests("api/valid_bundle"),
            &["good-practices"],
            0,
            1,
            &["CSV contains permissions to create CRD"],
        )
    },
    PeerCase {
        edits: &[(
            "spec.install.spec.permissions[0].rules[0]",
            "{\"apiGroups\":[\"apiextensions.k8s.io\"],\"resources\":[\"customresourcedefinitions\"],\"verbs\":[\"patch\"]}",
        )],
        values: &[],
        ..case(
            "api TestValidateRBACForCRDsWith: patch customresourcedefinitions",
            Manifests("api/valid_bundle"),
            &["good-practices"],
            0,
            1,
            &["CSV contains permissions to create CRD"],
        )
    },
    // api removed_apis_test.go (AlphaDeprecatedAPIsValidator)
    case(
        "api TestValidateDeprecatedAPIS: no deprecated apis",
        Manifests("api/valid_bundle_v1"),
        &["alpha-deprecated-apis"],
        0,
        0,
        &[],
    ),
    PeerCase {
        edits: &[("spec.minKubeVersion", "\"1.11.3\"")],
        values: &[],
        ..case(
            "api TestValidateDeprecatedAPIS: CRD v1beta1 and minKubeVersion 1.11.3: a warning",
            Manifests("api/valid_bundle_v1beta1"),
            &["alpha-deprecated-apis"],
            0,
            1,
            &[V1BETA1_CRDS],
        )
    },
    PeerCase {
        edits: &[],
        values: &[("k8s-version", "1.22")],
        ..case(
            "api TestValidateDeprecatedAPIS: k8s-version 1.22 with the deprecated API: an error",
            Manifests("api/valid_bundle_v1beta1"),
            &["alpha-deprecated-apis"],
            1,
            ANY,
            &["removed in v1.22", V1BETA1_CRDS],
        )
    },
    PeerCase {
        edits: &[],
        values: &[("k8s-version", "1.25")],
        ..case(
            "api TestValidateDeprecatedAPIS: k8s-version 1.25 with APIs removed in 1.25",
            Manifests("api/removed_api_1_25"),
            &["alpha-deprecated-apis"],
            1,
            ANY,
            &[
                "Migrate the API(s) for HorizontalPodAutoscaler: ([\"memcached-operator-hpa\"]),PodDisruptionBudget: ([\"memcached-operator-policy-manager\"]),",
            ],
        )
    },
    case(
        "api TestValidateDeprecatedAPIS: APIs removed in 1.25, no k8s-version",
        Manifests("api/removed_api_1_25"),
        &["alpha-deprecated-apis"],
        0,
        1,
        &["removed in v1.25"],
    ),
    PeerCase {
        edits: &[],
        values: &[("k8s-version", "1.26")],
        ..case(
            "api TestValidateDeprecatedAPIS: k8s-version 1.26 with APIs removed in 1.26",
            Manifests("api/removed_api_1_26"),
            &["alpha-deprecated-apis"],
            1,
            ANY,
            &["Migrate the API(s) for HorizontalPodAutoscaler: ([\"memcached-operator-hpa\"])"],
        )
    },
    case(
        "api TestValidateDeprecatedAPIS: APIs removed in 1.26, no k8s-version",
        Manifests("api/removed_api_1_26"),
        &["alpha-deprecated-apis"],
        0,
        1,
        &["removed in v1.26"],
    ),
    PeerCase {
        edits: &[],
        values: &[("k8s-version", "invalid")],
        ..case(
            "api TestValidateDeprecatedAPIS: invalid k8s-version",
            Manifests("api/valid_bundle_v1beta1"),
            &["alpha-deprecated-apis"],
            1,
            1,
            &[
                "invalid value informed via the k8s key option : invalid",
                V1BETA1_CRDS,
            ],
        )
    },
    PeerCase {
        edits: &[("spec.minKubeVersion", "\"invalid\"")],
        values: &[],
        ..case(
            "api TestValidateDeprecatedAPIS: invalid minKubeVersion",
            Manifests("api/valid_bundle_v1beta1"),
            &["alpha-deprecated-apis"],
            1,
            1,
            &[
                "unable to use csv.Spec.MinKubeVersion to verify the CRD/Webhook apis because it has an invalid value: invalid",
            ],
        )
    },
    case(
        "api Test_GetRemovedAPIsOn1_22From: other deprecated kinds",
        Manifests("api/bundle_with_deprecated_resources"),
        &["alpha-deprecated-apis"],
        ANY,
        SOME,
        &[
            "ClusterRole: ([\"memcached-operator-metrics-reader\"])",
            "MutatingWebhookConfiguration: ([\"mutating-webhook-configuration\"])",
            "PriorityClass: ([\"super-priority\"])",
            "Role: ([\"memcached-role\"])",
        ],
    ),
    case(
        "api Test_GetRemovedAPIsOn1_25From: deprecated (warnings) in 1.25: PodSecurityPolicy rules",
        Manifests("api/deprecated_api_1_25"),
        &["alpha-deprecated-apis"],
        ANY,
        SOME,
        &[
            "podsecuritypolicies: ([\"ClusterServiceVersion.Spec.InstallStrategy.StrategySpec.Permissions[0].Rules[5]\"])",
        ],
    ),
    // operator-framework/operator-registry pkg/lib/bundle/validate_test.go
    case(
        "registry TestValidateBundleFormat: valid bundle",
        Bundle("registry/valid_bundle"),
        &["format"],
        0,
        ANY,
        &[],
    ),
    case(
        "registry TestValidateBundleDependencies: invalid gvk dependency",
        Bundle("registry/invalid_dependencies_bundle/invalid_gvk_dependency"),
        &["format"],
        1,
        ANY,
        &["couldn't parse dependency of type olm.gvk"],
    ),
    case(
        "registry TestValidateBundleDependencies: invalid package dependency",
        Bundle("registry/invalid_dependencies_bundle/invalid_package_dependency"),
        &["format"],
        3,
        ANY,
        &[
            "Invalid semver format version",
            "Package version is empty",
            "Package name is empty",
        ],
    ),
    case(
        "registry TestValidateBundleDependencies: invalid dependency type",
        Bundle("registry/invalid_dependencies_bundle/invalid_dependency_type"),
        &["format"],
        1,
        ANY,
        &["couldn't parse dependency of type olm.crd"],
    ),
    case(
        "registry TestValidateBundleDependencies: invalid label dependency",
        Bundle("registry/invalid_dependencies_bundle/invalid_label_dependency"),
        &["format"],
        1,
        ANY,
        &["Label information is missing"],
    ),
    case(
        "registry TestValidateBundle_InvalidRegistryVersion: mediatype registry+v2",
        Bundle("registry/invalid_annotations_bundle"),
        &["format"],
        1,
        ANY,
        &[
            "Expecting annotation \"operators.operatorframework.io.bundle.mediatype.v1\" to have value \"registry+v1\" instead of \"registry+v2\"",
        ],
    ),
    case(
        "registry TestValidateBundleContent: invalid csv",
        Manifests("registry/invalid_manifests_bundle/invalid_csv"),
        CONTENT,
        1,
        ANY,
        &["install modes not found"],
    ),
    case(
        "registry TestValidateBundleContent: invalid crd (1 error of the registry's own content check; operator-sdk's BundleValidator also names the version listed twice as a duplicate CRD)",
        Manifests("registry/invalid_manifests_bundle/invalid_crd"),
        CONTENT,
        SOME,
        ANY,
        &[
            "must contain unique version names",
            "duplicate CRD \"etcd.database.coreos.com/v1beta2, Kind=EtcdRestore\"",
        ],
    ),
    case(
        "registry TestValidateBundleContent: invalid sa (a number as namespace: an error of the registry's own content check, which decodes the object's metadata typed; operator-sdk reads it through apimachinery's Unstructured, which finds no string there, so no namespace, and passes it)",
        Manifests("registry/invalid_manifests_bundle/invalid_sa"),
        CONTENT,
        0,
        ANY,
        &[],
    ),
    case(
        "registry TestValidateBundleContent: invalid type (ResourceQuota)",
        Manifests("registry/invalid_manifests_bundle/invalid_type"),
        CONTENT,
        1,
        ANY,
        &["ResourceQuota (v1) is not supported in a registry+v1 bundle"],
    ),
    case(
        "registry TestValidateBundleContent: valid registryv1 bundle",
        Manifests("registry/valid_bundle/manifests"),
        CONTENT,
        0,
        ANY,
        &[],
    ),
    case(
        "registry TestValidateBundleContent: missing crd",
        Manifests("registry/invalid_manifests_bundle/invalid_bundle"),
        CONTENT,
        1,
        ANY,
        &["owned CRD \"etcd.database.coreos.com/v1beta2, Kind=EtcdCluster\" not found in bundle"],
    ),
    case(
        "registry TestValidateBundleContent: extra crd (a warning in the registry's own bundle check; an error of operator-framework/api's BundleValidator, which operator-sdk runs)",
        Manifests("registry/invalid_manifests_bundle/invalid_bundle_2"),
        CONTENT,
        1,
        ANY,
        &["is present in bundle \"etcdoperator.v0.9.4\" but not defined in CSV"],
    ),
    case(
        "registry TestValidateBundleContent: invalid annotation names",
        Manifests("registry/invalid_manifests_bundle/invalid_annotation_name"),
        CONTENT,
        3,
        ANY,
        &[
            "provided annotation olm.operatorgroup uses wrong case and should be olm.operatorGroup instead",
            "provided annotation olm.operatornamespace uses wrong case and should be olm.operatorNamespace instead",
            "provided annotation olm.skiprange uses wrong case and should be olm.skipRange instead",
        ],
    ),
    // operator-framework/operator-sdk: bundles its tests validate or score
    case(
        "sdk internal/scorecard/testdata/bundle (the scorecard's test bundle)",
        Bundle("sdk/scorecard"),
        DEFAULT,
        0,
        ANY,
        &[],
    ),
    case(
        "sdk testdata/go/v4/memcached-operator/bundle (make bundle of the tutorial)",
        Bundle("sdk/memcached-operator"),
        DEFAULT,
        0,
        ANY,
        &[],
    ),
];

/// The annotations of a folder of manifests, which has none: no package, no channel.
const BARE_ANNOTATIONS: &str = "annotations:
  operators.operatorframework.io.bundle.mediatype.v1: registry+v1
  operators.operatorframework.io.bundle.manifests.v1: manifests/
  operators.operatorframework.io.bundle.metadata.v1: metadata/
";

/// The case's bundle directory, under `root`.
fn peer_bundle(case: &PeerCase, root: &Path) -> PathBuf {
    let bundle = root.join("bundle");
    let source = |p: &str| PathBuf::from(PEER_DATA).join(p);
    match case.data {
        Data::Bundle(dir) => copy_dir(&source(dir), &bundle),
        Data::Manifests(dir) => {
            copy_dir(&source(dir), &bundle.join("manifests"));
            std::fs::create_dir_all(bundle.join("metadata")).unwrap();
            std::fs::write(bundle.join("metadata/annotations.yaml"), BARE_ANNOTATIONS).unwrap();
        }
        Data::File(file) => {
            let target = bundle
                .join("manifests")
                .join(Path::new(file).file_name().unwrap());
            std::fs::create_dir_all(target.parent().unwrap()).unwrap();
            std::fs::copy(source(file), target).unwrap();
            std::fs::create_dir_all(bundle.join("metadata")).unwrap();
            std::fs::write(bundle.join("metadata/annotations.yaml"), BARE_ANNOTATIONS).unwrap();
        }
    }
    if !case.edits.is_empty() {
        let csv = tree(&bundle.join("manifests"))
            .into_iter()
            .map(|(p, bytes)| (p, String::from_utf8_lossy(&bytes).into_owned()))
            .find(|(_, text)| text.contains("kind: ClusterServiceVersion"))
            .map(|(p, _)| bundle.join("manifests").join(p))
            .expect("the case has a CSV to edit");
        edit(&csv, |v| {
            for (path, json) in case.edits {
                let new: serde_json::Value = serde_json::from_str(json).unwrap();
                set_path(v, path, serde_yaml::to_value(new).unwrap());
            }
        });
    }
    bundle
}

/// Sets `a.b[0].c` (keys with dots, like `olm.properties`, go last) in a YAML value.
fn set_path(value: &mut Value, path: &str, new: Value) {
    let (parents, last) = match path.strip_prefix("metadata.annotations.") {
        Some(key) => (
            vec!["metadata".to_string(), "annotations".to_string()],
            key.to_string(),
        ),
        None => {
            let mut parts: Vec<String> = path.split('.').map(str::to_string).collect();
            let last = parts.pop().unwrap();
            (parts, last)
        }
    };
    let mut at = value;
    for part in parents
        .iter()
        .map(String::as_str)
        .chain(std::iter::once(last.as_str()))
    {
        let (key, index) = match part.split_once('[') {
            Some((k, i)) => (k, Some(i.trim_end_matches(']').parse::<usize>().unwrap())),
            None => (part, None),
        };
        if at.get(key).is_none() {
            at[key] = Value::Mapping(Default::default());
        }
        at = at.get_mut(key).unwrap();
        if let Some(i) = index {
            at = at.get_mut(i).unwrap();
        }
    }
    *at = new;
}

/// The problems of the case's validators, run as `bundle validate` runs them.
fn peer_problems(case: &PeerCase) -> Vec<operator_rs::olm::validate::Problem> {
    use operator_rs::olm::validate::{self, DEFAULT_CHECKS, Options};
    let tmp = tempfile::tempdir().unwrap();
    let bundle = peer_bundle(case, tmp.path());
    let suites: Vec<&str> = case
        .checks
        .iter()
        .copied()
        .filter(|c| !DEFAULT_CHECKS.contains(c))
        .collect();
    let options = Options {
        select_optional: (!suites.is_empty()).then(|| format!("name in ({})", suites.join(","))),
        optional_values: case
            .values
            .iter()
            .map(|(k, v)| {
                let v = match v.strip_prefix('@') {
                    Some(path) => format!("{PEER_DATA}/{path}"),
                    None => v.to_string(),
                };
                (k.to_string(), v)
            })
            .collect(),
        olmv1: false,
    };
    validate::validate(&bundle, &options)
        .unwrap()
        .into_iter()
        .filter(|p| case.checks.contains(&p.check))
        .collect()
}

/// Whether the case's problems are the peer's verdict; why not when they are not.
fn peer_verdict(
    case: &PeerCase,
    problems: &[operator_rs::olm::validate::Problem],
) -> Result<(), String> {
    use operator_rs::olm::validate::Severity;
    let count = |s: Severity| problems.iter().filter(|p| p.severity == s).count() as i32;
    let fits = |want: i32, got: i32| match want {
        ANY => true,
        SOME => got > 0,
        n => got == n,
    };
    let (errors, warnings) = (count(Severity::Error), count(Severity::Warning));
    let mut why = Vec::new();
    if !fits(case.errors, errors) {
        why.push(format!(
            "{errors} error(s), the peer {}",
            describe(case.errors)
        ));
    }
    if !fits(case.warnings, warnings) {
        why.push(format!(
            "{warnings} warning(s), the peer {}",
            describe(case.warnings)
        ));
    }
    for words in case.says {
        if !problems.iter().any(|p| p.to_string().contains(words)) {
            why.push(format!("nothing says {words:?}"));
        }
    }
    if why.is_empty() {
        Ok(())
    } else {
        let found: Vec<String> = problems.iter().map(ToString::to_string).collect();
        Err(format!("{}\n    {}", why.join("; "), found.join("\n    ")))
    }
}

fn describe(want: i32) -> String {
    match want {
        SOME => "at least one".into(),
        n => n.to_string(),
    }
}

/// The verdict a case expects, in words (for the table).
fn expected_verdict(case: &PeerCase) -> String {
    match (case.errors, case.warnings) {
        (0, 0) => "valid, no warning".into(),
        (0, ANY) => "valid".into(),
        (0, w) => format!("valid, {} warning(s)", describe(w)),
        (ANY, w) => format!("{} warning(s)", describe(w)),
        (e, _) => format!("invalid, {} error(s)", describe(e)),
    }
}

/// Every case of the peer's test data gets the peer's verdict, and the problem it names. Run
/// with `-- --nocapture` for the table of cases.
#[test]
fn peer_cases_get_the_peers_verdicts() {
    let mut failures = Vec::new();
    let mut table = String::from(
        "| peer test case | data | validators | peer's verdict | operator-rs |\n|---|---|---|---|---|\n",
    );
    for case in PEER_CASES {
        let problems = peer_problems(case);
        let verdict = peer_verdict(case, &problems);
        let data = match case.data {
            Data::Bundle(d) | Data::Manifests(d) | Data::File(d) => d,
        };
        table.push_str(&format!(
            "| {} | {data} | {} | {} | {} |\n",
            case.test,
            case.checks.join(", "),
            expected_verdict(case),
            if verdict.is_ok() {
                "agrees"
            } else {
                "DISAGREES"
            }
        ));
        if let Err(why) = verdict {
            failures.push(format!("{}: {why}", case.test));
        }
    }
    println!("{table}");
    println!(
        "{} of {} cases agree",
        PEER_CASES.len() - failures.len(),
        PEER_CASES.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

fn catalog_of(dir: &Path) -> operator_rs::olm::catalog::Catalog {
    let path = "catalog/memcached-operator/index.yaml";
    operator_rs::olm::catalog::Catalog::parse(&read(dir, path), path).unwrap()
}

/// The acceptance of file-based catalogs: versions 0.0.1 and 0.0.2 (which replaces it) of the
/// Memcached operator, added one at a time as `make catalog` adds them, give the channel graph
/// 0.0.1 → 0.0.2; the catalog read back is valid.
#[test]
fn a_catalog_grows_one_version_at_a_time() {
    use operator_rs::olm::catalog;
    let (_tmp, dir) = bundle_of(&MEMCACHED);
    let add = |version: &str| {
        let image = format!("example.com/memcached-operator-bundle:v{version}");
        run_ok(
            &dir,
            &[
                "generate", "catalog", "--bundle", "./bundle", "--image", &image,
            ],
        )
    };
    let out = add("0.0.1");
    assert!(
        out.contains("channel alpha: memcached-operator.v0.0.1"),
        "{out}"
    );
    generate_bundle(
        &MEMCACHED,
        &dir,
        &[
            "--version",
            "0.0.2",
            "--replaces",
            "memcached-operator.v0.0.1",
        ],
    );
    let out = add("0.0.2");
    assert!(
        out.contains("channel alpha: memcached-operator.v0.0.1 -> memcached-operator.v0.0.2"),
        "{out}"
    );
    let parsed = catalog_of(&dir);
    assert_eq!(catalog::validate(&parsed), Vec::<String>::new());
    assert_eq!(parsed.package.name, "memcached-operator");
    assert_eq!(parsed.package.default_channel, "alpha");
    assert_eq!(
        catalog::edges(&parsed, "alpha"),
        [(
            "memcached-operator.v0.0.1".to_string(),
            "memcached-operator.v0.0.2".to_string()
        )]
    );
    let versions: Vec<String> = parsed
        .bundles
        .iter()
        .map(|b| b.version().unwrap().to_string())
        .collect();
    assert_eq!(versions, ["0.0.1", "0.0.2"]);
    let second = &parsed.bundles[1];
    assert_eq!(second.image, "example.com/memcached-operator-bundle:v0.0.2");
    let types: Vec<&str> = second
        .properties
        .iter()
        .map(|p| p["type"].as_str().unwrap())
        .collect();
    assert_eq!(types, ["olm.gvk", "olm.package", "olm.csv.metadata"]);
    assert_eq!(second.properties[0]["value"]["kind"], "Memcached");
    assert!(
        second
            .related_images
            .iter()
            .any(|r| r["image"] == "memcached:1.6.26-alpine3.19")
    );
    // Adding a version again replaces it: the catalog is the same.
    let before = read(&dir, "catalog/memcached-operator/index.yaml");
    add("0.0.2");
    assert_eq!(before, read(&dir, "catalog/memcached-operator/index.yaml"));
    let dockerfile = read(&dir, "catalog.Dockerfile");
    assert!(dockerfile.contains("ADD catalog /configs"), "{dockerfile}");
    assert!(dockerfile.contains("LABEL operators.operatorframework.io.index.configs.v1=/configs"));
    // The Makefile targets that write and build it.
    let makefile = read(&dir, "Makefile");
    assert!(makefile.contains("generate catalog --bundle ./bundle --image $(BUNDLE_IMG)"));
    assert!(
        !makefile.contains("opm index add"),
        "SQLite catalogs are gone"
    );
}

#[test]
fn a_catalog_is_refused_when_its_graph_is_broken() {
    let (_tmp, dir) = bundle_of(&MEMCACHED);
    run_ok(
        &dir,
        &[
            "generate",
            "catalog",
            "--image",
            "example.com/m-bundle:v0.0.1",
        ],
    );
    // 0.0.3 replaces 0.0.2, which the catalog has not: its replaces would point nowhere.
    generate_bundle(
        &MEMCACHED,
        &dir,
        &[
            "--version",
            "0.0.3",
            "--replaces",
            "memcached-operator.v0.0.2",
        ],
    );
    let before = tree(&dir.join("catalog"));
    assert_refused(
        &dir,
        &[
            "generate",
            "catalog",
            "--image",
            "example.com/m-bundle:v0.0.3",
        ],
        &["replaces \"memcached-operator.v0.0.2\", which is not in the channel"],
    );
    assert_eq!(before, tree(&dir.join("catalog")), "nothing written");
    assert_refused(
        &dir,
        &["generate", "catalog"],
        &["--image: give one image per bundle"],
    );
    assert_refused(
        &dir,
        &["generate", "catalog", "--image", "Not An Image"],
        &["--image \"Not An Image\" is not an image reference"],
    );
    assert_refused(
        &dir,
        &[
            "generate",
            "catalog",
            "--image",
            "example.com/m:v1",
            "--output",
            "../elsewhere",
        ],
        &["--output ../elsewhere"],
    );
    // A bundle that does not validate does not go into a catalog.
    edit(
        &dir.join("bundle/manifests/memcached-operator.clusterserviceversion.yaml"),
        |v| set(v, &["spec", "displayName"], "".into()),
    );
    assert_refused(
        &dir,
        &[
            "generate",
            "catalog",
            "--image",
            "example.com/m-bundle:v0.0.3",
        ],
        &["is not valid", "spec.displayName: required field missing"],
    );
}

/// The rendered objects of the Memcached project, with a second service account that has a
/// Role of its own.
fn with_backup_account(dir: &Path) -> PathBuf {
    let input = render(&MEMCACHED, dir);
    let mut text = std::fs::read_to_string(&input).unwrap();
    text.push_str(
        "---
apiVersion: v1
kind: ServiceAccount
metadata: {name: backup, namespace: memcached-operator-system}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: backup, namespace: memcached-operator-system}
rules: [{apiGroups: [''], resources: [persistentvolumeclaims], verbs: [get]}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: backup, namespace: memcached-operator-system}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: backup}
subjects: [{kind: ServiceAccount, name: backup, namespace: memcached-operator-system}]
",
    );
    std::fs::write(&input, text).unwrap();
    input
}

#[test]
fn extra_service_accounts_get_their_permissions_in_the_csv() {
    let (_tmp, dir) = bundle_of(&MEMCACHED);
    let input = with_backup_account(&dir);
    let input = input.to_str().unwrap();
    run_ok(
        &dir,
        &["generate", "bundle", "--input", input, "--version", "0.0.1"],
    );
    let files: Vec<String> = tree(&dir.join("bundle/manifests")).into_keys().collect();
    assert!(
        files.iter().any(|f| f.starts_with("backup_")),
        "without the flag, its own files: {files:?}"
    );
    run_ok(
        &dir,
        &[
            "generate",
            "bundle",
            "--input",
            input,
            "--version",
            "0.0.1",
            "--extra-service-accounts",
            "backup",
        ],
    );
    let files: Vec<String> = tree(&dir.join("bundle/manifests")).into_keys().collect();
    assert!(
        !files.iter().any(|f| f.starts_with("backup_")),
        "OLM creates them: {files:?}"
    );
    let csv: Value = serde_yaml::from_str(&read(&dir, &csv_path(&MEMCACHED))).unwrap();
    let permissions = csv["spec"]["install"]["spec"]["permissions"]
        .as_sequence()
        .unwrap();
    let backup = permissions
        .iter()
        .find(|p| p["serviceAccountName"] == "backup")
        .expect("the backup account's permissions");
    assert_eq!(backup["rules"][0]["resources"][0], "persistentvolumeclaims");
    let (ok, report) = validate(&dir, "bundle");
    assert!(ok, "{report}");
    assert_refused(
        &dir,
        &[
            "generate",
            "bundle",
            "--input",
            input,
            "--version",
            "0.0.1",
            "--extra-service-accounts",
            "Back Up",
        ],
        &["--extra-service-accounts \"Back Up\""],
    );
}

#[test]
fn image_digests_are_kept_and_required_on_request() {
    let (_tmp, dir) = bundle_of(&MEMCACHED);
    let csv: Value = serde_yaml::from_str(&read(&dir, &csv_path(&MEMCACHED))).unwrap();
    assert_eq!(
        csv["spec"]["relatedImages"][0]["image"],
        "memcached:1.6.26-alpine3.19"
    );
    assert_eq!(csv["spec"]["relatedImages"][0]["name"], "memcached");
    let input = render(&MEMCACHED, &dir);
    let input_text = std::fs::read_to_string(&input).unwrap();
    let flags = |input: &str| -> Vec<String> {
        [
            "generate",
            "bundle",
            "--input",
            input,
            "--version",
            "0.0.1",
            "--use-image-digests",
        ]
        .map(str::to_string)
        .to_vec()
    };
    let argv = flags(input.to_str().unwrap());
    let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
    assert_refused(
        &dir,
        &argv,
        &[
            "--use-image-digests",
            "memcached:1.6.26-alpine3.19",
            "not pinned by digest",
            "needs a registry",
        ],
    );
    let manager = input_text
        .lines()
        .find_map(|l| l.trim().strip_prefix("image: "))
        .unwrap()
        .to_string();
    let pinned = input_text
        .replace(
            &manager,
            &format!("example.com/memcached-operator@{DIGEST}"),
        )
        .replace(
            "memcached:1.6.26-alpine3.19",
            &format!("memcached@{DIGEST}"),
        );
    let pinned_path = dir.parent().unwrap().join("pinned.yaml");
    std::fs::write(&pinned_path, pinned).unwrap();
    let argv = flags(pinned_path.to_str().unwrap());
    let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
    run_ok(&dir, &argv);
    let csv: Value = serde_yaml::from_str(&read(&dir, &csv_path(&MEMCACHED))).unwrap();
    let images: Vec<&str> = csv["spec"]["relatedImages"]
        .as_sequence()
        .unwrap()
        .iter()
        .map(|r| r["image"].as_str().unwrap())
        .collect();
    assert_eq!(
        images,
        [
            format!("memcached@{DIGEST}"),
            format!("example.com/memcached-operator@{DIGEST}")
        ]
    );
    assert_eq!(
        csv["metadata"]["annotations"]["containerImage"],
        format!("example.com/memcached-operator@{DIGEST}").as_str()
    );
}

#[test]
fn olm_v1_says_why_it_cannot_install_a_bundle() {
    let (_tmp, dir) = bundle_of(&WEBHOOKS);
    let (ok, report) = validate_with(&dir, "bundle", &["--olmv1"]);
    assert!(ok, "{report}");
    assert!(
        report.contains("[olmv1]") && report.contains("cert-manager must be installed"),
        "{report}"
    );
    edit(&csv_file(&dir.join("bundle")), |v| {
        for mode in v["spec"]["installModes"].as_sequence_mut().unwrap() {
            mode["supported"] = (mode["type"] == "OwnNamespace").into();
        }
    });
    dependencies(
        &dir.join("bundle"),
        "dependencies:\n- type: olm.package\n  value: {packageName: etcd, version: '>=0.9.0'}\n",
    );
    let (ok, report) = validate_with(&dir, "bundle", &["--olmv1"]);
    assert!(!ok);
    for words in [
        "ERROR: [olmv1] manifests/crew-webhooks.clusterserviceversion.yaml: spec.installModes: OLM v1 cannot install this bundle: the bundle does not support the AllNamespaces install mode",
        "ERROR: [olmv1] metadata/dependencies.yaml: dependencies[0]: OLM v1 cannot install this bundle: it has a dependency declared via property \"olm.package.required\"",
        "conversion webhooks are only supported for bundles that only support AllNamespaces install mode",
    ] {
        assert!(report.contains(words), "{words}:\n{report}");
    }
}

#[test]
fn optional_suites_are_listed_and_selected_by_label() {
    let (_tmp, dir) = bundle_of(&MEMCACHED);
    let list = run_ok(&dir, &["bundle", "validate", "--list-optional"]);
    for name in [
        "operatorhubv2",
        "capabilities",
        "categories",
        "operatorhub",
        "community",
        "alpha-deprecated-apis",
        "good-practices",
        "multiarch",
        "operator-rs",
        "olmv1",
    ] {
        assert!(list.lines().any(|l| l.starts_with(name)), "{name}:\n{list}");
    }
    let (ok, report) = validate_with(
        &dir,
        "bundle",
        &["--select-optional", "suite=operatorframework"],
    );
    assert!(ok, "{report}");
    assert!(report.contains("[good-practices]"), "{report}");
    assert!(!report.contains("[community]"), "{report}");
    let (ok, report) = validate_with(
        &dir,
        "bundle",
        &["--select-optional", "name=standardcategories"],
    );
    assert!(ok, "an alias of categories: {report}");
    let (ok, report) = validate_with(&dir, "bundle", &["--output", "json-alpha1"]);
    let json: serde_json::Value = serde_json::from_str(report.trim()).unwrap();
    assert!(ok && json["passed"] == true, "{report}");
    assert_refused(
        &dir,
        &[
            "bundle",
            "validate",
            "bundle",
            "--select-optional",
            "name=nosuch",
        ],
        &["matches no optional validator"],
    );
    assert_refused(
        &dir,
        &[
            "bundle",
            "validate",
            "bundle",
            "--optional-values",
            "k8s-version",
        ],
        &["--optional-values \"k8s-version\": write key=value"],
    );
}

/// operator-framework/api's TestCustomCategories: $OPERATOR_BUNDLE_CATEGORIES names a JSON file of
/// categories, which replaces OperatorHub.io's (run as a process: the variable is global).
#[test]
fn custom_categories_come_from_the_environment() {
    let tmp = tempfile::tempdir().unwrap();
    let case = case(
        "api TestCustomCategories",
        Manifests("api/valid_bundle_custom_categories"),
        &["operatorhub"],
        0,
        ANY,
        &[],
    );
    let bundle = peer_bundle(&case, tmp.path());
    let run = |categories: &str| {
        operator_rs(tmp.path())
            .args([
                "bundle",
                "validate",
                bundle.to_str().unwrap(),
                "--select-optional",
                "name=categories",
            ])
            .env("OPERATOR_BUNDLE_CATEGORIES", categories)
            .output()
            .unwrap()
    };
    let categories_errors = |out: std::process::Output| -> Vec<String> {
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter(|l| l.starts_with("ERROR: [categories]"))
            .map(str::to_string)
            .collect()
    };
    let custom = categories_errors(run(&format!("{PEER_DATA}/api/categories.json")));
    assert!(custom.is_empty(), "{custom:?}");
    let standard = categories_errors(run(""));
    assert!(
        standard
            .iter()
            .any(|l| l.contains("\"MyCoolThing\" is not in the set of standard categories")),
        "{standard:?}"
    );
}

/// operator-sdk's `make bundle` line and flags (`generate bundle` 1.42): the manifests from a
/// pipe, the two parts one at a time, another folder, stdout, `--overwrite=false`.
#[test]
fn operator_sdks_bundle_flags() {
    let (_tmp, dir) = project(&MEMCACHED);
    run_ok(&dir, MANIFESTS_FLAGS);
    let rendered = std::fs::read_to_string(render(&MEMCACHED, &dir)).unwrap();
    // `kustomize build config/manifests | operator-sdk generate bundle -q --overwrite --version …`
    let out = operator_rs(&dir)
        .args([
            "generate",
            "bundle",
            "-q",
            "--overwrite",
            "--version",
            "0.0.1",
        ])
        .write_stdin(rendered.clone())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let (ok, report) = validate(&dir, "./bundle");
    assert!(ok, "{report}");
    let whole = tree(&dir);

    // --manifests alone leaves the metadata as it is; --metadata alone, the manifests.
    std::fs::write(dir.join("bundle/metadata/annotations.yaml"), "mine\n").unwrap();
    let run = |flags: &[&str]| {
        let out = operator_rs(&dir)
            .args(["generate", "bundle", "-q"])
            .args(flags)
            .write_stdin(rendered.clone())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{flags:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    run(&["--manifests", "--version", "0.0.2"]);
    assert_eq!(read(&dir, "bundle/metadata/annotations.yaml"), "mine\n");
    assert!(read(&dir, &csv_path(&MEMCACHED)).contains("name: memcached-operator.v0.0.2"));
    run(&["--metadata", "--overwrite=false"]);
    assert_eq!(read(&dir, "bundle/metadata/annotations.yaml"), "mine\n");
    run(&["--metadata", "--channels", "stable"]);
    assert!(read(&dir, "bundle/metadata/annotations.yaml").contains("channels.v1: stable"));
    assert!(read(&dir, &csv_path(&MEMCACHED)).contains("name: memcached-operator.v0.0.2"));

    // Another folder: the Dockerfile copies from it.
    run(&["--version", "0.0.1", "--output-dir", "out/bundle"]);
    let dockerfile = read(&dir, "bundle.Dockerfile");
    assert!(
        dockerfile.contains("COPY out/bundle/manifests /manifests/"),
        "{dockerfile}"
    );
    assert!(
        dir.join("out/bundle/manifests/memcached-operator.clusterserviceversion.yaml")
            .is_file()
    );
    let (ok, report) = validate(&dir, "./out/bundle");
    assert!(ok, "{report}");

    // --stdout: the manifests as YAML documents, nothing else printed, no manifests written.
    let before = tree(&dir);
    let printed = run(&["--version", "0.0.1", "--stdout", "--manifests"]);
    assert_eq!(before, tree(&dir));
    assert!(
        printed.starts_with(
            "---\napiVersion: operators.coreos.com/v1alpha1\nkind: ClusterServiceVersion"
        ),
        "{printed}"
    );
    let csv = whole[&csv_path(&MEMCACHED)].clone();
    assert!(printed.contains(std::str::from_utf8(&csv).unwrap()));

    // Refusals: operator-sdk's rules, and a folder outside the project.
    for (flags, expected) in [
        (
            &["--stdout", "--output-dir", "x"][..],
            "--output-dir cannot be set if writing to stdout",
        ),
        (
            &["--output-dir", "../elsewhere"],
            "must be inside the project",
        ),
        (&["--crds-dir", "config/crd/bases"], "--deploy-dir"),
        (
            &["--input-dir", "nowhere"],
            "--input-dir nowhere: no such folder",
        ),
        (
            &["--input-dir", "config", "--deploy-dir", "config"],
            "cannot be used with",
        ),
    ] {
        let mut argv = vec!["generate", "bundle", "--version", "0.0.3"];
        argv.extend(flags);
        assert_refused(&dir, &argv, &[expected]);
    }
}

/// operator-sdk's `--input-dir` (and `--deploy-dir` with `--crds-dir`): cluster-ready manifests
/// on disk, the CSV base from --kustomize-dir; and outside a project with `--package`.
#[test]
fn bundles_from_folders_of_manifests() {
    let (tmp, dir) = project(&MEMCACHED);
    run_ok(&dir, MANIFESTS_FLAGS);
    // The fixture's objects but the CSV, a file each, in deploy/ (CRDs also in crds/).
    let deploy = dir.join("deploy");
    let crds = dir.join("crds");
    std::fs::create_dir_all(&deploy).unwrap();
    std::fs::create_dir_all(&crds).unwrap();
    for (i, object) in fixture_objects(&MEMCACHED)
        .iter()
        .filter(|o| o["kind"] != "ClusterServiceVersion")
        .enumerate()
    {
        let text = serde_yaml::to_string(object).unwrap();
        std::fs::write(deploy.join(format!("{i:02}.yaml")), &text).unwrap();
        if object["kind"] == "CustomResourceDefinition" {
            std::fs::write(crds.join(format!("{i:02}.yaml")), &text).unwrap();
        }
    }
    run_ok(
        &dir,
        &[
            "generate",
            "bundle",
            "--input-dir",
            "deploy",
            "--version",
            "0.0.1",
            "-q",
        ],
    );
    let csv = read(&dir, &csv_path(&MEMCACHED));
    assert!(
        csv.contains("provider:\n    name: Acme"),
        "the base's fields: {csv}"
    );
    let (ok, report) = validate(&dir, "./bundle");
    assert!(ok, "{report}");
    run_ok(
        &dir,
        &[
            "generate",
            "bundle",
            "--deploy-dir",
            "deploy",
            "--crds-dir",
            "crds",
            "--version",
            "0.0.1",
            "-q",
        ],
    );
    assert_eq!(read(&dir, &csv_path(&MEMCACHED)), csv);

    // Outside any project: --package names the bundle, whose CSV base is a new one.
    let elsewhere = tmp.path().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    assert_refused(
        &elsewhere,
        &[
            "generate",
            "bundle",
            "--input-dir",
            deploy.to_str().unwrap(),
            "--version",
            "0.0.1",
        ],
        &["--package"],
    );
    run_ok(
        &elsewhere,
        &[
            "generate",
            "bundle",
            "--input-dir",
            deploy.to_str().unwrap(),
            "--version",
            "0.0.1",
            "--package",
            "memcached",
            "-q",
        ],
    );
    let csv = read(
        &elsewhere,
        "bundle/manifests/memcached.clusterserviceversion.yaml",
    );
    assert!(csv.contains("name: memcached.v0.0.1"), "{csv}");
}

/// `generate kustomize manifests`'s `--package`, `--input-dir`, `--output-dir`, `--apis-dir`.
#[test]
fn operator_sdks_kustomize_manifests_flags() {
    let (_tmp, dir) = project(&MEMCACHED);
    run_ok(&dir, MANIFESTS_FLAGS);
    let mut argv = MANIFESTS_FLAGS.to_vec();
    argv.extend([
        "--package",
        "cache-operator",
        "--output-dir",
        "config/olm",
        "-q",
    ]);
    run_ok(&dir, &argv);
    let base = read(
        &dir,
        "config/olm/bases/cache-operator.clusterserviceversion.yaml",
    );
    assert!(base.contains("name: cache-operator.v0.0.0"), "{base}");
    assert!(
        read(&dir, "config/olm/kustomization.yaml")
            .contains("- bases/cache-operator.clusterserviceversion.yaml")
    );
    // --input-dir: the base of another folder, written to the output folder with what it holds.
    let original = read(
        &dir,
        "config/manifests/bases/memcached-operator.clusterserviceversion.yaml",
    );
    run_ok(
        &dir,
        &[
            "generate",
            "kustomize",
            "manifests",
            "--interactive=false",
            "-q",
            "--input-dir",
            "config/manifests",
            "--output-dir",
            "config/copy",
        ],
    );
    assert_eq!(
        read(
            &dir,
            "config/copy/bases/memcached-operator.clusterserviceversion.yaml"
        ),
        original
    );
    // --apis-dir names the CRDs' folder; one without CRDs is refused with why.
    assert_refused(
        &dir,
        &[
            "generate",
            "kustomize",
            "manifests",
            "--interactive=false",
            "--apis-dir",
            "src/api",
        ],
        &["--apis-dir src/api holds no CRDs", "config/crd/bases"],
    );
    assert_refused(
        &dir,
        &[
            "generate",
            "kustomize",
            "manifests",
            "--interactive=false",
            "--package",
            "Not_A_Name",
        ],
        &["--package \"Not_A_Name\" is not a valid name"],
    );
}
