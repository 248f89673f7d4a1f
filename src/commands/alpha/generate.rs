//! `operator-rs alpha generate`: the project scaffolded again from its PROJECT, as kubebuilder's
//! `alpha generate` does: `init` and every `create api` / `create webhook` that PROJECT records,
//! run by this binary in a fresh folder, then `make manifests`.
//!
//! The commands run in a temporary folder beside the output; the result reaches the output in
//! one all-or-nothing write (the same journal as every command), so a failed or interrupted run
//! leaves the output as it was.

use std::path::Path;

use anyhow::{Context as _, Result, bail};

use super::replay::{License, Replay};
use super::tree;
use crate::boilerplate::BOILERPLATE_FILE;
use crate::cli::AlphaGenerateArgs;
use crate::project;
use crate::scaffold::{self, Plan};

pub fn run(args: &AlphaGenerateArgs, cwd: &Path) -> Result<()> {
    let input = args
        .input_dir
        .as_deref()
        .map_or(cwd.to_path_buf(), |d| cwd.join(d));
    let output = args
        .output_dir
        .as_deref()
        .map_or(input.clone(), |d| cwd.join(d));
    let project = crate::commands::load_project(&input)?;
    let license = License::of_project(&input)?;
    check_output(Some(&input), &output)?;

    let replay = Replay::new(&project, license, Some(&input))?;
    let tree_dir = replay.scaffold(&super::this_binary()?, "generated", args.make)?;
    if !write_tree(&tree_dir, &output, Some(&input), args.common.dry_run)? {
        return Ok(());
    }
    println!(
        "Generated the project from {} in {}",
        project::FILE,
        output.display()
    );
    // External plugins (kubebuilder's protocol) that `init` ran, as its layout records them.
    for key in project.layout.iter().filter(|k| *k != project::LAYOUT) {
        println!(
            "note: the external plugin {key} of the layout was not run again: run `operator-rs \
             edit --plugins {key}` in the new project for its files"
        );
    }
    Ok(())
}

/// Writes the tree scaffolded in `tree_dir` to `output` in one all-or-nothing step (or prints
/// it, for `--dry-run`: then it returns `false`). `output` is checked again under its lock (see
/// [`check_output`]); a folder this creates is removed again if writing fails.
pub(super) fn write_tree(
    tree_dir: &Path,
    output: &Path,
    input: Option<&Path>,
    dry_run: bool,
) -> Result<bool> {
    let files = tree::read(tree_dir)?;
    let plan_for = |output: &Path| -> Result<Plan> {
        let mut plan = Plan::new(output, false);
        for (path, contents) in &files {
            plan.write(path, contents.clone())?;
        }
        Ok(plan)
    };
    if dry_run {
        print!("{}", plan_for(output)?.describe());
        println!("(dry run: nothing was written)");
        return Ok(false);
    }
    let created = !output.exists();
    std::fs::create_dir_all(output)
        .with_context(|| format!("creating the output folder {}", output.display()))?;
    let written = scaffold::lock(output).and_then(|_lock| {
        // Checked again under the lock: another command may have written there meanwhile.
        check_output(input, output)?;
        scaffold::apply(&plan_for(output)?)
    });
    if let Err(err) = written {
        if created {
            let _ = std::fs::remove_dir(output);
        }
        return Err(err);
    }
    Ok(true)
}

/// The output must hold nothing a generated file could replace: it is a new or empty folder
/// (hidden files such as `.git` aside, and build output such as `target/` and `bin/`), or the
/// input folder when PROJECT and its license header are all that is left of the project.
pub(super) fn check_output(input: Option<&Path>, output: &Path) -> Result<()> {
    if !output.exists() {
        return Ok(());
    }
    let same = input.is_some_and(|input| same_folder(input, output));
    let files = super::tree::project_files(output)
        .with_context(|| format!("reading the output folder {}", output.display()))?;
    let found = files.iter().find(|path| {
        let hidden = path.starts_with('.');
        let left = same && (*path == project::FILE || *path == BOILERPLATE_FILE);
        !hidden && !left
    });
    if let Some(first) = found {
        if same {
            bail!(
                "{} holds a project (found {first}): alpha generate writes a fresh tree; pass \
                 --output-dir <new folder>, or run `operator-rs alpha update` to bring the project \
                 onto this version's scaffold",
                output.display(),
            );
        }
        bail!(
            "the output folder {} is not empty (found {first}); pass a new or empty folder",
            output.display(),
        );
    }
    Ok(())
}

fn same_folder(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    }
}
