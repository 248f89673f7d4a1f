//! All or nothing under faults: a write that fails (injected, or a real full
//! disk), SIGINT and SIGTERM at random moments, SIGKILL in the middle of a commit, two commands at
//! once. After each, the folder is byte for byte as it was, or complete, and holds no temporary
//! file; a refusal is one line on stderr.
//!
//! Faults are injected with `OPERATOR_RS_FAULT` (see src/scaffold/fault.rs; read by debug builds,
//! which `cargo test` builds). Unix only: signals, file modes and symbolic links.
#![cfg(unix)]

mod support;

use std::fs;
use std::os::unix::fs::PermissionsExt as _;
use std::os::unix::process::ExitStatusExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Output, Stdio};
use std::time::{Duration, Instant};

use support::{Tree, assert_refused, dirs, folder, run_ok, tree};

const INIT: &[&str] = &["init", "--domain", "example.com", "--owner", "Acme"];
const API: &[&str] = &[
    "create",
    "api",
    "--group",
    "cache",
    "--version",
    "v1",
    "--kind",
    "Memcached",
    "--make=false",
];
const LOCK: &str = ".operator-rs.lock";
const JOURNAL: &str = ".operator-rs.journal";

/// A folder's whole state: its files with their bytes, and its directories.
type State = (Tree, Vec<String>);

fn state(dir: &Path) -> State {
    (tree(dir), dirs(dir))
}

/// A project named "demo" after running `commands` in it.
fn project(commands: &[&[&str]]) -> (tempfile::TempDir, PathBuf) {
    let (tmp, dir) = folder("demo");
    for args in commands {
        run_ok(&dir, args);
    }
    (tmp, dir)
}

/// A copy of the project in `reference`, in a new folder named "demo": faster than running its
/// commands again.
fn copy_of(reference: &Path) -> (tempfile::TempDir, PathBuf) {
    let (tmp, dir) = folder("demo");
    for entry in walkdir::WalkDir::new(reference).min_depth(1) {
        let entry = entry.unwrap();
        let to = dir.join(entry.path().strip_prefix(reference).unwrap());
        if entry.file_type().is_dir() {
            fs::create_dir(&to).unwrap();
        } else {
            fs::copy(entry.path(), &to).unwrap();
        }
    }
    (tmp, dir)
}

/// The files operator-rs keeps only while a command runs: temporary files, backups, the journal
/// and the lock file. None may survive a command.
fn leftovers(dir: &Path) -> Vec<String> {
    (tree(dir).into_keys())
        .filter(|path| path.contains(".operator-rs"))
        .collect()
}

/// operator-rs in `dir`, as support::operator_rs runs it, with `fault` injected.
fn command(dir: &Path, fault: &str, args: &[&str]) -> std::process::Command {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_operator-rs"));
    cmd.current_dir(dir)
        .args(args)
        .env("SOURCE_DATE_EPOCH", "1790000000")
        .env("OPERATOR_RS_FAULT", fault)
        .env_remove("RUST_BACKTRACE")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd
}

fn run(dir: &Path, fault: &str, args: &[&str]) -> Output {
    command(dir, fault, args).output().expect("runs")
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// The paths `args` would write, in the order it writes them (from `--dry-run`).
fn planned(dir: &Path, args: &[&str]) -> Vec<String> {
    let out = run(dir, "", &[args, &["--dry-run"]].concat());
    assert!(out.status.success(), "{}", stderr(&out));
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|line| {
            line.split_once(' ')
                .map(|(_, path)| path.trim().to_string())
        })
        .filter(|path| !path.contains(' '))
        .collect()
}

/// Runs `args` with `fault` injected, which must make it fail: non-zero, one line on stderr with
/// every `expected` piece, the folder exactly as it was.
fn assert_fails_cleanly(dir: &Path, fault: &str, args: &[&str], expected: &[&str]) {
    let before = state(dir);
    let out = run(dir, fault, args);
    let err = stderr(&out);
    assert!(!out.status.success(), "{fault}: {args:?} succeeded");
    assert_eq!(out.status.code(), Some(1), "{fault}: {err}");
    assert_eq!(
        err.trim_end().lines().count(),
        1,
        "{fault}: not one line: {err}"
    );
    for piece in expected {
        assert!(
            err.contains(piece),
            "{fault}: {err:?} does not mention {piece:?}"
        );
    }
    assert!(before == state(dir), "{fault}: {args:?} changed the folder");
}

#[test]
fn injected_failures_in_init_leave_the_folder_as_it_was() {
    // Every file is new.
    let (_tmp, dir) = folder("demo");
    let files = planned(&dir, INIT);
    let n = files.len();
    assert!(n > 50, "init plans only {n} files");
    for (step, k, says) in [
        ("write", 1, "No space left on device"),
        ("write", n / 2, "No space left on device"),
        ("write", n, "No space left on device"),
        ("rename", 1, "injected I/O error"),
        ("rename", n, "injected I/O error"),
    ] {
        let writing = format!("writing {}: ", files[k - 1]);
        assert_fails_cleanly(
            &dir,
            &format!("fail:{step}:{k}"),
            INIT,
            &[&writing, says, "left as it was"],
        );
    }
    // The journal, written first and again as the commit completes.
    for k in [1, 2] {
        assert_fails_cleanly(&dir, &format!("fail:journal:{k}"), INIT, &[JOURNAL]);
    }
}

#[test]
fn injected_failures_in_create_api_leave_the_project_as_it_was() {
    // New files, and updates of existing ones, which have backups.
    let (_tmp, dir) = project(&[INIT]);
    let files = planned(&dir, API);
    let n = files.len();
    for fault in [
        "fail:write:1".to_string(),
        format!("fail:write:{n}"),
        "fail:backup:1".to_string(),
        "fail:backup:3".to_string(),
        format!("fail:rename:{}", n - 1),
        format!("fail:rename:{n}"),
        "fail:journal:2".to_string(),
    ] {
        assert_fails_cleanly(&dir, &fault, API, &["error: "]);
    }
    assert!(leftovers(&dir).is_empty());
    // And with no fault the same command succeeds.
    run_ok(&dir, API);
}

/// A tmpfs mounted for one test, unmounted when dropped.
struct Tmpfs(PathBuf);

impl Tmpfs {
    /// Mounts a tmpfs of `size` at `at`, or says why not and returns None.
    fn mount(at: &Path, size: &str) -> Option<Tmpfs> {
        let out = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(at)
            .output();
        match out {
            Ok(out) if out.status.success() => Some(Tmpfs(at.to_path_buf())),
            Ok(out) => {
                eprintln!(
                    "skipped: cannot mount a small tmpfs to fill ({}); the injected \
                     failures cover the same paths",
                    String::from_utf8_lossy(&out.stderr).trim()
                );
                None
            }
            Err(err) => {
                eprintln!("skipped: cannot run mount ({err})");
                None
            }
        }
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount").arg(&self.0).status();
    }
}

#[test]
fn a_full_disk_leaves_the_folder_as_it_was() {
    let tmp = tempfile::tempdir().unwrap();
    // Room for the lock, the journal and a few files, not for a project.
    let Some(_disk) = Tmpfs::mount(tmp.path(), "96k") else {
        return;
    };
    let dir = tmp.path().join("demo");
    fs::create_dir(&dir).unwrap();
    assert_fails_cleanly(
        &dir,
        "",
        INIT,
        &["writing ", "No space left on device", "left as it was"],
    );
    assert!(dirs(&dir) == [""], "{:?}", dirs(&dir));
}

/// Waits until the journal of the command in `dir` exists (it has begun writing), or until
/// `child` has ended.
fn wait_for_journal(dir: &Path, child: &mut Child) {
    let start = Instant::now();
    while !dir.join(JOURNAL).exists() && child.try_wait().unwrap().is_none() {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "it never began writing"
        );
        std::thread::sleep(Duration::from_micros(200));
    }
}

/// How long `args` in a copy of `setup`, slowed down by `fault`, keeps its journal: the time from
/// its first write to the end of its commit.
fn commit_time(setup: &Path, fault: &str, args: &[&str]) -> Duration {
    let (_tmp, dir) = copy_of(setup);
    let mut child = command(&dir, fault, args).spawn().expect("runs");
    wait_for_journal(&dir, &mut child);
    let start = Instant::now();
    while dir.join(JOURNAL).exists() {
        std::thread::sleep(Duration::from_micros(200));
    }
    let took = start.elapsed();
    assert!(child.wait().unwrap().success());
    took
}

/// Starts `args` slowed down by `fault`, waits until it has begun writing, then `after` more,
/// sends it `signal` and waits for it to end.
fn interrupt(dir: &Path, fault: &str, args: &[&str], signal: &str, after: Duration) -> Output {
    let mut child = command(dir, fault, args).spawn().expect("runs");
    wait_for_journal(dir, &mut child);
    std::thread::sleep(after);
    let _ = std::process::Command::new("kill")
        .args(["-s", signal, &child.id().to_string()])
        .stderr(Stdio::null())
        .status();
    child.wait_with_output().expect("waits")
}

/// After `signal`: the folder is as it was, or complete (with an exit code that says which), with
/// no temporary file.
fn assert_as_before_or_complete(
    dir: &Path,
    out: &Output,
    signal: &str,
    before: &State,
    complete: &State,
) {
    let label = format!("SIG{signal}: {:?}, stderr {:?}", out.status, stderr(out));
    assert!(
        leftovers(dir).is_empty(),
        "{label}: left {:?}",
        leftovers(dir)
    );
    let (code, number) = if signal == "INT" { (130, 2) } else { (143, 15) };
    let after = state(dir);
    if after == *before {
        // Killed by the signal itself only before operator-rs can catch it, at its very start.
        assert!(
            out.status.code() == Some(code) || out.status.signal() == Some(number),
            "{label}"
        );
    } else if after == *complete {
        // Interrupted while renaming or after, or finished before the signal came.
        assert!(
            out.status.code() == Some(code) || out.status.success(),
            "{label}"
        );
    } else {
        panic!("{label}: the folder is neither as it was nor complete");
    }
    if out.status.code() == Some(code) {
        let err = stderr(out);
        assert_eq!(err.trim_end().lines().count(), 1, "{label}");
        assert!(
            err.contains(&format!("error: interrupted by SIG{signal}")),
            "{label}"
        );
        let said = if after == *before {
            "the project was left as it was"
        } else {
            "after every file was written"
        };
        assert!(err.contains(said), "{label}");
    }
}

/// Sends SIGINT and SIGTERM (in turn) to `args` in copies of `setup`, at moments spread over its
/// commit, from its first write to its end.
fn interrupt_commits(setup: &[&[&str]], fault: &str, args: &[&str], runs: u32) {
    let (_setup, setup) = project(setup);
    let (_ref, reference) = copy_of(&setup);
    run_ok(&reference, args);
    let complete = state(&reference);
    let window = commit_time(&setup, fault, args);
    for i in 0..runs {
        let signal = if i % 2 == 0 { "INT" } else { "TERM" };
        let (_tmp, dir) = copy_of(&setup);
        let before = state(&dir);
        let after = window * i / (runs - 1);
        let out = interrupt(&dir, fault, args, signal, after);
        assert_as_before_or_complete(&dir, &out, signal, &before, &complete);
    }
}

#[test]
fn sigint_and_sigterm_during_init_leave_the_folder_empty_or_complete() {
    // A millisecond after each write and rename stretches the commit of init's files over a few
    // hundred milliseconds.
    interrupt_commits(&[], "slow:1", INIT, 6);
}

#[test]
fn sigint_and_sigterm_during_create_api_leave_the_project_as_it_was_or_complete() {
    // Updates too, whose originals must come back.
    interrupt_commits(&[INIT], "slow:4", API, 5);
}

#[test]
fn a_signal_while_planning_changes_nothing() {
    // Sent a few milliseconds after the start, while init plans (or before it catches signals):
    // whatever it hits, the lock file goes too.
    let (_ref, reference) = project(&[INIT]);
    let complete = state(&reference);
    for (signal, ms) in [("INT", 2), ("TERM", 8), ("INT", 20)] {
        let (_tmp, dir) = folder("demo");
        let before = state(&dir);
        let child = command(&dir, "", INIT).spawn().unwrap();
        std::thread::sleep(Duration::from_millis(ms));
        let _ = std::process::Command::new("kill")
            .args(["-s", signal, &child.id().to_string()])
            .status();
        let out = child.wait_with_output().unwrap();
        assert_as_before_or_complete(&dir, &out, signal, &before, &complete);
    }
}

/// Runs `args` with a `kill:` fault: it must die of SIGKILL, leaving its journal.
fn killed(dir: &Path, fault: &str, args: &[&str]) {
    let out = run(dir, fault, args);
    assert_eq!(out.status.signal(), Some(9), "{fault}: {:?}", out.status);
    assert!(dir.join(JOURNAL).exists(), "{fault}: no journal left");
}

#[test]
fn sigkill_while_writing_is_undone_by_the_next_command() {
    let (_ref, reference) = project(&[INIT]);
    let (_ref2, reference2) = copy_of(&reference);
    run_ok(&reference2, API);
    for fault in ["kill:journal:1", "kill:write:20", "kill:rename:40"] {
        let (_tmp, dir) = folder("demo");
        killed(&dir, fault, INIT);
        if fault == "kill:rename:40" {
            // A dry run does not plan against half-written files.
            assert_refused(
                &dir,
                &["init", "--domain", "example.com", "--dry-run"],
                &[JOURNAL, "interrupted"],
            );
        }
        // The next command undoes the killed one, says so, then does its own work.
        let err = run_ok(&dir, INIT);
        assert!(
            err.contains("\"operator-rs init --domain example.com --owner Acme\" (pid ")
                && err.contains("was interrupted while writing; its changes were undone"),
            "{fault}: {err}"
        );
        assert!(
            state(&dir) == state(&reference),
            "{fault}: not the project of init"
        );
        assert!(leftovers(&dir).is_empty(), "{fault}: {:?}", leftovers(&dir));
    }

    // Updates: the originals come back.
    for fault in ["kill:backup:2", "kill:rename:3", "kill:rename:14"] {
        let (_tmp, dir) = copy_of(&reference);
        let before = state(&dir);
        killed(&dir, fault, API);
        // A command that does not write does not recover.
        assert!(run(&dir, "", &["version"]).status.success());
        assert!(dir.join(JOURNAL).exists());
        // One that writes does, even when it then fails: a line for each.
        let out = run(&dir, "", INIT);
        let err = stderr(&out);
        assert!(!out.status.success(), "{fault}");
        let lines: Vec<&str> = err.lines().collect();
        assert_eq!(lines.len(), 2, "{fault}: {err}");
        assert!(
            lines[0].contains("its changes were undone"),
            "{fault}: {err}"
        );
        assert!(lines[1].contains("already initialized"), "{fault}: {err}");
        assert!(state(&dir) == before, "{fault}: not undone");
        assert!(leftovers(&dir).is_empty(), "{fault}: {:?}", leftovers(&dir));
        run_ok(&dir, API);
        assert!(
            state(&dir) == state(&reference2),
            "{fault}: create api differs"
        );
    }
}

#[test]
fn sigkill_after_the_commit_is_completed_by_the_next_command() {
    let (_init, init) = project(&[INIT]);
    let (_ref, reference) = copy_of(&init);
    run_ok(&reference, API);
    for fault in ["kill:journal:2", "kill:cleanup:1", "kill:cleanup:15"] {
        let (_tmp, dir) = copy_of(&init);
        killed(&dir, fault, API);
        // The next command finishes the clean-up, says so, then fails on its own.
        let out = run(&dir, "", INIT);
        let err = stderr(&out);
        assert!(!out.status.success());
        assert!(
            err.contains("was interrupted after writing every file; its backups were removed"),
            "{fault}: {err}"
        );
        assert!(err.contains("already initialized"), "{fault}: {err}");
        assert!(
            state(&dir) == state(&reference),
            "{fault}: not the complete project"
        );
    }
}

#[test]
fn a_second_command_is_refused_while_one_runs() {
    let (_init, init) = project(&[INIT]);
    // A lock held by some other process: refused at once, naming it, nothing changed.
    let (_tmp, dir) = copy_of(&init);
    let mut held = fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(dir.join(LOCK))
        .unwrap();
    std::io::Write::write_all(&mut held, b"4321\n").unwrap();
    held.try_lock().unwrap();
    let running = format!(
        "another operator-rs command is running in {}",
        dir.display()
    );
    assert_refused(
        &dir,
        API,
        &[&running, "(pid 4321)", "wait for it to finish"],
    );
    // A dry run does not need the lock.
    assert!(
        run(&dir, "", &[API, &["--dry-run"]].concat())
            .status
            .success()
    );
    drop(held);
    // The lock file of a process that is gone is taken over and removed.
    run_ok(&dir, API);
    assert!(leftovers(&dir).is_empty(), "{:?}", leftovers(&dir));

    // Two real commands: the second one started while the first writes is refused.
    let (_tmp, dir) = folder("demo");
    let mut first = command(&dir, "slow:2", INIT).spawn().unwrap();
    wait_for_journal(&dir, &mut first);
    let second = run(&dir, "", INIT);
    let err = stderr(&second);
    assert_eq!(second.status.code(), Some(1), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    let pid = format!("(pid {})", first.id());
    assert!(
        err.contains("another operator-rs command is running") && err.contains(&pid),
        "{err}"
    );
    let first = first.wait_with_output().unwrap();
    assert!(first.status.success(), "{}", stderr(&first));
    assert!(
        state(&dir) == state(&init),
        "the first command's project differs"
    );
}

#[test]
fn updates_keep_permissions_and_write_through_symlinks() {
    let (_init, init) = project(&[INIT]);
    let (_ref, reference) = copy_of(&init);
    run_ok(&reference, API);
    let (_tmp, dir) = copy_of(&init);
    let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o7777;
    let set_mode =
        |p: &Path, m: u32| fs::set_permissions(p, fs::Permissions::from_mode(m)).unwrap();
    // Files create api updates: PROJECT private, src/controller/mod.rs read-only.
    set_mode(&dir.join("PROJECT"), 0o600);
    set_mode(&dir.join("src/controller/mod.rs"), 0o444);
    // config/rbac/kustomization.yaml kept outside the project, linked in.
    let shared = tempfile::tempdir().unwrap();
    let real = shared.path().join("kustomization.yaml");
    let link = dir.join("config/rbac/kustomization.yaml");
    fs::rename(&link, &real).unwrap();
    std::os::unix::fs::symlink(&real, &link).unwrap();

    run_ok(&dir, API);

    assert_eq!(mode(&dir.join("PROJECT")), 0o600);
    assert_eq!(mode(&dir.join("src/controller/mod.rs")), 0o444);
    assert!(
        fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink(),
        "link replaced"
    );
    let expected = tree(&reference);
    assert_eq!(
        fs::read(&real).unwrap(),
        expected["config/rbac/kustomization.yaml"]
    );
    for path in ["PROJECT", "src/controller/mod.rs"] {
        assert_eq!(fs::read(dir.join(path)).unwrap(), expected[path], "{path}");
    }
    assert_eq!(
        fs::read_dir(shared.path()).unwrap().count(),
        1,
        "left files by the link"
    );
    assert!(leftovers(&dir).is_empty(), "{:?}", leftovers(&dir));
}

/// `edit --multigroup` moves files: removals are undone like writes, whatever step fails, and a
/// killed move is undone by the next command.
#[test]
fn a_failed_or_killed_move_leaves_the_project_as_it_was() {
    const EDIT: &[&str] = &["edit", "--multigroup"];
    let (_ref, reference) = project(&[INIT, API]);
    let n = planned(&reference, EDIT).len();
    let deletes = planned(&reference, EDIT)
        .iter()
        .filter(|p| p.starts_with("src/api/v1/"))
        .count();
    assert!(deletes >= 2, "{deletes}");
    for fault in [
        "fail:write:1".to_string(),
        "fail:backup:1".to_string(),
        format!("fail:rename:{}", n / 2),
        format!("fail:rename:{n}"),
        "fail:journal:2".to_string(),
    ] {
        let (_tmp, dir) = copy_of(&reference);
        assert_fails_cleanly(&dir, &fault, EDIT, &["error: "]);
        assert!(leftovers(&dir).is_empty(), "{fault}");
    }
    let (_tmp, dir) = copy_of(&reference);
    let before = state(&dir);
    killed(&dir, &format!("kill:rename:{}", n / 2), EDIT);
    assert_refused(
        &dir,
        &["edit", "--multigroup", "--dry-run"],
        &[JOURNAL, "interrupted"],
    );
    let err = run_ok(&dir, &["edit", "--namespaced=false"]);
    assert!(err.contains("its changes were undone"), "{err}");
    assert!(state(&dir) == before, "the killed move was not undone");
    run_ok(&dir, EDIT);
    assert!(dir.join("src/api/cache/v1/memcached.rs").exists());
    assert!(!dir.join("src/api/v1").exists());
}
