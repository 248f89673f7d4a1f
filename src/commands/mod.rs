//! One module per command: each turns validated arguments into a [`crate::scaffold::Plan`].

pub mod completion;
pub mod create_api;
pub mod create_webhook;
pub mod deploy_image;
pub mod init;
mod resource;
pub mod version;

use anyhow::Result;

use crate::scaffold::{self, Plan};

/// Prints the plan for `--dry-run`, or writes it all or nothing.
pub fn finish(plan: &Plan, dry_run: bool) -> Result<()> {
    if dry_run {
        print!("{}", plan.describe());
        println!("(dry run: nothing was written)");
        return Ok(());
    }
    scaffold::apply(plan)
}
