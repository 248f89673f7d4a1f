//! The Rust module of each external API group, under `crate::external`: one per group, the
//! whole group counted (`monitoring.coreos.com` and `monitoring.rhobs` share a first label and
//! `--group monitoring`, and must not share a module, or a controller of one would get the
//! types of the other).
//!
//! The module is a function of PROJECT alone, so every command (`create api`, `create webhook`,
//! `alpha generate` replaying PROJECT in its order) finds the same one: the groups PROJECT
//! records, in the order it records them, each take the first free name of
//! - the module of `--group` (`cert-manager` → `cert_manager`), as every earlier operator-rs
//!   named it, so that the projects it wrote keep their module paths;
//! - the module of the whole group (`monitoring_rhobs`), when that is taken by another group or
//!   cannot name a module (`kube`, `3d`, a keyword);
//! - that with `_2`, `_3` … (`a-b.io` and `a.b-io` both spell `a_b_io`); a group that starts
//!   with a digit is prefixed with `group_`.

use crate::names::ident::Site;
use crate::project::Project;

/// The module of the external group `<group>.<domain>` in `project` (recorded there or not).
pub fn group_module(project: &Project, group: &str, domain: &str) -> String {
    let wanted = qualified(group, domain);
    let recorded = project
        .resources
        .iter()
        .filter(|r| r.external)
        .map(|r| (r.group.as_str(), r.domain.as_str()));
    let mut assigned: Vec<(String, String)> = Vec::new();
    for (group, domain) in recorded.chain(std::iter::once((group, domain))) {
        let name = qualified(group, domain);
        if assigned.iter().any(|(q, _)| *q == name) {
            continue;
        }
        let module = candidates(group, &name)
            .find(|m| assigned.iter().all(|(_, taken)| taken != m))
            .expect("the numbered candidates never run out");
        if name == wanted {
            return module;
        }
        assigned.push((name, module));
    }
    unreachable!("the wanted group is the last one looked at")
}

fn qualified(group: &str, domain: &str) -> String {
    if domain.is_empty() {
        group.to_string()
    } else {
        format!("{group}.{domain}")
    }
}

/// The module names a group may take, best first.
fn candidates(group: &str, qualified: &str) -> impl Iterator<Item = String> {
    let usable = |m: &String| Site::Module.unusable(m).is_none();
    let short = Site::Module.stem(group);
    let whole = Site::Module.stem(qualified);
    let base = if usable(&whole) {
        whole.clone()
    } else {
        format!("group_{whole}")
    };
    [short, whole, base.clone()]
        .into_iter()
        .filter(usable)
        .chain((2..).map(move |n| format!("{base}_{n}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::project::Resource;

    fn project(groups: &[(&str, &str)]) -> Project {
        Project {
            resources: groups
                .iter()
                .map(|(group, domain)| Resource {
                    external: true,
                    group: group.to_string(),
                    domain: domain.to_string(),
                    kind: "ServiceMonitor".into(),
                    version: "v1".into(),
                    ..Resource::default()
                })
                .collect(),
            ..Project::default()
        }
    }

    #[test]
    fn one_module_per_group_first_come_first_served() {
        let empty = project(&[]);
        assert_eq!(group_module(&empty, "cert-manager", "io"), "cert_manager");
        let p = project(&[("monitoring", "coreos.com")]);
        assert_eq!(group_module(&p, "monitoring", "coreos.com"), "monitoring");
        assert_eq!(group_module(&p, "monitoring", "rhobs"), "monitoring_rhobs");
        let both = project(&[("monitoring", "coreos.com"), ("monitoring", "rhobs")]);
        assert_eq!(
            group_module(&both, "monitoring", "rhobs"),
            "monitoring_rhobs"
        );
        assert_eq!(
            group_module(&both, "monitoring", "coreos.com"),
            "monitoring"
        );
        // Same spelling, different groups.
        let p = project(&[("a-b", "io"), ("a", "b-io")]);
        assert_eq!(group_module(&p, "a-b", "io"), "a_b");
        assert_eq!(group_module(&p, "a", "b-io"), "a");
        let p = project(&[("a-b", "io"), ("a_b", "")]);
        assert_eq!(group_module(&p, "x", "a-b.io"), "x");
        let p = project(&[("x", "a"), ("x-a-b", "")]);
        assert_eq!(group_module(&p, "x", "a-b"), "x_a_b_2");
    }

    #[test]
    fn groups_that_cannot_name_a_module_get_the_whole_group_s() {
        let empty = project(&[]);
        assert_eq!(
            group_module(&empty, "kube", "example.io"),
            "kube_example_io"
        );
        assert_eq!(
            group_module(&empty, "type", "example.io"),
            "type_example_io"
        );
        assert_eq!(group_module(&empty, "3d", "io"), "group_3d_io");
    }
}
