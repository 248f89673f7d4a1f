//! `operator-rs alpha generate` and `alpha update`: a project scaffolded again from its PROJECT is
//! the same tree; refusals change nothing; an update merges the user's edits with the new
//! scaffold, lists conflicts and never drops an edited file.
//!
//! The update tests stand in for an older operator-rs with a script that runs this binary and
//! then changes what it wrote, the way an older release's templates differ. (hack/test-generated
//! updates a project from the real previous release.)

mod support;

use std::path::{Path, PathBuf};

use support::{assert_refused, folder, generate_into, operator_rs, run_ok, tree};

/// A project with every kind of record PROJECT has: two versions, a cluster-scoped kind with an
/// irregular plural, a built-in controller, webhooks of each type (one on a built-in kind, at a
/// custom path) created out of the resources' order, and a deploy-image kind.
fn scaffold(dir: &Path, license: &[&str]) {
    let mut init = vec![
        "init",
        "--domain",
        "example.com",
        "--repo",
        "example.com/crew",
    ];
    init.extend(license);
    run_ok(dir, &init);
    for line in [
        "create api --group crew --version v1 --kind FirstMate",
        "create api --group crew --version v2 --kind FirstMate --controller=false",
        "create api --group crew --version v1 --kind Admiral --plural admirales --namespaced=false",
        "create webhook --group core --version v1 --kind Pod --defaulting --defaulting-path=/mutate-pods",
        "create api --group apps --version v1 --kind Deployment --resource=false --controller",
        "create api --group crew --version v1 --kind Memcached --image=memcached:1.6.26-alpine3.19 --image-container-port=11211",
        "create webhook --group crew --version v1 --kind Admiral --plural admirales --programmatic-validation",
        "create webhook --group crew --version v1 --kind FirstMate --conversion --spoke v2",
        "create webhook --group crew --version v1 --kind Admiral --plural admirales --defaulting",
    ] {
        let mut args: Vec<&str> = line.split(' ').collect();
        args.push("--make=false");
        run_ok(dir, &args);
    }
}

#[test]
fn generate_gives_the_same_tree_file_for_file() {
    for license in [
        &["--owner", "Zoë's Corp"][..],
        &["--license", "copyright", "--owner", "Acme"],
        // A sharded project too: `init --sharding` writes it again.
        &["--license", "none", "--sharding"],
    ] {
        let (tmp, dir) = folder("crew");
        scaffold(&dir, license);
        let out = tmp.path().join("regenerated");
        generate_into(&dir, &out);
        assert_eq!(tree(&dir), tree(&out), "{license:?}");
    }
}

#[test]
fn generate_keeps_a_license_file_header_as_it_is() {
    let (tmp, dir) = folder("crew");
    let header = tmp.path().join("header.txt");
    std::fs::write(&header, "/*\nCopyright 2019 The Fleet authors.\n*/\n").unwrap();
    let header_arg = header.display().to_string();
    scaffold(&dir, &["--license-file", &header_arg]);
    let out = tmp.path().join("regenerated");
    generate_into(&dir, &out);
    assert_eq!(tree(&dir), tree(&out));
}

#[test]
fn generate_rebuilds_a_project_of_which_only_project_is_left() {
    let (tmp, dir) = folder("crew");
    scaffold(&dir, &["--owner", "Acme"]);
    let whole = tree(&dir);
    let kept = tmp.path().join("kept");
    std::fs::create_dir_all(kept.join("hack")).unwrap();
    for file in ["PROJECT", "hack/boilerplate.rs.txt"] {
        std::fs::copy(dir.join(file), kept.join(file)).unwrap();
    }
    std::fs::create_dir(kept.join(".git")).unwrap();
    std::fs::write(kept.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
    // What a day's work leaves: `make build` and cargo's output.
    for (path, contents) in [("bin/manager", &[0x7f, 0xff][..]), ("target/debug/x", b"x")] {
        std::fs::create_dir_all(kept.join(path).parent().unwrap()).unwrap();
        std::fs::write(kept.join(path), contents).unwrap();
    }
    run_ok(&kept, &["alpha", "generate", "--make=false"]);
    let mut rebuilt = tree(&kept);
    for left in [".git/HEAD", "bin/manager", "target/debug/x"] {
        assert!(rebuilt.remove(left).is_some(), "{left}");
    }
    assert_eq!(whole, rebuilt);
}

#[test]
fn generate_refuses_to_write_over_files() {
    let (tmp, dir) = folder("crew");
    scaffold(&dir, &[]);
    // In place: the project's files are there.
    assert_refused(
        &dir,
        &["alpha", "generate"],
        &["holds a project", "--output-dir", "alpha update"],
    );
    // Elsewhere: the folder must be new or empty.
    let other = tmp.path().join("other");
    std::fs::create_dir(&other).unwrap();
    std::fs::write(other.join("notes.txt"), "mine").unwrap();
    let other_arg = other.display().to_string();
    assert_refused(
        &dir,
        &["alpha", "generate", "--output-dir", &other_arg],
        &["is not empty", "notes.txt"],
    );
    assert_eq!(
        std::fs::read_to_string(other.join("notes.txt")).unwrap(),
        "mine"
    );
    // No PROJECT to read.
    let empty = tmp.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    assert_refused(
        &empty,
        &["alpha", "generate"],
        &["PROJECT", "operator-rs init"],
    );
}

/// A stand-in for an older operator-rs: `operator-rs 0.0.9` that scaffolds what this binary does,
/// except that its Makefile's `lint` help text and its controller's resync period differ.
fn older_release(dir: &Path) -> PathBuf {
    let this = assert_cmd::cargo::cargo_bin("operator-rs");
    let script = dir.join("operator-rs-0.0.9");
    std::fs::write(
        &script,
        format!(
            r#"#!/bin/sh
if [ "$1" = version ]; then echo "operator-rs 0.0.9 (a stand-in)"; exit 0; fi
'{this}' "$@" || exit $?
if [ -f Makefile ]; then sed -i 's/Run cargo clippy/Run clippy (0.0.9)/' Makefile; fi
for f in src/controller/*.rs; do
  [ -f "$f" ] && sed -i 's/from_secs(5 \* 60)/from_secs(3 * 60)/' "$f"
done
exit 0
"#,
            this = this.display()
        ),
    )
    .unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    script
}

/// The project as the stand-in for 0.0.9 scaffolds it, with PROJECT's cliVersion 0.0.9.
fn project_from_older_release(dir: &Path, older: &Path) {
    for line in [
        "init --domain example.com --owner Acme",
        "create api --group crew --version v1 --kind Captain --make=false",
        "create api --group crew --version v1 --kind Sailor --make=false",
    ] {
        let out = std::process::Command::new(older)
            .args(line.split(' '))
            .current_dir(dir)
            .env("SOURCE_DATE_EPOCH", "1790000000")
            .output()
            .unwrap();
        assert!(out.status.success(), "{line}: {out:?}");
    }
    let project = std::fs::read_to_string(dir.join("PROJECT")).unwrap();
    let version = format!("cliVersion: {}", env!("CARGO_PKG_VERSION"));
    std::fs::write(
        dir.join("PROJECT"),
        project.replace(&version, "cliVersion: 0.0.9"),
    )
    .unwrap();
}

fn edit(path: &Path, from: &str, to: &str) {
    let text = std::fs::read_to_string(path).unwrap();
    assert!(text.contains(from), "{} lacks {from:?}", path.display());
    std::fs::write(path, text.replacen(from, to, 1)).unwrap();
}

#[test]
fn update_merges_edits_lists_conflicts_and_replaces_the_runtime() {
    let (tmp, dir) = folder("crew");
    let older = older_release(tmp.path());
    project_from_older_release(&dir, &older);
    // The user's edits: one where the new scaffold changed nothing (kept), one in a file the new
    // scaffold changed elsewhere (merged), one on the very line it changed (a conflict).
    edit(
        &dir.join("src/api/v1/captain.rs"),
        "pub foo: Option<String>,",
        "pub foo: Option<String>,\n    /// Hand-written.\n    pub ships: Option<u32>,",
    );
    edit(
        &dir.join("Makefile"),
        "##@ Build",
        "##@ Fleet\n\nfleet: ## Hand-written.\n\techo fleet\n\n##@ Build",
    );
    edit(
        &dir.join("src/controller/captain.rs"),
        "from_secs(3 * 60)",
        "from_secs(60)",
    );
    // What a day's work leaves: the manager `make build` wrote (a binary), cargo's output and a
    // file the project's .gitignore ignores. None of it is the project's, nor merged.
    std::fs::create_dir_all(dir.join("bin")).unwrap();
    std::fs::write(dir.join("bin/manager"), [0x7f, b'E', b'L', b'F', 0xff, 0]).unwrap();
    std::fs::create_dir_all(dir.join("target/debug")).unwrap();
    std::fs::write(dir.join("target/debug/manager"), [0xff, 0]).unwrap();
    std::fs::write(dir.join("test.kubeconfig"), "apiVersion: v1\n").unwrap();
    // An old runtime file that the new runtime does not have, and a changed one.
    std::fs::write(dir.join("operator-rs-runtime/src/gone.rs"), "// old\n").unwrap();
    edit(
        &dir.join("operator-rs-runtime/src/lib.rs"),
        "//!",
        "// changed by hand\n//!",
    );

    let older_arg = older.display().to_string();
    let out = run_ok(
        &dir,
        &[
            "alpha",
            "update",
            "--from-binary",
            &older_arg,
            "--make=false",
            "--in-place",
        ],
    );
    let read = |p: &str| std::fs::read_to_string(dir.join(p)).unwrap();
    // Kept: the scaffold did not change the API file.
    assert!(read("src/api/v1/captain.rs").contains("pub ships: Option<u32>,"));
    // Merged: the Makefile has both the user's target and the new help text.
    let makefile = read("Makefile");
    assert!(makefile.contains("fleet: ## Hand-written."), "{makefile}");
    assert!(makefile.contains("Run cargo clippy"), "{makefile}");
    assert!(out.contains("merged Makefile"), "{out}");
    // Untouched by the user: the new scaffold's.
    assert!(read("src/controller/sailor.rs").contains("from_secs(5 * 60)"));
    // Conflict: both changed the resync period of the Captain controller.
    let captain = read("src/controller/captain.rs");
    assert!(
        captain.contains("<<<<<<< yours\n")
            && captain.contains("from_secs(60)")
            && captain.contains("from_secs(5 * 60)")
            && captain.contains(">>>>>>> operator-rs ")
    );
    assert!(out.contains("CONFLICT src/controller/captain.rs"), "{out}");
    // The runtime is this release's, whole.
    assert!(!dir.join("operator-rs-runtime/src/gone.rs").exists());
    assert!(!read("operator-rs-runtime/src/lib.rs").contains("changed by hand"));
    assert!(read("PROJECT").contains(&format!("cliVersion: {}", env!("CARGO_PKG_VERSION"))));
    // The build output is left as it was.
    assert_eq!(
        std::fs::read(dir.join("bin/manager")).unwrap()[..4],
        [0x7f, b'E', b'L', b'F']
    );
    assert_eq!(read("test.kubeconfig"), "apiVersion: v1\n");
}

/// Runs git in `dir`; its stdout.
fn git(dir: &Path, args: &[&str]) -> String {
    let out = std::process::Command::new("git")
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {out:?}");
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// A git repository of the project, with everything committed on `main`.
fn commit_all(dir: &Path, message: &str) {
    if !dir.join(".git").exists() {
        git(dir, &["init", "--quiet", "--initial-branch=main"]);
        git(dir, &["config", "user.name", "t"]);
        git(dir, &["config", "user.email", "t@example.com"]);
    }
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "--quiet", "-m", message]);
}

/// The stand-in project of 0.0.9 in git, with the user's edits committed: one the new scaffold
/// merges with (the Makefile) and, if `conflicting`, one on the very line it changed.
fn project_in_git(dir: &Path, older: &Path, conflicting: bool) {
    project_from_older_release(dir, older);
    commit_all(dir, "the project as 0.0.9 made it");
    edit(
        &dir.join("Makefile"),
        "##@ Build",
        "##@ Fleet\n\nfleet: ## Hand-written.\n\techo fleet\n\n##@ Build",
    );
    if conflicting {
        edit(
            &dir.join("src/controller/captain.rs"),
            "from_secs(3 * 60)",
            "from_secs(60)",
        );
    }
    commit_all(dir, "the user's edits");
}

#[test]
fn update_on_branches_commits_the_merge_with_conflicts_listed_and_marked() {
    let (tmp, dir) = folder("crew");
    let older = older_release(tmp.path());
    project_in_git(&dir, &older, true);
    let main = git(&dir, &["rev-parse", "main"]);
    let older_arg = older.display().to_string();
    let update = [
        "alpha",
        "update",
        "--from-binary",
        &older_arg,
        "--make=false",
    ];
    let out_branch = format!(
        "operator-rs-update-from-0.0.9-to-{}",
        env!("CARGO_PKG_VERSION")
    );

    // Without --force a conflict is not committed: the two sides are left on branches whose
    // merge base is the ancestor, for `git merge` by hand; the work tree is as it was.
    let before = tree(&dir);
    let out = operator_rs(&dir).args(update).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stdout}");
    assert!(
        stdout.contains("CONFLICT src/controller/captain.rs"),
        "{stdout}"
    );
    assert!(
        stderr.contains("--force") && stderr.contains("git merge"),
        "{stderr}"
    );
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
    assert!(git(&dir, &["branch", "--list", &out_branch]).is_empty());
    let base = git(
        &dir,
        &[
            "merge-base",
            &format!("{out_branch}-original"),
            &format!("{out_branch}-upgrade"),
        ],
    );
    assert_eq!(git(&dir, &["rev-parse", &format!("{base}^")]), main);
    assert_eq!(git(&dir, &["status", "--porcelain"]), "");
    let worktree = |t: &support::Tree| -> support::Tree {
        t.iter()
            .filter(|(p, _)| !p.starts_with(".git/"))
            .map(|(p, b)| (p.clone(), b.clone()))
            .collect()
    };
    assert_eq!(worktree(&before), worktree(&tree(&dir)));

    // With --force the merge is committed, markers and all, and checked out; --show-commits
    // keeps kubebuilder's history, in the conflict style --git-config asks for.
    let mut forced = update.to_vec();
    forced.extend([
        "--force",
        "--show-commits",
        "--git-config",
        "merge.conflictStyle=diff3",
    ]);
    let out = run_ok(&dir, &forced);
    assert!(out.contains("CONFLICT src/controller/captain.rs"), "{out}");
    assert!(out.contains("merged Makefile"), "{out}");
    assert_eq!(git(&dir, &["branch", "--show-current"]), out_branch);
    assert_eq!(git(&dir, &["status", "--porcelain"]), "");
    assert_eq!(git(&dir, &["rev-parse", "main"]), main, "main moved");
    let read = |p: &str| std::fs::read_to_string(dir.join(p)).unwrap();
    let captain = read("src/controller/captain.rs");
    assert!(
        captain.contains("<<<<<<< yours\n")
            && captain.contains("from_secs(60)")
            && captain.contains("from_secs(5 * 60)"),
        "{captain}"
    );
    let makefile = read("Makefile");
    assert!(makefile.contains("fleet: ## Hand-written.") && makefile.contains("Run cargo clippy"));
    assert!(read("PROJECT").contains(&format!("cliVersion: {}", env!("CARGO_PKG_VERSION"))));
    // kubebuilder's history: a merge of the original (the user's HEAD on the ancestor) and the
    // upgrade, whose merge base is the ancestor on main; the message lists the conflicts.
    let parents: Vec<String> = git(&dir, &["rev-list", "--parents", "-n1", "HEAD"])
        .split(' ')
        .skip(1)
        .map(str::to_string)
        .collect();
    assert_eq!(parents.len(), 2, "{parents:?}");
    let ancestor = git(&dir, &["merge-base", &parents[0], &parents[1]]);
    assert_eq!(git(&dir, &["rev-parse", &format!("{ancestor}^")]), main);
    assert_eq!(
        git(&dir, &["rev-parse", &format!("{}^{{tree}}", parents[0])]),
        git(&dir, &["rev-parse", "main^{tree}"])
    );
    let message = git(&dir, &["log", "-1", "--format=%B"]);
    assert!(
        message.starts_with(&format!(
            "chore(operator-rs): (:warning: manual conflict resolution required) update scaffold \
             0.0.9 -> {}",
            env!("CARGO_PKG_VERSION")
        )) && message.contains("- src/controller/captain.rs"),
        "{message}"
    );
    assert!(captain.contains("||||||| operator-rs 0.0.9\n"), "{captain}");
    let ancestor_makefile = git(&dir, &["show", &format!("{ancestor}:Makefile")]);
    assert!(ancestor_makefile.contains("Run clippy (0.0.9)"));
}

/// kubebuilder's default: one commit on the base branch, with `--restore-path`, the messages
/// and `--push` as kubebuilder's auto-update workflow passes them.
#[test]
fn update_squashes_by_default_onto_the_named_branch_and_pushes_it() {
    let (tmp, dir) = folder("crew");
    let older = older_release(tmp.path());
    project_in_git(&dir, &older, false);
    let origin = tmp.path().join("origin.git");
    git(
        tmp.path(),
        &["init", "--quiet", "--bare", origin.to_str().unwrap()],
    );
    git(&dir, &["remote", "add", "origin", origin.to_str().unwrap()]);
    let main = git(&dir, &["rev-parse", "main"]);
    let older_arg = older.display().to_string();
    let out = run_ok(
        &dir,
        &[
            "alpha",
            "update",
            "--from-binary",
            &older_arg,
            "--make=false",
            "--output-branch",
            "upkeep",
            "--push",
            "--restore-path",
            "src/controller/sailor.rs",
            "--merge-message",
            "chore: upkeep",
        ],
    );
    assert!(!out.contains("CONFLICT"), "{out}");
    assert_eq!(git(&dir, &["branch", "--show-current"]), "upkeep");
    assert_eq!(git(&dir, &["rev-list", "--count", "main..upkeep"]), "1");
    assert_eq!(git(&dir, &["rev-parse", "upkeep^"]), main);
    assert_eq!(git(&dir, &["log", "-1", "--format=%B"]), "chore: upkeep");
    let changed = git(&dir, &["diff", "--name-only", "main", "upkeep"]);
    for path in ["Makefile", "PROJECT", "src/controller/captain.rs"] {
        assert!(
            changed.lines().any(|l| l == path),
            "{path} not in {changed}"
        );
    }
    // The restored path is as main has it.
    assert!(!changed.contains("src/controller/sailor.rs"), "{changed}");
    assert!(
        out.contains("restored src/controller/sailor.rs: left as it was"),
        "{out}"
    );
    let makefile = std::fs::read_to_string(dir.join("Makefile")).unwrap();
    assert!(makefile.contains("fleet: ## Hand-written.") && makefile.contains("Run cargo clippy"));
    assert_eq!(
        git(&origin, &["rev-parse", "upkeep"]),
        git(&dir, &["rev-parse", "upkeep"])
    );
}

/// `--from-branch` names the base (not the branch checked out), and `--open-gh-issue` opens an
/// issue with `gh` that links base and output; without `gh` it is refused before anything runs.
#[test]
fn update_from_a_named_branch_opens_an_issue_with_gh() {
    let (tmp, dir) = folder("crew");
    let older = older_release(tmp.path());
    project_in_git(&dir, &older, false);
    git(&dir, &["checkout", "--quiet", "-b", "elsewhere"]);
    edit(&dir.join("README.md"), "#", "# (elsewhere)\n#");
    commit_all(&dir, "work elsewhere");
    let older_arg = older.display().to_string();
    let update = [
        "alpha",
        "update",
        "--from-binary",
        &older_arg,
        "--make=false",
        "--from-branch",
        "main",
        "--open-gh-issue",
    ];

    // A PATH with git and without gh.
    let git_only = tmp.path().join("git-only");
    std::fs::create_dir_all(&git_only).unwrap();
    let git_path = std::process::Command::new("sh")
        .args(["-c", "command -v git"])
        .output()
        .unwrap();
    let git_path = String::from_utf8(git_path.stdout).unwrap();
    std::os::unix::fs::symlink(git_path.trim(), git_only.join("git")).unwrap();
    let before = tree(&dir);
    let out = operator_rs(&dir)
        .args(update)
        .env("PATH", &git_only)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(stderr.contains("`gh` CLI, which was not found"), "{stderr}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
    assert_eq!(before, tree(&dir));

    // A stand-in for gh that logs what it is asked.
    let bin = tmp.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let log = tmp.path().join("gh.log");
    support::executable(
        &bin.join("gh"),
        &format!(
            "#!/bin/sh\nprintf '%s\\n' \"$*\" >> '{log}'\ncase \"$1 $2\" in\n\
             'repo view') echo acme/crew ;;\n\
             'issue create') echo https://github.com/acme/crew/issues/7 ;;\n\
             esac\n",
            log = log.display()
        ),
    );
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
    let out = operator_rs(&dir)
        .args(update)
        .env("PATH", path)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let branch = format!(
        "operator-rs-update-from-0.0.9-to-{}",
        env!("CARGO_PKG_VERSION")
    );
    assert_eq!(
        git(&dir, &["rev-parse", &format!("{branch}^")]),
        git(&dir, &["rev-parse", "main"])
    );
    assert!(!git(&dir, &["show", &format!("{branch}:README.md")]).contains("(elsewhere)"));
    assert!(
        stdout.contains("Opened https://github.com/acme/crew/issues/7"),
        "{stdout}"
    );
    let asked = std::fs::read_to_string(&log).unwrap();
    assert!(
        asked.contains("issue create --repo acme/crew --title [Action Required] Upgrade the Scaffold: 0.0.9 -> ")
            && asked.contains(&format!("https://github.com/acme/crew/compare/main...{branch}?expand=1")),
        "{asked}"
    );
}

/// `--dry-run` commits nothing; `--force` with uncommitted changes commits the update from HEAD
/// and leaves the changes, and the branch checked out, where they are.
#[test]
fn update_dry_run_and_forced_over_uncommitted_changes() {
    let (tmp, dir) = folder("crew");
    let older = older_release(tmp.path());
    project_in_git(&dir, &older, false);
    let older_arg = older.display().to_string();
    let update = [
        "alpha",
        "update",
        "--from-binary",
        &older_arg,
        "--make=false",
    ];
    let before = tree(&dir);
    let mut dry = update.to_vec();
    dry.push("--dry-run");
    let out = run_ok(&dir, &dry);
    assert!(
        out.contains("merged Makefile") && out.contains("nothing was committed"),
        "{out}"
    );
    assert_eq!(before, tree(&dir));

    edit(&dir.join("README.md"), "#", "# (work in progress)\n#");
    let mut forced = update.to_vec();
    forced.extend(["--force", "--output-branch", "upkeep"]);
    let out = run_ok(&dir, &forced);
    assert!(out.contains("uncommitted changes are left"), "{out}");
    assert_eq!(git(&dir, &["branch", "--show-current"]), "main");
    assert_eq!(
        git(&dir, &["status", "--porcelain", "--untracked-files=no"]),
        "M README.md"
    );
    let committed = git(&dir, &["show", "upkeep:README.md"]);
    assert!(!committed.contains("(work in progress)"));
    assert!(git(&dir, &["show", "upkeep:Makefile"]).contains("fleet: ## Hand-written."));
}

#[test]
fn update_refusals_change_nothing() {
    let (tmp, dir) = folder("crew");
    let older = older_release(tmp.path());
    project_from_older_release(&dir, &older);
    let older_arg = older.display().to_string();
    // Branches need git.
    assert_refused(
        &dir,
        &["alpha", "update", "--from-binary", &older_arg],
        &["not in a git repository", "--in-place"],
    );
    commit_all(&dir, "x");
    // No binary of the release that made the project, and none on crates.io.
    assert_refused(
        &dir,
        &["alpha", "update", "--from-version", "0.0.0-unknown"],
        &[
            "operator-rs 0.0.0-unknown could not be installed",
            "--from-binary",
        ],
    );
    let this = assert_cmd::cargo::cargo_bin("operator-rs");
    let this_arg = this.display().to_string();
    assert_refused(
        &dir,
        &["alpha", "update", "--from-binary", &this_arg],
        &["is operator-rs", "made by operator-rs 0.0.9"],
    );
    assert_refused(
        &dir,
        &["alpha", "update", "--from-binary", "/bin/true"],
        &["not an operator-rs binary"],
    );
    // An output branch that exists, or is no branch name.
    assert_refused(
        &dir,
        &[
            "alpha",
            "update",
            "--from-binary",
            &older_arg,
            "--output-branch",
            "main",
        ],
        &["branch main exists already"],
    );
    assert_refused(
        &dir,
        &[
            "alpha",
            "update",
            "--from-binary",
            &older_arg,
            "--output-branch",
            "a..b",
        ],
        &["not a valid git branch name"],
    );
    assert_refused(
        &dir,
        &[
            "alpha",
            "update",
            "--from-binary",
            &older_arg,
            "--in-place",
            "--squash",
        ],
        &["--in-place"],
    );
    assert_refused(
        &dir,
        &[
            "alpha",
            "update",
            "--from-binary",
            &older_arg,
            "--from-branch",
            "trunk",
        ],
        &["--from-branch \"trunk\"", "does not exist locally"],
    );
    assert_refused(
        &dir,
        &[
            "alpha",
            "update",
            "--show-commits",
            "--restore-path",
            "docs",
        ],
        &["--restore-path", "not supported with --show-commits"],
    );
    // Uncommitted changes, on branches and in place.
    edit(&dir.join("Makefile"), "##@ Build", "##@ Building");
    for mode in [&[][..], &["--in-place"][..]] {
        let mut args = vec!["alpha", "update", "--from-binary", &older_arg];
        args.extend(mode);
        assert_refused(&dir, &args, &["uncommitted changes", "--force"]);
    }
}

#[test]
fn update_on_the_current_release_has_nothing_to_do() {
    let (_tmp, dir) = folder("crew");
    run_ok(&dir, &["init", "--domain", "example.com"]);
    let before = tree(&dir);
    let out = run_ok(&dir, &["alpha", "update"]);
    assert!(out.contains("nothing to do"), "{out}");
    assert_eq!(before, tree(&dir));
}

fn fixture(name: &str) -> String {
    format!("{}/tests/data/{name}", env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn migrate_carries_kubebuilders_project_v4_over_and_lists_what_it_cannot() {
    let (_tmp, dir) = folder("project-v4-rs");
    let out = run_ok(
        &dir,
        &[
            "alpha",
            "migrate",
            "--from",
            &fixture("kubebuilder-project-v4"),
            "--make=false",
        ],
    );
    let project = std::fs::read_to_string(dir.join("PROJECT")).unwrap();
    for record in [
        "domain: testproject.org",
        "projectName: project-v4",
        "repo: sigs.k8s.io/kubebuilder/testdata/project-v4",
        "  kind: Admiral\n  path: crate::api::v1\n  plural: admirales",
        "    defaultingPath: /custom-mutate-sailor",
        "    spoke:\n    - v2",
        "  kind: Navigator",
    ] {
        assert!(
            project.contains(record),
            "{record:?} missing from\n{project}"
        );
    }
    // Apache 2.0 by "The Kubernetes authors", as `// ` lines.
    let header = std::fs::read_to_string(dir.join("hack/boilerplate.rs.txt")).unwrap();
    assert!(header.starts_with("// Copyright 2026 The Kubernetes authors.\n//\n// Licensed"));
    for missing in [
        "Certificate cert-manager/v1",
        "Issuer cert-manager/v1",
        "captain-backup",
    ] {
        assert!(out.contains(missing), "{missing:?} not reported:\n{out}");
    }
}

#[test]
fn migrate_translates_the_fields_of_the_go_types() {
    let (_tmp, dir) = folder("memcached-operator-rs");
    run_ok(
        &dir,
        &[
            "alpha",
            "migrate",
            "--from",
            &fixture("go-memcached"),
            "--make=false",
        ],
    );
    let api = std::fs::read_to_string(dir.join("src/api/v1alpha1/memcached.rs")).unwrap();
    for field in [
        "#[schemars(range(min = 1, max = 3))]\n    pub size: i32,",
        "pub backup: Option<MemcachedSpecBackup>,",
        "pub struct MemcachedSpecBackup {",
        "pub schedule: String,",
        "#[schemars(length(max = 8))]\n    pub extra_args: Option<Vec<String>>,",
        "#[schemars(extend(\"default\" = \"Safe\"))]\n    pub mode: Option<MemcachedSpecMode>,",
        "pub enum MemcachedSpecMode {\n    Fast,\n    #[default]\n    Safe,\n}",
        // Go's names that Rust must work around: keywords, collisions, keyword enum values.
        "pub r#match: Option<MemcachedSpecMatch>,",
        "pub self_: Option<bool>,",
        "pub r#type: Option<MemcachedSpecMatchType>,",
        "#[serde(rename = \"async\")]\n    Async,",
        "rename = \"fooBar\")]\n    pub foo_bar_2: Option<String>,",
        "rename = \"foo_bar\")]\n    pub foo_bar: Option<String>,",
        // Fields the schema does not name are kept, and the CRD says so.
        "#[schemars(extend(\"x-kubernetes-preserve-unknown-fields\" = true))]\npub struct MemcachedSpecEvictionPolicy {",
        // Code in descriptions is text, never a doctest.
        "    /// ```text\n    /// evictionPolicy:\n    ///   threads: 4\n    /// ```\n",
        "pub memory: Option<k8s_openapi::apimachinery::pkg::util::intstr::IntOrString>,",
        "pub ready_replicas: Option<i32>,",
        "pub conditions: Vec<Condition>,",
    ] {
        assert!(api.contains(field), "{field:?} missing from\n{api}");
    }
    assert!(!api.contains("pub foo:"), "{api}");
    let sample =
        std::fs::read_to_string(dir.join("config/samples/cache_v1alpha1_memcached.yaml")).unwrap();
    assert!(sample.contains("  size: 2\n"), "{sample}");
}

#[test]
fn migrate_refuses_what_it_cannot_read_and_changes_nothing() {
    let (tmp, dir) = folder("out");
    let not_a_project = tmp.path().join("empty");
    std::fs::create_dir(&not_a_project).unwrap();
    let arg = not_a_project.display().to_string();
    assert_refused(
        &dir,
        &["alpha", "migrate", "--from", &arg],
        &["PROJECT", "kubebuilder project"],
    );
    // An operator-rs project is updated, not migrated.
    let rust = tmp.path().join("rust");
    std::fs::create_dir(&rust).unwrap();
    run_ok(&rust, &["init", "--domain", "example.com"]);
    let arg = rust.display().to_string();
    assert_refused(
        &dir,
        &["alpha", "migrate", "--from", &arg],
        &["alpha update"],
    );
    // The output must be empty.
    std::fs::write(dir.join("notes.txt"), "mine").unwrap();
    assert_refused(
        &dir,
        &["alpha", "migrate", "--from", &fixture("go-memcached")],
        &["not empty", "notes.txt"],
    );
}

/// One CRD, both commands: `alpha migrate` of the Go project and `create api
/// --external-api-path` of its CRD give the same Rust types (structs, enums, field names, wire
/// names, field types); only their attributes differ (schemars validations and the scaffold's
/// `conditions` for the kind the project owns, `#[kube(...)]` for the other project's).
#[test]
fn migrate_and_external_kinds_give_the_same_types_for_one_crd() {
    use support::serde_model::{Model, same_types};
    let (_tmp, migrated) = folder("memcached-operator-rs");
    run_ok(
        &migrated,
        &[
            "alpha",
            "migrate",
            "--from",
            &fixture("go-memcached"),
            "--make=false",
        ],
    );
    let (_tmp2, external) = folder("uses-memcached");
    run_ok(&external, &["init", "--domain", "example.org"]);
    let crd = format!(
        "{}/config/crd/bases/cache.example.com_memcacheds.yaml",
        fixture("go-memcached")
    );
    run_ok(
        &external,
        &[
            "create",
            "api",
            "--group",
            "cache",
            "--external-api-domain",
            "example.com",
            "--version",
            "v1alpha1",
            "--kind",
            "Memcached",
            "--resource=false",
            "--external-api-path",
            &crd,
            "--make=false",
        ],
    );
    let model = |dir: &std::path::Path, path: &str| {
        let source = std::fs::read_to_string(dir.join(path)).unwrap();
        Model::parse(&source).unwrap_or_else(|e| panic!("{path}: {e}"))
    };
    let migrated = model(&migrated, "src/api/v1alpha1/memcached.rs");
    let external = model(&external, "src/external/cache/v1alpha1/memcached.rs");
    same_types(&external, &migrated, "MemcachedSpec", &[]);
    same_types(&external, &migrated, "MemcachedStatus", &["conditions"]);
    // The fixture has what differed between the two mappings before they were one: string
    // enums, objects that keep unknown fields, and names that collide in snake_case.
    assert!(migrated.enums.contains_key("MemcachedSpecMode"));
    assert!(
        migrated.structs["MemcachedSpecEvictionPolicy"]
            .fields
            .iter()
            .any(|f| f.flatten)
    );
}

/// Every command that writes PROJECT records its release as `cliVersion`: the scaffold `alpha
/// update` starts from is the one of the last command that wrote the project.
#[test]
fn every_command_that_writes_project_records_its_release() {
    let (_tmp, dir) = folder("crew");
    run_ok(&dir, &["init", "--domain", "example.com"]);
    let this = format!("cliVersion: {}", env!("CARGO_PKG_VERSION"));
    for command in [
        "create api --group crew --version v1 --kind Captain --make=false",
        "create webhook --group crew --version v1 --kind Captain --defaulting --make=false",
        "edit --plugins grafana/v1-alpha",
    ] {
        let project = std::fs::read_to_string(dir.join("PROJECT")).unwrap();
        std::fs::write(
            dir.join("PROJECT"),
            project.replace(&this, "cliVersion: 0.0.1"),
        )
        .unwrap();
        run_ok(&dir, &command.split(' ').collect::<Vec<_>>());
        let project = std::fs::read_to_string(dir.join("PROJECT")).unwrap();
        assert!(project.contains(&this), "{command}: {project}");
    }
}
