//! `operator-rs alpha …`: commands that work on a whole project's life (kubebuilder's `alpha`
//! group): `generate` scaffolds a project again from its PROJECT, `update` brings it onto this
//! release's scaffold, `migrate` makes one from a kubebuilder Go project.

pub mod generate;
mod git;
mod merge;
pub mod migrate;
mod release;
mod replay;
pub(crate) mod tree;
pub mod update;

use std::path::PathBuf;

use anyhow::{Context as _, Result};

/// This operator-rs, to run the commands of a replay with.
fn this_binary() -> Result<PathBuf> {
    std::env::current_exe().context("finding the operator-rs binary that runs")
}
