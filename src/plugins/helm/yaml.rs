//! YAML with Helm template actions in it: an object is serialized with serde_yaml, with
//! placeholders where the chart needs actions, which are then put in as text. A placeholder is a
//! mapping entry whose line is replaced by lines of the template, at its indentation.

use serde_yaml::{Mapping, Value};

/// Stands for `{{ .Release.Namespace }}` inside strings.
pub const NAMESPACE: &str = "__HELM_RELEASE_NAMESPACE__";

/// An object being turned into a template: its value and the blocks its placeholders stand for.
#[derive(Default)]
pub struct Doc {
    blocks: Vec<Block>,
}

/// Lines of template text, given the indentation of the line they replace.
type Block = Box<dyn Fn(&str) -> Vec<String>>;

impl Doc {
    /// A placeholder entry (key, value) for `block`, to insert into a mapping.
    pub fn block(&mut self, block: impl Fn(&str) -> Vec<String> + 'static) -> (Value, Value) {
        let token = format!("__HELM_BLOCK_{}__", self.blocks.len());
        self.blocks.push(Box::new(block));
        (Value::String(token.to_lowercase()), Value::String(token))
    }

    /// `value` serialized, its placeholders replaced.
    pub fn text(&self, value: &Value) -> String {
        let yaml = serde_yaml::to_string(value).expect("a YAML value serializes");
        let mut out = String::new();
        for line in yaml.lines() {
            let indent = &line[..line.len() - line.trim_start().len()];
            let item = line.trim_start().strip_prefix("- ");
            match block_index(item.unwrap_or(line.trim_start())) {
                // The first entry of a sequence item: the block's lines go under `- `.
                Some(i) if item.is_some() => {
                    let inner = format!("{indent}  ");
                    for (n, l) in (self.blocks[i])(&inner).iter().enumerate() {
                        if n == 0 {
                            out.push_str(indent);
                            out.push_str("- ");
                            out.push_str(l.trim_start());
                        } else {
                            out.push_str(l);
                        }
                        out.push('\n');
                    }
                }
                Some(i) => {
                    for l in (self.blocks[i])(indent) {
                        out.push_str(&l);
                        out.push('\n');
                    }
                }
                None => {
                    out.push_str(line);
                    out.push('\n');
                }
            }
        }
        joined(&out).replace(NAMESPACE, "{{ .Release.Namespace }}")
    }
}

/// `text` with each `{{- end }}` that is followed by the same `{{- if … }}` it closes taken out
/// with that line: consecutive items under one switch read as one block.
fn joined(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = String::new();
    let mut open: Vec<&str> = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i].trim();
        if line == "{{- end }}" {
            if open.last().is_some_and(|o| o.starts_with("{{- if "))
                && lines.get(i + 1).map(|l| l.trim()) == open.last().copied()
            {
                i += 2;
                continue;
            }
            open.pop();
        } else if ["{{- if ", "{{- with ", "{{- range "]
            .iter()
            .any(|p| line.starts_with(p))
        {
            open.push(line);
        }
        out.push_str(lines[i]);
        out.push('\n');
        i += 1;
    }
    out
}

/// The block a placeholder line stands for.
fn block_index(line: &str) -> Option<usize> {
    let rest = line.strip_prefix("__helm_block_")?;
    let (n, _) = rest.split_once("__:")?;
    n.parse().ok()
}

/// `value` as YAML lines indented by `indent` (a sequence item or a mapping's entries).
pub fn lines(value: &Value, indent: &str) -> Vec<String> {
    serde_yaml::to_string(value)
        .expect("a YAML value serializes")
        .lines()
        .map(|l| format!("{indent}{l}"))
        .collect()
}

/// One item of a sequence, as `- ...` lines.
pub fn item(value: &Value, indent: &str) -> Vec<String> {
    lines(&Value::Sequence(vec![value.clone()]), indent)
}

/// Lines wrapped in `{{- if condition }}` … `{{- end }}` (none: as they are).
pub fn when(condition: Option<&str>, indent: &str, body: Vec<String>) -> Vec<String> {
    match condition {
        None => body,
        Some(condition) => {
            let mut out = vec![format!("{indent}{{{{- if {condition} }}}}")];
            out.extend(body);
            out.push(format!("{indent}{{{{- end }}}}"));
            out
        }
    }
}

/// The mapping under `key` of `map`, created if missing.
pub fn mapping<'a>(map: &'a mut Mapping, key: &str) -> &'a mut Mapping {
    let entry = map
        .entry(Value::String(key.to_string()))
        .or_insert_with(|| Value::Mapping(Mapping::new()));
    if !entry.is_mapping() {
        *entry = Value::Mapping(Mapping::new());
    }
    entry.as_mapping_mut().expect("just made a mapping")
}

/// The value under `key`, left as null in its place for [`put_at`] (None if there is none).
pub fn take(map: &mut Mapping, key: &str) -> Option<Value> {
    map.get_mut(key).map(std::mem::take)
}

/// The entry (`k`, `v`) in place of `key`'s (a placeholder where the field was), or last.
pub fn put_at(map: &mut Mapping, key: &str, k: Value, v: Value) {
    let old = std::mem::take(map);
    let mut placed = false;
    for (key_, value) in old {
        if key_.as_str() == Some(key) {
            map.insert(k.clone(), v.clone());
            placed = true;
        } else {
            map.insert(key_, value);
        }
    }
    if !placed {
        map.insert(k, v);
    }
}

/// `value[key]` as a string.
pub fn str_at<'a>(value: &'a Value, key: &str) -> Option<&'a str> {
    value.get(key).and_then(Value::as_str)
}

/// Every string in `value` made safe for Helm (a `{{` of the user's is printed, not run) and the
/// namespace `ns` replaced by [`NAMESPACE`] where it stands as a whole name (`ns`,
/// `svc.ns.svc`, `ns/cert`).
pub fn prepare(value: &mut Value, ns: Option<&str>) {
    match value {
        Value::String(s) => {
            if s.contains("{{") {
                *s = s.replace("{{", "{{ \"{{\" }}");
            }
            if let Some(ns) = ns {
                *s = replace_name(s, ns, NAMESPACE);
            }
        }
        Value::Sequence(items) => items.iter_mut().for_each(|v| prepare(v, ns)),
        Value::Mapping(map) => map.values_mut().for_each(|v| prepare(v, ns)),
        Value::Tagged(tagged) => prepare(&mut tagged.value, ns),
        _ => {}
    }
}

/// `s` with `name` replaced where it is delimited by the start or end, `.` or `/`.
fn replace_name(s: &str, name: &str, with: &str) -> String {
    let delimiter = |c: Option<char>| c.is_none_or(|c| c == '.' || c == '/');
    let mut out = String::new();
    let mut last = 0;
    for (at, _) in s.match_indices(name) {
        let prev = s[..at].chars().next_back();
        let next = s[at + name.len()..].chars().next();
        if delimiter(prev) && delimiter(next) {
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

    #[test]
    fn namespace_only_as_a_whole_name() {
        let ns = "demo-system";
        assert_eq!(replace_name("demo-system", ns, "N"), "N");
        assert_eq!(replace_name("svc.demo-system.svc", ns, "N"), "svc.N.svc");
        assert_eq!(replace_name("demo-system/cert", ns, "N"), "N/cert");
        assert_eq!(replace_name("x-demo-system", ns, "N"), "x-demo-system");
        assert_eq!(replace_name("demo-systems", ns, "N"), "demo-systems");
    }

    #[test]
    fn placeholders_become_template_lines() {
        let mut doc = Doc::default();
        let mut map = Mapping::new();
        map.insert("name".into(), NAMESPACE.into());
        let (k, v) = doc.block(|indent| vec![format!("{indent}replicas: {{{{ .Values.x }}}}")]);
        let mut spec = Mapping::new();
        spec.insert(k, v);
        map.insert("spec".into(), Value::Mapping(spec));
        assert_eq!(
            doc.text(&Value::Mapping(map)),
            "name: {{ .Release.Namespace }}\nspec:\n  replicas: {{ .Values.x }}\n"
        );
    }

    #[test]
    fn one_switch_for_consecutive_items() {
        let text = "a:\n{{- if X }}\n- 1\n{{- end }}\n{{- if X }}\n- 2\n{{- end }}\n{{- if Y }}\n- 3\n{{- end }}\n";
        assert_eq!(
            joined(text),
            "a:\n{{- if X }}\n- 1\n- 2\n{{- end }}\n{{- if Y }}\n- 3\n{{- end }}\n"
        );
    }

    #[test]
    fn users_braces_are_printed() {
        let mut v = Value::String("a {{ b }}".into());
        prepare(&mut v, None);
        assert_eq!(v, Value::String("a {{ \"{{\" }} b }}".into()));
    }
}
