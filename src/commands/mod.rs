//! One module per command: each turns validated arguments into a [`crate::scaffold::Plan`].

pub mod alpha;
pub mod bundle;
mod cluster_rbac;
pub mod completion;
mod controllers;
pub mod create_api;
pub mod create_webhook;
pub mod deploy_image;
pub mod edit;
pub mod generate;
pub mod init;
pub mod plugins;
mod resource;
pub mod version;

use std::borrow::Cow;
use std::io::Read as _;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::Result;

use crate::scaffold::{self, Plan};

/// `--verbose`: show the output of the programs operator-rs runs (`make manifests`) as they run.
static VERBOSE: AtomicBool = AtomicBool::new(false);

/// Sets `--verbose` for the rest of the process (the binary does, from the command line).
pub fn set_verbose(verbose: bool) {
    VERBOSE.store(verbose, Ordering::Relaxed);
}

pub(crate) fn verbose() -> bool {
    VERBOSE.load(Ordering::Relaxed)
}

/// Formats the plan's Rust files (one rustfmt process for all of them), then prints the plan
/// for `--dry-run`, or writes it all or nothing.
pub fn finish(plan: &Plan, dry_run: bool) -> Result<()> {
    let mut plan = Cow::Borrowed(plan);
    if plan.needs_rustfmt() {
        plan.to_mut().format_rust()?;
    }
    if dry_run {
        print!("{}", plan.describe());
        println!("(dry run: nothing was written)");
        return Ok(());
    }
    scaffold::apply(&plan)
}

/// Runs `command` with its stdout and stderr captured together, in the order they were written.
pub(crate) fn run_quietly(mut command: Command) -> std::io::Result<(ExitStatus, Vec<u8>)> {
    let (mut reader, writer) = std::io::pipe()?;
    let mut child = command
        .stdin(Stdio::null())
        .stdout(writer.try_clone()?)
        .stderr(writer)
        .spawn()?;
    // The command holds the pipe's write ends: close them, or reading never ends.
    drop(command);
    let mut output = Vec::new();
    let read = reader.read_to_end(&mut output);
    let status = child.wait()?;
    read?;
    Ok((status, output))
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn quiet_runs_keep_the_output_in_order() {
        let mut sh = Command::new("sh");
        sh.args(["-c", "echo one; echo two >&2; echo three; exit 3"]);
        let (status, output) = run_quietly(sh).unwrap();
        assert_eq!(status.code(), Some(3));
        assert_eq!(String::from_utf8(output).unwrap(), "one\ntwo\nthree\n");
    }

    #[test]
    fn quiet_runs_of_missing_programs_are_errors() {
        assert!(run_quietly(Command::new("operator-rs-no-such-program")).is_err());
    }
}
