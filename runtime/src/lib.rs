//! The runtime of operators scaffolded by operator-rs: everything every operator needs and no
//! user should have to own, the way controller-runtime is a library for kubebuilder's Go projects.
//!
//! A generated project depends on this crate and holds only its own code: its custom resource
//! types, the `reconcile` functions of its controllers, its webhooks' logic, and their tests.
//!
//! - [`manager`]: the process that runs the controllers: kubebuilder's flags, logging, health and
//!   readiness probes, graceful shutdown, `WATCH_NAMESPACE`, Lease leader election, and the
//!   metrics server. It knows controllers only as [`manager::Runnable`]s.
//! - [`metrics`]: the Prometheus registry that `/metrics` serves, with controller-runtime's
//!   metric names (authorized by TokenReview and SubjectAccessReview), which the manager, the
//!   controllers and the webhooks record into, and so can your code.
//! - [`controller`]: runs one kube-runtime controller per watched namespace with metrics, retry
//!   backoff, events and readiness, so that a controller file holds only `reconcile`, its RBAC
//!   rules and its tests.
//! - [`sharding`]: with `--sharding`, the objects of each controller spread over the replicas,
//!   each watching and reconciling its share, with hand-overs that never let two reconcile one
//!   object at once.
//! - [`cache`]: what the controllers' watches hold, which they read from instead of the API
//!   server: by name, namespace, labels, owner, or an index of their own.
//! - [`webhook`]: the HTTPS server for admission and conversion webhooks, and the
//!   [`webhook::Defaulter`], [`webhook::Validator`] and [`webhook::Converter`] that a project's
//!   webhooks implement.
//! - [`migration`]: storage version migration: once a kind's storage version moves, its objects
//!   are written again in it and the CRD's `status.storedVersions` trimmed to it, on the leader
//!   or as a Job.
//! - [`manifests`]: writes the CRDs, the manager's RBAC role and the webhook configurations under
//!   `config/` from the Rust code (`make manifests`), with no Go and no controller-gen.
//! - [`spec`]: [`spec_or_default!`] and [`spec::not_required`], for kinds whose CRD does not require a spec:
//!   an object without one reads as the default spec, as in Go, instead of stalling the watch.
//!
//! The test harnesses are a crate of their own, `operator-rs-testing`, which a generated project
//! takes in its `[dev-dependencies]` only: a mocked API server for reconcile tests, a stateful
//! fake API server for tests that run whole controllers, as strict as a real one, the webhooks'
//! review helpers, and what the end-to-end suite shares. The manager a project ships links none
//! of them.
//!
//! The crate re-exports the versions of [`kube`] and [`k8s_openapi`] it is built with, so that a
//! project and its runtime always agree on them, and [`prometheus_client`], for metrics of a
//! project's own ([`metrics::Metrics::register`]).

pub mod cache;
pub mod controller;
mod lease;
pub mod manager;
pub mod manifests;
pub mod metrics;
pub mod migration;
pub mod sharding;
pub mod spec;
pub mod webhook;

pub use k8s_openapi;
pub use kube;
pub use prometheus_client;
