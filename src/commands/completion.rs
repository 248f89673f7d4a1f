//! `operator-rs completion <shell>`.

use clap::CommandFactory;
use clap_complete::Shell;

use crate::cli::{Cli, CompletionShell};

/// Writes the completion script for `shell` to stdout.
pub fn run(shell: CompletionShell) {
    let shell = match shell {
        CompletionShell::Bash => Shell::Bash,
        CompletionShell::Zsh => Shell::Zsh,
        CompletionShell::Fish => Shell::Fish,
        CompletionShell::Powershell => Shell::PowerShell,
    };
    clap_complete::generate(
        shell,
        &mut Cli::command(),
        "operator-rs",
        &mut std::io::stdout(),
    );
}
