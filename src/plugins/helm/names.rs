//! The chart's names, as kubebuilder's chart has them: an object named with config/default's
//! prefix `<chart>-` is named by the release (`<fullname>-<suffix>`, `_helpers.tpl`'s
//! `resourceName`, which `nameOverride` and `fullnameOverride` change), and so is every reference
//! to it (role bindings, webhook and conversion clients, certificates' DNS names, cert-manager's
//! CA injection); the `app.kubernetes.io/name` labels and selectors are the chart's name
//! (`<chart>.name`, which `nameOverride` changes); the manager's ServiceAccount is
//! `<chart>.serviceAccountName` (the `serviceAccount` values). With `helm install <chart>` the
//! names are config/'s.
//!
//! A project whose prefix is not `<chart>-` (a namePrefix changed by hand, a `--manifests` file
//! of another name) keeps its objects' names; its labels and ServiceAccount still follow the
//! values.

use serde_yaml::Value;

use super::yaml::{Doc, NAMESPACE};

/// The label whose value is the chart's name.
const NAME_LABEL: &str = "app.kubernetes.io/name";

/// How the chart names things.
#[derive(Debug, Clone)]
pub struct Names {
    chart: String,
    /// The render's objects named with the prefix, by (name, suffix), longest name first; empty
    /// when the prefix is not the chart's.
    objects: Vec<(String, String)>,
    /// config/default's namespace, the release's in the chart.
    namespace: Option<String>,
    /// The manager's ServiceAccount, if it is one of the objects.
    service_account: Option<String>,
}

impl Names {
    /// The names of `objects` for the chart `chart`: `prefix` is config/default's namePrefix,
    /// `service_account` the manager's, if the render has it.
    pub fn new(
        objects: &[&Value],
        chart: &str,
        prefix: &str,
        namespace: Option<&str>,
        service_account: Option<&str>,
    ) -> Self {
        let mut named: Vec<(String, String)> = Vec::new();
        if prefix == format!("{chart}-") {
            for object in objects {
                let kind = super::yaml::kind_of(object);
                let name = super::yaml::name_of(object);
                if kind == "Namespace" || kind == "CustomResourceDefinition" {
                    continue;
                }
                if let Some(suffix) = name.strip_prefix(prefix).filter(|s| !s.is_empty())
                    && !named.iter().any(|(n, _)| n == name)
                {
                    named.push((name.to_string(), suffix.to_string()));
                }
            }
        }
        named.sort_by(|a, b| b.0.len().cmp(&a.0.len()).then(a.0.cmp(&b.0)));
        Self {
            chart: chart.to_string(),
            objects: named,
            namespace: namespace.map(str::to_string),
            service_account: service_account.map(str::to_string),
        }
    }

    /// The manager's ServiceAccount's name in config/, if the render has it.
    pub fn service_account(&self) -> Option<&str> {
        self.service_account.as_deref()
    }

    /// The template of the manager's ServiceAccount's name: `serviceAccountName`, which is the
    /// chart's (the release's when the name has the prefix) while `serviceAccount.enabled`, else
    /// `serviceAccount.name`.
    pub fn service_account_name(&self) -> String {
        let chart = &self.chart;
        match &self.service_account {
            Some(sa)
                if self
                    .objects
                    .iter()
                    .any(|(n, s)| n == sa && s == "controller-manager") =>
            {
                format!("{{{{ include \"{chart}.serviceAccountName\" $ }}}}")
            }
            // Not the name `serviceAccountName` makes: the same choice, with config/'s name.
            sa => format!(
                "{{{{ if $.Values.serviceAccount.enabled }}}}{}{{{{ else }}}}{{{{ required \
                 \"serviceAccount.name is required when serviceAccount.enabled=false\" \
                 $.Values.serviceAccount.name }}}}{{{{ end }}}}",
                sa.as_deref().unwrap_or("default")
            ),
        }
    }

    /// The template of the name of the object config/ names `name`, if the release names it.
    fn resource(&self, suffix: &str) -> String {
        format!(
            "{{{{ include \"{}.resourceName\" (dict \"suffix\" \"{suffix}\" \"context\" $) }}}}",
            self.chart
        )
    }

    /// Every string of `value` made a template: a `{{` of the user's printed, not run; the
    /// namespace and the names of the objects replaced where they stand as whole names (`name`,
    /// `name.namespace.svc`, `namespace/name`, `--flag=name`); `app.kubernetes.io/name: <chart>` the chart's
    /// name. `names`: whether to rename (not inside a CRD's schemas, which are the user's data).
    pub fn prepare(&self, value: &mut Value, doc: &mut Doc, names: bool) {
        match value {
            Value::String(s) => *s = self.string(s, doc, names),
            Value::Sequence(items) => items.iter_mut().for_each(|v| self.prepare(v, doc, names)),
            Value::Mapping(map) => {
                for (key, v) in map.iter_mut() {
                    if names && key.as_str() == Some(NAME_LABEL) && v.as_str() == Some(&self.chart)
                    {
                        *v = Value::from(
                            doc.inline(format!("{{{{ include \"{}.name\" $ }}}}", self.chart)),
                        );
                    } else {
                        self.prepare(v, doc, names);
                    }
                }
            }
            Value::Tagged(tagged) => self.prepare(&mut tagged.value, doc, names),
            _ => {}
        }
    }

    fn string(&self, s: &str, doc: &mut Doc, names: bool) -> String {
        let mut s = if s.contains("{{") {
            s.replace("{{", "{{ \"{{\" }}")
        } else {
            s.to_string()
        };
        if names {
            for (name, suffix) in &self.objects {
                if s.contains(name.as_str()) {
                    let with = doc.inline(self.resource(suffix));
                    s = replace_name(&s, name, &with);
                }
            }
        }
        if let Some(ns) = &self.namespace {
            s = replace_name(&s, ns, NAMESPACE);
        }
        s
    }
}

/// `s` with `name` replaced where it stands as a whole name: not within a longer one (a letter,
/// digit, `-` or `_` on either side), as in `name`, `name.namespace.svc`, `namespace/name` or
/// `--flag=name`.
pub fn replace_name(s: &str, name: &str, with: &str) -> String {
    let delimiter =
        |c: Option<char>| c.is_none_or(|c| !(c.is_alphanumeric() || c == '-' || c == '_'));
    let mut out = String::new();
    let mut last = 0;
    for (at, _) in s.match_indices(name) {
        let prev = s[..at].chars().next_back();
        let next = s[at + name.len()..].chars().next();
        if at >= last && delimiter(prev) && delimiter(next) {
            out.push_str(&s[last..at]);
            out.push_str(with);
            last = at + name.len();
        }
    }
    out.push_str(&s[last..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn object(kind: &str, name: &str) -> Value {
        serde_yaml::from_str(&format!("kind: {kind}\nmetadata:\n  name: {name}\n")).unwrap()
    }

    fn names(prefix: &str) -> Names {
        let objects = [
            object("Service", "memc-webhook-service"),
            object("ServiceAccount", "memc-controller-manager"),
            object("Deployment", "memc-controller-manager"),
            object("Certificate", "memc-serving-cert"),
            object("CustomResourceDefinition", "memc-things.example.com"),
        ];
        let refs: Vec<&Value> = objects.iter().collect();
        Names::new(
            &refs,
            "memc",
            prefix,
            Some("memc-system"),
            Some("memc-controller-manager"),
        )
    }

    #[test]
    fn namespace_only_as_a_whole_name() {
        let ns = "demo-system";
        assert_eq!(replace_name("demo-system", ns, "N"), "N");
        assert_eq!(replace_name("svc.demo-system.svc", ns, "N"), "svc.N.svc");
        assert_eq!(replace_name("demo-system/cert", ns, "N"), "N/cert");
        assert_eq!(replace_name("x-demo-system", ns, "N"), "x-demo-system");
        assert_eq!(replace_name("demo-systems", ns, "N"), "demo-systems");
        assert_eq!(
            replace_name("--namespace=demo-system", ns, "N"),
            "--namespace=N"
        );
        assert_eq!(replace_name("demo-system_x", ns, "N"), "demo-system_x");
    }

    #[test]
    fn references_are_named_by_the_release() {
        let names = names("memc-");
        let mut doc = Doc::default();
        let mut value: Value = serde_yaml::from_str(
            "dns: memc-webhook-service.memc-system.svc\n\
             inject: memc-system/memc-serving-cert\n\
             other: memc-webhook-service-x\n\
             text: see memc-serving-certs\n\
             arg: --webhook-service-name=memc-webhook-service\n\
             crd: memc-things.example.com\n\
             labels:\n  app.kubernetes.io/name: memc\n  app.kubernetes.io/part-of: memc\n",
        )
        .unwrap();
        names.prepare(&mut value, &mut doc, true);
        let text = doc.text(&value);
        assert!(text.contains(
            "dns: {{ include \"memc.resourceName\" (dict \"suffix\" \"webhook-service\" \"context\" $) }}.{{ .Release.Namespace }}.svc"
        ), "{text}");
        assert!(text.contains(
            "inject: {{ .Release.Namespace }}/{{ include \"memc.resourceName\" (dict \"suffix\" \"serving-cert\" \"context\" $) }}"
        ), "{text}");
        assert!(text.contains("other: memc-webhook-service-x"), "{text}");
        assert!(text.contains("text: see memc-serving-certs"), "{text}");
        assert!(
            text.contains(
                "arg: --webhook-service-name={{ include \"memc.resourceName\" (dict \"suffix\" \"webhook-service\" \"context\" $) }}"
            ),
            "{text}"
        );
        assert!(text.contains("crd: memc-things.example.com"), "{text}");
        assert!(
            text.contains("app.kubernetes.io/name: {{ include \"memc.name\" $ }}"),
            "{text}"
        );
        assert!(text.contains("app.kubernetes.io/part-of: memc"), "{text}");
        assert_eq!(
            names.service_account_name(),
            "{{ include \"memc.serviceAccountName\" $ }}"
        );
    }

    #[test]
    fn another_prefix_keeps_the_names() {
        let names = names("acme-");
        let mut doc = Doc::default();
        let mut value = Value::from("memc-webhook-service.memc-system.svc");
        names.prepare(&mut value, &mut doc, true);
        assert_eq!(
            doc.text(&value).trim(),
            "memc-webhook-service.{{ .Release.Namespace }}.svc"
        );
        assert!(names.service_account_name().starts_with(
            "{{ if $.Values.serviceAccount.enabled }}memc-controller-manager{{ else }}"
        ));
    }

    #[test]
    fn users_braces_are_printed() {
        let names = names("memc-");
        let mut doc = Doc::default();
        let mut v = Value::String("a {{ b }}".into());
        names.prepare(&mut v, &mut doc, true);
        assert_eq!(v, Value::String("a {{ \"{{\" }} b }}".into()));
    }
}
