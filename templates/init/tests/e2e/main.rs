{{ rust_header }}//! End-to-end tests: the operator built into an image, deployed to a cluster and checked there,
//! like the `test/e2e` suite of a kubebuilder project.
//!
//! Run them with `make test-e2e`. It creates a Kind cluster (`KIND_CLUSTER`, deleted again when
//! every test passed) and runs `cargo test --test e2e -- --ignored --test-threads=1`; the first
//! test builds the manager image, loads it into Kind, installs the CRDs, deploys the manager and
//! waits for it (see [`e2e::run`]). `make test-e2e KIND_CLUSTER= IMG=<registry>/<image>:<tag>`
//! runs them against the cluster of your current kubeconfig context instead, pushing the image
//! there.
//!
//! Every test is `#[ignore]`d, so a plain `cargo test` (`make test`) only compiles them: no
//! cluster, no Docker. The set-up and the helpers (waiting, `kubectl`, the metrics endpoint, the
//! restricted Pod Security Standard) are [`operator_rs_testing::e2e`]'s.
//!
//! Once the project has webhooks, the setup waits after deploying until their CA is in every
//! webhook configuration and in the CRDs' conversion webhooks: the manager writes it itself
//! (`operator-rs create webhook --webhook-certs=self-signed`, the default), or cert-manager's
//! injector does (`--webhook-certs=cert-manager`, which writes `config/certmanager/`; then the
//! setup first installs cert-manager, a pinned release, unless the cluster has it or
//! `CERT_MANAGER_INSTALL_SKIP=true`).
//!
//! - [`manager`]: the manager's pod runs, and its `/metrics` endpoint serves an authorized caller.
//! - One module per kind whose controller `operator-rs create api --image` wrote, listed below.
//!   Add your own next to them: a `#[test] #[ignore = "..."]` function that calls
//!   [`e2e::run`] with [`PROJECT`].

use operator_rs_testing::e2e;

/// This project, as the e2e tests need to know it: what `config/default` deploys is named after
/// it, and a namespaced manager only watches its own namespace.
const PROJECT: e2e::Project = e2e::Project {
    name: "{{ project_name }}",
    namespaced: {{ namespaced }},
    root: env!("CARGO_MANIFEST_DIR"),
};

mod manager;

// The e2e tests of each kind (`operator-rs create api --image ...` adds its module here).
// +operator-rs:scaffold:e2e-modules
