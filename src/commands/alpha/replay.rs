//! PROJECT as the command lines that scaffold it, and running them with an operator-rs binary.
//!
//! `alpha generate` runs them with this binary; `alpha update` runs them with the binary of the
//! release that made the project too, for the scaffold the user started from. As kubebuilder's
//! `alpha generate` does, the webhooks of the project's kinds come after every `create api`: a
//! conversion webhook needs its spoke versions to exist, and PROJECT lists a kind's hub before
//! its spokes.

use std::fmt;
use std::path::Path;
use std::process::Command;

use anyhow::{Context as _, Result, bail};

use crate::boilerplate::{self, Recognized};
use crate::plugins::{self, Gvk};
use crate::project::{Project, Resource};

/// One operator-rs command line, without the program name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandLine(pub Vec<String>);

impl CommandLine {
    fn new(words: &[&str]) -> Self {
        Self(words.iter().map(|w| w.to_string()).collect())
    }

    fn flag(&mut self, name: &str, value: impl Into<String>) {
        self.0.push(format!("--{name}={}", value.into()));
    }

    /// `edit --plugins=<key>`: a plugin of the whole project (with its flags).
    fn is_project_plugin(&self) -> bool {
        self.0.len() >= 2 && self.0[0] == "edit" && self.0[1].starts_with("--plugins=")
    }

    /// `edit --webhook-certs=<mode>`, which releases before the choice do not know: they
    /// scaffold cert-manager's layout.
    fn is_webhook_certs(&self) -> bool {
        self.0.len() == 2 && self.0[0] == "edit" && self.0[1].starts_with("--webhook-certs=")
    }

    /// `edit --runtime=<source>`, which releases before the choice do not know: they vendor.
    fn is_runtime(&self) -> bool {
        self.0.len() == 2 && self.0[0] == "edit" && self.0[1].starts_with("--runtime=")
    }
}

/// As a user would type it: `operator-rs create api --group crew …`, quoted for a POSIX shell
/// where a word needs it.
impl fmt::Display for CommandLine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("operator-rs")?;
        for word in &self.0 {
            let plain = !word.is_empty()
                && word
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_=./:,@+".contains(c));
            if plain {
                write!(f, " {word}")?;
            } else {
                write!(f, " '{}'", word.replace('\'', r"'\''"))?;
            }
        }
        Ok(())
    }
}

/// How to get the project's license header back: `init` flags, and the `SOURCE_DATE_EPOCH` that
/// gives the header's year (the reproducible-builds variable `init` reads its year from).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum License {
    /// A header `init` writes from `--license`/`--owner`, in `year`.
    Flags(Recognized),
    /// Any other header: `--license-file` with this text.
    File(String),
    /// No header file: `--license none`.
    None,
}

impl License {
    /// The license of the project at `dir`, from its `hack/boilerplate.rs.txt`.
    pub fn of_project(dir: &Path) -> Result<Self> {
        let header = crate::commands::read_boilerplate(dir)?;
        Ok(if header.is_empty() {
            License::None
        } else {
            match boilerplate::recognize(&header) {
                Some(recognized) => License::Flags(recognized),
                None => License::File(header),
            }
        })
    }
}

/// The commands that scaffold `project` from an empty folder. `license_file` is where the
/// header text of [`License::File`] is written for `--license-file` to read.
fn command_lines(project: &Project, license: &License, license_file: &Path) -> Vec<CommandLine> {
    let mut init = CommandLine::new(&["init"]);
    init.flag("domain", &project.domain);
    init.flag("project-name", &project.project_name);
    if !project.repo.is_empty() {
        init.flag("repo", &project.repo);
    }
    if project.multigroup {
        init.flag("multigroup", "true");
    }
    if project.namespaced {
        init.flag("namespaced", "true");
    }
    if project.sharding {
        init.flag("sharding", "true");
    }
    match license {
        License::Flags(Recognized { license, owner, .. }) => {
            init.flag("license", license.as_str());
            if !owner.is_empty() {
                init.flag("owner", owner);
            }
        }
        License::File(_) => init.flag("license-file", license_file.display().to_string()),
        License::None => init.flag("license", "none"),
    }

    // Where operator-rs's crates come from, always given: `init`'s default is the release's.
    // (An `edit` line, not an `init` flag, so that a release before the choice still scaffolds.)
    let mut runtime = CommandLine::new(&["edit"]);
    runtime.flag("runtime", project.runtime.as_str());

    // Webhook-only resources (built-in and external kinds) are created by their `create
    // webhook`: it runs in their place among the APIs, which keeps PROJECT's order of resources.
    let mut lines = vec![init, runtime];
    if project.has_webhooks() {
        // Where the webhooks' certificates come from, chosen before the first webhook (a
        // PROJECT without the choice, kubebuilder's, uses cert-manager).
        let mut certs = CommandLine::new(&["edit"]);
        certs.flag("webhook-certs", project.certs_mode().as_str());
        lines.push(certs);
    }
    for r in &project.resources {
        if r.api.is_none() && !r.has_controller() {
            lines.extend(create_webhook(r));
        } else {
            lines.extend(create_api(project, r));
        }
    }
    for r in &project.resources {
        if r.api.is_some() || r.has_controller() {
            lines.extend(create_webhook(r));
        }
    }
    // The plugins of the whole project last: they render from everything else.
    lines.extend(plugin_lines(project, false));
    lines
}

/// `edit --plugins <key>` of the project-wide plugins that render (`manifests`) or do not render
/// from what `make manifests` writes (the Helm chart does).
fn plugin_lines(project: &Project, manifests: bool) -> Vec<CommandLine> {
    plugins::recorded_project_parts(project)
        .into_iter()
        .filter(|plugin| plugin.renders_manifests() == manifests)
        .map(|plugin| {
            let mut edit = CommandLine::new(&["edit"]);
            edit.flag("plugins", plugin.short_key());
            for (flag, value) in plugin.replay_flags(project) {
                edit.flag(flag, value);
            }
            edit
        })
        .collect()
}

/// The files that the commands of `project` read from the project folder: the CRD files of its
/// external kinds (`path`, relative to the folder), which the scaffold must have where PROJECT
/// says they are.
pub fn input_files(project: &Project) -> Vec<String> {
    let mut files: Vec<String> = project
        .resources
        .iter()
        .filter(|r| r.external && !Path::new(&r.path).is_absolute())
        .map(|r| r.path.clone())
        .collect();
    files.dedup();
    files
}

/// Copies the [`input_files`] of `project` from the project folder `from` to the folder `to`
/// where its commands run, and the plugins' (their configurations, where the user has them).
fn copy_input_files(project: &Project, from: &Path, to: &Path) -> Result<()> {
    let copy = |file: &str| -> std::io::Result<u64> {
        let target = to.join(file);
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::copy(from.join(file), &target)
    };
    for file in input_files(project) {
        copy(&file).with_context(|| {
            format!("copying {file}, the CRD file of an external kind in PROJECT")
        })?;
    }
    for plugin in plugins::recorded_project_parts(project) {
        for file in plugin.input_files(project) {
            if from.join(&file).is_file() {
                copy(&file).with_context(|| format!("copying {file}"))?;
            }
        }
    }
    Ok(())
}

/// The `create api` of a resource, then one per further named controller (kubebuilder's
/// `--controller-name`), with the external kind's flags on each.
fn create_api(project: &Project, r: &Resource) -> Vec<CommandLine> {
    let names = r.controller_names();
    // The kind's lower-cased name is its unnamed controller, as `create api` records it.
    let named = |name: &String| (*name != r.kind.to_lowercase()).then(|| name.clone());
    let mut first = first_create_api(project, r, names.first().and_then(named));
    external_flags(&mut first, r);
    first.flag("make", "false");
    let mut lines = vec![first];
    for name in names.iter().skip(1) {
        let mut more = CommandLine::new(&["create", "api"]);
        identify(&mut more, r);
        more.flag("resource", "false");
        more.flag("controller", "true");
        more.flag("controller-name", name);
        external_flags(&mut more, r);
        more.flag("make", "false");
        lines.push(more);
    }
    lines
}

/// `--external-api-path`, `--external-api-domain` and `--external-api-module` of an external kind.
fn external_flags(line: &mut CommandLine, r: &Resource) {
    if !r.external {
        return;
    }
    line.flag("external-api-path", &r.path);
    line.flag("external-api-domain", &r.domain);
    if !r.module.is_empty() {
        line.flag("external-api-module", &r.module);
    }
}

/// The resource's own `create api` (its types, its first controller), without `--make`.
fn first_create_api(project: &Project, r: &Resource, name: Option<String>) -> CommandLine {
    let mut api = CommandLine::new(&["create", "api"]);
    identify(&mut api, r);
    if let Some(a) = &r.api
        && !a.namespaced
    {
        api.flag("namespaced", "false");
    }
    api.flag("resource", r.api.is_some().to_string());
    api.flag("controller", r.has_controller().to_string());
    if let Some(name) = name {
        api.flag("controller-name", name);
    }
    // What the plugins did for the kind, again.
    for part in plugins::recorded_api(project, Gvk::of(r)) {
        for (name, value) in part.flags() {
            api.flag(name, value);
        }
    }
    api
}

/// The `create webhook` of a resource, if it has webhooks.
fn create_webhook(r: &Resource) -> Option<CommandLine> {
    let w = r.webhooks.as_ref()?;
    if !(w.defaulting || w.validation || w.conversion) {
        return None;
    }
    let mut webhook = CommandLine::new(&["create", "webhook"]);
    identify(&mut webhook, r);
    external_flags(&mut webhook, r);
    if w.defaulting {
        webhook.flag("defaulting", "true");
    }
    if let Some(path) = &w.defaulting_path {
        webhook.flag("defaulting-path", path);
    }
    if w.validation {
        webhook.flag("programmatic-validation", "true");
    }
    if let Some(path) = &w.validation_path {
        webhook.flag("validation-path", path);
    }
    if w.conversion {
        webhook.flag("conversion", "true");
        if !w.spoke.is_empty() {
            webhook.flag("spoke", w.spoke.join(","));
        }
    }
    webhook.flag("make", "false");
    Some(webhook)
}

/// `--group --version --kind [--plural]` of a resource.
fn identify(line: &mut CommandLine, r: &Resource) {
    line.flag("group", &r.group);
    line.flag("version", &r.version);
    line.flag("kind", &r.kind);
    if let Some(plural) = &r.plural {
        line.flag("plural", plural);
    }
}

/// A replay of a PROJECT, ready to run in fresh folders of its own scratch folder (removed when
/// it is dropped): `alpha generate` and `alpha migrate` run it once, `alpha update` twice, with
/// two operator-rs binaries.
pub struct Replay {
    scratch: tempfile::TempDir,
    project_name: String,
    lines: Vec<CommandLine>,
    /// The plugins' lines that run after `make manifests` (none without it).
    after_manifests: Vec<CommandLine>,
    license: License,
    /// Files the commands read (external kinds' CRDs), copied from `input` into every folder.
    inputs: Option<(Project, std::path::PathBuf)>,
}

impl Replay {
    /// The replay of `project`, with `license`; `input` is the project folder the external
    /// kinds' CRD files are copied from, if there is one.
    pub fn new(project: &Project, license: License, input: Option<&Path>) -> Result<Self> {
        let scratch = tempfile::tempdir().context("creating a scratch folder")?;
        let license_file = scratch.path().join("boilerplate.rs.txt");
        if let License::File(text) = &license {
            std::fs::write(&license_file, text)?;
        }
        Ok(Self {
            lines: command_lines(project, &license, &license_file),
            after_manifests: plugin_lines(project, true),
            project_name: project.project_name.clone(),
            license,
            inputs: input.map(|i| (project.clone(), i.to_path_buf())),
            scratch,
        })
    }

    /// Runs the commands with `binary` in a new folder named after the project under `side`
    /// (then `make manifests` if `make`), and returns that folder.
    pub fn scaffold(&self, binary: &Path, side: &str, make: bool) -> Result<std::path::PathBuf> {
        let root = self.scratch.path().join(side).join(&self.project_name);
        std::fs::create_dir_all(&root)?;
        if let Some((project, input)) = &self.inputs {
            copy_input_files(project, input, &root)?;
        }
        run_all(binary, &root, &self.lines, &self.license, make)?;
        if make {
            run_all(binary, &root, &self.after_manifests, &self.license, false)?;
        } else {
            for line in &self.after_manifests {
                println!("(not run without make manifests, whose output it renders from: {line})");
            }
        }
        Ok(root)
    }

    /// `make manifests` in a folder [`Replay::scaffold`] made (after more edits there), then the
    /// plugins that render from it, with `binary`.
    pub fn make_manifests(&self, binary: &Path, root: &Path) -> Result<()> {
        make_manifests(root)?;
        run_all(binary, root, &self.after_manifests, &self.license, false)
    }
}

/// Runs every command line with `binary` in `dir` (an empty folder), then `make manifests` if
/// `make`. Each command is printed as it starts; its output is shown only if it fails, or with
/// `--verbose`.
fn run_all(
    binary: &Path,
    dir: &Path,
    lines: &[CommandLine],
    license: &License,
    make: bool,
) -> Result<()> {
    for line in lines {
        println!("$ {line}");
        let mut command = Command::new(binary);
        command.args(&line.0).current_dir(dir);
        if let License::Flags(recognized) = license {
            command.env(
                "SOURCE_DATE_EPOCH",
                recognized.source_date_epoch().to_string(),
            );
        }
        match run_shown(command, &line.to_string()) {
            Err(err) if line.is_project_plugin() && unknown_plugin(&err) => {
                // An older release without the plugin (the ancestor of `alpha update`): its
                // scaffold goes without the plugin's files, which then count as the user's.
                println!("(this operator-rs has no such plugin: its scaffold goes without it)");
            }
            Err(err)
                if line.is_webhook_certs()
                    && format!("{err:#}").contains("unexpected argument '--webhook-certs") =>
            {
                // An older release (the ancestor of `alpha update`), which only knows cert-manager.
                println!("(this operator-rs knows only cert-manager's webhook certificates)");
            }
            Err(err)
                if line.is_runtime()
                    && format!("{err:#}").contains("unexpected argument '--runtime") =>
            {
                // An older release (the ancestor of `alpha update`), which vendors its crates.
                println!("(this operator-rs vendors its runtime crates)");
            }
            result => result?,
        }
    }
    if make {
        make_manifests(dir)?;
    }
    Ok(())
}

/// Whether `err`, from `edit --plugins <key>`, says the binary does not know the plugin (or the
/// flag: releases before plugins of the whole project).
fn unknown_plugin(err: &anyhow::Error) -> bool {
    let text = format!("{err:#}");
    [
        "unknown plugin",
        "which operator-rs does not have",
        "unexpected argument '--plugins",
    ]
    .iter()
    .any(|s| text.contains(s))
}

/// `make manifests` in `dir`, shown like the commands.
fn make_manifests(dir: &Path) -> Result<()> {
    println!("$ make manifests");
    let mut command = Command::new("make");
    command
        .args(["--no-print-directory", "manifests"])
        .current_dir(dir);
    run_shown(command, "make manifests")
}

fn run_shown(mut command: Command, shown: &str) -> Result<()> {
    if super::super::verbose() {
        let status = command
            .status()
            .with_context(|| format!("running {shown}"))?;
        if !status.success() {
            bail!("{shown} failed ({status})");
        }
        return Ok(());
    }
    let (status, output) =
        super::super::run_quietly(command).with_context(|| format!("running {shown}"))?;
    if !status.success() {
        bail!(
            "{shown} failed ({status}):\n{}",
            String::from_utf8_lossy(&output).trim_end()
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::project::{Api, Webhooks};

    fn project() -> Project {
        let mut p = Project {
            domain: "example.com".into(),
            project_name: "crew".into(),
            repo: "example.com/crew".into(),
            namespaced: true,
            version: "3".into(),
            ..Project::default()
        };
        let api = |namespaced| {
            Some(Api {
                crd_version: "v1".into(),
                namespaced,
                ..Api::default()
            })
        };
        p.resources = vec![
            Resource {
                api: api(true),
                controller: true,
                group: "crew".into(),
                kind: "FirstMate".into(),
                version: "v1".into(),
                webhooks: Some(Webhooks {
                    conversion: true,
                    spoke: vec!["v2".into()],
                    webhook_version: "v1".into(),
                    ..Webhooks::default()
                }),
                ..Resource::default()
            },
            Resource {
                api: api(false),
                group: "crew".into(),
                kind: "Admiral".into(),
                plural: Some("admirales".into()),
                version: "v2".into(),
                ..Resource::default()
            },
            Resource {
                core: true,
                group: "core".into(),
                kind: "Pod".into(),
                version: "v1".into(),
                webhooks: Some(Webhooks {
                    defaulting: true,
                    defaulting_path: Some("/mutate-pods".into()),
                    ..Webhooks::default()
                }),
                ..Resource::default()
            },
        ];
        p
    }

    #[test]
    fn apis_in_order_then_webhooks_with_every_recorded_option() {
        let lines: Vec<String> = command_lines(&project(), &License::None, Path::new("unused"))
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            lines,
            [
                "operator-rs init --domain=example.com --project-name=crew --repo=example.com/crew \
                 --namespaced=true --license=none",
                // Always given: init's default is the release's.
                "operator-rs edit --runtime=vendored",
                // PROJECT records no choice: kubebuilder's cert-manager.
                "operator-rs edit --webhook-certs=cert-manager",
                "operator-rs create api --group=crew --version=v1 --kind=FirstMate --resource=true \
                 --controller=true --make=false",
                "operator-rs create api --group=crew --version=v2 --kind=Admiral --plural=admirales \
                 --namespaced=false --resource=true --controller=false --make=false",
                "operator-rs create webhook --group=core --version=v1 --kind=Pod --defaulting=true \
                 --defaulting-path=/mutate-pods --make=false",
                "operator-rs create webhook --group=crew --version=v1 --kind=FirstMate \
                 --conversion=true --spoke=v2 --make=false",
            ]
        );
    }

    #[test]
    fn license_flags_and_files() {
        let recognized = Recognized {
            license: crate::boilerplate::License::Copyright,
            owner: "Zoë's Corp".into(),
            year: 2026,
        };
        let lines = command_lines(&project(), &License::Flags(recognized), Path::new("unused"));
        assert!(
            lines[0]
                .to_string()
                .ends_with(r"--license=copyright '--owner=Zoë'\''s Corp'"),
            "{}",
            lines[0]
        );
        let lines = command_lines(
            &project(),
            &License::File("// mine\n".into()),
            Path::new("/tmp/x/boilerplate"),
        );
        assert!(
            lines[0]
                .0
                .contains(&"--license-file=/tmp/x/boilerplate".to_string())
        );
    }

    /// `runtime: crates-io` is `edit --runtime=crates-io` after `init`; without it, vendored.
    #[test]
    fn the_runtime_source_is_replayed_by_edit() {
        let mut p = Project::default();
        let runtime = |p: &Project| {
            command_lines(p, &License::None, Path::new("unused"))[1]
                .0
                .clone()
        };
        assert_eq!(runtime(&p), ["edit", "--runtime=vendored"]);
        p.runtime = crate::project::RuntimeSource::CratesIo;
        assert_eq!(runtime(&p), ["edit", "--runtime=crates-io"]);
    }

    /// `sharding: true` is `init --sharding`, which writes the manager's flag, replicas and
    /// PodDisruptionBudget as `edit --sharding` did.
    #[test]
    fn sharding_is_replayed_by_init() {
        let mut p = project();
        let init = |p: &Project| {
            command_lines(p, &License::None, Path::new("unused"))[0]
                .0
                .clone()
        };
        assert!(!init(&p).contains(&"--sharding=true".to_string()));
        p.sharding = true;
        assert!(init(&p).contains(&"--sharding=true".to_string()));
    }

    /// Records of named controllers, and external kinds with their CRD file.
    #[test]
    fn named_controllers_and_external_kinds() {
        let mut p = project();
        p.resources[0].controller = false;
        p.resources[0].controllers = ["firstmate", "first-mate-backup"]
            .map(|name| crate::project::NamedController {
                name: name.into(),
                ..Default::default()
            })
            .to_vec();
        p.resources.push(Resource {
            external: true,
            controller: true,
            group: "cert-manager".into(),
            domain: "io".into(),
            kind: "Issuer".into(),
            version: "v1".into(),
            path: "crds/issuers.yaml".into(),
            module: "github.com/cert-manager/cert-manager@v1.21.1".into(),
            webhooks: Some(Webhooks {
                defaulting: true,
                ..Webhooks::default()
            }),
            ..Resource::default()
        });
        let lines: Vec<String> = command_lines(&p, &License::None, Path::new("unused"))
            .iter()
            .map(ToString::to_string)
            .collect();
        let external = "--external-api-path=crds/issuers.yaml --external-api-domain=io \
                        --external-api-module=github.com/cert-manager/cert-manager@v1.21.1";
        for expected in [
            "operator-rs create api --group=crew --version=v1 --kind=FirstMate --resource=true \
             --controller=true --make=false"
                .to_string(),
            "operator-rs create api --group=crew --version=v1 --kind=FirstMate --resource=false \
             --controller=true --controller-name=first-mate-backup --make=false"
                .to_string(),
            format!(
                "operator-rs create api --group=cert-manager --version=v1 --kind=Issuer \
                 --resource=false --controller=true {external} --make=false"
            ),
            format!(
                "operator-rs create webhook --group=cert-manager --version=v1 --kind=Issuer \
                 {external} --defaulting=true --make=false"
            ),
        ] {
            assert!(lines.contains(&expected), "{expected}\nnot in {lines:#?}");
        }
        assert_eq!(input_files(&p), ["crds/issuers.yaml"]);
    }

    #[test]
    fn deploy_image_records_become_image_flags() {
        let mut p = project();
        let record = "resources:\n- group: crew\n  version: v1\n  kind: FirstMate\n  options:\n    \
                      image: memcached:1.6.26-alpine3.19\n    containerCommand: memcached,-v\n    \
                      containerPort: \"11211\"\n    runAsUser: \"1001\"\n";
        p.plugins.insert(
            plugins::deploy_image::PLUGIN_KEY.into(),
            serde_yaml::from_str(record).unwrap(),
        );
        let lines = command_lines(&p, &License::None, Path::new("unused"));
        let api = lines[3].to_string();
        assert!(
            api.contains(
                "--image=memcached:1.6.26-alpine3.19 --image-container-command=memcached,-v \
                 --image-container-port=11211 --run-as-user=1001 --make=false"
            ),
            "{api}"
        );
    }

    #[test]
    fn the_chart_is_made_after_make_manifests() {
        let mut p = project();
        for key in [plugins::helm::PLUGIN_KEY, plugins::grafana::PLUGIN_KEY] {
            p.plugins
                .insert(key.into(), serde_yaml::from_str("{}").unwrap());
        }
        let lines = command_lines(&p, &License::None, Path::new("unused"));
        let last = lines.last().unwrap().to_string();
        assert_eq!(last, "operator-rs edit --plugins=grafana/v1-alpha");
        assert!(!lines.iter().any(|l| l.to_string().contains("helm")));
        let after: Vec<String> = plugin_lines(&p, true)
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(after, ["operator-rs edit --plugins=helm/v2-alpha"]);
        // The chart's settings that PROJECT records, as kubebuilder's flags.
        p.plugins.insert(
            plugins::helm::PLUGIN_KEY.into(),
            serde_yaml::from_str("{manifests: custom.yaml, output: charts}").unwrap(),
        );
        let after: Vec<String> = plugin_lines(&p, true)
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            after,
            [
                "operator-rs edit --plugins=helm/v2-alpha --manifests=custom.yaml --output-dir=charts"
            ]
        );
        assert!(plugin_lines(&p, true)[0].is_project_plugin());
    }

    #[cfg(unix)]
    #[test]
    fn an_older_binary_without_a_plugin_scaffolds_without_it() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap();
        let binary = dir.path().join("operator-rs-old");
        std::fs::write(
            &binary,
            "#!/bin/sh\nif [ \"$2\" = --plugins=helm/v2-alpha ]; then\n  echo 'error: --plugins \"helm/v2-alpha\": unknown plugin' >&2; exit 2\nfi\n\
             if [ \"$1\" = edit ]; then echo 'error: disk full' >&2; exit 1; fi\n",
        )
        .unwrap();
        std::fs::set_permissions(&binary, std::fs::Permissions::from_mode(0o755)).unwrap();
        let mut helm = CommandLine::new(&["edit"]);
        helm.flag("plugins", "helm/v2-alpha");
        run_all(&binary, dir.path(), &[helm], &License::None, false).unwrap();
        let mut grafana = CommandLine::new(&["edit"]);
        grafana.flag("plugins", "grafana/v1-alpha");
        let err = run_all(&binary, dir.path(), &[grafana], &License::None, false).unwrap_err();
        assert!(format!("{err:#}").contains("disk full"), "{err:#}");
    }
}
