//! The image variable the plugin adds to the manager's Deployment.

use anyhow::{Result, bail};

use crate::project::yaml_str;
use crate::scaffold::{Plan, line_endings};

/// The manager's Deployment, where the image variable goes.
const MANAGER_YAML: &str = "config/manager/manager.yaml";

/// Adds `<KIND>_IMAGE` to the environment of the manager container in
/// config/manager/manager.yaml (kubebuilder inserts it after `name: manager` too). An existing
/// variable of that name gets the new image; nothing else in the file changes.
pub(super) fn add_image_env(plan: &mut Plan, name: &str, image: &str) -> Result<()> {
    plan.edit(MANAGER_YAML, |text| {
        line_endings::edit_lf(text, |text| set_env(text, name, image))
    })
}

fn set_env(text: &str, name: &str, image: &str) -> Result<String> {
    let lines: Vec<&str> = text.lines().collect();
    let Container {
        name_line,
        start,
        end,
        key_indent,
    } = manager_container(&lines, name, image)?;
    let mut out: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
    let item_indent = " ".repeat(key_indent);
    let value_line = format!("{item_indent}  value: {}", yaml_str(image));
    // `env:` may also be the container's first key, on its `- ` line.
    let env = (start..end).find(|&i| {
        let line = lines[i].trim_start();
        let column = indent_of(lines[i]) + if line.starts_with("- ") { 2 } else { 0 };
        column == key_indent && line.trim_start_matches("- ") == "env:"
    });
    match env {
        Some(env) => {
            // Items of `env:` are at the key's indentation (`- name:`) or deeper.
            let items_end = lines[env + 1..end]
                .iter()
                .position(|l| {
                    !l.trim().is_empty()
                        && !l.trim_start().starts_with('#')
                        && (indent_of(l) < key_indent
                            || (indent_of(l) == key_indent && !l.trim_start().starts_with("- ")))
                })
                .map_or(end, |i| env + 1 + i);
            let existing = (env + 1..items_end).find(|&i| {
                lines[i].trim_start().trim_start_matches("- ") == format!("name: {name}")
            });
            match existing {
                Some(i) => {
                    let value = (i + 1..items_end)
                        .find(|&j| lines[j].trim_start().starts_with("value:"))
                        .filter(|&j| indent_of(lines[j]) == key_indent + 2);
                    match value {
                        Some(j) => out[j] = value_line,
                        None => bail!(
                            "{MANAGER_YAML} sets {name} without a plain `value:`; set it to {image} yourself"
                        ),
                    }
                }
                None => {
                    out.insert(items_end, value_line);
                    out.insert(items_end, format!("{item_indent}- name: {name}"));
                }
            }
        }
        None => {
            let at = name_line + 1;
            out.insert(at, value_line);
            out.insert(at, format!("{item_indent}- name: {name}"));
            out.insert(
                at,
                format!(
                    "{item_indent}# The images that the controllers run (operator-rs create api --image)."
                ),
            );
            out.insert(at, format!("{item_indent}env:"));
        }
    }
    let mut result = out.join("\n");
    if text.ends_with('\n') {
        result.push('\n');
    }
    Ok(result)
}

fn indent_of(line: &str) -> usize {
    line.len() - line.trim_start().len()
}

/// Where the manager container's lines are in the Deployment.
struct Container {
    /// Its `name: manager` line.
    name_line: usize,
    /// Its first line (the `- ` that starts it) and the line after its last.
    start: usize,
    end: usize,
    /// The indentation of its keys.
    key_indent: usize,
}

/// The manager container: `name: manager` as a key of a container (indented, maybe `- name:`).
fn manager_container(lines: &[&str], name: &str, image: &str) -> Result<Container> {
    let Some(container) = lines.iter().position(|l| {
        let t = l.trim_start().trim_start_matches("- ");
        t == "name: manager"
    }) else {
        bail!(
            "{MANAGER_YAML} has no container `name: manager`; add the environment variable \
             {name}={image} to the manager's container yourself, then rerun with it back in place"
        );
    };
    let key_indent = indent_of(lines[container])
        + if lines[container].trim_start().starts_with("- ") {
            2
        } else {
            0
        };
    // The container's keys run until a line indented less than them (the next container's `-`
    // is). Lists under its keys may start at the keys' own indentation, as `env:` items do.
    let end = lines[container + 1..]
        .iter()
        .position(|l| !l.trim().is_empty() && indent_of(l) < key_indent)
        .map_or(lines.len(), |i| container + 1 + i);
    // Container keys before the manager's `name:` line belong to it as well, back to the `- `
    // that starts the container.
    let start = if lines[container].trim_start().starts_with("- ") {
        container
    } else {
        lines[..container]
            .iter()
            .rposition(|l| !l.trim().is_empty() && indent_of(l) < key_indent)
            .unwrap_or(0)
    };
    Ok(Container {
        name_line: container,
        start,
        end,
        key_indent,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const MANAGER: &str = "\
    spec:
      containers:
      - command:
        - /manager
        image: controller:latest
        name: manager
        ports:
        - containerPort: 8081
";

    #[test]
    fn env_is_added_after_the_container_name() {
        let once = set_env(MANAGER, "MEMCACHED_IMAGE", "memcached:1.6").unwrap();
        assert_eq!(
            once,
            "\
    spec:
      containers:
      - command:
        - /manager
        image: controller:latest
        name: manager
        env:
        # The images that the controllers run (operator-rs create api --image).
        - name: MEMCACHED_IMAGE
          value: memcached:1.6
        ports:
        - containerPort: 8081
"
        );
        // A second kind joins the list; the same kind again only changes the value.
        let twice = set_env(&once, "BUSYBOX_IMAGE", "busybox:1.36").unwrap();
        assert!(
            twice.contains(
                "          value: memcached:1.6\n        - name: BUSYBOX_IMAGE\n          value: busybox:1.36\n        ports:"
            ),
            "{twice}"
        );
        let again = set_env(&twice, "MEMCACHED_IMAGE", "memcached:1.7").unwrap();
        assert_eq!(again, twice.replace("memcached:1.6", "memcached:1.7"));
        assert_eq!(
            set_env(&again, "MEMCACHED_IMAGE", "memcached:1.7").unwrap(),
            again
        );
    }

    #[test]
    fn env_joins_an_existing_list() {
        let namespaced = MANAGER.replace(
            "        name: manager\n",
            "        name: manager\n        env:\n        # watch one namespace\n        - name: WATCH_NAMESPACE\n          valueFrom:\n            fieldRef:\n              fieldPath: metadata.namespace\n",
        );
        let edited = set_env(&namespaced, "MEMCACHED_IMAGE", "memcached:1.6").unwrap();
        assert!(
            edited.contains(
                "              fieldPath: metadata.namespace\n        - name: MEMCACHED_IMAGE\n          value: memcached:1.6\n        ports:"
            ),
            "{edited}"
        );
    }

    #[test]
    fn env_before_the_name_is_found() {
        let text = "      containers:\n      - env:\n        - name: A\n          value: a\n        name: manager\n        image: x\n      - name: sidecar\n";
        let edited = set_env(text, "B_IMAGE", "b").unwrap();
        assert_eq!(
            edited,
            "      containers:\n      - env:\n        - name: A\n          value: a\n        - name: B_IMAGE\n          value: b\n        name: manager\n        image: x\n      - name: sidecar\n"
        );
    }

    #[test]
    fn a_manifest_without_the_manager_container_is_refused() {
        let error = set_env("kind: Deployment\n", "X_IMAGE", "x").unwrap_err();
        assert!(error.to_string().contains("name: manager"), "{error}");
    }
}
