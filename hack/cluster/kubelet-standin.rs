//! operator-rs-testing's stand-in for the kubelet (`operator_rs_testing::kubelet`) as a program,
//! for scripts that run operators against a control plane without nodes (hack/test-cluster): the
//! pods of the namespaces given become Running and Ready (and those that run to completion
//! Succeeded), so that the Deployment controller counts them available. It runs until SIGTERM or
//! SIGINT. hack/test-cluster builds it as an example of a generated project, which has the runtime
//! with its `testing` feature among its dev-dependencies.
//!
//! usage: kubelet-standin NAMESPACE...

use k8s_openapi::api::core::v1::Pod;
use kube::{Api, Client};
use operator_rs_testing::kubelet::Kubelet;
use tokio::signal::unix::{SignalKind, signal};

#[tokio::main(flavor = "current_thread")]
async fn main() -> anyhow::Result<()> {
    let namespaces: Vec<String> = std::env::args().skip(1).collect();
    anyhow::ensure!(
        !namespaces.is_empty(),
        "usage: kubelet-standin NAMESPACE..."
    );
    let client = Client::try_default().await?;
    let kubelets: Vec<_> = namespaces
        .iter()
        .map(|namespace| {
            let pods = Api::<Pod>::namespaced(client.clone(), namespace);
            tokio::spawn(Kubelet::new(pods).run())
        })
        .collect();
    let mut terminate = signal(SignalKind::terminate())?;
    tokio::select! {
        _ = terminate.recv() => {}
        _ = tokio::signal::ctrl_c() => {}
    }
    for kubelet in kubelets {
        kubelet.abort();
    }
    Ok(())
}
