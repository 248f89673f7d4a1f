//! operator-rs: scaffold Kubernetes operators in Rust on kube-rs, the kubebuilder way.
//!
//! The entry point parses the command line, runs the command and turns any error into one line on
//! stderr and a non-zero exit code (2 for usage errors, as clap does; 128 + the signal's number
//! when SIGINT, SIGTERM or SIGHUP ends a writing command, see `scaffold::lock`; 1 for everything
//! else).

use std::process::ExitCode;

use clap::error::ErrorKind;
use clap::{CommandFactory as _, FromArgMatches as _};

use operator_rs::cli::{
    AlphaCommand, BundleCommand, Cli, Command, CreateCommand, GenerateCommand, KustomizeCommand,
};
use operator_rs::commands;
use operator_rs::scaffold;

fn main() -> ExitCode {
    let cli = match parse() {
        Ok(cli) => cli,
        Err(err)
            if matches!(
                err.kind(),
                ErrorKind::DisplayHelp | ErrorKind::DisplayVersion
            ) =>
        {
            let _ = err.print();
            return ExitCode::SUCCESS;
        }
        Err(err) if err.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            let _ = err.print();
            return ExitCode::from(2);
        }
        Err(err) => {
            eprintln!("{}", one_line(&err.render().to_string()));
            return ExitCode::from(2);
        }
    };
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            // `{:#}` joins the error chain with ": " on one line; text an error quotes from a
            // program it ran (kubectl's stderr) is joined too: an error is one line.
            let text = format!("{err:#}");
            let lines: Vec<&str> = text
                .lines()
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .collect();
            eprintln!("error: {}", lines.join(" "));
            ExitCode::FAILURE
        }
    }
}

/// The command line, with the flags of the external plugins it names (kubebuilder's protocol:
/// they are asked for them before it is parsed).
fn parse() -> Result<Cli, clap::Error> {
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let argv: Vec<String> = args
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    // kubebuilder's and operator-sdk's flags that operator-rs does not take, with the reason.
    if let Some(refusal) = operator_rs::refused_flags::check(&argv) {
        return Err(clap::Error::raw(
            ErrorKind::UnknownArgument,
            format!("{refusal}\n"),
        ));
    }
    let command = match std::env::current_dir() {
        Ok(cwd) => operator_rs::plugins::external::flags::augment(Cli::command(), &argv, &cwd),
        Err(_) => Cli::command(),
    };
    let matches = command.try_get_matches_from(args)?;
    Cli::from_arg_matches(&matches)
}

fn run(cli: Cli) -> anyhow::Result<()> {
    let cwd = std::env::current_dir()?;
    commands::set_verbose(cli.verbose);
    // A command that writes holds the project lock from before it reads the project until it
    // ends; taking it finishes or undoes a command that was killed while writing there.
    let dry_run = match &cli.command {
        Command::Init(args) => Some(args.common.dry_run),
        Command::Edit(args) => Some(args.common.dry_run),
        Command::Create(CreateCommand::Api(args)) => Some(args.common.dry_run),
        Command::Create(CreateCommand::Webhook(args)) => Some(args.common.dry_run),
        Command::Generate(GenerateCommand::Kustomize(KustomizeCommand::Manifests(args))) => {
            Some(args.common.dry_run)
        }
        Command::Generate(GenerateCommand::Bundle(args)) => Some(args.common.dry_run),
        Command::Generate(GenerateCommand::Catalog(args)) => Some(args.common.dry_run),
        // They lock the folders they write themselves (generate's may be another one).
        Command::Alpha(_) | Command::Version | Command::Completion { .. } | Command::Bundle(_) => {
            None
        }
    };
    let _lock = match dry_run {
        Some(false) => Some(scaffold::lock(&cwd)?),
        Some(true) => {
            scaffold::refuse_unfinished(&cwd)?;
            None
        }
        None => None,
    };
    match cli.command {
        Command::Init(args) => commands::init::run(&args, &cwd),
        Command::Edit(args) => commands::edit::run(&args, &cwd),
        Command::Create(CreateCommand::Api(args)) => commands::create_api::run(&args, &cwd),
        Command::Create(CreateCommand::Webhook(args)) => commands::create_webhook::run(&args, &cwd),
        Command::Alpha(AlphaCommand::Generate(args)) => commands::alpha::generate::run(&args, &cwd),
        Command::Alpha(AlphaCommand::Update(args)) => commands::alpha::update::run(&args, &cwd),
        Command::Alpha(AlphaCommand::Migrate(args)) => commands::alpha::migrate::run(&args, &cwd),
        Command::Generate(GenerateCommand::Kustomize(KustomizeCommand::Manifests(args))) => {
            commands::generate::kustomize_manifests(&args, &cwd)
        }
        Command::Generate(GenerateCommand::Bundle(args)) => commands::generate::bundle(&args, &cwd),
        Command::Generate(GenerateCommand::Catalog(args)) => commands::catalog::run(&args, &cwd),
        Command::Bundle(BundleCommand::Validate(args)) => commands::bundle::validate(&args, &cwd),
        Command::Version => {
            commands::version::run();
            Ok(())
        }
        Command::Completion { shell } => {
            commands::completion::run(shell);
            Ok(())
        }
    }
}

/// clap's usage errors span several lines (message, tip, usage); keep the message and the tip
/// on one line and drop the usage, which `--help` shows.
fn one_line(rendered: &str) -> String {
    rendered
        .lines()
        .take_while(|line| !line.starts_with("Usage:"))
        .map(str::trim)
        .filter(|line| !line.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}
