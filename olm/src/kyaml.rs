//! YAML read the way operator-framework's Go tools read it: sigs.k8s.io/yaml over go-yaml v2.
//!
//! That reading differs from YAML 1.2 (serde_yaml) where bundles in the wild depend on it:
//! `yes`, `on`, `y` are booleans (YAML 1.1), `0x1F` and `010` are integers, a key given twice
//! keeps its last value instead of failing, merge keys (`<<`) merge, and every map key becomes a
//! string (`true: x` is the key `"true"`). The result is a [`Node`] tree, which knows whether a
//! scalar was a number, a boolean or a string, so that [`super::typed`] can coerce scalars into
//! string fields as sigs.k8s.io/yaml does (`minKubeVersion: 1.21` is the string `1.21`).
//!
//! No crate reads YAML with these rules, so the resolution of plain scalars is written here,
//! after go-yaml v2's `resolve.go`, on the events of granit-parser (which keeps scalar styles
//! and tags).

use std::collections::HashMap;
use std::fmt;

use granit_parser::{Event, Options, Parser, ScalarStyle};

/// A YAML value as sigs.k8s.io/yaml hands it to encoding/json.
#[derive(Debug, Clone, PartialEq)]
pub enum Node {
    Null,
    Bool(bool),
    Int(i64),
    /// An integer beyond `i64` (go-yaml v2 resolves it as `uint64`).
    Uint(u64),
    Float(f64),
    Str(String),
    Seq(Vec<Node>),
    /// Keys in first-seen order; a key given twice holds its last value.
    Map(Vec<(String, Node)>),
}

/// Why a document could not be read at all (the Go tools fail the whole file then too).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct YamlError(pub String);

impl fmt::Display for YamlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for YamlError {}

impl Node {
    /// The value of `key` in a mapping.
    pub fn get(&self, key: &str) -> Option<&Node> {
        match self {
            Node::Map(entries) => entries.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// The value at `path` (mapping keys).
    pub fn at(&self, path: &[&str]) -> Option<&Node> {
        path.iter().try_fold(self, |node, key| node.get(key))
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Node::Str(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_seq(&self) -> Option<&[Node]> {
        match self {
            Node::Seq(items) => Some(items),
            _ => None,
        }
    }

    pub fn as_map(&self) -> Option<&[(String, Node)]> {
        match self {
            Node::Map(entries) => Some(entries),
            _ => None,
        }
    }

    pub fn is_null(&self) -> bool {
        matches!(self, Node::Null)
    }

    /// What the value is, in the words of a type error.
    pub fn kind_name(&self) -> &'static str {
        match self {
            Node::Null => "null",
            Node::Bool(_) => "boolean",
            Node::Int(_) | Node::Uint(_) => "integer",
            Node::Float(_) => "number",
            Node::Str(_) => "string",
            Node::Seq(_) => "list",
            Node::Map(_) => "map",
        }
    }

    /// The scalar as sigs.k8s.io/yaml writes it into a string field: numbers and booleans
    /// become their Go text (`1.21`, `true`); strings stay; other values have no text.
    pub fn scalar_text(&self) -> Option<String> {
        match self {
            Node::Str(s) => Some(s.clone()),
            Node::Bool(b) => Some(b.to_string()),
            Node::Int(i) => Some(i.to_string()),
            Node::Uint(u) => Some(u.to_string()),
            Node::Float(f) => Some(go_float32_text(*f)),
            Node::Null | Node::Seq(_) | Node::Map(_) => None,
        }
    }

    /// The JSON sigs.k8s.io/yaml produces for an untyped (`interface{}`) target.
    pub fn to_json(&self) -> serde_json::Value {
        use serde_json::Value;
        match self {
            Node::Null => Value::Null,
            Node::Bool(b) => Value::Bool(*b),
            Node::Int(i) => Value::from(*i),
            Node::Uint(u) => Value::from(*u),
            Node::Float(f) => serde_json::Number::from_f64(*f)
                .map(Value::Number)
                .unwrap_or(Value::Null),
            Node::Str(s) => Value::String(s.clone()),
            Node::Seq(items) => Value::Array(items.iter().map(Node::to_json).collect()),
            Node::Map(entries) => Value::Object(
                entries
                    .iter()
                    .map(|(k, v)| (k.clone(), v.to_json()))
                    .collect(),
            ),
        }
    }
}

/// Every document of a YAML stream; documents that hold nothing are `Node::Null`.
pub fn documents(text: &str) -> Result<Vec<Node>, YamlError> {
    let mut options = Options::default();
    options.emit_comments = false;
    let mut builder = Builder::default();
    for event in Parser::new_from_str_with_options(text, options) {
        let (event, _span) = event.map_err(|e| YamlError(e.to_string()))?;
        builder.event(event)?;
    }
    Ok(builder.documents)
}

/// The first document that holds something, as the Go decoders read a manifest file: they
/// split the stream at `---` lines (apimachinery's YAMLReader), decode one document and ignore
/// the rest, so a later document neither counts nor breaks the file.
pub fn first_document(text: &str) -> Result<Option<Node>, YamlError> {
    Ok(first_and_rest(text)?.0)
}

/// The first document that holds something, and how many more documents hold something.
pub fn first_and_rest(text: &str) -> Result<(Option<Node>, usize), YamlError> {
    let mut chunks = split(text)?.into_iter();
    let mut first = None;
    for chunk in chunks.by_ref() {
        if let Some(node) = documents(chunk)?.into_iter().find(|d| !d.is_null()) {
            first = Some(node);
            break;
        }
    }
    let more = chunks
        .filter(|chunk| documents(chunk).is_ok_and(|docs| docs.iter().any(|d| !d.is_null())))
        .count();
    Ok((first, more))
}

/// A stream cut at its document separators: lines starting with `---` that hold nothing else
/// but spaces or a comment (anything else there is an error, as in apimachinery).
fn split(text: &str) -> Result<Vec<&str>, YamlError> {
    let mut chunks = Vec::new();
    let mut start = 0;
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        if let Some(rest) = line.strip_prefix("---") {
            let rest = rest.trim();
            if !rest.is_empty() && !rest.starts_with('#') {
                return Err(YamlError(format!(
                    "invalid Yaml document separator: {rest}"
                )));
            }
            chunks.push(&text[start..offset]);
            start = offset + line.len();
        }
        offset += line.len();
    }
    chunks.push(&text[start..]);
    Ok(chunks)
}

/// A collection being built, with the anchor to record it under when it ends.
enum Open {
    Seq(Vec<Node>, usize),
    /// Entries so far, the key waiting for its value, and the anchor.
    Map(Vec<(String, Node)>, Option<Key>, usize),
}

/// A mapping key before it becomes a string: merge keys are kept apart.
enum Key {
    Merge,
    Text(String),
}

#[derive(Default)]
struct Builder {
    documents: Vec<Node>,
    stack: Vec<Open>,
    anchors: HashMap<usize, Node>,
}

impl Builder {
    fn event(&mut self, event: Event<'_>) -> Result<(), YamlError> {
        match event {
            Event::StreamStart | Event::StreamEnd | Event::DocumentEnd => Ok(()),
            Event::DocumentStart(..) => {
                self.anchors.clear();
                Ok(())
            }
            Event::Alias(id) => {
                let node = self
                    .anchors
                    .get(&id)
                    .cloned()
                    .ok_or_else(|| YamlError("unknown anchor in an alias".into()))?;
                self.push(node)
            }
            Event::Scalar(value, style, anchor, tag) => {
                let tag = tag.map(|t| format!("{}{}", t.handle(), t.suffix()));
                let merge = style == ScalarStyle::Plain && tag.is_none() && value == "<<";
                let node = resolve(&value, style, tag.as_deref())?;
                if anchor != 0 {
                    self.anchors.insert(anchor, node.clone());
                }
                if merge && self.awaits_key() {
                    return self.push_key(Key::Merge);
                }
                self.push(node)
            }
            Event::SequenceStart(_, anchor, _) => {
                self.stack.push(Open::Seq(Vec::new(), anchor));
                Ok(())
            }
            Event::MappingStart(_, anchor, _) => {
                self.stack.push(Open::Map(Vec::new(), None, anchor));
                Ok(())
            }
            Event::SequenceEnd | Event::MappingEnd => {
                let (node, anchor) = match self.stack.pop() {
                    Some(Open::Seq(items, anchor)) => (Node::Seq(items), anchor),
                    Some(Open::Map(entries, _, anchor)) => (Node::Map(entries), anchor),
                    None => return Err(YamlError("unbalanced collection".into())),
                };
                if anchor != 0 {
                    self.anchors.insert(anchor, node.clone());
                }
                self.push(node)
            }
            _ => Ok(()),
        }
    }

    fn awaits_key(&self) -> bool {
        matches!(self.stack.last(), Some(Open::Map(_, None, _)))
    }

    fn push_key(&mut self, key: Key) -> Result<(), YamlError> {
        if let Some(Open::Map(_, pending, _)) = self.stack.last_mut() {
            *pending = Some(key);
        }
        Ok(())
    }

    /// Adds a finished node where it belongs: a document, a list item, a key or a value.
    fn push(&mut self, node: Node) -> Result<(), YamlError> {
        match self.stack.last_mut() {
            None => {
                self.documents.push(node);
                Ok(())
            }
            Some(Open::Seq(items, _)) => {
                items.push(node);
                Ok(())
            }
            Some(Open::Map(_, None, _)) => {
                let key = key_text(&node)?;
                self.push_key(Key::Text(key))
            }
            Some(Open::Map(entries, pending @ Some(_), _)) => {
                match pending.take() {
                    Some(Key::Text(key)) => set(entries, key, node),
                    Some(Key::Merge) => merge(entries, node)?,
                    None => unreachable!("matched Some"),
                }
                Ok(())
            }
        }
    }
}

/// Sets `key`, keeping the position of its first occurrence (go-yaml v2: the last value wins).
fn set(entries: &mut Vec<(String, Node)>, key: String, value: Node) {
    match entries.iter_mut().find(|(k, _)| *k == key) {
        Some(entry) => entry.1 = value,
        None => entries.push((key, value)),
    }
}

/// A merge key (`<<: *base` or `<<: [*a, *b]`): the merged maps' keys are set in order, and in
/// a list earlier maps take precedence (go-yaml v2 applies them backwards).
fn merge(entries: &mut Vec<(String, Node)>, value: Node) -> Result<(), YamlError> {
    match value {
        Node::Map(merged) => {
            for (k, v) in merged {
                set(entries, k, v);
            }
            Ok(())
        }
        Node::Seq(items) => {
            for item in items.into_iter().rev() {
                match item {
                    Node::Map(_) => merge(entries, item)?,
                    _ => {
                        return Err(YamlError(
                            "map merge requires map or sequence of maps as the value".into(),
                        ));
                    }
                }
            }
            Ok(())
        }
        _ => Err(YamlError(
            "map merge requires map or sequence of maps as the value".into(),
        )),
    }
}

/// A map key as sigs.k8s.io/yaml turns it into a JSON key.
fn key_text(key: &Node) -> Result<String, YamlError> {
    match key {
        Node::Str(s) => Ok(s.clone()),
        Node::Int(i) => Ok(i.to_string()),
        Node::Float(f) => Ok(go_float32_text(*f)),
        Node::Bool(b) => Ok(b.to_string()),
        other => Err(YamlError(format!(
            "unsupported map key of type {}",
            other.kind_name()
        ))),
    }
}

const CORE: &str = "tag:yaml.org,2002:";

/// A scalar's value: quoted and block scalars are strings; plain ones are resolved as go-yaml
/// v2 resolves them; an explicit core tag (`!!str`, `!!int` …) says what it must be.
fn resolve(text: &str, style: ScalarStyle, tag: Option<&str>) -> Result<Node, YamlError> {
    let core = tag.and_then(|t| t.strip_prefix(CORE));
    match (tag, core) {
        // Local and unknown tags (`!foo`), `!!str` and `!!binary`: the text as it is.
        (Some(_), None) | (_, Some("str" | "binary")) => return Ok(Node::Str(text.to_string())),
        _ => {}
    }
    if style != ScalarStyle::Plain && core.is_none() {
        return Ok(Node::Str(text.to_string()));
    }
    let resolved = resolve_plain(text);
    let Some(wanted) = core else {
        return Ok(resolved);
    };
    let ok = matches!(
        (wanted, &resolved),
        ("null", Node::Null)
            | ("bool", Node::Bool(_))
            | ("int", Node::Int(_) | Node::Uint(_))
            | ("float", Node::Float(_))
            | ("timestamp", Node::Str(_))
    );
    match (wanted, resolved) {
        ("float", Node::Int(i)) => Ok(Node::Float(i as f64)),
        ("float", Node::Uint(u)) => Ok(Node::Float(u as f64)),
        (_, resolved) if ok => Ok(resolved),
        (_, resolved) => Err(YamlError(format!(
            "cannot decode !!{} `{text}` as a !!{wanted}",
            match resolved {
                Node::Null => "null",
                Node::Bool(_) => "bool",
                Node::Int(_) | Node::Uint(_) => "int",
                Node::Float(_) => "float",
                _ => "str",
            }
        ))),
    }
}

/// go-yaml v2's resolution of an untagged plain scalar.
fn resolve_plain(text: &str) -> Node {
    match text {
        "y" | "Y" | "yes" | "Yes" | "YES" | "true" | "True" | "TRUE" | "on" | "On" | "ON" => {
            return Node::Bool(true);
        }
        "n" | "N" | "no" | "No" | "NO" | "false" | "False" | "FALSE" | "off" | "Off" | "OFF" => {
            return Node::Bool(false);
        }
        "" | "~" | "null" | "Null" | "NULL" => return Node::Null,
        ".nan" | ".NaN" | ".NAN" => return Node::Float(f64::NAN),
        ".inf" | ".Inf" | ".INF" | "+.inf" | "+.Inf" | "+.INF" => {
            return Node::Float(f64::INFINITY);
        }
        "-.inf" | "-.Inf" | "-.INF" => return Node::Float(f64::NEG_INFINITY),
        _ => {}
    }
    let first = text.as_bytes()[0];
    match first {
        b'.' => match finite_float(text) {
            Some(f) => Node::Float(f),
            None => Node::Str(text.to_string()),
        },
        b'+' | b'-' | b'0'..=b'9' => {
            let plain = text.replace('_', "");
            if let Some(i) = go_parse_int(&plain) {
                return Node::Int(i);
            }
            if let Some(u) = go_parse_uint(&plain) {
                return Node::Uint(u);
            }
            if yaml_style_float(&plain)
                && let Some(f) = finite_float(&plain)
            {
                return Node::Float(f);
            }
            Node::Str(text.to_string())
        }
        _ => Node::Str(text.to_string()),
    }
}

fn finite_float(text: &str) -> Option<f64> {
    let allowed = text
        .bytes()
        .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'+' | b'-'));
    if !allowed {
        return None;
    }
    text.parse::<f64>().ok().filter(|f| f.is_finite())
}

/// `^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`
fn yaml_style_float(text: &str) -> bool {
    let s = text.strip_prefix(['-', '+']).unwrap_or(text);
    let (mantissa, exponent) = match s.find(['e', 'E']) {
        Some(i) => (&s[..i], Some(&s[i + 1..])),
        None => (s, None),
    };
    let digits = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
    let mantissa_ok = match mantissa.split_once('.') {
        Some(("", frac)) => digits(frac),
        Some((int, frac)) => digits(int) && frac.bytes().all(|b| b.is_ascii_digit()),
        None => digits(mantissa),
    };
    let exponent_ok = exponent.is_none_or(|e| digits(e.strip_prefix(['-', '+']).unwrap_or(e)));
    mantissa_ok && exponent_ok
}

/// Go's `strconv.ParseInt(s, 0, 64)`: a sign, then `0x`, `0o`, `0b`, a leading `0` (octal) or
/// decimal digits.
fn go_parse_int(text: &str) -> Option<i64> {
    let (negative, digits) = match text.as_bytes().first()? {
        b'-' => (true, &text[1..]),
        b'+' => (false, &text[1..]),
        _ => (false, text),
    };
    let magnitude = go_parse_magnitude(digits)?;
    if negative {
        if magnitude <= i64::MAX as u64 + 1 {
            Some((magnitude as i128).wrapping_neg() as i64)
        } else {
            None
        }
    } else {
        i64::try_from(magnitude).ok()
    }
}

/// Go's `strconv.ParseUint(s, 0, 64)`: no sign.
fn go_parse_uint(text: &str) -> Option<u64> {
    if text.starts_with(['+', '-']) {
        return None;
    }
    go_parse_magnitude(text)
}

fn go_parse_magnitude(text: &str) -> Option<u64> {
    let (radix, digits) = if let Some(rest) = text.strip_prefix("0x").or(text.strip_prefix("0X")) {
        (16, rest)
    } else if let Some(rest) = text.strip_prefix("0b").or(text.strip_prefix("0B")) {
        (2, rest)
    } else if let Some(rest) = text.strip_prefix("0o").or(text.strip_prefix("0O")) {
        (8, rest)
    } else if text.len() > 1 && text.starts_with('0') {
        (8, &text[1..])
    } else {
        (10, text)
    };
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    u64::from_str_radix(digits, radix).ok()
}

/// Go's `strconv.FormatFloat(f, 'g', -1, 32)`, which sigs.k8s.io/yaml uses to write a number
/// into a string field or a map key: the shortest digits that read back as the same float32,
/// in `%e` form when the exponent is below -4 or at least 6 (`1e+06`).
pub fn go_float32_text(value: f64) -> String {
    if value.is_nan() {
        return ".nan".into();
    }
    if value.is_infinite() {
        return if value > 0.0 { ".inf" } else { "-.inf" }.into();
    }
    let single = value as f32;
    if single == 0.0 {
        return if single.is_sign_negative() { "-0" } else { "0" }.into();
    }
    // Rust prints the shortest round-trip digits: "1.21e0", "-1e6".
    let scientific = format!("{single:e}");
    let (mantissa, exponent) = scientific.split_once('e').expect("{:e} has an exponent");
    let exponent: i32 = exponent.parse().expect("an integer exponent");
    let negative = mantissa.starts_with('-');
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let sign = if negative { "-" } else { "" };
    if !(-4..6).contains(&exponent) {
        let (first, rest) = digits.split_at(1);
        let fraction = if rest.is_empty() {
            String::new()
        } else {
            format!(".{rest}")
        };
        let exp_sign = if exponent < 0 { '-' } else { '+' };
        return format!("{sign}{first}{fraction}e{exp_sign}{:02}", exponent.abs());
    }
    let point = exponent + 1;
    let text = if point <= 0 {
        format!("0.{}{digits}", "0".repeat((-point) as usize))
    } else if point as usize >= digits.len() {
        format!("{digits}{}", "0".repeat(point as usize - digits.len()))
    } else {
        let (int, frac) = digits.split_at(point as usize);
        format!("{int}.{frac}")
    };
    format!("{sign}{text}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(text: &str) -> Node {
        first_document(text).unwrap().unwrap()
    }

    #[test]
    fn yaml_1_1_scalars_resolve_as_go_yaml_v2_does() {
        let doc = one(
            "a: yes\nb: off\nc: 0x1F\nd: 010\ne: 1_000\nf: 1.21\ng: ~\nh: 'yes'\ni: 1e999\nj: -0b101\nk: 2001-02-03\nl: +.inf\nm: 18446744073709551615\n",
        );
        let get = |k: &str| doc.get(k).unwrap().clone();
        assert_eq!(get("a"), Node::Bool(true));
        assert_eq!(get("b"), Node::Bool(false));
        assert_eq!(get("c"), Node::Int(31));
        assert_eq!(get("d"), Node::Int(8));
        assert_eq!(get("e"), Node::Int(1000));
        assert_eq!(get("f"), Node::Float(1.21));
        assert_eq!(get("g"), Node::Null);
        assert_eq!(get("h"), Node::Str("yes".into()));
        assert_eq!(get("i"), Node::Str("1e999".into()));
        assert_eq!(get("j"), Node::Int(-5));
        assert_eq!(get("k"), Node::Str("2001-02-03".into()));
        assert_eq!(get("l"), Node::Float(f64::INFINITY));
        assert_eq!(get("m"), Node::Uint(u64::MAX));
    }

    #[test]
    fn a_key_given_twice_keeps_its_last_value() {
        let doc = one("name: first\nother: 1\nname: second\n");
        assert_eq!(doc.get("name"), Some(&Node::Str("second".into())));
        assert_eq!(doc.as_map().unwrap()[0].0, "name");
    }

    #[test]
    fn keys_become_strings_and_merges_merge() {
        let doc = one("base: &b {a: 1, b: 2}\nuse:\n  b: 3\n  <<: *b\n  c: 4\ny: t\n1.5: f\n");
        let merged = doc.get("use").unwrap();
        assert_eq!(merged.get("a"), Some(&Node::Int(1)));
        // go-yaml v2 applies the merge where it stands: it overrides the b before it.
        assert_eq!(merged.get("b"), Some(&Node::Int(2)));
        assert_eq!(merged.get("c"), Some(&Node::Int(4)));
        // `y` is YAML 1.1's true: the key is "true".
        assert_eq!(doc.get("true"), Some(&Node::Str("t".into())));
        assert_eq!(doc.get("1.5"), Some(&Node::Str("f".into())));
        assert!(first_document("? [a]\n: b\n").is_err());
    }

    #[test]
    fn numbers_are_written_as_go_writes_a_float32() {
        for (value, text) in [
            (1.21, "1.21"),
            (1.0, "1"),
            (1e6, "1e+06"),
            (123456.0, "123456"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (-2.5, "-2.5"),
            (7.123456789, "7.123457"),
            (1.000000119, "1.0000001"),
        ] {
            assert_eq!(go_float32_text(value), text, "{value}");
        }
    }

    #[test]
    fn explicit_tags_are_honoured() {
        let doc = one("a: !!str 123\nb: !!float 1\nc: \"1\"\n");
        assert_eq!(doc.get("a"), Some(&Node::Str("123".into())));
        assert_eq!(doc.get("b"), Some(&Node::Float(1.0)));
        assert_eq!(doc.get("c"), Some(&Node::Str("1".into())));
        assert!(first_document("a: !!int abc\n").is_err());
    }

    #[test]
    fn the_first_document_with_content_is_read() {
        let doc = one("---\n---\nkind: A\n---\nkind: B\n");
        assert_eq!(doc.get("kind"), Some(&Node::Str("A".into())));
        assert!(first_document("key: [unclosed\n").is_err());
    }
}
