//! `operator-rs init`: a new operator project in the current folder.

use std::path::Path;

use anyhow::{Context as _, Result, bail};

use crate::boilerplate;
use crate::cli::{InitArgs, License};
use crate::context::{BOILERPLATE_FILE, project_context};
use crate::names::{Domain, InvalidInput, ProjectName};
use crate::project::{self, LAYOUT, Project};
use crate::scaffold::{IfExists, Plan, templates};

/// Files whose presence means the folder already holds a project (kubebuilder checks the same
/// three, with `cmd/main.go` in place of `src/main.rs`).
const PROJECT_MARKERS: [&str; 3] = [project::FILE, "Makefile", "src/main.rs"];

pub fn run(args: &InitArgs, dir: &Path) -> Result<()> {
    let plan = plan(args, dir, boilerplate::current_year())?;
    super::finish(&plan, args.common.dry_run)?;
    if !args.common.dry_run {
        println!("Next: define a resource with:");
        println!("$ operator-rs create api --group <group> --version <version> --kind <Kind>");
        println!(
            "for example: operator-rs create api --group cache --version v1alpha1 --kind Memcached"
        );
    }
    Ok(())
}

/// Everything `init` would write in `dir`, without writing it. `year` goes into the license
/// header; passing it in keeps planning a pure function of its inputs.
pub fn plan(args: &InitArgs, dir: &Path, year: i64) -> Result<Plan> {
    let domain = Domain::parse(&args.domain)?;
    let name = match &args.project_name {
        Some(name) => ProjectName::parse(name)?,
        None => ProjectName::from_folder(&folder_name(dir)?)?,
    };
    if args.owner.chars().any(char::is_control) {
        return Err(InvalidInput::new(
            "--owner",
            &args.owner,
            "must not contain control characters such as new lines",
        )
        .into());
    }
    refuse_initialized(dir)?;

    let project = Project {
        cli_version: env!("CARGO_PKG_VERSION").to_string(),
        domain: domain.as_str().to_string(),
        layout: vec![LAYOUT.to_string()],
        multigroup: args.multigroup,
        namespaced: args.namespaced,
        project_name: name.as_str().to_string(),
        version: "3".to_string(),
        ..Project::default()
    };
    let header = boilerplate::header(args.license, &args.owner, year);
    let mut ctx = project_context(&project, &header);
    ctx.insert("owner", &args.owner);
    ctx.insert("year", &year.to_string());
    ctx.insert("license", args.license.as_str());

    let mut plan = Plan::new(dir, false);
    for file in templates::render_dir("init", &ctx)? {
        if file.path == BOILERPLATE_FILE && args.license == License::None {
            continue;
        }
        plan.create(&file.path, file.contents, IfExists::Error)
            .with_context(|| {
                "init writes a whole new project and never overwrites files".to_string()
            })?;
    }
    plan.write(project::FILE, project.render())?;
    Ok(plan)
}

fn folder_name(dir: &Path) -> Result<String> {
    let full = dir
        .canonicalize()
        .with_context(|| format!("reading folder {}", dir.display()))?;
    match full.file_name().and_then(|n| n.to_str()) {
        Some(name) => Ok(name.to_string()),
        None => bail!(
            "cannot derive a project name from {}; pass --project-name",
            full.display()
        ),
    }
}

fn refuse_initialized(dir: &Path) -> Result<()> {
    for file in PROJECT_MARKERS {
        if dir.join(file).exists() {
            bail!(
                "target directory is already initialized: found existing file {file:?}; run operator-rs init in a new \
                 directory or remove the scaffolded files"
            );
        }
    }
    Ok(())
}
