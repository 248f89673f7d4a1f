//! The driver of `hack/bench-reconcile`, built as an example of the generated Memcached project
//! (the script copies it to `examples/bench.rs` there, so it uses the project's own `Memcached`
//! type, the Deployment its controller makes, and its Cargo.lock).
//!
//! Each run takes a cold backlog of N Memcached objects (stored before anything starts, each in
//! a namespace of its own phase) through two phases, side by side:
//!
//! - **the floor**: a plain client at the manager's concurrency (2) doing, per object, what the
//!   controller's job needs and nothing more: one server-side apply of the Deployment the
//!   controller makes (the project's own `deployment()`, owned by the Memcached), and one status
//!   patch with the conditions the controller writes;
//! - **the manager**: the project's release `manager` binary in a process of its own (2 workers),
//!   from its start until every Memcached's status was written (its first status patch of each
//!   object succeeded), then until it has sent no request for a second.
//!
//! The API server is the runtime's `FakeApiServer`, served over HTTP in this process (a fresh one
//! for each phase, with its stand-in Deployment controller, which makes every Deployment's pods
//! available at once), or with `--cluster` the API server of KUBECONFIG (a real kube-apiserver:
//! its controller manager makes the ReplicaSets and pods; without nodes they stay Pending),
//! through an `operator_rs_testing::proxy::RecordingProxy`, which records each request the
//! manager and the floor send. Both phases go the same way, through HTTP on 127.0.0.1. Runs
//! alternate which phase goes first, so that neither always meets the other's aftermath (the
//! controller manager still working through the Deployments of the phase before).
//!
//! It prints, per phase: the time, its ratio to the floor of the same run, the requests per
//! object by verb, split into the worker's path (the reads and writes `reconcile` makes itself:
//! every request but the lists and watches of the caches, Events, which the recorder sends beside
//! the workers, Leases and paths of no resource) and the rest; for the manager its
//! reconciliations per object (`controller_runtime_reconcile_total`), its peak RSS (`VmHWM`: the
//! fake's storage is in this process, not there), the warnings it logged and how long its
//! graceful shutdown took (SIGTERM: the last Events flushed). Then, over the runs, the median and
//! the spread, and the goals of issue 45 met or missed.
//!
//! On a cluster it works in namespaces of its own (`bench-reconcile-<pid>-<run>-<phase>`), which
//! it deletes after each phase (the manager's objects freed of their finalizer first), and
//! installs the Memcached CRD if it is missing (and then deletes it at the end).
//!
//! With `--outage SECONDS` (on the fake only), the API server goes away for that long once a
//! quarter of the manager's backlog has converged, and the time from its return to full
//! convergence is printed too.
//!
//! usage: bench N MANAGER [--runs R] [--cluster] [--outage SECONDS]

use std::collections::HashSet;
use std::io::{Read as _, Write as _};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::Namespace;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, DeleteParams, ObjectMeta, Patch, PatchParams, PostParams};
use kube::{Client, CustomResourceExt as _, Resource as _, ResourceExt as _};
use memcached_operator::api::v1alpha1::{Memcached, MemcachedSpec};
use memcached_operator::controller::memcached::{DEFAULT_IMAGE, deployment};
use operator_rs_runtime::controller::{condition, owner_reference};
use operator_rs_testing::fake::{FakeApiServer, RecordedRequest, Verb};
use operator_rs_testing::proxy::RecordingProxy;
use serde_json::json;

/// The concurrency of the manager (`--max-concurrent-reconciles`) and of the floor.
const WORKERS: usize = 2;

/// The goals of issue 45, on a real API server.
const GOAL_RATIO: f64 = 1.5;
const GOAL_WRITES: f64 = 3.0;
const GOAL_RECONCILES: f64 = 2.0;

#[tokio::main]
async fn main() {
    let options = Options::parse();
    let work = std::env::temp_dir().join(format!("bench-reconcile-{}", std::process::id()));
    std::fs::create_dir_all(&work).unwrap();
    let target = Target::new(options.cluster).await;
    let mut runs = Vec::new();
    for run in 0..options.runs {
        println!("run {} of {}: {} objects", run + 1, options.runs, options.n);
        let mut floor = None;
        let mut manager = None;
        let phases = if run % 2 == 0 {
            [true, false]
        } else {
            [false, true]
        };
        for is_floor in phases {
            let name = if is_floor { "floor" } else { "manager" };
            let backlog = target
                .backlog(options.n, &format!("{run}-{name}"), &work)
                .await;
            if is_floor {
                floor = Some(run_floor(&backlog).await);
            } else {
                manager = Some(run_manager(&backlog, &options, &work).await);
            }
            target.remove(backlog).await;
        }
        let (floor, manager) = (floor.unwrap(), manager.unwrap());
        print_phase("floor", options.n, &floor, None);
        print_phase("manager", options.n, &manager, Some(floor.time));
        runs.push((floor, manager));
        println!();
    }
    target.close().await;
    std::fs::remove_dir_all(&work).unwrap();
    print_summary(options.n, &runs);
}

/// The command line.
struct Options {
    n: usize,
    manager: PathBuf,
    runs: usize,
    cluster: bool,
    outage: Option<Duration>,
}

impl Options {
    fn parse() -> Self {
        let args: Vec<String> = std::env::args().skip(1).collect();
        let (Some(n), Some(manager)) = (args.first().and_then(|n| n.parse().ok()), args.get(1))
        else {
            usage()
        };
        let mut options = Options {
            n,
            manager: PathBuf::from(manager),
            runs: 1,
            cluster: false,
            outage: None,
        };
        let mut rest = args[2..].iter();
        while let Some(arg) = rest.next() {
            let mut number = || -> u64 {
                let value = rest.next().and_then(|value| value.parse().ok());
                value.unwrap_or_else(|| usage())
            };
            match arg.as_str() {
                "--runs" => options.runs = number().max(1) as usize,
                "--outage" => options.outage = Some(Duration::from_secs(number())),
                "--cluster" => options.cluster = true,
                _ => usage(),
            }
        }
        if options.cluster && options.outage.is_some() {
            eprintln!("bench: --outage needs the fake API server (it cannot stop a real one)");
            std::process::exit(2);
        }
        options
    }
}

fn usage() -> ! {
    eprintln!("usage: bench N MANAGER [--runs R] [--cluster] [--outage SECONDS]");
    std::process::exit(2);
}

/// Where the backlogs go: a fake API server per phase, or the cluster of KUBECONFIG.
enum Target {
    Fake,
    Cluster(Cluster),
}

struct Cluster {
    /// A client of the cluster, for this driver's own requests (not recorded).
    client: Client,
    /// The way in of the manager and the floor, which records their requests.
    proxy: RecordingProxy,
    /// Whether this driver installed the CRD (and removes it at the end).
    installed_crd: bool,
}

/// One phase's backlog: its objects as stored, the kubeconfig through which the phase reaches
/// them, and where its requests are recorded.
struct Backlog {
    namespace: String,
    objects: Vec<Memcached>,
    kubeconfig: PathBuf,
    recorded: Recorded,
}

enum Recorded {
    Fake(FakeApiServer),
    Proxy(RecordingProxy),
}

impl Backlog {
    /// The requests of the phase so far.
    fn requests(&self) -> Vec<RecordedRequest> {
        match &self.recorded {
            Recorded::Fake(fake) => fake.requests(),
            Recorded::Proxy(proxy) => proxy.requests(),
        }
    }

    /// How many objects had their status written: a status patch of each that succeeded.
    fn reported(&self) -> usize {
        let requests = self.requests();
        let written = requests.iter().filter(|r| {
            r.verb == Verb::Patch
                && r.resource == "memcacheds"
                && r.subresource.as_deref() == Some("status")
                && r.status.is_success()
        });
        written
            .filter_map(|r| r.name.as_deref())
            .collect::<HashSet<_>>()
            .len()
    }

    /// A client of the phase's way in, as the manager has.
    async fn client(&self) -> Client {
        let kubeconfig = kube::config::Kubeconfig::read_from(&self.kubeconfig).unwrap();
        let options = kube::config::KubeConfigOptions::default();
        let config = kube::Config::from_custom_kubeconfig(kubeconfig, &options)
            .await
            .unwrap();
        Client::try_from(config).unwrap()
    }
}

impl Target {
    async fn new(cluster: bool) -> Self {
        if !cluster {
            return Target::Fake;
        }
        let mut config = kube::Config::infer().await.expect("a kubeconfig");
        // As the manager's client: no retries inside the client.
        config.default_retry = false;
        let client = Client::try_from(config).unwrap();
        let installed_crd = install_crd(&client).await;
        let proxy = RecordingProxy::start(client.clone()).await.unwrap();
        Target::Cluster(Cluster {
            client,
            proxy,
            installed_crd,
        })
    }

    /// N Memcached objects of size 1, stored, in a namespace named after `phase`.
    async fn backlog(&self, n: usize, phase: &str, work: &Path) -> Backlog {
        let objects = (0..n).map(|i| {
            let mut object = Memcached::new(&format!("memcached-{i}"), MemcachedSpec::default());
            object.spec.size = 1;
            object
        });
        let kubeconfig = work.join(format!("kubeconfig-{phase}"));
        match self {
            Target::Fake => {
                let fake = FakeApiServer::new();
                fake.register_crd(&Memcached::crd())
                    .simulate_deployments(true);
                let objects = objects
                    .map(|mut object| {
                        object.metadata.namespace = Some("default".to_owned());
                        fake.put(&object)
                    })
                    .collect();
                let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
                let url = format!("http://{}", listener.local_addr().unwrap());
                let server = fake.clone();
                tokio::spawn(async move { server.serve(listener).await });
                std::fs::write(&kubeconfig, kubeconfig_for(&url, "default")).unwrap();
                Backlog {
                    namespace: "default".to_owned(),
                    objects,
                    kubeconfig,
                    recorded: Recorded::Fake(fake),
                }
            }
            Target::Cluster(cluster) => cluster.backlog(objects.collect(), phase, kubeconfig).await,
        }
    }

    /// Removes a phase's objects (on a cluster: its namespace, without waiting for it to go).
    async fn remove(&self, backlog: Backlog) {
        if let Target::Cluster(cluster) = self {
            cluster.remove(backlog).await;
        }
    }

    /// Removes what this driver installed.
    async fn close(self) {
        if let Target::Cluster(cluster) = self
            && cluster.installed_crd
        {
            let crds = Api::<CustomResourceDefinition>::all(cluster.client);
            let _ = crds
                .delete(&Memcached::crd_name(), &DeleteParams::default())
                .await;
        }
    }
}

impl Cluster {
    async fn backlog(&self, objects: Vec<Memcached>, phase: &str, kubeconfig: PathBuf) -> Backlog {
        let namespace = format!("bench-reconcile-{}-{phase}", std::process::id());
        let namespaces = Api::<Namespace>::all(self.client.clone());
        let new = Namespace {
            metadata: ObjectMeta {
                name: Some(namespace.clone()),
                ..ObjectMeta::default()
            },
            ..Namespace::default()
        };
        namespaces
            .create(&PostParams::default(), &new)
            .await
            .unwrap();
        let api = Api::<Memcached>::namespaced(self.client.clone(), &namespace);
        let objects = Arc::new(objects);
        let created = Arc::new(std::sync::Mutex::new(Vec::with_capacity(objects.len())));
        let (all, stored) = (Arc::clone(&objects), Arc::clone(&created));
        for_each_concurrently(objects.len(), 16, move |i| {
            let (api, all, stored) = (api.clone(), Arc::clone(&all), Arc::clone(&stored));
            async move {
                let object = api.create(&PostParams::default(), &all[i]).await.unwrap();
                stored.lock().unwrap().push(object);
            }
        })
        .await;
        std::fs::write(&kubeconfig, self.proxy.kubeconfig(&namespace)).unwrap();
        self.proxy.clear_requests();
        let objects = std::mem::take(&mut *created.lock().unwrap());
        Backlog {
            namespace,
            objects,
            kubeconfig,
            recorded: Recorded::Proxy(self.proxy.clone()),
        }
    }

    async fn remove(&self, backlog: Backlog) {
        let api = Api::<Memcached>::namespaced(self.client.clone(), &backlog.namespace);
        let objects = Arc::new(backlog.objects);
        let all = Arc::clone(&objects);
        // The manager is gone: nothing would remove its finalizer.
        for_each_concurrently(objects.len(), 16, move |i| {
            let (api, all) = (api.clone(), Arc::clone(&all));
            async move {
                let patch = json!({ "metadata": { "finalizers": null } });
                let name = all[i].name_any();
                let _ = api
                    .patch(&name, &PatchParams::default(), &Patch::Merge(&patch))
                    .await;
            }
        })
        .await;
        let namespaces = Api::<Namespace>::all(self.client.clone());
        let _ = namespaces
            .delete(&backlog.namespace, &DeleteParams::default())
            .await;
    }
}

/// Installs the Memcached CRD unless the cluster has it, and waits until it is served; returns
/// whether it installed it.
async fn install_crd(client: &Client) -> bool {
    let crds = Api::<CustomResourceDefinition>::all(client.clone());
    let name = Memcached::crd_name();
    let installed = crd_unless_deleting(&crds, &name).await.is_none();
    if installed {
        crds.create(&PostParams::default(), &Memcached::crd())
            .await
            .unwrap();
    }
    let established = |crd: &CustomResourceDefinition| {
        let conditions = crd
            .status
            .as_ref()
            .and_then(|status| status.conditions.as_ref());
        conditions.is_some_and(|c| {
            c.iter()
                .any(|c| c.type_ == "Established" && c.status == "True")
        })
    };
    let deadline = Instant::now() + Duration::from_secs(60);
    while !crds.get(&name).await.is_ok_and(|crd| established(&crd)) {
        assert!(
            Instant::now() < deadline,
            "the CRD {name} is not established after 60 s"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    installed
}

/// The CRD `name` if the cluster has it, once it is not being deleted: a CRD that an earlier
/// run deleted (this driver's, for the previous size) takes no new objects ("create not allowed
/// while custom resource definition is terminating") until its objects are gone and it is too.
async fn crd_unless_deleting(
    crds: &Api<CustomResourceDefinition>,
    name: &str,
) -> Option<CustomResourceDefinition> {
    let deadline = Instant::now() + Duration::from_secs(600);
    loop {
        match crds.get_opt(name).await.unwrap() {
            Some(crd) if crd.metadata.deletion_timestamp.is_some() => {
                assert!(
                    Instant::now() < deadline,
                    "the CRD {name} is still being deleted after 10 minutes"
                );
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
            crd => return crd,
        }
    }
}

/// Runs `task(i)` for every `i` below `n`, `concurrency` at a time.
async fn for_each_concurrently<F, Fut>(n: usize, concurrency: usize, task: F)
where
    F: Fn(usize) -> Fut + Clone + Send + 'static,
    Fut: Future<Output = ()> + Send,
{
    let next = Arc::new(AtomicUsize::new(0));
    let mut workers = tokio::task::JoinSet::new();
    for _ in 0..concurrency {
        let (next, task) = (Arc::clone(&next), task.clone());
        workers.spawn(async move {
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= n {
                    return;
                }
                task(i).await;
            }
        });
    }
    while let Some(done) = workers.join_next().await {
        done.unwrap();
    }
}

/// What one phase measured.
struct Measure {
    time: Duration,
    requests: Vec<RecordedRequest>,
    /// The manager's alone.
    reconciles: Option<usize>,
    peak_kib: Option<u64>,
    shutdown: Option<Duration>,
    warnings: Vec<String>,
    after_return: Option<Duration>,
}

/// The floor: per object, the Deployment applied and the status patched, `WORKERS` at a time.
async fn run_floor(backlog: &Backlog) -> Measure {
    let client = backlog.client().await;
    let objects = Arc::new(backlog.objects.clone());
    let namespace = backlog.namespace.clone();
    let start = Instant::now();
    for_each_concurrently(objects.len(), WORKERS, move |i| {
        let (client, objects, namespace) =
            (client.clone(), Arc::clone(&objects), namespace.clone());
        async move { floor_one(&client, &namespace, &objects[i]).await }
    })
    .await;
    let time = start.elapsed();
    assert_eq!(
        backlog.reported(),
        backlog.objects.len(),
        "the floor wrote every status"
    );
    Measure {
        time,
        requests: backlog.requests(),
        reconciles: None,
        peak_kib: None,
        shutdown: None,
        warnings: Vec::new(),
        after_return: None,
    }
}

/// What the controller's job needs for one new object: its Deployment, and its status.
async fn floor_one(client: &Client, namespace: &str, object: &Memcached) {
    let params = PatchParams::apply("bench-floor").force();
    let mut desired = deployment(object, DEFAULT_IMAGE);
    desired.metadata.namespace = Some(namespace.to_owned());
    desired.metadata.owner_references = owner_reference(object).map(|owner| vec![owner]);
    let name = object.name_any();
    let deployments =
        Api::<k8s_openapi::api::apps::v1::Deployment>::namespaced(client.clone(), namespace);
    deployments
        .patch(&name, &params, &Patch::Apply(&desired))
        .await
        .unwrap();
    let generation = object.meta().generation;
    let message = format!("Deployment {name} has 0 of 1 replicas available");
    let conditions = [
        condition(
            "Available",
            false,
            "ReplicasUnavailable",
            message,
            generation,
        ),
        condition(
            "Degraded",
            false,
            "Reconciled",
            format!("Deployment {name} matches the spec"),
            generation,
        ),
    ];
    let status = json!({
        "apiVersion": Memcached::api_version(&()),
        "kind": Memcached::kind(&()),
        "status": { "conditions": conditions },
    });
    let memcacheds = Api::<Memcached>::namespaced(client.clone(), namespace);
    memcacheds
        .patch_status(&name, &params, &Patch::Apply(&status))
        .await
        .unwrap();
}

/// How often convergence is checked: each look copies the phase's requests.
const POLL: Duration = Duration::from_millis(250);

/// The manager on the backlog: from its start until every status was written, then until no
/// request has come for a second; then stopped as Kubernetes stops a pod (SIGTERM).
async fn run_manager(backlog: &Backlog, options: &Options, work: &Path) -> Measure {
    let metrics = free_port();
    let log = work.join(format!("{}.log", backlog.namespace));
    let start = Instant::now();
    let mut child = Command::new(&options.manager)
        .args([
            "--health-probe-bind-address=0",
            &format!("--metrics-bind-address=127.0.0.1:{metrics}"),
            "--metrics-secure=false",
            &format!("--max-concurrent-reconciles={WORKERS}"),
            "--log-level=warn",
            "--log-format=json",
        ])
        .env("KUBECONFIG", &backlog.kubeconfig)
        .env("WATCH_NAMESPACE", &backlog.namespace)
        .stdout(std::fs::File::create(&log).unwrap())
        .spawn()
        .expect("the manager starts");
    let n = backlog.objects.len();
    let mut returned = None;
    loop {
        tokio::time::sleep(POLL).await;
        let reported = backlog.reported();
        if reported == n {
            break;
        }
        if let (Some(outage), None, Recorded::Fake(fake)) =
            (options.outage, returned, &backlog.recorded)
            && reported >= n / 4
        {
            println!("  outage: {outage:?} from {reported} of {n} converged");
            fake.unavailable_for(outage);
            returned = Some(Instant::now() + outage);
        }
        if let Some(status) = child.try_wait().unwrap() {
            let log = std::fs::read_to_string(&log).unwrap_or_default();
            panic!("the manager exited: {status}; its log:\n{log}");
        }
    }
    let time = start.elapsed();
    let after_return = returned.map(|at| Instant::now().saturating_duration_since(at));
    // Until the manager has been idle for a second: late writes count too.
    let mut count = backlog.requests().len();
    loop {
        tokio::time::sleep(Duration::from_secs(1)).await;
        let now = backlog.requests().len();
        if now == count {
            break;
        }
        count = now;
    }
    let requests = backlog.requests();
    let reconciles = reconcile_total(metrics);
    let peak_kib = peak_rss_kib(child.id());
    let shutdown = stop(&mut child);
    Measure {
        time,
        requests,
        reconciles: Some(reconciles),
        peak_kib: Some(peak_kib),
        shutdown: Some(shutdown),
        warnings: warnings(&log),
        after_return,
    }
}

/// Stops the manager with SIGTERM and returns how long it took to exit.
fn stop(child: &mut Child) -> Duration {
    let start = Instant::now();
    let sent = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success(), "kill -TERM {}", child.id());
    while child.try_wait().unwrap().is_none() {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "the manager did not exit within 60 s of SIGTERM"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    start.elapsed()
}

/// The messages of the warnings in the manager's JSON log, each once with how often it came.
fn warnings(log: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let mut messages: Vec<(String, usize)> = Vec::new();
    for line in text.lines() {
        let Ok(entry) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        if entry["level"] != "WARN" && entry["level"] != "ERROR" {
            continue;
        }
        let message = entry["fields"]["message"]
            .as_str()
            .unwrap_or(line)
            .to_owned();
        match messages.iter_mut().find(|(seen, _)| *seen == message) {
            Some((_, count)) => *count += 1,
            None => messages.push((message, 1)),
        }
    }
    messages
        .into_iter()
        .map(|(message, count)| format!("{count}× {message}"))
        .collect()
}

/// The verbs of the table, as HTTP names them (a list and a watch are GETs of a collection).
const VERBS: [(&str, &[Verb]); 7] = [
    ("GET", &[Verb::Get]),
    ("LIST", &[Verb::List]),
    ("WATCH", &[Verb::Watch]),
    ("POST", &[Verb::Create]),
    ("PUT", &[Verb::Update]),
    ("PATCH", &[Verb::Patch]),
    ("DELETE", &[Verb::Delete, Verb::DeleteCollection]),
];

/// Whether `reconcile` sent `request` itself: every request but the lists and watches of the
/// caches, Events (sent beside the workers), Leases and paths of no resource (`/version`).
fn on_workers_path(request: &RecordedRequest) -> bool {
    !matches!(request.verb, Verb::List | Verb::Watch)
        && !matches!(request.resource.as_str(), "" | "events" | "leases")
}

fn count(requests: &[&RecordedRequest], verbs: &[Verb]) -> usize {
    requests.iter().filter(|r| verbs.contains(&r.verb)).count()
}

/// The writes per object on the worker's path.
fn writes(measure: &Measure, n: usize) -> f64 {
    let writes = measure
        .requests
        .iter()
        .filter(|r| on_workers_path(r) && r.verb.is_write())
        .count();
    writes as f64 / n as f64
}

fn gets(measure: &Measure, n: usize) -> f64 {
    let gets = measure
        .requests
        .iter()
        .filter(|r| on_workers_path(r) && r.verb == Verb::Get);
    gets.count() as f64 / n as f64
}

fn print_phase(name: &str, n: usize, measure: &Measure, floor: Option<Duration>) {
    let ratio = floor.map_or_else(String::new, |floor| {
        format!(
            " ({:.2}× the floor)",
            measure.time.as_secs_f64() / floor.as_secs_f64()
        )
    });
    println!("  {name}: {:.2?}{ratio}", measure.time);
    let (path, rest): (Vec<&RecordedRequest>, Vec<&RecordedRequest>) =
        measure.requests.iter().partition(|r| on_workers_path(r));
    let header: Vec<String> = VERBS.iter().map(|(verb, _)| format!("{verb:>6}")).collect();
    println!("    requests per object  {}", header.join(""));
    for (label, requests) in [("worker's path", &path), ("the rest", &rest)] {
        let cells: Vec<String> = VERBS
            .iter()
            .map(|(_, verbs)| format!("{:>6.2}", count(requests, verbs) as f64 / n as f64))
            .collect();
        println!("      {label:<17}{}", cells.join(""));
    }
    let refused = path
        .iter()
        .filter(|r| r.verb.is_write() && !r.status.is_success());
    let events = rest
        .iter()
        .filter(|r| r.resource == "events" && r.verb.is_write());
    let watches: Vec<String> = VERBS[1..3]
        .iter()
        .map(|(verb, verbs)| format!("{} {verb}", count(&rest, verbs)))
        .collect();
    println!(
        "      (refused writes {}; Events {}; in all {})",
        refused.count(),
        events.count(),
        watches.join(", ")
    );
    if let Some(reconciles) = measure.reconciles {
        println!(
            "    reconciles per object: {:.2}",
            reconciles as f64 / n as f64
        );
    }
    if let Some(peak) = measure.peak_kib {
        println!("    peak RSS: {:.1} MiB", peak as f64 / 1024.0);
    }
    if let Some(shutdown) = measure.shutdown {
        println!("    shutdown (SIGTERM to exit): {shutdown:.2?}");
    }
    if let Some(after) = measure.after_return {
        println!("    converged after the API server's return: {after:.2?}");
    }
    for warning in &measure.warnings {
        println!("    logged: {warning}");
    }
}

/// The median and the range of `values`, formatted with `unit`.
fn spread(values: &mut [f64], unit: &str) -> String {
    values.sort_by(f64::total_cmp);
    let median = values[values.len() / 2];
    let (min, max) = (values[0], values[values.len() - 1]);
    if values.len() == 1 {
        format!("{median:.2}{unit}")
    } else {
        format!("{median:.2}{unit} (runs {min:.2}–{max:.2})")
    }
}

fn print_summary(n: usize, runs: &[(Measure, Measure)]) {
    let collect = |f: &dyn Fn(&Measure, &Measure) -> f64| -> Vec<f64> {
        runs.iter()
            .map(|(floor, manager)| f(floor, manager))
            .collect()
    };
    let ratio = collect(&|f, m| m.time.as_secs_f64() / f.time.as_secs_f64());
    let writes = collect(&|_, m| writes(m, n));
    let gets = collect(&|_, m| gets(m, n));
    let reconciles = collect(&|_, m| m.reconciles.unwrap_or(0) as f64 / n as f64);
    let peak = collect(&|_, m| m.peak_kib.unwrap_or(0) as f64 / 1024.0);
    let worst = |values: &[f64]| values.iter().copied().fold(f64::MIN, f64::max);
    let verdict = |met: bool| if met { "met" } else { "MISSED" };
    println!("{n} objects, {} run(s): median (and range)", runs.len());
    println!(
        "  floor:    {}",
        spread(&mut collect(&|f, _| f.time.as_secs_f64()), " s")
    );
    println!(
        "  manager:  {}",
        spread(&mut collect(&|_, m| m.time.as_secs_f64()), " s")
    );
    let goal = |what: &str, values: &mut Vec<f64>, unit: &str, bound: Option<f64>, text: &str| {
        let worst = worst(values);
        let line = spread(values, unit);
        match bound {
            Some(bound) => println!(
                "  {what:<34}{line}   goal {text}: {}",
                verdict(worst <= bound)
            ),
            None => println!("  {what:<34}{line}"),
        }
    };
    goal(
        "ratio to the floor:",
        &mut ratio.clone(),
        "×",
        Some(GOAL_RATIO),
        "≤ 1.5× in every run",
    );
    goal(
        "writes/object, worker's path:",
        &mut writes.clone(),
        "",
        Some(GOAL_WRITES),
        "≤ 3",
    );
    goal(
        "GETs/object, worker's path:",
        &mut gets.clone(),
        "",
        Some(0.0),
        "0",
    );
    goal(
        "reconciles/object:",
        &mut reconciles.clone(),
        "",
        Some(GOAL_RECONCILES),
        "≤ 2",
    );
    let rss_goal = match n {
        1000 => Some(15.0),
        10000 => Some(45.0),
        _ => None,
    };
    let text = rss_goal.map_or_else(String::new, |bound| format!("≤ {bound} MiB"));
    goal("peak RSS:", &mut peak.clone(), " MiB", rss_goal, &text);
}

/// A kubeconfig for the plain-HTTP API server at `server`, with no credentials.
fn kubeconfig_for(server: &str, namespace: &str) -> String {
    format!(
        "apiVersion: v1
kind: Config
clusters: [{{name: fake, cluster: {{server: \"{server}\"}}}}]
users: [{{name: fake, user: {{}}}}]
contexts: [{{name: fake, context: {{cluster: fake, user: fake, namespace: {namespace}}}}}]
current-context: fake
"
    )
}

/// A TCP port free right now, for the manager's metrics server.
fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

/// The sum of `controller_runtime_reconcile_total` (every result) on the manager's `/metrics`.
fn reconcile_total(port: u16) -> usize {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).expect("the metrics server answers");
    stream
        .write_all(b"GET /metrics HTTP/1.0\r\nHost: localhost\r\n\r\n")
        .unwrap();
    let mut text = String::new();
    stream.read_to_string(&mut text).unwrap();
    text.lines()
        .filter(|line| line.starts_with("controller_runtime_reconcile_total{"))
        .filter_map(|line| line.rsplit(' ').next()?.parse::<f64>().ok())
        .sum::<f64>() as usize
}

/// The peak resident set size of the process `pid`, in KiB.
fn peak_rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|value| value.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}
