//! YAML with Helm template actions in it: an object is serialized with serde_yaml, with
//! placeholders where the chart needs actions, which are then put in as text. A placeholder is a
//! mapping entry whose line is replaced by lines of the template, at its indentation.

use serde_yaml::{Mapping, Value};

/// Stands for `{{ .Release.Namespace }}` inside strings.
pub const NAMESPACE: &str = "__HELM_RELEASE_NAMESPACE__";

/// An object being turned into a template: its value, the blocks its placeholder entries stand
/// for, and the template text its inline placeholders (within strings) stand for.
#[derive(Default)]
pub struct Doc {
    blocks: Vec<Block>,
    inline: Vec<String>,
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

    /// A placeholder for `text` (a template action such as `{{ .Values.metrics.port }}`) to put
    /// in a string of the object, or in place of a scalar; [`Doc::text`] puts `text` there.
    pub fn inline(&mut self, text: impl Into<String>) -> String {
        self.inline.push(text.into());
        format!("__HELM_INLINE_{}__", self.inline.len() - 1)
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
        let mut text = joined(&out).replace(NAMESPACE, "{{ .Release.Namespace }}");
        // A placeholder is a plain scalar to serde_yaml (letters, digits and `_`), never quoted.
        for (i, inline) in self.inline.iter().enumerate() {
            text = text.replace(&format!("__HELM_INLINE_{i}__"), inline);
        }
        text
    }
}

/// `text` with each `{{- end }}` that is followed by the same `{{- if … }}` it closes taken out
/// with that line: consecutive items under one switch read as one block. An `if` with an `else`
/// is never joined to the next (its `else` would take the next one's lines).
fn joined(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = String::new();
    // The open actions: the line that opened each, and whether it has had an `else`.
    let mut open: Vec<(&str, bool)> = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i].trim();
        if line == "{{- end }}" {
            if let Some(&(opened, false)) = open.last()
                && opened.starts_with("{{- if ")
                && lines.get(i + 1).map(|l| l.trim()) == Some(opened)
            {
                i += 2;
                continue;
            }
            open.pop();
        } else if line.starts_with("{{- else") {
            if let Some(top) = open.last_mut() {
                top.1 = true;
            }
        } else if ["{{- if ", "{{- with ", "{{- range "]
            .iter()
            .any(|p| line.trim_start_matches("- ").starts_with(p))
        {
            open.push((line, false));
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

/// The entries of a mapping of `values.yaml` (`source`: the `with` expressions that reach it,
/// `[".Values.manager.pod", ".labels"]`) added to the mapping `key` of `map`, but for the keys
/// it has already and `fixed`: a placeholder in that mapping, or, without one, in `map`, which
/// writes `key:` only when the values have entries.
pub fn values_into(doc: &mut Doc, map: &mut Mapping, key: &str, source: &[&str], fixed: &[&str]) {
    let mut keep: Vec<String> = fixed.iter().map(|k| k.to_string()).collect();
    let existing = map.get_mut(key).and_then(Value::as_mapping_mut);
    if let Some(existing) = &existing {
        let keys = existing.keys().filter_map(Value::as_str);
        keep.extend(
            keys.filter(|k| block_index(&format!("{k}:")).is_none())
                .map(str::to_string),
        );
    }
    let source: Vec<String> = source.iter().map(|s| s.to_string()).collect();
    let omit = (!keep.is_empty()).then(|| {
        let keys: Vec<String> = keep.iter().map(|k| format!("{k:?}")).collect();
        format!("omit . {}", keys.join(" "))
    });
    let nested = existing.is_none().then(|| key.to_string());
    let block = doc.block(move |indent| {
        let mut out: Vec<String> = source
            .iter()
            .chain(omit.iter())
            .map(|with| format!("{indent}{{{{- with {with} }}}}"))
            .collect();
        match &nested {
            Some(key) => {
                out.push(format!("{indent}{key}:"));
                out.push(format!(
                    "{indent}  {{{{- toYaml . | nindent {} }}}}",
                    indent.len() + 2
                ));
            }
            None => out.push(format!(
                "{indent}{{{{- toYaml . | nindent {} }}}}",
                indent.len()
            )),
        }
        let ends = source.len() + usize::from(omit.is_some());
        out.extend((0..ends).map(|_| format!("{indent}{{{{- end }}}}")));
        out
    });
    match map.get_mut(key).and_then(Value::as_mapping_mut) {
        Some(existing) => {
            existing.insert(block.0, block.1);
        }
        None => {
            map.insert(block.0, block.1);
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

/// The `kind` of a manifest's object (empty when it has none).
pub fn kind_of(object: &Value) -> &str {
    str_at(object, "kind").unwrap_or_default()
}

/// The `metadata.name` of a manifest's object (empty when it has none).
pub fn name_of(object: &Value) -> &str {
    object
        .get("metadata")
        .and_then(|m| str_at(m, "name"))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn an_if_with_an_else_is_not_joined() {
        let text = "{{- if X }}\nkind: Role\n{{- else }}\nkind: ClusterRole\n{{- end }}\n{{- if X }}\n  namespace: n\n{{- end }}\n";
        assert_eq!(joined(text), text);
    }

    #[test]
    fn inline_placeholders_take_scalars_and_parts_of_strings() {
        let mut doc = Doc::default();
        let port = doc.inline("{{ .Values.metrics.port }}");
        let name = doc.inline("{{ include \"c.name\" $ }}");
        let mut map = Mapping::new();
        map.insert("port".into(), Value::from(port));
        map.insert("host".into(), Value::from(format!("{name}.svc")));
        assert_eq!(
            doc.text(&Value::Mapping(map)),
            "port: {{ .Values.metrics.port }}\nhost: {{ include \"c.name\" $ }}.svc\n"
        );
    }
}
