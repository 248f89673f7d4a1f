//! envtest: a real etcd and kube-apiserver for tests, started from the binaries in
//! `KUBEBUILDER_ASSETS`, as controller-runtime's `envtest` starts them for kubebuilder's Go
//! projects. No controller manager, no nodes: what the API server itself does (validation,
//! defaulting, CEL rules, admission, RBAC, watches) is real; Deployments get no pods and namespaces
//! are never deleted, as with Go's envtest.
//!
//! ```no_run
//! use operator_rs_testing::envtest::Envtest;
//!
//! # async fn test() {
//! // Started once for all the tests of this test binary, with the CRDs of config/crd/bases
//! // installed and established; stopped when the binary exits.
//! let envtest = Envtest::shared();
//! let client = envtest.client();
//! let namespace = envtest.create_namespace("my-test").await;
//! # }
//! ```
//!
//! The binaries are those of `setup-envtest use <version> -p path` (`make setup-envtest` in a
//! generated project), or of any folder that holds `etcd` and `kube-apiserver`.
//!
//! Each control plane runs under a small supervisor (a `sh` script in its own temporary folder)
//! that holds one end of a pipe whose other end only the test process holds: however the test
//! process ends (the last test done, a panic, Ctrl-C, SIGKILL), the pipe closes, and the
//! supervisor stops etcd and kube-apiserver and removes the folder. No process or folder is
//! left behind.
//!
//! The ports are chosen free, as controller-runtime chooses them, and another process may take
//! one before etcd or kube-apiserver binds it: the process then exits, the supervisor says so at
//! once, and the control plane starts again in a new folder on other ports.

use std::net::{Ipv4Addr, TcpListener};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::Namespace;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, ObjectMeta, PostParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::{Client, Config};

/// The environment variable that names the folder of the binaries, as in controller-runtime.
pub const ASSETS_ENV: &str = "KUBEBUILDER_ASSETS";

/// How long the control plane may take to start before [`Envtest::start`] fails:
/// controller-runtime's variable, as a Go duration (`90s`, `2m`), or seconds.
pub const START_TIMEOUT_ENV: &str = "KUBEBUILDER_CONTROLPLANE_START_TIMEOUT";

/// The start timeout when [`START_TIMEOUT_ENV`] is not set: longer than controller-runtime's 20
/// seconds, for CI machines of two cores that build while they test.
pub const DEFAULT_START_TIMEOUT: Duration = Duration::from_secs(90);

/// The folder of CRDs that [`Envtest::shared`] installs: the one `make manifests` writes.
pub const CRD_DIR: &str = "config/crd/bases";

/// The admin's bearer token: a member of `system:masters`, whom RBAC allows everything.
const ADMIN_TOKEN: &str = "envtest-admin-token";

/// Why a control plane could not be started.
#[derive(Debug, thiserror::Error)]
pub enum EnvtestError {
    /// `KUBEBUILDER_ASSETS` is not set, or its folder lacks a binary.
    #[error(
        "{ASSETS_ENV} {0}: envtest needs etcd and kube-apiserver there (`make setup-envtest` in a \
         generated project, or setup-envtest's `use <version> -p path`)"
    )]
    NoAssets(String),
    /// A file of the control plane could not be written, or a process not started.
    #[error("envtest: {what}")]
    Io {
        what: String,
        #[source]
        source: std::io::Error,
    },
    /// The certificates could not be made.
    #[error("envtest: cannot make certificates")]
    Certificates(#[from] rcgen::Error),
    /// The API server did not become ready in time, or stopped.
    #[error("envtest: kube-apiserver is not ready: {reason}; its log: {log}")]
    NotReady { reason: String, log: String },
    /// etcd or kube-apiserver exited without being asked to, e.g. because another process took
    /// its port (which [`Envtest::start`] survives by starting again on other ports).
    #[error("envtest: {process} exited; its log: {log}")]
    Exited { process: String, log: String },
    /// A CRD could not be read or installed.
    #[error("envtest: CRD {what}")]
    Crd {
        what: String,
        #[source]
        source: anyhow::Error,
    },
    /// The client could not be configured.
    #[error("envtest: cannot configure a client")]
    Client(#[source] anyhow::Error),
}

/// What to start a control plane with.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// Folders (or files) of CRDs, in YAML, to install and wait for; folders that do not exist
    /// are skipped, like controller-runtime's `ErrorIfCRDPathMissing: false`.
    pub crd_paths: Vec<PathBuf>,
    /// More `--flag=value` arguments for kube-apiserver, after envtest's own.
    pub api_server_args: Vec<String>,
}

/// A running etcd and kube-apiserver: see [the module](self).
#[derive(Debug)]
pub struct Envtest {
    config: Config,
    kubeconfig: PathBuf,
    dir: PathBuf,
    port: u16,
    supervisor: Mutex<Option<Supervisor>>,
}

/// The supervisor process, and the end of its pipe whose closing stops it.
#[derive(Debug)]
struct Supervisor {
    child: Child,
    stdin: ChildStdin,
}

impl Envtest {
    /// The folder of the binaries, from `KUBEBUILDER_ASSETS`, checked to hold them.
    pub fn assets() -> Result<PathBuf, EnvtestError> {
        let dir = std::env::var_os(ASSETS_ENV)
            .filter(|dir| !dir.is_empty())
            .ok_or_else(|| EnvtestError::NoAssets("is not set".to_owned()))?;
        let dir = PathBuf::from(dir);
        for binary in ["etcd", "kube-apiserver"] {
            if !dir.join(binary).is_file() {
                let missing = format!("({}) has no {binary}", dir.display());
                return Err(EnvtestError::NoAssets(missing));
            }
        }
        Ok(dir)
    }

    /// The control plane that the tests of this test binary share, started by the first test
    /// that asks, with the CRDs of [`CRD_DIR`] installed. It stops when the test binary exits.
    ///
    /// # Panics
    ///
    /// When it cannot start: the test that asked fails with the reason (tests that need envtest
    /// are `#[ignore]`d, so that they run only where the binaries are).
    pub fn shared() -> &'static Envtest {
        static SHARED: OnceLock<Result<Envtest, String>> = OnceLock::new();
        let started = SHARED.get_or_init(|| {
            let options = Options {
                crd_paths: vec![PathBuf::from(CRD_DIR)],
                ..Options::default()
            };
            Envtest::start(options).map_err(|error| format!("{:#}", anyhow::Error::from(error)))
        });
        match started {
            Ok(envtest) => envtest,
            Err(error) => panic!("{error}"),
        }
    }

    /// Starts a control plane of its own, with `options`; it stops when dropped (or when the
    /// test process ends, whichever comes first). Blocks until the API server is ready and the
    /// CRDs are established, from any thread, inside an async runtime or not.
    pub fn start(options: Options) -> Result<Envtest, EnvtestError> {
        Self::start_on(options, Ports::free)
    }

    /// [`Envtest::start`] on the ports that `ports` gives, asked again for each new start.
    fn start_on(
        options: Options,
        mut ports: impl FnMut() -> Result<Ports, EnvtestError> + Send + 'static,
    ) -> Result<Envtest, EnvtestError> {
        let assets = Self::assets()?;
        on_own_runtime(
            move || async move { Self::start_async(&assets, &options, &mut ports).await },
        )
    }

    async fn start_async(
        assets: &Path,
        options: &Options,
        ports: &mut impl FnMut() -> Result<Ports, EnvtestError>,
    ) -> Result<Envtest, EnvtestError> {
        let mut attempt = 1;
        let envtest = loop {
            match Self::launch_ready(assets, options, ports()?).await {
                Err(error @ EnvtestError::Exited { .. }) if attempt < LAUNCH_ATTEMPTS => {
                    eprintln!("{error}\nenvtest: starting again on other ports");
                    attempt += 1;
                }
                started => break started?,
            }
        };
        for path in &options.crd_paths {
            envtest.install_crds(path).await?;
        }
        Ok(envtest)
    }

    /// Starts etcd and kube-apiserver in a new folder, on `ports`, and waits until the API
    /// server is ready; when it fails, what it started is stopped and the folder removed.
    async fn launch_ready(
        assets: &Path,
        options: &Options,
        ports: Ports,
    ) -> Result<Envtest, EnvtestError> {
        let dir = temp_dir()?;
        let started = Self::launch(assets, &dir, options, ports).await;
        if started.is_err() {
            // The supervisor, if it runs, removes the folder; if it does not, nothing else will.
            let _ = std::fs::remove_dir_all(&dir);
        }
        let envtest = started?;
        envtest.wait_ready().await?;
        Ok(envtest)
    }

    async fn launch(
        assets: &Path,
        dir: &Path,
        options: &Options,
        ports: Ports,
    ) -> Result<Envtest, EnvtestError> {
        let port = ports.api_server;
        files::write_pki(dir)?;
        let kubeconfig = dir.join("kubeconfig");
        let text = files::kubeconfig(dir, port);
        write(&kubeconfig, &text)?;
        let etcd = etcd_args(assets, dir, ports.etcd, ports.etcd_peer);
        let mut api_server = api_server_args(assets, dir, ports.etcd, port);
        api_server.extend(options.api_server_args.iter().cloned());
        let script = files::supervisor_script(dir, &etcd, &api_server);
        write(&dir.join("supervisor.sh"), &script)?;
        let mut child = Command::new("sh")
            .arg(dir.join("supervisor.sh"))
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|source| io("cannot start sh", source))?;
        let stdin = child.stdin.take().expect("stdin is piped");
        let supervisor = Mutex::new(Some(Supervisor { child, stdin }));
        let config = client_config(&text).await?;
        Ok(Envtest {
            config,
            kubeconfig,
            dir: dir.to_owned(),
            port,
            supervisor,
        })
    }

    /// Waits until `/readyz` answers `ok`, as controller-runtime's envtest does, failing early
    /// with the API server's log when the supervisor (and so the control plane) stopped.
    async fn wait_ready(&self) -> Result<(), EnvtestError> {
        let timeout = start_timeout();
        let deadline = Instant::now() + timeout;
        let client = self.client();
        let request = || http::Request::get("/readyz").body(Vec::new());
        loop {
            // Bounded: whatever holds the port may accept the connection and never answer (a
            // port another process took), and the processes are to be checked meanwhile.
            let ready = client.request_text(request().expect("a valid request"));
            let ready = tokio::time::timeout(Duration::from_secs(2), ready).await;
            if ready.is_ok_and(|ready| ready.is_ok_and(|text| text == "ok")) {
                return Ok(());
            }
            if let Some(down) = self.down() {
                return Err(down);
            }
            if Instant::now() > deadline {
                return Err(self.not_ready(&format!("not ready after {timeout:?}")));
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    fn not_ready(&self, reason: &str) -> EnvtestError {
        EnvtestError::NotReady {
            reason: reason.to_owned(),
            log: self.log_tail("kube-apiserver"),
        }
    }

    /// The last lines of the log of `process` (`etcd` or `kube-apiserver`).
    fn log_tail(&self, process: &str) -> String {
        let log = std::fs::read_to_string(self.dir.join(format!("{process}.log")));
        let log = log.unwrap_or_default();
        let tail: Vec<&str> = log.lines().rev().take(15).collect();
        tail.into_iter().rev().collect::<Vec<_>>().join("\n")
    }

    /// Why the control plane is down, if it is: etcd or kube-apiserver exited unasked (the
    /// supervisor names it in the file `exited`), or the supervisor itself stopped.
    fn down(&self) -> Option<EnvtestError> {
        let exited = std::fs::read_to_string(self.dir.join("exited")).unwrap_or_default();
        if let Some(process) = exited.lines().next() {
            let log = self.log_tail(process);
            let process = process.to_owned();
            return Some(EnvtestError::Exited { process, log });
        }
        self.stopped()
            .then(|| self.not_ready("its processes stopped"))
    }

    fn stopped(&self) -> bool {
        let mut supervisor = self
            .supervisor
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        supervisor
            .as_mut()
            .is_none_or(|supervisor| !matches!(supervisor.child.try_wait(), Ok(None)))
    }

    /// Installs the CRDs of `path` (a folder of YAML files, or one file, several documents
    /// each; a folder that does not exist is skipped) and waits until the API server serves
    /// each of them.
    pub async fn install_crds(&self, path: &Path) -> Result<(), EnvtestError> {
        self.install_crd_objects(&crds::read(path)?).await
    }

    /// Installs `crds` (each created, or replaced where it differs) and waits until the API
    /// server serves each of them.
    pub async fn install_crd_objects(
        &self,
        crds: &[CustomResourceDefinition],
    ) -> Result<(), EnvtestError> {
        crds::install(&self.client(), crds).await
    }

    /// A new client of the API server, as its admin. Each test gets its own: a client belongs to
    /// the async runtime that made it, and tests run on runtimes of their own.
    pub fn client(&self) -> Client {
        Client::try_from(self.config.clone()).expect("envtest's configuration is valid")
    }

    /// The client configuration (the admin's), e.g. to run a manager against envtest.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// A kubeconfig file of the admin, for `kubectl --kubeconfig` or a manager's `KUBECONFIG`.
    pub fn kubeconfig(&self) -> &Path {
        &self.kubeconfig
    }

    /// The API server's port on 127.0.0.1.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Stops kube-apiserver at once (SIGKILL, as a crash: a graceful stop waits up to a minute
    /// for its clients' watches), waits `down_for`, and starts it again on the same port and
    /// etcd; returns once it is ready. For tests of what a client does while its API server
    /// goes away and comes back: controller-runtime's envtest has no such restart, and a shared
    /// control plane cannot be restarted.
    pub async fn restart_api_server(&self, down_for: Duration) -> Result<(), EnvtestError> {
        use std::io::Write as _;
        let restarts = || std::fs::read_to_string(self.dir.join("restarts")).unwrap_or_default();
        let before = restarts();
        {
            let mut supervisor = self
                .supervisor
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            let supervisor = supervisor
                .as_mut()
                .ok_or_else(|| self.not_ready("stopped"))?;
            let command = format!("restart-api-server {}\n", down_for.as_secs_f64());
            supervisor
                .stdin
                .write_all(command.as_bytes())
                .map_err(|source| io("cannot ask the supervisor to restart", source))?;
        }
        while restarts() == before {
            if let Some(down) = self.down() {
                return Err(down);
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        self.wait_ready().await
    }

    /// Creates a namespace named `<prefix>-<n>`, unique in this control plane, for one test:
    /// the tests of a binary share the API server, and run at the same time.
    pub async fn create_namespace(&self, prefix: &str) -> String {
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let name = format!("{prefix}-{n}");
        let namespace = Namespace {
            metadata: ObjectMeta {
                name: Some(name.clone()),
                ..ObjectMeta::default()
            },
            ..Namespace::default()
        };
        let api = Api::<Namespace>::all(self.client());
        api.create(&PostParams::default(), &namespace)
            .await
            .unwrap_or_else(|error| panic!("cannot create the namespace {name}: {error}"));
        name
    }

    /// Stops etcd and kube-apiserver and removes their folder, waiting until they are gone.
    pub fn stop(&self) {
        let supervisor = self
            .supervisor
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(Supervisor { mut child, stdin }) = supervisor {
            drop(stdin);
            let _ = child.wait();
        }
    }
}

impl Drop for Envtest {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Runs `work` to completion on a thread and current-thread runtime of their own: the caller's
/// runtime may be a test's single-threaded one, which blocking on `work` there would stall.
fn on_own_runtime<T, F>(work: impl FnOnce() -> F + Send + 'static) -> Result<T, EnvtestError>
where
    T: Send + 'static,
    F: Future<Output = Result<T, EnvtestError>>,
{
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|source| io("cannot start a runtime", source))?;
        runtime.block_on(work())
    })
    .join()
    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
}
fn io(what: &str, source: std::io::Error) -> EnvtestError {
    EnvtestError::Io {
        what: what.to_owned(),
        source,
    }
}

fn write(path: &Path, text: &str) -> Result<(), EnvtestError> {
    std::fs::write(path, text)
        .map_err(|source| io(&format!("cannot write {}", path.display()), source))
}

/// A new folder for one control plane: its certificates, etcd's data and the logs. Never one
/// that exists: process ids wrap around (at 32,768 by default on Linux), and a folder of an
/// earlier control plane may still be there, its supervisor about to remove it.
fn temp_dir() -> Result<PathBuf, EnvtestError> {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    loop {
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("envtest-{}-{n}", std::process::id()));
        match std::fs::create_dir(&dir) {
            Ok(()) => return Ok(dir),
            Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(source) => return Err(io("cannot create a temporary folder", source)),
        }
    }
}

/// How many times [`Envtest::start`] starts a control plane whose etcd or kube-apiserver exits
/// before the API server is ready, each time on other ports.
const LAUNCH_ATTEMPTS: usize = 3;

/// The ports of one control plane on 127.0.0.1.
#[derive(Clone, Copy, Debug)]
struct Ports {
    etcd: u16,
    etcd_peer: u16,
    api_server: u16,
}

impl Ports {
    /// Three ports that nothing listens on now, as controller-runtime finds them, and distinct:
    /// all three are held while they are chosen. Another process may still take one before
    /// etcd or kube-apiserver binds it; [`Envtest::start`] then starts again on others.
    fn free() -> Result<Ports, EnvtestError> {
        let error = |source| io("cannot find a free port", source);
        let listeners = (0..3)
            .map(|_| TcpListener::bind((Ipv4Addr::LOCALHOST, 0)))
            .collect::<Result<Vec<_>, _>>()
            .map_err(error)?;
        let ports = listeners
            .iter()
            .map(|listener| Ok(listener.local_addr()?.port()))
            .collect::<Result<Vec<u16>, std::io::Error>>()
            .map_err(error)?;
        Ok(Ports {
            etcd: ports[0],
            etcd_peer: ports[1],
            api_server: ports[2],
        })
    }
}

fn start_timeout() -> Duration {
    std::env::var(START_TIMEOUT_ENV)
        .ok()
        .and_then(|text| parse_duration(&text))
        .unwrap_or(DEFAULT_START_TIMEOUT)
}

/// A duration as Go writes the simple ones (`90s`, `2m`, `1m30s`), or a number of seconds.
fn parse_duration(text: &str) -> Option<Duration> {
    let text = text.trim();
    if let Ok(seconds) = text.parse::<u64>() {
        return Some(Duration::from_secs(seconds));
    }
    let mut total = 0u64;
    let mut number = String::new();
    for c in text.chars() {
        if c.is_ascii_digit() {
            number.push(c);
            continue;
        }
        let value: u64 = number.parse().ok()?;
        number.clear();
        total += match c {
            'h' => value * 3600,
            'm' => value * 60,
            's' => value,
            _ => return None,
        };
    }
    (number.is_empty() && total > 0).then(|| Duration::from_secs(total))
}

/// etcd's flags: controller-runtime's (a member of its own, on loopback, data in the folder).
fn etcd_args(assets: &Path, dir: &Path, port: u16, peer_port: u16) -> Vec<String> {
    let client = format!("http://127.0.0.1:{port}");
    let peer = format!("http://127.0.0.1:{peer_port}");
    vec![
        assets.join("etcd").display().to_string(),
        format!("--data-dir={}", dir.join("etcd").display()),
        format!("--listen-client-urls={client}"),
        format!("--advertise-client-urls={client}"),
        format!("--listen-peer-urls={peer}"),
        format!("--initial-advertise-peer-urls={peer}"),
        format!("--initial-cluster=default={peer}"),
    ]
}

/// kube-apiserver's flags: controller-runtime's defaults (its `configureAPIServerDefaults`),
/// with a token for the admin where it makes client certificates.
fn api_server_args(assets: &Path, dir: &Path, etcd_port: u16, port: u16) -> Vec<String> {
    let file = |name: &str| dir.join(name).display().to_string();
    vec![
        assets.join("kube-apiserver").display().to_string(),
        format!("--etcd-servers=http://127.0.0.1:{etcd_port}"),
        "--bind-address=127.0.0.1".to_owned(),
        "--advertise-address=127.0.0.1".to_owned(),
        format!("--secure-port={port}"),
        format!("--cert-dir={}", file("certs")),
        format!("--tls-cert-file={}", file("apiserver.crt")),
        format!("--tls-private-key-file={}", file("apiserver.key")),
        format!("--token-auth-file={}", file("tokens.csv")),
        "--authorization-mode=RBAC".to_owned(),
        format!("--service-account-issuer=https://127.0.0.1:{port}/"),
        format!("--service-account-key-file={}", file("sa.pub")),
        format!("--service-account-signing-key-file={}", file("sa.key")),
        "--service-cluster-ip-range=10.0.0.0/24".to_owned(),
        "--allow-privileged=true".to_owned(),
        // As controller-runtime's envtest: no controller manager makes the service accounts'
        // tokens that this admission plugin would wait for.
        "--disable-admission-plugins=ServiceAccount".to_owned(),
    ]
}

async fn client_config(kubeconfig: &str) -> Result<Config, EnvtestError> {
    let kubeconfig =
        Kubeconfig::from_yaml(kubeconfig).map_err(|error| EnvtestError::Client(error.into()))?;
    Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
        .await
        .map_err(|error| EnvtestError::Client(error.into()))
}

/// The files of one control plane.
mod files {
    use std::path::Path;

    use rcgen::{BasicConstraints, CertificateParams, IsCa, Issuer, KeyPair, SanType};

    use super::{ADMIN_TOKEN, EnvtestError, shell_quote, write};

    /// A CA, the API server's serving certificate it signs (for 127.0.0.1 and localhost), the
    /// service accounts' signing key, and the token of the admin.
    pub(super) fn write_pki(dir: &Path) -> Result<(), EnvtestError> {
        let ca_key = KeyPair::generate()?;
        let mut ca = CertificateParams::new(Vec::<String>::new())?;
        ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        let ca_cert = ca.self_signed(&ca_key)?;
        let issuer = Issuer::new(ca, ca_key);
        let key = KeyPair::generate()?;
        let mut serving = CertificateParams::new(vec!["localhost".to_owned()])?;
        serving
            .subject_alt_names
            .push(SanType::IpAddress(std::net::Ipv4Addr::LOCALHOST.into()));
        let cert = serving.signed_by(&key, &issuer)?;
        let service_accounts = KeyPair::generate()?;
        for (name, text) in [
            ("ca.crt", ca_cert.pem()),
            ("apiserver.crt", cert.pem()),
            ("apiserver.key", key.serialize_pem()),
            ("sa.key", service_accounts.serialize_pem()),
            ("sa.pub", service_accounts.public_key_pem()),
            (
                "tokens.csv",
                format!("{ADMIN_TOKEN},admin,admin,system:masters\n"),
            ),
        ] {
            write(&dir.join(name), &text)?;
        }
        Ok(())
    }

    /// The admin's kubeconfig.
    pub(super) fn kubeconfig(dir: &Path, port: u16) -> String {
        let ca = dir.join("ca.crt").display().to_string();
        format!(
            "apiVersion: v1\n\
             kind: Config\n\
             clusters:\n\
             - name: envtest\n  cluster:\n    server: https://127.0.0.1:{port}\n    certificate-authority: {ca}\n\
             users:\n\
             - name: envtest-admin\n  user:\n    token: {ADMIN_TOKEN}\n\
             contexts:\n\
             - name: envtest\n  context:\n    cluster: envtest\n    user: envtest-admin\n    namespace: default\n\
             current-context: envtest\n"
        )
    }

    /// Runs etcd and kube-apiserver until its standard input closes (the test process ended or
    /// dropped its [`super::Envtest`]), then stops them (SIGTERM, SIGKILL after 10 s) and
    /// removes the folder. A line `restart-api-server <seconds>` on its standard input kills
    /// kube-apiserver, waits that long and starts it again, then counts the restart in the
    /// file `restarts`. Each process runs under a subshell of its own that waits for it: when
    /// it exits unasked (a port taken, a crash), its name goes into the file `exited`, which
    /// envtest reads, rather than the supervisor going on as if it ran. A non-interactive shell
    /// starts background jobs with SIGINT ignored, so a Ctrl-C of `cargo test` reaches the test
    /// process, whose end then stops them in order.
    pub(super) fn supervisor_script(dir: &Path, etcd: &[String], api_server: &[String]) -> String {
        let command = |args: &[String]| {
            args.iter()
                .map(|arg| shell_quote(arg))
                .collect::<Vec<_>>()
                .join(" ")
        };
        let dir = shell_quote(&dir.display().to_string());
        format!(
            "# envtest's supervisor (operator-rs-testing): see testing/src/envtest.rs\n\
             cd {dir} || exit 1\n\
             # run NAME COMMAND...: COMMAND in the background, its log NAME.log, its pid NAME.pid,\n\
             # and the pid of the subshell that waits for it in $runner.\n\
             run() {{\n\
             \x20 name=$1; shift\n\
             \x20 ( \"$@\" >>\"$name.log\" 2>&1 </dev/null &\n\
             \x20   echo $! >\"$name.pid\"; wait $!\n\
             \x20   [ -e \"$name.stopping\" ] || echo \"$name\" >>exited ) &\n\
             \x20 runner=$!\n\
             }}\n\
             run etcd {etcd}\n\
             run kube-apiserver {api_server}\n\
             apiserver=$runner\n\
             echo 0 >restarts\n\
             trap '' INT TERM HUP\n\
             while read -r command seconds; do\n\
             \x20 [ \"$command\" = restart-api-server ] || continue\n\
             \x20 touch kube-apiserver.stopping\n\
             \x20 kill -KILL \"$(cat kube-apiserver.pid)\" 2>/dev/null; wait $apiserver\n\
             \x20 rm -f kube-apiserver.stopping; sleep \"$seconds\"\n\
             \x20 run kube-apiserver {api_server}\n\
             \x20 apiserver=$runner\n\
             \x20 echo $(($(cat restarts) + 1)) >restarts\n\
             done\n\
             touch etcd.stopping kube-apiserver.stopping\n\
             pids=$(cat kube-apiserver.pid etcd.pid 2>/dev/null)\n\
             kill -TERM $pids 2>/dev/null\n\
             alive() {{ for pid in $pids; do kill -0 $pid 2>/dev/null && return 0; done; return 1; }}\n\
             i=0\n\
             while alive; do\n\
             \x20 i=$((i + 1)); [ $i -eq 100 ] && kill -KILL $pids 2>/dev/null; sleep 0.1\n\
             done\n\
             wait\n\
             cd / && rm -rf {dir}\n",
            etcd = command(etcd),
            api_server = command(api_server),
        )
    }
}

/// `text` in single quotes for `sh`.
fn shell_quote(text: &str) -> String {
    let mut quoted = String::with_capacity(text.len() + 2);
    quoted.push('\'');
    for c in text.chars() {
        if c == '\'' {
            quoted.push_str("'\\''");
        } else {
            quoted.push(c);
        }
    }
    quoted.push('\'');
    quoted
}

/// CRDs read from files and installed.
mod crds {
    use std::path::{Path, PathBuf};
    use std::time::{Duration, Instant};

    use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
    use kube::api::{Api, PostParams};
    use kube::{Client, ResourceExt as _};

    use super::EnvtestError;

    /// How long a CRD may take to be served.
    const ESTABLISHED_TIMEOUT: Duration = Duration::from_secs(30);

    fn error(what: String, source: impl Into<anyhow::Error>) -> EnvtestError {
        EnvtestError::Crd {
            what,
            source: source.into(),
        }
    }

    /// The CRDs of the YAML files of `path` (in name order), or of the file `path`.
    pub(super) fn read(path: &Path) -> Result<Vec<CustomResourceDefinition>, EnvtestError> {
        let files: Vec<PathBuf> = if path.is_dir() {
            let entries = std::fs::read_dir(path)
                .map_err(|source| error(format!("folder {}", path.display()), source))?;
            let mut files: Vec<PathBuf> = entries
                .filter_map(|entry| Some(entry.ok()?.path()))
                .filter(|file| {
                    let extension = file.extension().and_then(|e| e.to_str());
                    matches!(extension, Some("yaml" | "yml" | "json"))
                })
                .collect();
            files.sort();
            files
        } else if path.exists() {
            vec![path.to_owned()]
        } else {
            Vec::new()
        };
        let mut crds = Vec::new();
        for file in files {
            let text = std::fs::read_to_string(&file)
                .map_err(|source| error(format!("file {}", file.display()), source))?;
            for document in serde_saphyr::from_multiple::<serde_json::Value>(&text)
                .map_err(|source| error(format!("file {}", file.display()), source))?
            {
                if document.get("kind").and_then(|k| k.as_str()) != Some("CustomResourceDefinition")
                {
                    continue;
                }
                let crd = serde_json::from_value(document)
                    .map_err(|source| error(format!("in {}", file.display()), source))?;
                crds.push(crd);
            }
        }
        Ok(crds)
    }

    /// Creates each CRD (or replaces the one of that name where its spec differs), then waits
    /// until each is established and its versions are served.
    pub(super) async fn install(
        client: &Client,
        crds: &[CustomResourceDefinition],
    ) -> Result<(), EnvtestError> {
        let api = Api::<CustomResourceDefinition>::all(client.clone());
        for crd in crds {
            install_one(&api, crd).await?;
        }
        for crd in crds {
            wait_served(client, &api, crd).await?;
        }
        Ok(())
    }

    /// Creates `crd`, or replaces the one of its name; tests that install the same CRDs at the
    /// same time race, so a conflict is retried.
    async fn install_one(
        api: &Api<CustomResourceDefinition>,
        crd: &CustomResourceDefinition,
    ) -> Result<(), EnvtestError> {
        let name = crd.name_any();
        let failed = |e: kube::Error| error(format!("{name} cannot be installed"), e);
        let conflict = |e: &kube::Error| matches!(e, kube::Error::Api(s) if s.code == 409);
        for _ in 0..5 {
            match api.create(&PostParams::default(), crd).await {
                Ok(_) => return Ok(()),
                Err(e) if conflict(&e) => {}
                Err(e) => return Err(failed(e)),
            }
            let existing = api.get(&name).await.map_err(failed)?;
            if existing.spec == crd.spec {
                return Ok(());
            }
            let mut crd = crd.clone();
            crd.metadata.resource_version = existing.metadata.resource_version;
            match api.replace(&name, &PostParams::default(), &crd).await {
                Ok(_) => return Ok(()),
                Err(e) if conflict(&e) => {}
                Err(e) => return Err(failed(e)),
            }
        }
        Err(error(
            name,
            anyhow::anyhow!("conflicts kept it from being installed"),
        ))
    }

    async fn wait_served(
        client: &Client,
        api: &Api<CustomResourceDefinition>,
        crd: &CustomResourceDefinition,
    ) -> Result<(), EnvtestError> {
        let name = crd.name_any();
        let deadline = Instant::now() + ESTABLISHED_TIMEOUT;
        loop {
            if established(api, &name).await && served(client, crd).await {
                return Ok(());
            }
            if Instant::now() > deadline {
                let timeout = anyhow::anyhow!("not served after {ESTABLISHED_TIMEOUT:?}");
                return Err(error(name, timeout));
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    async fn established(api: &Api<CustomResourceDefinition>, name: &str) -> bool {
        let Ok(crd) = api.get(name).await else {
            return false;
        };
        let conditions = crd.status.and_then(|s| s.conditions).unwrap_or_default();
        conditions
            .iter()
            .any(|c| c.type_ == "Established" && c.status == "True")
    }

    /// Whether discovery lists the CRD's plural in each served version.
    async fn served(client: &Client, crd: &CustomResourceDefinition) -> bool {
        for version in crd.spec.versions.iter().filter(|v| v.served) {
            let group_version = format!("{}/{}", crd.spec.group, version.name);
            let Ok(list) = client.list_api_group_resources(&group_version).await else {
                return false;
            };
            if !list
                .resources
                .iter()
                .any(|r| r.name == crd.spec.names.plural)
            {
                return false;
            }
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_durations() {
        assert_eq!(parse_duration("90"), Some(Duration::from_secs(90)));
        assert_eq!(parse_duration("90s"), Some(Duration::from_secs(90)));
        assert_eq!(parse_duration("2m"), Some(Duration::from_secs(120)));
        assert_eq!(parse_duration("1m30s"), Some(Duration::from_secs(90)));
        assert_eq!(parse_duration("1h"), Some(Duration::from_secs(3600)));
        assert_eq!(parse_duration("1.5s"), None);
        assert_eq!(parse_duration("soon"), None);
        assert_eq!(parse_duration(""), None);
    }

    #[test]
    fn shell_quoting() {
        assert_eq!(shell_quote("a b"), "'a b'");
        assert_eq!(shell_quote("it's"), "'it'\\''s'");
    }

    #[tokio::test]
    #[ignore = "needs envtest's binaries: KUBEBUILDER_ASSETS (see docs/e2e.md)"]
    async fn the_api_server_restarts_on_its_port_and_data() {
        use k8s_openapi::api::core::v1::ConfigMap;
        let envtest = Envtest::start(Options::default()).unwrap_or_else(|e| panic!("{e:#}"));
        let api = Api::<ConfigMap>::namespaced(envtest.client(), "default");
        let mut settings = ConfigMap::default();
        settings.metadata.name = Some("settings".to_owned());
        api.create(&PostParams::default(), &settings).await.unwrap();
        let started = Instant::now();
        envtest
            .restart_api_server(Duration::from_millis(500))
            .await
            .unwrap();
        assert!(started.elapsed() >= Duration::from_millis(500));
        // A new client (the old one's connections went with the old process), the same data.
        let api = Api::<ConfigMap>::namespaced(envtest.client(), "default");
        assert!(api.get_opt("settings").await.unwrap().is_some());
        envtest.restart_api_server(Duration::ZERO).await.unwrap();
        assert!(api.get_opt("settings").await.unwrap().is_some());
    }

    #[test]
    #[ignore = "needs envtest's binaries: KUBEBUILDER_ASSETS (see docs/e2e.md)"]
    fn a_port_taken_before_the_server_binds_it_makes_envtest_start_again_on_others() {
        use std::sync::Arc;
        use std::sync::atomic::{AtomicUsize, Ordering};
        let holder = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
        let taken = holder.local_addr().unwrap().port();
        // Alone, a start on the taken port fails as soon as kube-apiserver exits, with its log,
        // not at the start timeout.
        let started = Instant::now();
        let on_taken = on_own_runtime(move || async move {
            let mut ports = Ports::free()?;
            ports.api_server = taken;
            let assets = Envtest::assets()?;
            Envtest::launch_ready(&assets, &Options::default(), ports).await
        });
        match on_taken {
            Err(EnvtestError::Exited { process, log }) => {
                assert_eq!(process, "kube-apiserver");
                assert!(log.contains("address already in use"), "{log}");
            }
            other => panic!("expected kube-apiserver to exit, got {other:?}"),
        }
        assert!(started.elapsed() < DEFAULT_START_TIMEOUT / 3);
        // Through start, the first ports asked for include the taken one; the second do not.
        let asked = Arc::new(AtomicUsize::new(0));
        let counted = Arc::clone(&asked);
        let envtest = Envtest::start_on(Options::default(), move || {
            let mut ports = Ports::free()?;
            if counted.fetch_add(1, Ordering::SeqCst) == 0 {
                ports.api_server = taken;
            }
            Ok(ports)
        })
        .unwrap_or_else(|e| panic!("{e:#}"));
        assert_eq!(asked.load(Ordering::SeqCst), 2);
        assert_ne!(envtest.port(), taken);
        drop(holder);
    }

    #[test]
    fn missing_assets_say_what_to_do() {
        // Only the message: the variable itself is the process's, shared with other tests.
        let error = EnvtestError::NoAssets("is not set".to_owned());
        assert_eq!(
            error.to_string(),
            "KUBEBUILDER_ASSETS is not set: envtest needs etcd and kube-apiserver there \
             (`make setup-envtest` in a generated project, or setup-envtest's `use <version> -p \
             path`)"
        );
    }
}
