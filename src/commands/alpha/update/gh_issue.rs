//! `alpha update --open-gh-issue`: a GitHub issue that links to the comparison of the base
//! branch and the output branch, with a checklist, opened with GitHub's `gh` CLI as kubebuilder
//! opens it (its title and body, with operator-rs's names and commands).

use std::process::Command;

use anyhow::{Context as _, Result, bail};

use super::Versions;

/// Refuses `--open-gh-issue` before the update runs when `gh` is not there to open the issue.
pub(super) fn check_gh() -> Result<()> {
    match Command::new("gh").arg("--version").output() {
        Ok(output) if output.status.success() => Ok(()),
        _ => bail!(
            "--open-gh-issue opens the issue with GitHub's `gh` CLI, which was not found on PATH: \
             install it (https://cli.github.com) and log in with `gh auth login`, or leave the flag out"
        ),
    }
}

/// What the issue is about.
pub(super) struct Update<'a> {
    pub versions: &'a Versions,
    /// The branch (or commit) the update was made from.
    pub base: &'a str,
    pub output: &'a str,
    pub conflicts: bool,
}

/// Opens the issue in the repository `gh` finds for `dir`, unless an open issue has its title
/// already; prints its address.
pub(super) fn open(dir: &std::path::Path, update: &Update) -> Result<()> {
    let repo = gh(
        dir,
        &[
            "repo",
            "view",
            "--json",
            "nameWithOwner",
            "--jq",
            ".nameWithOwner",
        ],
    )
    .context("finding the GitHub repository with `gh repo view`")?;
    let title = title(update.versions);
    let search = format!("in:title \"{title}\"");
    let existing = gh(
        dir,
        &[
            "issue", "list", "--repo", &repo, "--state", "open", "--search", &search, "--json",
            "title",
        ],
    )
    .unwrap_or_default();
    if existing.contains(&title) {
        println!("An open issue is titled {title:?} already: no new issue.");
        return Ok(());
    }
    let compare = format!(
        "https://github.com/{repo}/compare/{}...{}?expand=1",
        update.base, update.output
    );
    let body = body(update, &compare);
    let created = gh(
        dir,
        &[
            "issue", "create", "--repo", &repo, "--title", &title, "--body", &body,
        ],
    )
    .context("opening the issue with `gh issue create` (the update itself is done)")?;
    let address = created
        .split_whitespace()
        .find(|w| w.starts_with("https://") || w.starts_with("http://"))
        .unwrap_or(&compare);
    println!("Opened {address} to review the update.");
    Ok(())
}

/// kubebuilder's title.
fn title(versions: &Versions) -> String {
    format!(
        "[Action Required] Upgrade the Scaffold: {} -> {}",
        versions.from, versions.to
    )
}

/// kubebuilder's body, with operator-rs's steps (`make manifests`, `cargo test`).
fn body(update: &Update, compare: &str) -> String {
    let Versions { from, to } = update.versions;
    let mut body = format!(
        "## Description\n\nUpgrade your project to use the scaffold changes of operator-rs {to} \
         (from {from}).\n\n## What to do\n\nThe update was made on the branch {} to help you in \
         this process.\n\n",
        update.output
    );
    if update.conflicts {
        body.push_str(&format!(
            ":warning: **Conflicts were detected during the merge.**\n\nCreate a Pull Request \
             using the URL below to review the changes and resolve conflicts manually (search \
             for <<<<<<<):\n{compare}\n\n## Next steps\n\n### 1. Resolve conflicts\nAfter fixing \
             conflicts, run:\n~~~bash\nmake manifests fmt vet\n~~~\n\n### 2. Optional: work on \
             a new branch\n~~~bash\noperator-rs alpha update --output-branch my-fix-branch\n~~~\n\n\
             ### 3. Verify the changes\n"
        ));
    } else {
        body.push_str(&format!(
            "Create a Pull Request using the URL below to review the changes:\n{compare}\n\n\
             ## Next steps\n\n**Verify the changes**\n"
        ));
    }
    body.push_str(
        "- Build the project\n- Run tests (`make test`)\n- Confirm everything still works\n\n\
         :book: **More info:** operator-rs's docs/alpha.md (`alpha update`)\n",
    );
    body
}

/// `gh <args>` in `dir`: its output, or its error in one line.
fn gh(dir: &std::path::Path, args: &[&str]) -> Result<String> {
    let output = Command::new("gh")
        .args(args)
        .current_dir(dir)
        .output()
        .with_context(|| format!("running gh {}", args[..2].join(" ")))?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        bail!(
            "gh {} failed: {}",
            args[..2].join(" "),
            stderr.split_whitespace().collect::<Vec<_>>().join(" ")
        );
    }
    Ok(String::from_utf8_lossy(&output.stdout).trim().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_body_links_to_the_comparison_and_says_whether_files_conflict() {
        let versions = Versions {
            from: "0.1.0".into(),
            to: "0.2.0".into(),
        };
        let mut update = Update {
            versions: &versions,
            base: "main",
            output: "operator-rs-update-from-0.1.0-to-0.2.0",
            conflicts: false,
        };
        assert_eq!(
            title(&versions),
            "[Action Required] Upgrade the Scaffold: 0.1.0 -> 0.2.0"
        );
        let clean = body(&update, "https://github.com/o/r/compare/main...x?expand=1");
        assert!(clean.contains("https://github.com/o/r/compare/main...x?expand=1"));
        assert!(!clean.contains("Conflicts"));
        update.conflicts = true;
        assert!(body(&update, "u").contains("Conflicts were detected"));
    }
}
