//! `operator-rs init`: a new operator project in the current folder.

use std::path::Path;

use anyhow::{Context as _, Result, bail};

use crate::boilerplate::{self, BOILERPLATE_FILE};
use crate::cli::InitArgs;
use crate::names::{Domain, InvalidInput, ProjectName};
use crate::plugins;
use crate::project::{self, LAYOUT, Project, RuntimeSource};
use crate::scaffold::table::DirTable;
use crate::scaffold::{Owner, Plan, cargo_lock};
use crate::vars::{InitVars, ProjectVars};
use crate::{runtime_crate, runtime_source};

/// Every file of a new project: `templates/init/`, rendered whole.
pub(crate) static FILES: DirTable<InitVars> = DirTable::new("init");

/// Files whose presence means the folder already holds a project (kubebuilder checks the same
/// three, with `cmd/main.go` in place of `src/main.rs`).
const PROJECT_MARKERS: [&str; 3] = [project::FILE, "Makefile", "src/main.rs"];

pub fn run(args: &InitArgs, dir: &Path) -> Result<()> {
    let plan = plan(args, dir, boilerplate::current_year())?;
    for note in notes(args) {
        println!("note: {note}");
    }
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
    check_owner(&args.owner)?;
    if args.sharding {
        super::sharding::check_init_domain(domain.as_str())?;
    }
    let kb = &args.kubebuilder;
    let selection = plugins::select(&kb.plugins, "init")?;
    if let Some(version) = &kb.project_version
        && version != "3"
    {
        return Err(InvalidInput::new(
            "--project-version",
            version,
            "operator-rs writes PROJECT version \"3\", kubebuilder's current format",
        )
        .into());
    }
    let repo = match &kb.repo {
        Some(repo) => check_repo(repo)?,
        None => String::new(),
    };
    let header = match &args.license_file {
        Some(file) => boilerplate::from_license_file(file)?,
        None => boilerplate::header(args.license, &args.owner, year),
    };
    refuse_initialized(dir)?;

    let mut project = Project {
        cli_version: env!("CARGO_PKG_VERSION").to_string(),
        domain: domain.as_str().to_string(),
        layout: vec![LAYOUT.to_string()],
        multigroup: args.multigroup,
        namespaced: args.namespaced,
        sharding: args.sharding,
        runtime: args.runtime,
        project_name: name.as_str().to_string(),
        repo,
        version: "3".to_string(),
        ..Project::default()
    };
    let vars = InitVars {
        project: ProjectVars::new(&project, &header),
        owner: args.owner.clone(),
        year: year.to_string(),
        license: if args.license_file.is_some() {
            "file".to_string()
        } else {
            args.license.as_str().to_string()
        },
    };

    let mut plan = Plan::new(dir, false);
    scaffold_files(&mut plan, args, &vars, &header, &name)?;
    // The plugins of the whole project (`--plugins grafana/v1-alpha` …).
    for part in selection.plugins.iter().filter_map(|p| p.project()) {
        part.render(&mut plan, &project, &vars.project)?;
        part.record(&mut project);
    }
    // External plugins last, each recorded in the layout as kubebuilder records its chain.
    for plugin in &selection.external {
        project.layout.push(plugin.key());
    }
    super::plugin_chain::run(&selection.external, "init", &mut plan, &mut project)?;
    plan.write(project::FILE, project.render())?;
    crate::runtime_features::keep_in_step(&mut plan, None, &project)?;
    Ok(plan)
}

/// The project's own files (templates/init/, with the sharding files when asked for) and, when
/// it holds them, operator-rs's crates.
fn scaffold_files(
    plan: &mut Plan,
    args: &InitArgs,
    vars: &InitVars,
    header: &str,
    name: &ProjectName,
) -> Result<()> {
    for file in FILES.render(vars)? {
        if file.path == BOILERPLATE_FILE && header.is_empty() {
            continue;
        }
        let contents = match file.path.as_str() {
            "Cargo.lock" => cargo_lock::for_source(args.runtime, name.as_str())?,
            "Cargo.toml" => {
                runtime_source::set_in_manifest(&file.contents, &file.path, args.runtime)?
            }
            _ => file.contents,
        };
        create_new(plan, &file.path, contents)?;
    }
    if args.sharding {
        for (path, contents) in super::sharding::files(&vars.project)? {
            create_new(plan, &path, contents)?;
        }
    }
    // The crates the project depends on, as this operator-rs ships them, when it holds them.
    if args.runtime == RuntimeSource::Vendored {
        for (path, contents) in runtime_crate::files() {
            create_new(plan, &path, contents.to_owned())?;
        }
    }
    Ok(())
}

/// One line per kubebuilder flag given that means something else, or nothing, in Rust.
fn notes(args: &InitArgs) -> Vec<String> {
    let kb = &args.kubebuilder;
    let mut notes = Vec::new();
    // The keys are checked by `plan`, which runs first.
    let selection = plugins::select(&kb.plugins, "init").unwrap_or_default();
    for key in &selection.layout {
        notes.push(format!(
            "--plugins {key}: kubebuilder's standard layout, which is the one operator-rs writes (in Rust)"
        ));
    }
    for plugin in selection.plugins.iter().filter(|p| p.project().is_none()) {
        notes.push(format!(
            "--plugins {}: the {} plugin works per kind, with `operator-rs {}`",
            plugin.short_key(),
            plugin.short_key(),
            plugin.usage()
        ));
    }
    if let Some(repo) = &kb.repo {
        notes.push(format!(
            "--repo {repo}: recorded in PROJECT and the seed of the leader election ID, as in \
             kubebuilder; a Rust project has no Go module path"
        ));
    }
    if kb.fetch_deps.is_some() {
        notes.push("--fetch-deps: Go only (go get); cargo fetches on the first build".into());
    }
    if kb.skip_go_version_check.is_some() {
        notes.push("--skip-go-version-check: Go only; ignored".into());
    }
    notes.extend(runtime_source::unpublished_note(args.runtime));
    notes
}

/// The longest `--repo`.
const MAX_REPO: usize = 200;

/// `--repo` goes into PROJECT: one line of printable text without spaces (a Go module path or
/// a URL).
fn check_repo(repo: &str) -> Result<String, InvalidInput> {
    let valid = !repo.is_empty()
        && repo.chars().count() <= MAX_REPO
        && repo.chars().all(|c| c.is_ascii_graphic());
    if valid {
        Ok(repo.to_string())
    } else {
        Err(InvalidInput::new(
            "--repo",
            repo,
            format!(
                "must be a module path or URL of at most {MAX_REPO} printable ASCII characters \
                 without spaces, like github.com/example/memcached-operator"
            ),
        ))
    }
}

/// The longest `--owner`.
const MAX_OWNER: usize = 200;

/// The owner is written into the license header of every Rust file (`// Copyright <year>
/// <owner>.`) and into README.md: one line of visible text, of any script.
pub(crate) fn check_owner(owner: &str) -> Result<(), InvalidInput> {
    if owner.chars().count() > MAX_OWNER {
        return Err(InvalidInput::new(
            "--owner",
            owner,
            format!("must be at most {MAX_OWNER} characters: it goes into the license header"),
        ));
    }
    crate::names::check_line_text(owner).map_err(|rule| {
        InvalidInput::new(
            "--owner",
            owner,
            format!("{rule}: it goes into the license header of every Rust file"),
        )
    })
}

/// Plans a new file: init never overwrites anything, and never writes under a file that is
/// where one of its folders goes.
fn create_new(plan: &mut Plan, path: &str, contents: String) -> Result<()> {
    let root = plan.root().to_path_buf();
    let parts: Vec<&str> = path.split('/').collect();
    for depth in 1..parts.len() {
        let folder = parts[..depth].join("/");
        if root
            .join(&folder)
            .symlink_metadata()
            .is_ok_and(|m| !m.is_dir())
        {
            bail!(
                "{folder} already exists and is not a plain folder, but init writes {path} there; move \
                 {folder} away, or run operator-rs init in an empty folder"
            );
        }
    }
    if root.join(path).symlink_metadata().is_ok() {
        bail!(
            "{path} already exists, and init writes a whole new project without overwriting \
             anything: move {path} away, or run operator-rs init in an empty folder"
        );
    }
    plan.create(path, contents, Owner::User)
}

fn folder_name(dir: &Path) -> Result<String> {
    let full = dir
        .canonicalize()
        .with_context(|| format!("reading folder {:?}", dir.display().to_string()))?;
    match full.file_name().and_then(|n| n.to_str()) {
        Some(name) => Ok(name.to_string()),
        None => bail!(
            "cannot derive a project name from the folder {:?}; pass --project-name, e.g. \
             --project-name my-operator",
            full.display().to_string()
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scaffold::templates::{self, render_dir};

    /// The second render of the files comes from the parsed templates and gives the same result.
    #[test]
    fn rendering_again_gives_the_same_files() {
        let project = Project {
            project_name: "demo".into(),
            domain: "example.com".into(),
            ..Default::default()
        };
        let vars = InitVars {
            project: ProjectVars::new(&project, "// header\n"),
            owner: "Acme".into(),
            year: "2026".into(),
            license: "apache2".into(),
        };
        let first = FILES.render(&vars).unwrap();
        assert_eq!(first.len(), templates::list("init").len());
        assert!(first.iter().any(|f| f.path == "src/main.rs"), "{first:?}");
        assert!(first.iter().all(|f| !f.path.contains("{{")), "{first:?}");
        assert_eq!(FILES.render(&vars).unwrap(), first);
        let context = tera::Context::from_serialize(&vars).unwrap();
        assert_eq!(render_dir("init", &context).unwrap(), first);
    }
}
