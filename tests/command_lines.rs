//! kubebuilder's and operator-sdk's command lines, from their test data and docs
//! (tests/data/command-lines/lines.txt), run as written with operator-rs in place of the binary:
//! each runs, or is refused with one line that says what differs and why.

use std::path::{Path, PathBuf};
use std::process::Command;

/// One command line of a block, and what it must do.
#[derive(Debug)]
struct Line {
    text: String,
    /// Run as a step of the block (`$ …`), not an anchor's line.
    step: bool,
    /// `=> refused: <text>`: the words the one line of stderr must hold.
    refused: Option<String>,
    /// `=> fails: <text>`: it runs and finds problems, as the anchor's does; its output holds
    /// the words.
    fails: Option<String>,
}

#[derive(Debug)]
struct Block {
    name: String,
    lines: Vec<Line>,
}

fn data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data")
}

fn blocks() -> Vec<Block> {
    let text = std::fs::read_to_string(data().join("command-lines/lines.txt")).unwrap();
    let mut blocks: Vec<Block> = Vec::new();
    for line in text.lines() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        if let Some(rest) = line.strip_prefix('[') {
            let name = rest.split(']').next().unwrap().to_string();
            blocks.push(Block {
                name,
                lines: Vec::new(),
            });
            continue;
        }
        let block = blocks.last_mut().expect("a line before any [block]");
        if let Some(words) = line.trim().strip_prefix("=> refused:") {
            let last = block.lines.last_mut().expect("=> refused: after a line");
            last.refused = Some(words.trim().to_string());
        } else if let Some(words) = line.trim().strip_prefix("=> fails:") {
            let last = block.lines.last_mut().expect("=> fails: after a line");
            last.fails = Some(words.trim().to_string());
        } else if let Some(step) = line.strip_prefix("$ ") {
            block.lines.push(Line {
                text: step.to_string(),
                step: true,
                refused: None,
                fails: None,
            });
        } else {
            block.lines.push(Line {
                text: line.to_string(),
                step: false,
                refused: None,
                fails: None,
            });
        }
    }
    blocks
}

fn script(path: &Path, text: &str) {
    std::fs::write(path, text).unwrap();
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// The programs the lines call: kubebuilder and operator-sdk (operator-rs), and stand-ins for
/// make and kustomize (see lines.txt), with the fixture they give.
fn stand_ins(root: &Path) -> PathBuf {
    let bin = root.join("bin");
    let fixture = root.join("fixture");
    std::fs::create_dir_all(&bin).unwrap();
    std::fs::create_dir_all(fixture.join("crds")).unwrap();
    let rendered =
        std::fs::read_to_string(data().join("olm/memcached-operator.rendered.yaml")).unwrap();
    let mut others = String::new();
    for document in serde_yaml::Deserializer::from_str(&rendered) {
        let object = <serde_yaml::Value as serde::Deserialize>::deserialize(document).unwrap();
        match object["kind"].as_str() {
            Some("ClusterServiceVersion") | None => continue,
            Some("CustomResourceDefinition") => std::fs::write(
                fixture.join("crds/cache.example.com_memcacheds.yaml"),
                serde_yaml::to_string(&object).unwrap(),
            )
            .unwrap(),
            Some(_) => {}
        }
        others.push_str(&format!("---\n{}", serde_yaml::to_string(&object).unwrap()));
    }
    std::fs::write(fixture.join("rendered.yaml"), others).unwrap();
    let this = assert_cmd::cargo::cargo_bin("operator-rs");
    for anchor in ["kubebuilder", "operator-sdk"] {
        script(
            &bin.join(anchor),
            &format!("#!/bin/sh\nexec '{}' \"$@\"\n", this.display()),
        );
    }
    script(
        &bin.join("make"),
        &format!(
            "#!/bin/sh\nfor target in \"$@\"; do\n  if [ \"$target\" = manifests ]; then\n    \
             mkdir -p config/crd/bases && cp '{}'/crds/*.yaml config/crd/bases/\n  fi\ndone\n",
            fixture.display()
        ),
    );
    script(
        &bin.join("kustomize"),
        &format!(
            "#!/bin/sh\n[ \"$1\" = build ] || exit 2\ncat '{}/rendered.yaml'\n\
             for base in \"$2\"/bases/*.clusterserviceversion.yaml; do echo ---; cat \"$base\"; done\n",
            fixture.display()
        ),
    );
    bin
}

/// Runs `line` in `dir`; a description of what went wrong, if it did not do what it must.
fn replay(dir: &Path, env: &[(&str, String)], line: &Line) -> Option<String> {
    let out = Command::new("sh")
        .args(["-c", &line.text])
        .current_dir(dir)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .env_remove("XDG_CONFIG_HOME")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    if let Some(words) = &line.fails {
        let output = format!("{stdout}{stderr}");
        return match out.status.success() {
            true => Some(format!("passed, but should find {words:?}")),
            false if output.contains(words.as_str()) => None,
            false => Some(format!("failed without {words:?}: {output}")),
        };
    }
    match (&line.refused, out.status.success()) {
        (None, true) => None,
        (None, false) => Some(format!("failed: {stderr}{stdout}")),
        (Some(_), true) => Some("ran, but should be refused".to_string()),
        (Some(words), false) => {
            let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
            if lines.len() != 1 {
                Some(format!("refused in {} lines: {stderr}", lines.len()))
            } else if !lines[0].contains(words.as_str()) {
                Some(format!("refused without {words:?}: {stderr}"))
            } else if lines[0].contains("unexpected argument") {
                Some(format!("refused by the parser, without a reason: {stderr}"))
            } else {
                None
            }
        }
    }
}

#[test]
fn the_anchors_command_lines_run_or_are_refused_with_a_reason() {
    let tmp = tempfile::tempdir().unwrap();
    let bin = stand_ins(tmp.path());
    let home = tmp.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
    let env = [
        ("PATH", path),
        ("HOME", home.display().to_string()),
        (
            "EXTERNAL_PLUGINS_PATH",
            data().join("external-plugins").display().to_string(),
        ),
        // `alpha update --from-version` of a release operator-rs does not have: no network.
        ("CARGO_NET_OFFLINE", "true".into()),
        ("SOURCE_DATE_EPOCH", "1790000000".into()),
        ("GIT_AUTHOR_NAME", "replay".into()),
        ("GIT_AUTHOR_EMAIL", "replay@example.com".into()),
        ("GIT_COMMITTER_NAME", "replay".into()),
        ("GIT_COMMITTER_EMAIL", "replay@example.com".into()),
    ];
    let mut failures = Vec::new();
    let mut count = 0;
    for block in blocks() {
        let dir = tmp.path().join("blocks").join(&block.name);
        std::fs::create_dir_all(&dir).unwrap();
        for line in &block.lines {
            count += usize::from(!line.step);
            if let Some(problem) = replay(&dir, &env, line) {
                failures.push(format!("[{}] {}\n    {problem}", block.name, line.text));
            }
        }
    }
    assert!(count > 80, "only {count} lines");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
