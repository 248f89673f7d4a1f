//! The driver of hack/test-cluster's apiserver-restart check, built as an example of the tutorial's
//! Memcached project (with operator-rs-testing's `envtest` feature), so it uses the project's own
//! `Memcached` type.
//!
//! The shared control plane cannot be restarted (others use it): this starts a private one with
//! operator-rs-testing's envtest (etcd and kube-apiserver from `KUBEBUILDER_ASSETS`, the project's
//! CRDs of `config/crd/bases` installed), stores a backlog of N Memcacheds, starts the project's
//! manager against it, and once a third of their Deployments exist restarts the API server
//! (`Envtest::restart_api_server`: killed, down for 3 s, started again on the same port and etcd).
//! It prints when and for how long the API server was away, and how long the manager took to
//! converge after: every Memcached with its Deployment and an Available condition reported (False:
//! envtest has no controller manager, so no pod ever runs). It fails if the manager exits or does
//! not converge within 3 minutes.
//!
//! usage: apiserver-restart N MANAGER

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use k8s_openapi::api::apps::v1::Deployment;
use kube::api::{ListParams, PostParams};
use kube::{Api, Client};
use memcached_operator::api::v1alpha1::{Memcached, MemcachedSpec};
use operator_rs_testing::envtest::{CRD_DIR, Envtest, Options};

/// How long the API server stays down.
const DOWN_FOR: Duration = Duration::from_secs(3);
/// How long the manager may take to converge after the restart.
const CONVERGE_WITHIN: Duration = Duration::from_secs(180);

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let (Some(n), Some(manager)) = (
        args.get(1).and_then(|n| n.parse::<usize>().ok()),
        args.get(2),
    ) else {
        anyhow::bail!("usage: apiserver-restart N MANAGER");
    };
    let started = Instant::now();
    let envtest = Envtest::start(Options {
        crd_paths: vec![CRD_DIR.into()],
        ..Options::default()
    })?;
    println!(
        "private control plane:   kube-apiserver on :{}, ready in {:.1?}",
        envtest.port(),
        started.elapsed()
    );
    let namespace = envtest.create_namespace("backlog").await;
    let memcacheds = Api::<Memcached>::namespaced(envtest.client(), &namespace);
    for i in 0..n {
        let object = Memcached::new(&format!("backlog-{i}"), MemcachedSpec::default());
        memcacheds.create(&PostParams::default(), &object).await?;
    }

    let started = Instant::now();
    let mut child = Command::new(manager)
        .args(["--health-probe-bind-address=0", "--metrics-bind-address=0"])
        .env("KUBECONFIG", envtest.kubeconfig())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()?;
    let result = async {
        while progress(&envtest.client(), &namespace).await.0 < n / 3 {
            anyhow::ensure!(child.try_wait()?.is_none(), "the manager exited");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let (deployments, _) = progress(&envtest.client(), &namespace).await;
        let stopped = Instant::now();
        println!(
            "API server restarted:    {:.1?} after the manager's start, at {deployments} of {n} Deployments",
            started.elapsed()
        );
        envtest.restart_api_server(DOWN_FOR).await?;
        println!("API server back after:   {:.1?}", stopped.elapsed());
        let back = Instant::now();
        while progress(&envtest.client(), &namespace).await != (n, n) {
            anyhow::ensure!(child.try_wait()?.is_none(), "the manager exited");
            let (deployments, reported) = progress(&envtest.client(), &namespace).await;
            anyhow::ensure!(
                back.elapsed() < CONVERGE_WITHIN,
                "not converged {CONVERGE_WITHIN:?} after the restart: {deployments} Deployments, \
                 {reported} statuses of {n}"
            );
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
        println!(
            "backlog converged:       {:.1?} after the API server was back, {:.1?} after the manager's start",
            back.elapsed(),
            started.elapsed()
        );
        Ok(())
    }
    .await;
    child.kill()?;
    child.wait()?;
    result
}

/// How many Memcacheds of the backlog have their Deployment, and how many report an Available
/// condition; (0, 0) while the API server does not answer.
async fn progress(client: &Client, namespace: &str) -> (usize, usize) {
    let deployments = Api::<Deployment>::namespaced(client.clone(), namespace);
    let memcacheds = Api::<Memcached>::namespaced(client.clone(), namespace);
    let (Ok(deployments), Ok(memcacheds)) = (
        deployments.list_metadata(&ListParams::default()).await,
        memcacheds.list(&ListParams::default()).await,
    ) else {
        return (0, 0);
    };
    let reported = memcacheds
        .items
        .iter()
        .filter(|m| {
            let conditions = m.status.as_ref().map(|s| s.conditions.as_slice());
            conditions.is_some_and(|c| c.iter().any(|c| c.type_ == "Available"))
        })
        .count();
    (deployments.items.len(), reported)
}
