//! Continuous calls through a project's three webhooks, for hack/test-cluster: built as an
//! example of the project it generates (`tc-webhooks`: a Memcached whose `v1alpha1` is the
//! conversion hub and the storage version, `v1` a spoke, with defaulting and validating webhooks),
//! so it uses the project's own types.
//!
//! Each call is one of two, in turn:
//! - a dry-run create of a `v1` Memcached: the API server converts it to `v1alpha1` for the
//!   admission webhooks (registered for `v1alpha1`, `matchPolicy: Equivalent`), calls the
//!   defaulting and then the validating webhook, and converts the result back: three webhooks;
//! - a read of a stored Memcached in `v1`: the conversion webhook.
//!
//! Nothing is written but the one Memcached read (created once, if missing), so the manager's
//! controller has nothing to do while it runs. Every webhook has `failurePolicy: Fail`: a call
//! fails when the API server cannot call a webhook (no endpoint, a certificate it does not
//! trust).
//!
//! usage: webhook-calls NAMESPACE SECONDS CALLS_PER_SECOND
//! Prints the calls made and failed (with the first failures); exits 1 if any failed.

use std::time::{Duration, Instant};

use kube::api::{PostParams, ResourceExt as _};
use kube::{Api, Client};
use tc_webhooks::api::v1::{Memcached, MemcachedSpec};

/// The stored Memcached that the reads convert.
const READ: &str = "webhook-calls";
/// The name of the dry-run creates (never stored).
const DRY_RUN: &str = "webhook-calls-dry-run";

#[tokio::main(flavor = "current_thread")]
async fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let usage = "usage: webhook-calls NAMESPACE SECONDS CALLS_PER_SECOND";
    let (Some(namespace), Some(seconds), Some(rate)) = (
        args.get(1),
        args.get(2).and_then(|s| s.parse::<f64>().ok()),
        args.get(3).and_then(|s| s.parse::<f64>().ok()),
    ) else {
        anyhow::bail!(usage);
    };
    let client = Client::try_default().await?;
    let api = Api::<Memcached>::namespaced(client, namespace);
    if api.get_opt(READ).await?.is_none() {
        api.create(&PostParams::default(), &memcached(READ)).await?;
    }

    let (start, interval) = (Instant::now(), Duration::from_secs_f64(1.0 / rate));
    let mut ticks = tokio::time::interval(interval);
    let (mut admission, mut conversion, mut failures) = (0, 0, Vec::new());
    while start.elapsed().as_secs_f64() < seconds {
        ticks.tick().await;
        let at = start.elapsed();
        let result = if (admission + conversion) % 2 == 0 {
            admission += 1;
            let dry_run = PostParams {
                dry_run: true,
                ..PostParams::default()
            };
            api.create(&dry_run, &memcached(DRY_RUN))
                .await
                .map(|o| o.name_any())
        } else {
            conversion += 1;
            api.get(READ).await.map(|o| o.name_any())
        };
        if let Err(error) = result {
            failures.push(format!("at {:.1}s: {error}", at.as_secs_f64()));
        }
    }
    let calls = admission + conversion;
    println!(
        "webhook calls: {calls} in {:.0?} ({admission} dry-run creates through the conversion, defaulting and validating webhooks, {conversion} reads through the conversion webhook), failed: {}",
        start.elapsed(),
        failures.len()
    );
    for failure in failures.iter().take(5) {
        println!("  failed {failure}");
    }
    anyhow::ensure!(
        failures.is_empty(),
        "{} of {calls} calls failed",
        failures.len()
    );
    Ok(())
}

/// A `v1` Memcached named `name`, as a user writes it.
fn memcached(name: &str) -> Memcached {
    Memcached::new(name, MemcachedSpec::default())
}
