//! The commands of the setup (make, kind, kubectl) and the settings that choose them.
//!
//! The command lines are built apart from running them, so that what the setup runs is
//! unit-tested (at the bottom of this file) even though running it needs Docker and a cluster.

use std::fmt;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use anyhow::{Context as _, ensure};

use super::Project;

/// Whether two image references name the same image, an image without tag or digest being the
/// same as its `:latest`. (`make deploy IMG=registry/name` deploys `registry/name` with kustomize
/// installed, and `registry/name:latest` without.)
pub fn same_image(a: &str, b: &str) -> bool {
    fn with_tag(image: &str) -> String {
        // A `:` after the last `/` starts the tag; one before it belongs to a registry port.
        let last = image.rsplit('/').next().unwrap_or(image);
        if image.contains('@') || last.contains(':') {
            image.to_string()
        } else {
            format!("{image}:latest")
        }
    }
    with_tag(a) == with_tag(b)
}

/// The settings of a run, from the environment that `make test-e2e` sets.
///
/// ```
/// use operator_rs_testing::e2e::{Config, Project};
///
/// let project = Project { name: "memcached-operator", namespaced: false, root: "." };
/// let config = Config::from_vars(&project, |name| match name {
///     "KIND_CLUSTER" => Some("memcached-operator-test-e2e".to_string()),
///     _ => None,
/// });
/// assert_eq!(config.image, "example.com/memcached-operator:v0.0.1");
/// assert_eq!(config.target(), "Kind cluster memcached-operator-test-e2e");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config {
    /// The manager image to build and deploy (`IMG`); [`Project::default_image`] when it is not
    /// set.
    pub image: String,
    /// The Kind cluster to load the image into (`KIND_CLUSTER`). `None` when it is empty: the
    /// cluster of the current kubeconfig context is used, and pulls the image from its registry.
    pub kind_cluster: Option<String>,
    /// Whether to build the image (and push it, without Kind). `IMAGE_BUILD_SKIP=true` turns it
    /// off when the image was built, or pushed, already.
    pub build_image: bool,
    /// Whether to install cert-manager for a project with webhooks, when the cluster lacks it.
    /// `CERT_MANAGER_INSTALL_SKIP=true` (kubebuilder's variable) turns it off, for a cluster
    /// whose cert-manager is managed apart from the tests.
    pub install_cert_manager: bool,
    /// The Kind program (`KIND`). Like the other programs it may hold arguments too, as make
    /// variables do.
    pub kind: String,
    /// The kubectl program (`KUBECTL`), for example `kubectl --v=2`.
    pub kubectl: String,
    /// The make program (`MAKE`).
    pub make: String,
}

impl Config {
    /// The settings from this process's environment.
    pub fn from_env(project: &Project) -> Self {
        Self::from_vars(project, |name| std::env::var(name).ok())
    }

    /// The settings from the variables that `var` looks up; unset and empty are the same.
    pub fn from_vars(project: &Project, var: impl Fn(&str) -> Option<String>) -> Self {
        let var = |name: &str| setting(&var, name);
        Self {
            image: var("IMG").unwrap_or_else(|| project.default_image()),
            kind_cluster: var("KIND_CLUSTER"),
            build_image: var("IMAGE_BUILD_SKIP").as_deref() != Some("true"),
            install_cert_manager: var("CERT_MANAGER_INSTALL_SKIP").as_deref() != Some("true"),
            kind: var("KIND").unwrap_or_else(|| "kind".to_string()),
            kubectl: var("KUBECTL").unwrap_or_else(|| "kubectl".to_string()),
            make: var("MAKE").unwrap_or_else(|| "make".to_string()),
        }
    }

    /// The cluster, for people.
    pub fn target(&self) -> String {
        match &self.kind_cluster {
            Some(cluster) => format!("Kind cluster {cluster}"),
            None => "the cluster of the current kubeconfig context".to_string(),
        }
    }

    /// What puts the manager image of `project` where the cluster finds it: build it, then load
    /// it into the Kind cluster, or push it to its registry. The commands run in the project's
    /// folder.
    pub fn image_commands(&self, project: &Project) -> Vec<CommandLine> {
        let img = format!("IMG={}", self.image);
        let mut commands = Vec::new();
        if self.build_image {
            commands.push(CommandLine::new(&self.make, ["docker-build", &img]));
        }
        match &self.kind_cluster {
            Some(cluster) => commands.push(CommandLine::new(
                &self.kind,
                ["load", "docker-image", "--name", cluster, &self.image],
            )),
            None if self.build_image => {
                commands.push(CommandLine::new(&self.make, ["docker-push", &img]));
            }
            None => {}
        }
        commands
            .into_iter()
            .map(|command| command.in_dir(project.root))
            .collect()
    }

    /// What deploys `project`: the CRDs, the manager with the image, and a restart of the
    /// manager. The restart matters when the cluster is reused: `make deploy` changes nothing
    /// when the image name is the same, and the manager would keep running the previous build.
    /// The commands run in the project's folder.
    pub fn deploy_commands(&self, project: &Project) -> Vec<CommandLine> {
        let img = format!("IMG={}", self.image);
        let deployment = format!("deployment/{}", project.manager_deployment());
        let namespace = project.manager_namespace();
        [
            CommandLine::new(&self.make, ["install"]),
            CommandLine::new(&self.make, ["deploy", &img]),
            CommandLine::new(
                &self.kubectl,
                ["rollout", "restart", &deployment, "--namespace", &namespace],
            ),
        ]
        .into_iter()
        .map(|command| command.in_dir(project.root))
        .collect()
    }
}

/// The variable `name` as `var` looks it up, trimmed; `None` when it is unset or empty
/// (`make test-e2e KIND_CLUSTER=` passes variables empty).
fn setting(var: &impl Fn(&str) -> Option<String>, name: &str) -> Option<String> {
    var(name)
        .map(|value| value.trim().to_string())
        .filter(|value| !value.is_empty())
}

/// Runs kubectl (`KUBECTL`, else `kubectl`) with `args` and returns what it printed.
///
/// ```no_run
/// let contexts = operator_rs_testing::e2e::kubectl(&["config", "get-contexts"])?;
/// # anyhow::Ok(())
/// ```
pub fn kubectl(args: &[&str]) -> anyhow::Result<String> {
    let program = setting(&|name| std::env::var(name).ok(), "KUBECTL");
    CommandLine::new(program.as_deref().unwrap_or("kubectl"), args).output()
}

/// A program and its arguments, and the folder to run it in.
///
/// ```
/// use operator_rs_testing::e2e::commands::CommandLine;
///
/// let command = CommandLine::new("kubectl --v=2", ["get", "pods"]).in_dir("/src/my-operator");
/// assert_eq!(command.program, "kubectl");
/// assert_eq!(command.to_string(), "kubectl --v=2 get pods");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CommandLine {
    /// The program: a name looked up in `PATH`, or a path.
    pub program: String,
    /// Its arguments.
    pub args: Vec<String>,
    /// The folder to run it in; `None` for the current one (the project's folder, under
    /// `cargo test`).
    pub dir: Option<PathBuf>,
}

impl CommandLine {
    /// `program` is split at white space, so that it may hold arguments (as make variables do).
    pub fn new<S: AsRef<str>>(program: &str, args: impl IntoIterator<Item = S>) -> Self {
        let mut words = program.split_whitespace().map(str::to_string);
        let program = words.next().unwrap_or_default();
        let args = args.into_iter().map(|arg| arg.as_ref().to_string());
        Self {
            program,
            args: words.chain(args).collect(),
            dir: None,
        }
    }

    /// The command, run in `dir`.
    pub fn in_dir(self, dir: impl Into<PathBuf>) -> Self {
        Self {
            dir: Some(dir.into()),
            ..self
        }
    }

    /// Runs the command, its output shown as it comes: image builds take minutes.
    pub fn run(&self) -> anyhow::Result<()> {
        println!("$ {self}");
        let status = self
            .command()
            .status()
            .with_context(|| format!("cannot run {}", self.program))?;
        ensure!(status.success(), "`{self}` failed: {status}");
        Ok(())
    }

    /// Runs the command and returns its standard output; when it fails, the error holds its
    /// standard error.
    pub fn output(&self) -> anyhow::Result<String> {
        let output = self
            .command()
            .stdin(Stdio::null())
            .output()
            .with_context(|| format!("cannot run {}", self.program))?;
        ensure!(
            output.status.success(),
            "`{self}` failed: {}: {}",
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        );
        Ok(String::from_utf8_lossy(&output.stdout).into_owned())
    }

    fn command(&self) -> Command {
        let mut command = Command::new(&self.program);
        command.args(&self.args);
        if let Some(dir) = &self.dir {
            command.current_dir(dir);
        }
        command
    }
}

/// The command as a shell would take it, for logs.
impl fmt::Display for CommandLine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.program)?;
        for arg in &self.args {
            if arg.is_empty() || arg.contains(|c: char| c.is_whitespace() || c == '\'') {
                write!(f, " '{}'", arg.replace('\'', r"'\''"))?;
            } else {
                write!(f, " {arg}")?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    const PROJECT: Project = Project {
        name: "memcached-operator",
        namespaced: false,
        root: "/src/memcached-operator",
    };

    fn config(vars: &[(&str, &str)]) -> Config {
        let vars: HashMap<&str, &str> = vars.iter().copied().collect();
        Config::from_vars(&PROJECT, |name| {
            vars.get(name).map(|value| value.to_string())
        })
    }

    fn lines(commands: Vec<CommandLine>) -> Vec<String> {
        commands.iter().map(CommandLine::to_string).collect()
    }

    #[test]
    fn defaults() {
        let config = config(&[]);
        assert_eq!(config.image, "example.com/memcached-operator:v0.0.1");
        assert_eq!(config.kind_cluster, None);
        assert!(config.build_image);
        assert_eq!(
            (
                config.kind.as_str(),
                config.kubectl.as_str(),
                config.make.as_str()
            ),
            ("kind", "kubectl", "make")
        );
    }

    #[test]
    fn with_kind_the_image_is_built_and_loaded_into_the_cluster() {
        let config = config(&[("KIND_CLUSTER", "e2e"), ("IMG", "example.com/op:v1")]);
        assert_eq!(config.target(), "Kind cluster e2e");
        assert_eq!(
            lines(config.image_commands(&PROJECT)),
            [
                "make docker-build IMG=example.com/op:v1",
                "kind load docker-image --name e2e example.com/op:v1",
            ]
        );
    }

    #[test]
    fn without_kind_the_image_is_built_and_pushed() {
        // `make test-e2e KIND_CLUSTER=` passes the variable empty.
        let config = config(&[("KIND_CLUSTER", ""), ("IMG", "registry.example/op:v1")]);
        assert_eq!(config.kind_cluster, None);
        assert_eq!(
            config.target(),
            "the cluster of the current kubeconfig context"
        );
        assert_eq!(
            lines(config.image_commands(&PROJECT)),
            [
                "make docker-build IMG=registry.example/op:v1",
                "make docker-push IMG=registry.example/op:v1",
            ]
        );
    }

    #[test]
    fn image_build_skip_keeps_the_image_as_it_is() {
        let kind = config(&[("KIND_CLUSTER", "e2e"), ("IMAGE_BUILD_SKIP", "true")]);
        assert_eq!(
            lines(kind.image_commands(&PROJECT)),
            ["kind load docker-image --name e2e example.com/memcached-operator:v0.0.1"]
        );
        let existing = config(&[("IMAGE_BUILD_SKIP", "true")]);
        assert!(existing.image_commands(&PROJECT).is_empty());
    }

    #[test]
    fn deploy_installs_deploys_and_restarts_the_manager() {
        let config = config(&[("IMG", "example.com/op:v1"), ("MAKE", "gmake")]);
        assert_eq!(
            lines(config.deploy_commands(&PROJECT)),
            [
                "gmake install",
                "gmake deploy IMG=example.com/op:v1",
                "kubectl rollout restart deployment/memcached-operator-controller-manager --namespace memcached-operator-system",
            ]
        );
    }

    #[test]
    fn the_setup_runs_in_the_project_folder() {
        let config = config(&[("KIND_CLUSTER", "e2e")]);
        let mut commands = config.image_commands(&PROJECT);
        commands.extend(config.deploy_commands(&PROJECT));
        for command in &commands {
            assert_eq!(
                command.dir.as_deref(),
                Some(std::path::Path::new(PROJECT.root)),
                "{command}"
            );
        }
        assert_eq!(CommandLine::new("kubectl", ["version"]).dir, None);
    }

    #[test]
    fn images_without_a_tag_are_latest() {
        assert!(same_image("example.com/op:v1", "example.com/op:v1"));
        assert!(same_image("registry:5000/op", "registry:5000/op:latest"));
        assert!(same_image("op:latest", "op"));
        assert!(!same_image("registry:5000/op", "registry:5000/op:v1"));
        assert!(!same_image("example.com/op:v1", "example.com/op:v2"));
        let digest = "example.com/op@sha256:0123456789abcdef";
        assert!(same_image(digest, digest));
        assert!(!same_image(digest, "example.com/op"));
    }

    #[test]
    fn programs_may_hold_arguments() {
        let config = config(&[("KUBECTL", "kubectl --context kind-e2e")]);
        let command = CommandLine::new(&config.kubectl, ["get", "pods"]);
        assert_eq!(command.program, "kubectl");
        assert_eq!(command.args, ["--context", "kind-e2e", "get", "pods"]);
    }

    #[test]
    fn display_quotes_what_a_shell_would_split() {
        let command = CommandLine::new("sh", ["-c", "echo 'hi there'", ""]);
        assert_eq!(command.to_string(), r"sh -c 'echo '\''hi there'\''' ''");
    }

    #[cfg(unix)]
    #[test]
    fn output_returns_stdout_and_errors_carry_stderr() {
        let echo = CommandLine::new("sh", ["-c", "echo out; echo err >&2"]);
        assert_eq!(echo.output().unwrap(), "out\n");
        let failing = CommandLine::new("sh", ["-c", "echo broken >&2; exit 3"]);
        let error = failing.output().unwrap_err().to_string();
        assert!(error.contains("broken"), "{error}");
        assert!(error.contains("exit status: 3"), "{error}");
    }
}
