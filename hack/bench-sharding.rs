//! The driver of `hack/bench-sharding`, built as an example of the generated Memcached project
//! (the script copies it to `examples/bench.rs` there, so it uses the project's own `Memcached`
//! type and Cargo.lock).
//!
//! It serves operator-rs-testing's `FakeApiServer` over HTTP (with its stand-in Deployment
//! controller), stores a cold backlog of N copies of the project's Memcached sample, then starts R
//! processes of the project's release `manager` against it (2 workers each; with R > 1,
//! `--leader-elect --sharding`) and waits until every Memcached is Available and no request has
//! come for a second. It prints the wall time to converge, each replica's share of the objects (its
//! shard label) and peak RSS (`VmHWM`: the fake's storage is in this process, not there), split
//! into its peak anonymous memory (heap and stacks, sampled every 10 ms: what the objects cost, and
//! what sharding divides) and the pages of the binary it maps (the same for every replica, whatever
//! it holds), the API writes per object apart from Events and Leases, the label writes of sharding,
//! and the reconciliations per object. Before the replicas start, one manager watching an empty
//! namespace for 5 s gives the idle floor of anonymous memory; each replica's peak above it is
//! what its objects cost (issue 45 compares that of a sharded replica with one replica's). It also prints the CPU time of each replica and of the fake
//! API server (this process): on a machine with fewer cores than processes, the wall time of R
//! replicas says little of what they would take on nodes of their own, and their CPU time says what
//! sharding costs or saves in work.
//!
//! With `--kill`, one replica that does not lead is killed with SIGKILL once a quarter of the
//! backlog has converged, and the time until its share is converged by the others is printed;
//! with `--kill-leader`, the elected replica instead (the worst case: its Lease must expire before
//! a new one is elected). Right after the kill, a tenth as many new Memcacheds as the backlog are
//! created (labelled `bench.operator-rs.io/created=after-kill`, by which the bench looks at them
//! alone every 0.5 s, and at all objects every 5 s only), and the times until a live member has
//! reconciled each (its status written) and until they are all Available are printed too: those
//! the ring gives to the killed replica wait for its Lease to expire; on a cluster, the pods of those that have been reconciled are the Deployment
//! controller's to make (20 requests a second by default). With `--after-convergence` the kill
//! comes once the whole backlog is Available (issue 45's acceptance: the objects created after the
//! kill then wait for the hand-over alone, not behind the rest of the backlog), and the time the
//! backlog took is printed apart. With R = 1 there is nothing to take over: the kill options are ignored, so that
//! one command line runs the replica alone and the sharded ones. On a cluster, once the managers
//! are gone, as many copies of one of their Deployments as objects were created after the kill are
//! created at once, and the time until all are Available is printed: the floor of that figure, the
//! cluster's Deployment controller and the stand-in kubelet alone.
//!
//! With `--cluster`, the objects live in the cluster of `KUBECONFIG` instead: in a namespace of the
//! run's own (`bench-sharding-<pid>`), which the managers watch alone (`WATCH_NAMESPACE`) and hold
//! their Leases in, the CRD installed if it was not; the cluster's Deployment controller makes the
//! pods, and operator-rs-testing's stand-in for the kubelet (`operator_rs_testing::kubelet`) marks
//! them ready, so a control plane without nodes will do. The requests per object are then the
//! managers' own counts (`rest_client_requests_total`), Leases and Events included. At the end the
//! namespace goes (the Memcacheds' finalizers removed first: the managers are gone), and the CRD if
//! the run installed it.
//!
//! usage: bench N R MANAGER [--kill | --kill-leader] [--after-convergence] [--cluster]

use std::collections::BTreeMap;
use std::io::{Read as _, Write as _};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{Namespace, Pod};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{ListParams, Patch, PatchParams, PostParams};
use kube::runtime::wait::{await_condition, conditions};
use kube::{Api, Client, CustomResourceExt as _, ResourceExt as _};
use memcached_operator::api::v1alpha1::Memcached;
use operator_rs_runtime::sharding::SHARD_LABEL;
use operator_rs_testing::fake::{FakeApiServer, RecordedRequest, Verb};
use operator_rs_testing::from_yaml;
use operator_rs_testing::kubelet::Kubelet;

const USAGE: &str =
    "usage: bench N R MANAGER [--kill | --kill-leader] [--after-convergence] [--cluster]";

/// The Memcached of the project's samples (`hack/memcached-project` makes it; the driver runs in
/// the project's folder).
const SAMPLE: &str = "config/samples/cache_v1alpha1_memcached.yaml";

/// Which replica `--kill` and `--kill-leader` kill.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Victim {
    /// A member that does not lead.
    Member,
    /// The elected replica.
    Leader,
}

/// Which replica to kill, and when.
#[derive(Clone, Copy)]
struct Kill {
    victim: Victim,
    /// Once every object of the backlog is Available (`--after-convergence`), rather than a
    /// quarter of them.
    after_convergence: bool,
}

/// One manager process.
struct Replica {
    name: String,
    child: Child,
    metrics: u16,
    /// Its peak RSS in KiB, read before it is killed.
    peak: Option<u64>,
    /// Its file-backed resident pages (the binary's) in KiB, read with `peak`.
    file: u64,
    /// The CPU time it used (user and system), read with `peak`.
    cpu: Duration,
    killed: bool,
}

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    let parse = |i: usize| args.get(i).and_then(|value| value.parse::<usize>().ok());
    let (Some(n), Some(r), Some(manager)) = (parse(1), parse(2), args.get(3)) else {
        eprintln!("{USAGE}");
        std::process::exit(2);
    };
    let (mut victim, mut after_convergence, mut cluster) = (None, false, false);
    for option in &args[4..] {
        match option.as_str() {
            "--kill" => victim = Some(Victim::Member),
            "--kill-leader" => victim = Some(Victim::Leader),
            "--after-convergence" => after_convergence = true,
            "--cluster" => cluster = true,
            other => panic!("unknown option {other}\n{USAGE}"),
        }
    }
    assert!(r >= 1, "R must be at least 1");
    // One replica alone has no one to take over: it is the figure to compare with.
    let kill = victim.filter(|_| r > 1).map(|victim| Kill {
        victim,
        after_convergence,
    });
    // N copies of the project's sample, as a user applies it (`kubectl apply -k config/samples`):
    // its labels and spec (one pod each), under names of their own.
    let yaml = std::fs::read_to_string(SAMPLE).expect("the project's sample");
    let sample: Memcached = from_yaml(&yaml).expect("the sample is a Memcached");
    let backlog = (0..n).map(|i| {
        let mut object = sample.clone();
        object.metadata.name = Some(format!("memcached-{i}"));
        object
    });
    let backend = if cluster {
        Backend::cluster(backlog).await
    } else {
        Backend::fake(backlog).await
    };

    let floor = idle_floor(manager, &backend).await;
    let start = Instant::now();
    let mut replicas: Vec<Replica> = (0..r)
        .map(|i| start_replica(manager, &backend, i, r > 1))
        .collect();
    let anon = sample_peak_anon(replicas.iter().map(|replica| replica.child.id()).collect());
    let after_kill = converge(&backend, &mut replicas, n, kill, &sample, &anon).await;
    let converged = start.elapsed();
    let backlog_converged = after_kill.as_ref().and_then(|after| after.backlog);
    backend.wait_until_idle(&replicas).await;
    let shares = shares(&backend.objects(None).await);
    let mut reconciles = 0;
    let mut requests = RequestCounts::default();
    for replica in replicas.iter_mut().filter(|replica| !replica.killed) {
        reconciles += reconcile_total(replica.metrics);
        requests.add(&scrape(replica.metrics));
        replica.read_usage();
        replica.child.kill().unwrap();
        replica.child.wait().unwrap();
    }
    let created = after_kill.as_ref().map_or(0, |after| after.created);
    let deployments_alone = match (&backend, created) {
        (
            Backend::Cluster {
                client, namespace, ..
            },
            1..,
        ) => Some(deployments_alone(client, namespace, created).await),
        _ => None,
    };
    backend.clean_up().await;

    println!(
        "objects:                 {}",
        if created > 0 {
            format!("{} ({n} and {created} created after the kill)", n + created)
        } else {
            n.to_string()
        }
    );
    println!(
        "replicas:                {r}{}{}",
        if r > 1 { " (--sharding)" } else { "" },
        if cluster {
            ", against the cluster of KUBECONFIG"
        } else {
            ""
        },
    );
    println!("wall time to converge:   {converged:.2?}");
    if let Some(backlog) = backlog_converged {
        println!("the backlog alone:       {backlog:.2?} (before the kill)");
    }
    let n = n + created;
    if let Some(after) = &after_kill {
        println!("converged after kill:    {:.2?}", after.all);
        println!(
            "created after the kill:  {} objects, all reconciled by a live member {:.2}s after the kill, all Available {:.2}s after the kill",
            after.created,
            after.created_reconciled.as_secs_f64(),
            after.created_converged.as_secs_f64()
        );
    }
    match deployments_alone {
        Some(Ok(alone)) => println!(
            "Deployments alone:       {created} copies of a manager's Deployment created at once, all Available after {:.2}s (the cluster's Deployment controller and the stand-in kubelet: the floor of the figure above)",
            alone.as_secs_f64()
        ),
        Some(Err(available)) => println!(
            "Deployments alone:       {created} copies of a manager's Deployment created at once, only {available} Available after {DEPLOYMENTS_ALONE_DEADLINE:?}: is the cluster's controller manager running?"
        ),
        None => {}
    }
    let anon_before = after_kill.as_ref().map(|after| &after.anon_before);
    print_replicas(&replicas, &shares, &anon, anon_before, r, floor);
    let managers: Duration = replicas.iter().map(|replica| replica.cpu).sum();
    match &backend {
        Backend::Fake { fake, .. } => {
            println!(
                "CPU time:                {managers:.2?} in the managers, {:.2?} in the fake API server and this driver",
                cpu_time("self")
            );
            print_fake_writes(fake, n);
        }
        Backend::Cluster { .. } => {
            println!("CPU time:                {managers:.2?} in the managers");
            requests.print(n);
        }
    }
    println!(
        "reconciles per object:   {:.2}",
        reconciles as f64 / n as f64
    );
}

/// What a run with a kill measures after it.
struct AfterKill {
    /// Until every object was Available and none was left on the replica killed.
    all: Duration,
    /// How many objects were created right after the kill.
    created: usize,
    /// Until a live member had reconciled each of those (a status written): the hand-over's
    /// own part, before the cluster's Deployment controller and kubelet make the pods.
    created_reconciled: Duration,
    /// Until those were all Available.
    created_converged: Duration,
    /// With `--after-convergence`: how long the backlog took to converge, from the start.
    backlog: Option<Duration>,
    /// Each replica's peak anonymous memory until the kill (KiB, by pid): with
    /// `--after-convergence`, what it holds as one of R with its share of the backlog, before
    /// the survivors take the victim's share over.
    anon_before: BTreeMap<u32, u64>,
}

/// The name prefix of the objects created right after a kill.
const CREATED_AFTER_KILL: &str = "after-kill-";

/// The label of the objects created right after a kill, which the bench lists them by.
const CREATED_AFTER_KILL_LABEL: (&str, &str) = ("bench.operator-rs.io/created", "after-kill");

/// Runs the managers until every Memcached is Available (and, after a kill, none is left on
/// the replica killed); with `kill`, kills one replica once a quarter (or all) of the backlog has
/// converged and then creates `n / 10` copies of `sample`. Returns what it measured after the
/// kill, with the replicas' peaks in `anon` until then.
async fn converge(
    backend: &Backend,
    replicas: &mut [Replica],
    mut n: usize,
    kill: Option<Kill>,
    sample: &Memcached,
    anon: &std::sync::Mutex<BTreeMap<u32, u64>>,
) -> Option<AfterKill> {
    let start = Instant::now();
    let mut backlog = None;
    let mut anon_before = BTreeMap::new();
    let mut killed: Option<(String, Instant)> = None;
    let created = (n / 10).max(1);
    let (mut created_reconciled, mut created_converged) = (None, None);
    let mut look = 0_u64;
    loop {
        look += 1;
        // Not too often: each look copies every object out of the fake (under its lock), or
        // lists them from the API server.
        tokio::time::sleep(Duration::from_millis(500)).await;
        if let Some((_, at)) = &killed
            && created_converged.is_none()
        {
            // The objects created after the kill alone, selected by their label, and all of
            // them only every 5 s: on kube-apiserver a list of all 3,300 took 0.5–1 s of its CPU
            // each time, slowing the take-over that the bench measures.
            let new = backend.objects(Some(CREATED_AFTER_KILL_LABEL)).await;
            let reconciled_new = new.iter().filter(|o| reconciled(o)).count();
            if reconciled_new == created && created_reconciled.is_none() {
                created_reconciled = Some(at.elapsed());
            }
            if new.iter().filter(|o| available(o)).count() == created {
                created_converged = Some(at.elapsed());
            } else if !look.is_multiple_of(10) {
                continue;
            }
        }
        let objects = backend.objects(None).await;
        let converged = objects.iter().filter(|o| available(o)).count();
        let of_killed = killed.as_ref().map_or(0, |(member, _)| {
            let label = |o: &&Memcached| o.labels().get(SHARD_LABEL).cloned();
            let shard = |o: &&Memcached| label(o).is_some_and(|shard| shard.starts_with(member));
            objects.iter().filter(shard).count()
        });
        let done = match &killed {
            Some(_) => created_converged.is_some(),
            None => kill.is_none(),
        };
        if converged == n && of_killed == 0 && done {
            return killed.map(|(_, at)| AfterKill {
                all: at.elapsed(),
                created,
                created_reconciled: created_reconciled.unwrap_or_default(),
                created_converged: created_converged.unwrap_or_default(),
                backlog,
                anon_before,
            });
        }
        let kill_at = |kill: &Kill| if kill.after_convergence { n } else { n / 4 };
        if let (Some(kill), None) = (kill, &killed)
            && converged >= kill_at(&kill)
        {
            let target = kill.victim;
            backlog = kill.after_convergence.then(|| start.elapsed());
            let shares = shares(&objects);
            let victim = replicas
                .iter_mut()
                .find(|replica| {
                    let leader = leads(replica.metrics);
                    leader == (target == Victim::Leader) && shares.contains_key(&member_of(replica))
                })
                .expect("a replica to kill that holds objects");
            anon_before = anon.lock().unwrap().clone();
            victim.read_usage();
            victim.child.kill().unwrap();
            victim.child.wait().unwrap();
            victim.killed = true;
            println!(
                "killed:                  {} at {converged} of {n} converged",
                victim.name
            );
            killed = Some((member_of(victim), Instant::now()));
            if std::env::var_os("BENCH_MANAGER_LOG_LEVEL").is_some() {
                // Beside the managers' logs, in their clock (UTC).
                let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
                eprintln!(
                    "bench: killed {} at UNIX time {:.3}",
                    victim.name,
                    now.unwrap().as_secs_f64()
                );
            }
            let new = (0..created).map(|i| {
                let mut object = sample.clone();
                object.metadata.name = Some(format!("{CREATED_AFTER_KILL}{i}"));
                let (key, value) = CREATED_AFTER_KILL_LABEL;
                let labels = object.metadata.labels.get_or_insert_default();
                labels.insert(key.to_owned(), value.to_owned());
                object
            });
            backend.create(new).await;
            n += created;
        }
        for replica in replicas.iter_mut().filter(|replica| !replica.killed) {
            if let Some(status) = replica.child.try_wait().unwrap() {
                panic!("{} exited: {status}", replica.name);
            }
        }
    }
}

/// Each replica's peak memory, CPU time and share of the objects.
fn print_replicas(
    replicas: &[Replica],
    shares: &BTreeMap<String, usize>,
    anon: &std::sync::Mutex<BTreeMap<u32, u64>>,
    anon_before: Option<&BTreeMap<u32, u64>>,
    r: usize,
    floor: u64,
) {
    let mib = |kib: u64| kib as f64 / 1024.0;
    println!(
        "idle floor:              anonymous {:.1} MiB (one manager watching an empty namespace)",
        mib(floor)
    );
    for replica in replicas {
        let share = shares.get(&member_of(replica)).copied().unwrap_or(0);
        let peak = mib(replica.peak.unwrap_or(0));
        let anon_kib = anon
            .lock()
            .unwrap()
            .get(&replica.child.id())
            .copied()
            .unwrap_or(0);
        let above = mib(anon_kib.saturating_sub(floor));
        let anon = mib(anon_kib);
        let file = mib(replica.file);
        let state = if replica.killed { " (killed)" } else { "" };
        let share = if r > 1 {
            format!(", {share} objects at the end")
        } else {
            String::new()
        };
        println!(
            "  {}: peak RSS {peak:.1} MiB (anonymous {anon:.1} MiB at most, {above:.1} above the idle floor; binary {file:.1} MiB), CPU {:.2?}{share}{state}",
            replica.name, replica.cpu
        );
        let before = anon_before.and_then(|peaks| peaks.get(&replica.child.id()));
        if let (Some(&before), false) = (before, replica.killed) {
            println!(
                "    {} before the kill: anonymous {:.1} MiB at most, {:.1} above the idle floor",
                replica.name,
                mib(before),
                mib(before.saturating_sub(floor))
            );
        }
    }
}

/// The writes the fake API server recorded, per object.
fn print_fake_writes(fake: &FakeApiServer, n: usize) {
    let requests = fake.requests();
    let writes_of = |resource: &str| {
        let of = |r: &&RecordedRequest| r.verb.is_write() && r.resource == resource;
        requests.iter().filter(of).count()
    };
    let (events, leases) = (writes_of("events"), writes_of("leases"));
    let writes = fake.writes() - events - leases;
    let per = |count: usize| count as f64 / n as f64;
    println!(
        "API writes per object:   {:.2} (and {:.2} Events, {leases} Lease writes)",
        per(writes),
        per(events)
    );
    let patches = requests
        .iter()
        .filter(|r| r.verb == Verb::Patch && r.resource == "memcacheds" && r.subresource.is_none())
        .count();
    println!(
        "  patches of Memcacheds: {:.2} (the finalizer, and the labels of sharding)",
        per(patches)
    );
}

/// Where the Memcacheds live: operator-rs-testing's fake API server in this process, served over
/// HTTP, or the cluster of `KUBECONFIG`, in a namespace of the run's own.
enum Backend {
    Fake {
        fake: FakeApiServer,
        /// The kubeconfig of the fake for the managers, in `work`.
        kubeconfig: PathBuf,
        work: PathBuf,
    },
    Cluster {
        client: Client,
        namespace: String,
        /// Whether the run installed the CRD (then it deletes it at the end).
        installed_crd: bool,
        /// The stand-in for the kubelet, which makes the Deployments' pods ready.
        kubelet: tokio::task::JoinHandle<()>,
    },
}

impl Backend {
    /// The fake API server, with its stand-in Deployment controller, holding `backlog`.
    async fn fake(backlog: impl Iterator<Item = Memcached>) -> Backend {
        let fake = FakeApiServer::new();
        fake.register_crd(&Memcached::crd())
            .simulate_deployments(true);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        let server = fake.clone();
        tokio::spawn(async move { server.serve(listener).await });
        let work = std::env::temp_dir().join(format!("bench-sharding-{}", std::process::id()));
        std::fs::create_dir_all(&work).unwrap();
        let kubeconfig = work.join("kubeconfig");
        std::fs::write(&kubeconfig, kubeconfig_for(&format!("http://{address}"))).unwrap();
        let backend = Backend::Fake {
            fake,
            kubeconfig,
            work,
        };
        backend.create(backlog).await;
        backend
    }

    /// A namespace of the cluster of `KUBECONFIG` holding `backlog`, the CRD installed if it was
    /// not, and a stand-in for the kubelet for the namespace (there may be no nodes).
    async fn cluster(backlog: impl Iterator<Item = Memcached>) -> Backend {
        let client = Client::try_default()
            .await
            .expect("a cluster in KUBECONFIG");
        let namespace = format!("bench-sharding-{}", std::process::id());
        // The CRD of a user's `make install` if there is one (maybe someone else's: left as it is).
        let crds = Api::<CustomResourceDefinition>::all(client.clone());
        let crd = Memcached::crd();
        let name = crd.name_any();
        let installed_crd = crd_unless_deleting(&crds, &name).await.is_none();
        if installed_crd {
            crds.create(&PostParams::default(), &crd).await.unwrap();
        }
        let established = conditions::is_crd_established();
        let wait = await_condition(crds, &name, established);
        tokio::time::timeout(Duration::from_secs(30), wait)
            .await
            .expect("the CRD is established in 30 s")
            .unwrap();
        let namespaces = Api::<Namespace>::all(client.clone());
        let object = serde_json::json!({ "metadata": { "name": namespace } });
        let object = serde_json::from_value(object).unwrap();
        namespaces
            .create(&PostParams::default(), &object)
            .await
            .unwrap();
        let pods = Api::<Pod>::namespaced(client.clone(), &namespace);
        let kubelet = tokio::spawn(Kubelet::new(pods).run());
        let backend = Backend::Cluster {
            client,
            namespace,
            installed_crd,
            kubelet,
        };
        backend.create(backlog).await;
        backend
    }

    /// Stores `objects`.
    async fn create(&self, objects: impl Iterator<Item = Memcached>) {
        match self {
            Backend::Fake { fake, .. } => {
                for mut object in objects {
                    object.metadata.namespace = Some("default".to_owned());
                    fake.put(&object);
                }
            }
            Backend::Cluster {
                client, namespace, ..
            } => {
                let api = Api::<Memcached>::namespaced(client.clone(), namespace);
                for object in objects {
                    // The CRD's new version may take a moment to be served everywhere.
                    let mut tries = 0;
                    while let Err(error) = api.create(&PostParams::default(), &object).await {
                        tries += 1;
                        assert!(tries < 20, "creating {}: {error}", object.name_any());
                        tokio::time::sleep(Duration::from_millis(250)).await;
                    }
                }
            }
        }
    }

    /// The Memcacheds as they are now: all, or those with the label `(key, value)`.
    async fn objects(&self, label: Option<(&str, &str)>) -> Vec<Memcached> {
        match self {
            Backend::Fake { fake, .. } => {
                let mut objects = fake.list::<Memcached>();
                if let Some((key, value)) = label {
                    objects.retain(|o| o.labels().get(key).is_some_and(|v| v == value));
                }
                objects
            }
            Backend::Cluster {
                client, namespace, ..
            } => {
                let api = Api::<Memcached>::namespaced(client.clone(), namespace);
                // From the API server's watch cache (`resourceVersion=0`), not etcd: a quorum
                // list of 3,300 Memcacheds took 2.3 s of etcd's time, every 2.8 s of the run,
                // slowing the managers' requests the bench measures.
                let mut params = ListParams::default().match_any();
                if let Some((key, value)) = label {
                    params = params.labels(&format!("{key}={value}"));
                }
                match api.list(&params).await {
                    Ok(list) => list.items,
                    Err(error) => {
                        eprintln!("listing the Memcacheds: {error}");
                        Vec::new()
                    }
                }
            }
        }
    }

    /// Waits until the managers have been idle for a second, so that late writes count: no
    /// request to the fake but for Leases; against a cluster, whose requests the managers count
    /// without telling Leases apart, no more than two a replica (a renewal's read and write).
    async fn wait_until_idle(&self, replicas: &[Replica]) {
        let live = || replicas.iter().filter(|replica| !replica.killed);
        let (busy, allowance) = match self {
            Backend::Fake { fake, .. } => {
                let busy = || {
                    let requests = fake.requests();
                    requests.iter().filter(|r| r.resource != "leases").count()
                };
                (Box::new(busy) as Box<dyn Fn() -> usize>, 0)
            }
            Backend::Cluster { .. } => {
                let busy = || live().map(|replica| requests_total(replica.metrics)).sum();
                (Box::new(busy) as Box<dyn Fn() -> usize>, 2 * live().count())
            }
        };
        let mut requests = busy();
        loop {
            tokio::time::sleep(Duration::from_secs(1)).await;
            let now = busy();
            if now <= requests + allowance {
                break;
            }
            requests = now;
        }
    }

    /// Removes what the run made: the fake's files, or the cluster's namespace (the managers
    /// are gone: the Memcacheds' finalizers are removed first) and the CRD if the run installed it.
    async fn clean_up(&self) {
        match self {
            Backend::Fake { work, .. } => std::fs::remove_dir_all(work).unwrap(),
            Backend::Cluster {
                client,
                namespace,
                installed_crd,
                kubelet,
            } => {
                kubelet.abort();
                let api = Api::<Memcached>::namespaced(client.clone(), namespace);
                let unfinalized =
                    Patch::Merge(serde_json::json!({ "metadata": { "finalizers": null } }));
                for object in api.list(&ListParams::default()).await.unwrap() {
                    let name = object.name_any();
                    api.patch(&name, &PatchParams::default(), &unfinalized)
                        .await
                        .unwrap();
                }
                let namespaces = Api::<Namespace>::all(client.clone());
                namespaces
                    .delete(namespace, &Default::default())
                    .await
                    .unwrap();
                if *installed_crd {
                    let crds = Api::<CustomResourceDefinition>::all(client.clone());
                    let name = Memcached::crd().name_any();
                    crds.delete(&name, &Default::default()).await.unwrap();
                }
            }
        }
    }
}

/// The CRD `name` if the cluster has it, once it is not being deleted: a CRD that an earlier run
/// deleted takes no new objects ("create not allowed while custom resource definition is
/// terminating") until its objects are gone and it is too.
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

/// The requests the managers sent, from their `rest_client_requests_total`, by method.
#[derive(Default)]
struct RequestCounts {
    by_method: BTreeMap<String, f64>,
}

impl RequestCounts {
    /// Adds the counts of one manager's `/metrics`.
    fn add(&mut self, metrics: &str) {
        for line in metrics.lines() {
            let Some(labels) = line.strip_prefix("rest_client_requests_total{") else {
                continue;
            };
            let method = labels
                .split("method=\"")
                .nth(1)
                .and_then(|rest| rest.split('"').next())
                .unwrap_or("?");
            let value = line.rsplit(' ').next().and_then(|v| v.parse::<f64>().ok());
            *self.by_method.entry(method.to_owned()).or_default() += value.unwrap_or(0.0);
        }
    }

    fn print(&self, n: usize) {
        let total: f64 = self.by_method.values().sum();
        let writes: f64 = self
            .by_method
            .iter()
            .filter(|(method, _)| !matches!(method.as_str(), "GET" | "LIST" | "WATCH"))
            .map(|(_, count)| count)
            .sum();
        println!(
            "API requests per object: {:.2}, of which writes {:.2} (the managers' rest_client_requests_total: Events and Leases included; {})",
            total / n as f64,
            writes / n as f64,
            self.by_method
                .iter()
                .map(|(method, count)| format!("{method} {count}"))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
}

impl Replica {
    /// Reads its peak RSS, the binary's resident pages and its CPU time, before it is killed.
    fn read_usage(&mut self) {
        let pid = self.child.id();
        (self.peak, self.file) = (Some(peak_rss_kib(pid)), file_kib(pid));
        self.cpu = cpu_time(&pid.to_string());
    }
}

/// Starts replica `index`; with `sharded`, as a member of the ring.
fn start_replica(manager: &str, backend: &Backend, index: usize, sharded: bool) -> Replica {
    start_manager(manager, backend, format!("manager-{index}"), sharded, None)
}

/// Starts the manager `name`, watching `watch` (`None`: the run's namespace on the cluster,
/// every namespace on the fake).
fn start_manager(
    manager: &str,
    backend: &Backend,
    name: String,
    sharded: bool,
    watch: Option<&str>,
) -> Replica {
    let metrics = free_port();
    let mut args = vec![
        "--health-probe-bind-address=0".to_owned(),
        format!("--metrics-bind-address=127.0.0.1:{metrics}"),
        "--metrics-secure=false".to_owned(),
        "--max-concurrent-reconciles=2".to_owned(),
        format!("--log-level={}", manager_log_level()),
    ];
    let namespace = match backend {
        Backend::Fake { .. } => "default",
        Backend::Cluster { namespace, .. } => namespace,
    };
    if sharded {
        args.extend([
            "--leader-elect".to_owned(),
            format!("--leader-election-namespace={namespace}"),
            "--sharding".to_owned(),
        ]);
    }
    let mut command = Command::new(manager);
    match backend {
        Backend::Fake { kubeconfig, .. } => command.env("KUBECONFIG", kubeconfig),
        // The cluster's KUBECONFIG, inherited; only the run's namespace, not the whole cluster.
        Backend::Cluster { namespace, .. } => command.env("WATCH_NAMESPACE", namespace),
    };
    if let Some(watch) = watch {
        command.env("WATCH_NAMESPACE", watch);
    }
    let child = command
        .args(&args)
        // The member's name starts with it: the shares are told apart by it.
        .env("HOSTNAME", &name)
        .stdout(Stdio::null())
        .spawn()
        .expect("the manager starts");
    Replica {
        name,
        child,
        metrics,
        peak: None,
        file: 0,
        cpu: Duration::ZERO,
        killed: false,
    }
}

/// The managers' `--log-level`: `warn`, or `BENCH_MANAGER_LOG_LEVEL` (their logs go to this
/// process's stderr), e.g. `warn,operator_rs_runtime::sharding=debug,operator_rs_runtime::manager::leader=info`
/// for the timeline of a hand-over: every label write of the ring, the ring's changes, the
/// elections.
fn manager_log_level() -> String {
    std::env::var("BENCH_MANAGER_LOG_LEVEL").unwrap_or_else(|_| "warn".to_owned())
}

/// The member name of `replica`: its HOSTNAME, `-`, and its identity's random suffix; found by
/// the prefix among the shard labels, since the suffix is the process's own.
fn member_of(replica: &Replica) -> String {
    format!("{}-", replica.name)
}

/// The objects by shard label, keyed by the label's prefix up to the random suffix
/// (`manager-0-`), as [`member_of`] names replicas.
fn shares(objects: &[Memcached]) -> BTreeMap<String, usize> {
    let mut shares = BTreeMap::new();
    for object in objects {
        if let Some(member) = object.labels().get(SHARD_LABEL) {
            let prefix = member
                .rsplit_once('-')
                .map_or(member.as_str(), |(prefix, _)| prefix);
            *shares.entry(format!("{prefix}-")).or_default() += 1;
        }
    }
    shares
}

/// Whether a manager has reconciled `object`: it writes a status (the Available condition,
/// False until the pods are ready) once it has applied the Deployment.
fn reconciled(object: &Memcached) -> bool {
    object
        .status
        .as_ref()
        .is_some_and(|status| !status.conditions.is_empty())
}

/// Whether the controller reports every pod of `object` available.
fn available(object: &Memcached) -> bool {
    object.status.as_ref().is_some_and(|status| {
        status
            .conditions
            .iter()
            .any(|c| c.type_ == "Available" && c.status == "True")
    })
}

/// How long [`deployments_alone`] waits for its Deployments: far beyond the minutes it takes a
/// controller manager at its default 20 requests a second for thousands of them.
const DEPLOYMENTS_ALONE_DEADLINE: Duration = Duration::from_secs(600);

/// On the cluster, with the managers gone: creates `count` copies of one of the Deployments
/// the managers made in `namespace` (their own names, labels and selectors; no owner) at once and
/// returns the time until all are Available, or how many were when the deadline passed.
async fn deployments_alone(
    client: &Client,
    namespace: &str,
    count: usize,
) -> Result<Duration, usize> {
    let api = Api::<Deployment>::namespaced(client.clone(), namespace);
    let made = api.list(&ListParams::default().limit(1)).await.unwrap();
    let template = made
        .items
        .into_iter()
        .next()
        .expect("a manager's Deployment");
    let start = Instant::now();
    for i in 0..count {
        let name = format!("alone-{i}");
        let labels = BTreeMap::from([("bench-sharding-alone".to_owned(), name.clone())]);
        let mut spec = template.spec.clone().unwrap();
        spec.selector.match_labels = Some(labels.clone());
        spec.template.metadata.get_or_insert_default().labels = Some(labels);
        let mut copy = Deployment::default();
        copy.metadata.name = Some(name);
        copy.spec = Some(spec);
        api.create(&PostParams::default(), &copy).await.unwrap();
    }
    loop {
        let list = api.list(&ListParams::default()).await.unwrap();
        let copies = list
            .items
            .iter()
            .filter(|d| d.name_any().starts_with("alone-"));
        let available = copies.filter(|d| deployment_available(d)).count();
        if available == count {
            return Ok(start.elapsed());
        }
        if start.elapsed() > DEPLOYMENTS_ALONE_DEADLINE {
            return Err(available);
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

/// Whether all the replicas `deployment` asks for are available.
fn deployment_available(deployment: &Deployment) -> bool {
    let wanted = deployment.spec.as_ref().and_then(|spec| spec.replicas);
    let available = deployment
        .status
        .as_ref()
        .and_then(|s| s.available_replicas);
    available.unwrap_or(0) >= wanted.unwrap_or(1)
}

/// A kubeconfig for the plain-HTTP API server at `server`, with no credentials.
fn kubeconfig_for(server: &str) -> String {
    format!(
        "apiVersion: v1
kind: Config
clusters: [{{name: fake, cluster: {{server: \"{server}\"}}}}]
users: [{{name: fake, user: {{}}}}]
contexts: [{{name: fake, context: {{cluster: fake, user: fake, namespace: default}}}}]
current-context: fake
"
    )
}

/// A TCP port free right now, for a manager's metrics server.
fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

/// The manager's `/metrics`.
fn scrape(port: u16) -> String {
    let Ok(mut stream) = TcpStream::connect(("127.0.0.1", port)) else {
        return String::new();
    };
    stream
        .write_all(b"GET /metrics HTTP/1.0\r\nHost: localhost\r\n\r\n")
        .unwrap();
    let mut text = String::new();
    stream.read_to_string(&mut text).unwrap_or_default();
    text
}

/// Whether the manager leads (`leader_election_master_status` 1).
fn leads(port: u16) -> bool {
    scrape(port)
        .lines()
        .any(|line| line.starts_with("leader_election_master_status{") && line.ends_with(" 1"))
}

/// The sum of `controller_runtime_reconcile_total` (every result) on the manager's `/metrics`.
fn reconcile_total(port: u16) -> usize {
    sum_of(port, "controller_runtime_reconcile_total{")
}

/// The sum of `rest_client_requests_total` (every code and method): the requests the manager sent.
fn requests_total(port: u16) -> usize {
    sum_of(port, "rest_client_requests_total{")
}

/// The sum of the samples of the manager's `/metrics` whose line starts with `prefix`.
fn sum_of(port: u16, prefix: &str) -> usize {
    scrape(port)
        .lines()
        .filter(|line| line.starts_with(prefix))
        .filter_map(|line| line.rsplit(' ').next()?.parse::<f64>().ok())
        .sum::<f64>() as usize
}

/// A field of `/proc/<pid>/status` in KiB (`VmHWM`, `RssAnon`, `RssFile`), 0 once it has exited.
fn status_kib(pid: u32, field: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|value| value.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

/// The peak resident set size of the process `pid`, in KiB.
fn peak_rss_kib(pid: u32) -> u64 {
    status_kib(pid, "VmHWM")
}

/// The file-backed resident pages of the process `pid` (its binary's and libraries'), in KiB.
fn file_kib(pid: u32) -> u64 {
    status_kib(pid, "RssFile")
}

/// The CPU time (user and system) that the process `pid` (or `self`) has used, from
/// `/proc/<pid>/stat` in clock ticks: USER_HZ, 100 a second on Linux whatever the kernel's own
/// tick.
fn cpu_time(pid: &str) -> Duration {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // The fields after the command, which is in parentheses and may hold spaces: state is the
    // 3rd field of the line, utime the 14th and stime the 15th.
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .map_or(Vec::new(), |(_, rest)| rest.split_whitespace().collect());
    let ticks = |index: usize| {
        fields
            .get(index)
            .and_then(|f| f.parse::<u64>().ok())
            .unwrap_or(0)
    };
    Duration::from_millis((ticks(11) + ticks(12)) * 10)
}

/// The peak anonymous memory (KiB) of a manager with nothing to do: one replica watching a
/// namespace without objects (`kube-public`) for 5 s, its caches listed and its controller
/// idle. What a replica's objects cost is its own peak above this floor; the acceptance of
/// issue 45 compares those.
async fn idle_floor(manager: &str, backend: &Backend) -> u64 {
    let mut idle = start_manager(
        manager,
        backend,
        "idle".to_owned(),
        false,
        Some("kube-public"),
    );
    let pid = idle.child.id();
    let anon = sample_peak_anon(vec![pid]);
    tokio::time::sleep(Duration::from_secs(5)).await;
    if let Some(status) = idle.child.try_wait().unwrap() {
        panic!("the idle manager exited: {status}");
    }
    idle.child.kill().unwrap();
    idle.child.wait().unwrap();
    anon.lock().unwrap().get(&pid).copied().unwrap_or(0)
}

/// The kernel keeps no peak of anonymous memory alone: a thread samples `RssAnon` of `pids` every
/// 10 ms and keeps each one's largest, in KiB.
fn sample_peak_anon(pids: Vec<u32>) -> std::sync::Arc<std::sync::Mutex<BTreeMap<u32, u64>>> {
    let peaks = std::sync::Arc::new(std::sync::Mutex::new(BTreeMap::new()));
    let sampled = std::sync::Arc::clone(&peaks);
    std::thread::spawn(move || {
        loop {
            for &pid in &pids {
                let anon = status_kib(pid, "RssAnon");
                let mut peaks = sampled.lock().unwrap();
                let peak = peaks.entry(pid).or_insert(0);
                *peak = (*peak).max(anon);
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    });
    peaks
}
