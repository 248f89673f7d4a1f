//! The driver of `hack/bench-reconcile`, built as an example of the generated Memcached project
//! (the script copies it to `examples/bench.rs` there, so it uses the project's own `Memcached`
//! type and Cargo.lock).
//!
//! It serves the runtime's `FakeApiServer` over HTTP (with its stand-in Deployment controller,
//! which makes every Deployment's pods available at once), stores a cold backlog of N Memcached
//! objects, then starts the project's release `manager` binary against it in a process of its
//! own (2 workers) and waits until every Memcached is Available and no request has come for a
//! second. It prints the API writes per object (Events apart), the reconciliations per object
//! (the manager's `controller_runtime_reconcile_total`), the wall time to converge and the peak
//! RSS of the manager process alone (`VmHWM`): the fake's storage is in this process, not there.
//!
//! With `--outage SECONDS`, the API server goes away for that long once a quarter of the
//! backlog has converged, and the time from its return to full convergence is printed too.
//!
//! usage: bench N MANAGER [--outage SECONDS]

use std::io::{Read as _, Write as _};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use kube::CustomResourceExt as _;
use memcached_operator::api::v1alpha1::{Memcached, MemcachedSpec};
use operator_rs_testing::fake::{FakeApiServer, Verb};

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (Some(n), Some(manager)) = (args.get(1).and_then(|n| n.parse().ok()), args.get(2)) else {
        eprintln!("usage: bench N MANAGER [--outage SECONDS]");
        std::process::exit(2);
    };
    let n: usize = n;
    let outage = match args.get(3).map(String::as_str) {
        Some("--outage") => args
            .get(4)
            .and_then(|s| s.parse().ok())
            .map(Duration::from_secs),
        _ => None,
    };

    let fake = FakeApiServer::new();
    fake.register_crd(&Memcached::crd())
        .simulate_deployments(true);
    for i in 0..n {
        let mut object = Memcached::new(&format!("memcached-{i}"), MemcachedSpec::default());
        object.spec.size = 1;
        object.metadata.namespace = Some("default".to_owned());
        fake.put(&object);
    }
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let server = fake.clone();
    tokio::spawn(async move { server.serve(listener).await });

    let work = std::env::temp_dir().join(format!("bench-reconcile-{}", std::process::id()));
    std::fs::create_dir_all(&work).unwrap();
    let kubeconfig = work.join("kubeconfig");
    std::fs::write(&kubeconfig, kubeconfig_for(&format!("http://{address}"))).unwrap();
    let metrics = free_port();

    let start = Instant::now();
    let mut child = Command::new(manager)
        .args([
            "--health-probe-bind-address=0",
            &format!("--metrics-bind-address=127.0.0.1:{metrics}"),
            "--metrics-secure=false",
            "--max-concurrent-reconciles=2",
            "--log-level=warn",
        ])
        .env("KUBECONFIG", &kubeconfig)
        .stdout(Stdio::null())
        .spawn()
        .expect("the manager starts");

    let mut returned = None;
    loop {
        // Not too often: each look copies every object out of the fake, under its lock.
        tokio::time::sleep(Duration::from_millis(500)).await;
        let available = fake
            .list::<Memcached>()
            .iter()
            .filter(|o| available(o))
            .count();
        if available == n {
            break;
        }
        if let Some(outage) = outage
            && returned.is_none()
            && available >= n / 4
        {
            println!("outage:                  {outage:?} from {available} of {n} converged");
            fake.unavailable_for(outage);
            returned = Some(Instant::now() + outage);
        }
        if let Some(status) = child.try_wait().unwrap() {
            panic!("the manager exited: {status}");
        }
    }
    let converged = start.elapsed();
    let after_return = returned.map(|at| Instant::now().saturating_duration_since(at));
    // Until the manager has been idle for a second: late writes count too.
    let mut requests = fake.requests().len();
    loop {
        tokio::time::sleep(Duration::from_secs(1)).await;
        let now = fake.requests().len();
        if now == requests {
            break;
        }
        requests = now;
    }
    let reconciles = reconcile_total(metrics);
    let peak = peak_rss_kib(child.id());
    child.kill().unwrap();
    child.wait().unwrap();
    std::fs::remove_dir_all(&work).unwrap();

    let requests = fake.requests();
    let events = requests
        .iter()
        .filter(|r| r.verb.is_write() && r.resource == "events")
        .count();
    let writes = fake.writes() - events;
    // Writes the API server refused: nothing written (a `test` of a stale finalizer list …).
    let rejected = requests
        .iter()
        .filter(|r| r.verb.is_write() && r.resource != "events" && r.status.as_u16() >= 400)
        .count();
    let per = |count: usize| count as f64 / n as f64;
    println!("objects:                 {n}");
    println!(
        "API writes per object:   {:.2} ({:.2} done, {:.2} refused; and {:.2} Events)",
        per(writes),
        per(writes - rejected),
        per(rejected),
        per(events)
    );
    for verb in [Verb::Create, Verb::Patch, Verb::Update, Verb::Delete] {
        let count = requests
            .iter()
            .filter(|r| r.verb == verb && r.resource != "events")
            .count();
        println!("  {verb:?}: {:.2}", per(count));
    }
    println!("API GETs per object:     {:.2}", per(fake.count(Verb::Get)));
    println!("reconciles per object:   {:.2}", per(reconciles));
    println!("wall time to converge:   {converged:.2?}");
    if let Some(after) = after_return {
        println!("converged after return:  {after:.2?}");
    }
    println!("manager peak RSS:        {:.1} MiB", peak as f64 / 1024.0);
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
