//! Built-in Kubernetes kinds (`apps/v1 Deployment`, `core/v1 Pod` …), which `create api
//! --resource=false` and `create webhook` accept without a custom resource.
//!
//! The table in `builtin_kinds.tsv` is generated from k8s-openapi's own `Resource` impls
//! (`hack/gen-builtin-kinds`), so every entry is a type the generated project can name.

/// One built-in kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BuiltinKind {
    /// The API group as Kubernetes spells it: `""` (core), `apps`, `networking.k8s.io`.
    pub api_group: &'static str,
    pub version: &'static str,
    pub kind: &'static str,
    pub plural: &'static str,
    pub namespaced: bool,
    /// The k8s-openapi type, e.g. `k8s_openapi::api::apps::v1::Deployment`.
    pub rust_type: &'static str,
}

impl BuiltinKind {
    /// kubebuilder's short group (`core`, `apps`, `networking`), as written in PROJECT.
    pub fn short_group(&self) -> &'static str {
        match self.api_group {
            "" => "core",
            group => group.strip_suffix(".k8s.io").unwrap_or(group),
        }
    }

    /// kubebuilder's domain for the group: `k8s.io` for `*.k8s.io` groups, else none.
    pub fn domain(&self) -> &'static str {
        if self.api_group.ends_with(".k8s.io") {
            "k8s.io"
        } else {
            ""
        }
    }

    /// The Rust module that holds the type: `k8s_openapi::api::apps::v1`.
    pub fn rust_module(&self) -> &'static str {
        self.rust_type
            .rsplit_once("::")
            .map_or(self.rust_type, |(module, _)| module)
    }
}

const TABLE: &str = include_str!("builtin_kinds.tsv");

fn all() -> impl Iterator<Item = BuiltinKind> {
    TABLE
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .filter_map(|line| {
            let f: Vec<&'static str> = line.split('\t').collect();
            (f.len() == 6).then(|| BuiltinKind {
                api_group: f[0],
                version: f[1],
                kind: f[2],
                plural: f[3],
                namespaced: f[4] == "namespaced",
                rust_type: f[5],
            })
        })
}

/// True when `group` names a built-in API group: `core`, `apps`, `networking`, `networking.k8s.io` …
pub fn is_builtin_group(group: &str) -> bool {
    all().any(|b| matches_group(&b, group))
}

fn matches_group(b: &BuiltinKind, group: &str) -> bool {
    b.short_group() == group || (!b.api_group.is_empty() && b.api_group == group)
}

/// The built-in kind for a group/version/kind as a user types them, if there is one.
pub fn find(group: &str, version: &str, kind: &str) -> Option<BuiltinKind> {
    all().find(|b| matches_group(b, group) && b.version == version && b.kind == kind)
}

/// The versions and kinds of a built-in group, for "did you mean" messages.
pub fn kinds_of(group: &str) -> Vec<String> {
    let mut kinds: Vec<String> = all()
        .filter(|b| matches_group(b, group))
        .map(|b| format!("{}/{}", b.version, b.kind))
        .collect();
    kinds.sort();
    kinds
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_usual_suspects() {
        let d = find("apps", "v1", "Deployment").unwrap();
        assert_eq!(
            (d.api_group, d.plural, d.rust_module()),
            ("apps", "deployments", "k8s_openapi::api::apps::v1")
        );
        let p = find("core", "v1", "Pod").unwrap();
        assert_eq!((p.api_group, p.short_group(), p.domain()), ("", "core", ""));
        let n = find("networking", "v1", "NetworkPolicy").unwrap();
        assert_eq!(find("networking.k8s.io", "v1", "NetworkPolicy"), Some(n));
        assert_eq!((n.short_group(), n.domain()), ("networking", "k8s.io"));
        assert!(find("batch", "v1", "Job").is_some());
        assert!(find("apps", "v1", "Deploymnet").is_none());
        assert!(is_builtin_group("apps") && is_builtin_group("core") && !is_builtin_group("crew"));
        assert!(kinds_of("apps").contains(&"v1/StatefulSet".to_string()));
    }
}
