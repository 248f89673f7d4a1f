{{ rust_header }}//! The `manager` binary: the {{ project_name }} operator as it runs in the cluster (or locally with
//! `make run`, against the cluster of your current kubeconfig context).

use std::process::ExitCode;

use clap::Parser as _;

use {{ crate_name }}::manager::{self, flags::Flags, logging};

#[tokio::main]
async fn main() -> ExitCode {
    let flags = Flags::parse();
    if let Err(error) = logging::init(flags.log_format, flags.log_level.as_deref()) {
        eprintln!("error: {error}");
        return ExitCode::FAILURE;
    }
    tracing::info!(version = env!("CARGO_PKG_VERSION"), "starting the manager");
    match manager::run(flags).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            // `{:#}` prints the whole chain of causes on one line.
            tracing::error!("{error:#}");
            ExitCode::FAILURE
        }
    }
}
