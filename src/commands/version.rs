//! `operator-rs version`.

use crate::project::LAYOUT;

/// The version line, with the stack that generated projects are pinned to.
pub fn run() {
    println!(
        "operator-rs {} (layout {LAYOUT}; generates kube 5, k8s-openapi 0.29, Rust 1.89, edition 2024)",
        env!("CARGO_PKG_VERSION")
    );
}
