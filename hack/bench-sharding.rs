//! The driver of `hack/bench-sharding`, built as an example of the generated Memcached project
//! (the script copies it to `examples/bench.rs` there, so it uses the project's own `Memcached`
//! type and Cargo.lock).
//!
//! It serves the runtime's `FakeApiServer` over HTTP (with its stand-in Deployment controller),
//! stores a cold backlog of N copies of the project's Memcached sample, then starts R processes of
//! the project's release `manager` against it (2 workers each; with R > 1, `--leader-elect
//! --sharding`) and waits until every Memcached is Available and no request has come for a second.
//! It prints the wall time to converge, each replica's share of the objects (its shard label) and
//! peak RSS (`VmHWM`: the fake's storage is in this process, not there), split into its peak
//! anonymous memory (heap and stacks, sampled every 10 ms: what the objects cost, and what sharding
//! divides) and the pages of the binary it maps (the same for every replica, whatever it holds),
//! the API writes per object apart from Events and Leases, the label writes of sharding, and the
//! reconciliations per object. It also prints the CPU time of each replica and of the fake API
//! server (this process): on a machine with fewer cores than processes, the wall time of R replicas
//! says little of what they would take on nodes of their own, and their CPU time says what sharding
//! costs or saves in work.
//!
//! With `--kill`, one replica that does not lead is killed with SIGKILL once a quarter of the
//! backlog has converged, and the time until its share is converged by the others is printed;
//! with `--kill-leader`, the elected replica instead (the worst case: a new one must be elected
//! before the share moves).
//!
//! usage: bench N R MANAGER [--kill | --kill-leader]

use std::collections::BTreeMap;
use std::io::{Read as _, Write as _};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use kube::{CustomResourceExt as _, ResourceExt as _};
use memcached_operator::api::v1alpha1::Memcached;
use operator_rs_runtime::sharding::SHARD_LABEL;
use operator_rs_testing::fake::{FakeApiServer, Verb};
use operator_rs_testing::from_yaml;

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
        eprintln!("usage: bench N R MANAGER [--kill | --kill-leader]");
        std::process::exit(2);
    };
    let kill = match args.get(4).map(String::as_str) {
        None => None,
        Some("--kill") => Some(Victim::Member),
        Some("--kill-leader") => Some(Victim::Leader),
        Some(other) => panic!("unknown option {other}"),
    };
    assert!(r >= 1, "R must be at least 1");
    assert!(
        kill.is_none() || r >= 2,
        "killing a replica needs at least 2"
    );

    let fake = FakeApiServer::new();
    fake.register_crd(&Memcached::crd())
        .simulate_deployments(true);
    // N copies of the project's sample, as a user applies it (`kubectl apply -k config/samples`):
    // its labels and spec (one pod each), under names of their own.
    let yaml = std::fs::read_to_string(SAMPLE).expect("the project's sample");
    let sample: Memcached = from_yaml(&yaml).expect("the sample is a Memcached");
    for i in 0..n {
        let mut object = sample.clone();
        object.metadata.name = Some(format!("memcached-{i}"));
        object.metadata.namespace = Some("default".to_owned());
        fake.put(&object);
    }
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let server = fake.clone();
    tokio::spawn(async move { server.serve(listener).await });

    let work = std::env::temp_dir().join(format!("bench-sharding-{}", std::process::id()));
    std::fs::create_dir_all(&work).unwrap();
    let kubeconfig = work.join("kubeconfig");
    std::fs::write(&kubeconfig, kubeconfig_for(&format!("http://{address}"))).unwrap();

    let start = Instant::now();
    let mut replicas: Vec<Replica> = (0..r)
        .map(|i| start_replica(manager, &kubeconfig, i, r > 1))
        .collect();
    let anon = sample_peak_anon(replicas.iter().map(|replica| replica.child.id()).collect());

    let mut killed: Option<(String, Instant)> = None;
    let mut after_kill = None;
    loop {
        // Not too often: each look copies every object out of the fake, under its lock.
        tokio::time::sleep(Duration::from_millis(500)).await;
        let objects = fake.list::<Memcached>();
        let converged = objects.iter().filter(|o| available(o)).count();
        let of_killed = killed.as_ref().map_or(0, |(member, _)| {
            let label = |o: &&Memcached| o.labels().get(SHARD_LABEL).cloned();
            let shard = |o: &&Memcached| label(o).is_some_and(|shard| shard.starts_with(member));
            objects.iter().filter(shard).count()
        });
        if converged == n && of_killed == 0 {
            if let Some((_, at)) = &killed {
                after_kill = Some(at.elapsed());
            }
            break;
        }
        if let (Some(target), None) = (kill, &killed)
            && converged >= n / 4
        {
            let shares = shares(&objects);
            let victim = replicas
                .iter_mut()
                .find(|replica| {
                    let leader = leads(replica.metrics);
                    leader == (target == Victim::Leader) && shares.contains_key(&member_of(replica))
                })
                .expect("a replica to kill that holds objects");
            victim.read_usage();
            victim.child.kill().unwrap();
            victim.child.wait().unwrap();
            victim.killed = true;
            println!(
                "killed:                  {} at {converged} of {n} converged",
                victim.name
            );
            killed = Some((member_of(victim), Instant::now()));
        }
        for replica in replicas.iter_mut().filter(|replica| !replica.killed) {
            if let Some(status) = replica.child.try_wait().unwrap() {
                panic!("{} exited: {status}", replica.name);
            }
        }
    }
    let converged = start.elapsed();
    // Until the managers have been idle for a second (Lease renewals apart): late writes count.
    let busy = |fake: &FakeApiServer| {
        let requests = fake.requests();
        requests.iter().filter(|r| r.resource != "leases").count()
    };
    let mut requests = busy(&fake);
    loop {
        tokio::time::sleep(Duration::from_secs(1)).await;
        let now = busy(&fake);
        if now == requests {
            break;
        }
        requests = now;
    }
    let shares = shares(&fake.list::<Memcached>());
    let mut reconciles = 0;
    for replica in replicas.iter_mut().filter(|replica| !replica.killed) {
        reconciles += reconcile_total(replica.metrics);
        replica.read_usage();
        replica.child.kill().unwrap();
        replica.child.wait().unwrap();
    }
    std::fs::remove_dir_all(&work).unwrap();

    let requests = fake.requests();
    let writes_of = |resource: &str| {
        let of = |r: &&operator_rs_testing::fake::RecordedRequest| {
            r.verb.is_write() && r.resource == resource
        };
        requests.iter().filter(of).count()
    };
    let (events, leases) = (writes_of("events"), writes_of("leases"));
    let writes = fake.writes() - events - leases;
    let per = |count: usize| count as f64 / n as f64;
    println!("objects:                 {n}");
    println!(
        "replicas:                {r}{}",
        if r > 1 { " (--sharding)" } else { "" }
    );
    println!("wall time to converge:   {converged:.2?}");
    if let Some(after) = after_kill {
        println!("converged after kill:    {after:.2?}");
    }
    for replica in &replicas {
        let share = shares.get(&member_of(replica)).copied().unwrap_or(0);
        let mib = |kib: u64| kib as f64 / 1024.0;
        let peak = mib(replica.peak.unwrap_or(0));
        let anon = mib(anon
            .lock()
            .unwrap()
            .get(&replica.child.id())
            .copied()
            .unwrap_or(0));
        let file = mib(replica.file);
        let state = if replica.killed { " (killed)" } else { "" };
        let share = if r > 1 {
            format!(", {share} objects at the end")
        } else {
            String::new()
        };
        println!(
            "  {}: peak RSS {peak:.1} MiB (anonymous {anon:.1} MiB at most, binary {file:.1} MiB), CPU {:.2?}{share}{state}",
            replica.name, replica.cpu
        );
    }
    let managers: Duration = replicas.iter().map(|replica| replica.cpu).sum();
    println!(
        "CPU time:                {managers:.2?} in the managers, {:.2?} in the fake API server and this driver",
        cpu_time("self")
    );
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
    println!("reconciles per object:   {:.2}", per(reconciles));
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
fn start_replica(
    manager: &str,
    kubeconfig: &std::path::Path,
    index: usize,
    sharded: bool,
) -> Replica {
    let metrics = free_port();
    let name = format!("manager-{index}");
    let mut args = vec![
        "--health-probe-bind-address=0".to_owned(),
        format!("--metrics-bind-address=127.0.0.1:{metrics}"),
        "--metrics-secure=false".to_owned(),
        "--max-concurrent-reconciles=2".to_owned(),
        "--log-level=warn".to_owned(),
    ];
    if sharded {
        args.extend([
            "--leader-elect".to_owned(),
            "--leader-election-namespace=default".to_owned(),
            "--sharding".to_owned(),
        ]);
    }
    let child = Command::new(manager)
        .args(&args)
        .env("KUBECONFIG", kubeconfig)
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

/// Whether the controller reports every pod of `object` available.
fn available(object: &Memcached) -> bool {
    object.status.as_ref().is_some_and(|status| {
        status
            .conditions
            .iter()
            .any(|c| c.type_ == "Available" && c.status == "True")
    })
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
    scrape(port)
        .lines()
        .filter(|line| line.starts_with("controller_runtime_reconcile_total{"))
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
