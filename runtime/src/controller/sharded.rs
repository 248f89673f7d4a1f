//! A [`Runner`](super::Runner)'s controller with `--sharding` ([`crate::sharding`]): it watches
//! and caches this member's objects only, a drain label on one of them reconciles it, and then
//! the object is handed over instead of reconciled; it claims the objects without a member that
//! the ring gives to it, and the elected replica assigns the objects of its kind to the members.

use kube::Client;
use kube::runtime::controller::Action;

use super::context::Scope;
use crate::cache::Cacheable;
use crate::sharding;

/// The watcher configuration and the trigger of the controller `name` of `K` with `sharding`,
/// from the ones it would have without; registers what the elected replica assigns, and the
/// claims, which take over a departed member's objects at the pace of the controller's `queue`.
/// With the `sharding` feature only: without it the manager never runs sharded.
#[cfg(feature = "sharding")]
pub(super) fn setup<K>(
    sharding: &sharding::Sharding,
    name: &'static str,
    shared: &crate::manager::Shared,
    queue: crate::metrics::workqueue::WorkQueueMetrics,
    config: (kube::runtime::watcher::Config, super::watches::Change<K>),
) -> (kube::runtime::watcher::Config, super::watches::Change<K>)
where
    K: Cacheable,
    K::Scope: Scope,
{
    let (watcher_config, reconcile_on) = config;
    let namespaces = &shared.watch_namespaces;
    let apis =
        <K::Scope as Scope>::apis::<kube::core::PartialObjectMeta<K>>(namespaces, &shared.client);
    let client = shared.client.clone();
    let api_in: sharding::assign::ApiIn<K> =
        std::sync::Arc::new(move |namespace| <K::Scope as Scope>::api_in::<K>(&client, namespace));
    let (claim_apis, claim_api_in) = (apis.clone(), std::sync::Arc::clone(&api_in));
    sharding.register(sharding::Assigner {
        claim: Box::new(move |claim| {
            Box::pin(sharding::claim::run(
                name,
                claim_apis,
                claim_api_in,
                claim,
                queue,
            ))
        }),
        assign: Box::new(move |assignment| {
            Box::pin(sharding::assign::run(name, apis, api_in, assignment))
        }),
    });
    (
        sharding.restrict(watcher_config),
        sharding::reconcile_on(reconcile_on),
    )
}

/// Whether the object, as cached or as the controller last wrote it, is to leave this member.
pub(super) fn is_leaving<K: Cacheable>(cached: &K, latest: &K) -> bool {
    sharding::is_draining(cached) || sharding::is_draining(latest)
}

/// Hands `object` back to the elected replica, in its reconcile slot (see
/// [`crate::sharding::acknowledge`]).
pub(super) async fn hand_over<K>(client: &Client, controller: &str, object: &K) -> Action
where
    K: Cacheable,
    K::Scope: Scope,
{
    let namespace = kube::Resource::meta(object).namespace.as_deref();
    let api = <K::Scope as Scope>::api_in::<K>(client, namespace);
    sharding::acknowledge(api, controller, object).await
}
