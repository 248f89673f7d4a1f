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
    parse(text, usize::MAX)
}

/// The text of a document's bytes as go-yaml decodes them: UTF-8, or UTF-16 when a byte-order
/// mark says so (go-yaml's `yaml_parser_determine_encoding`).
pub fn decode_text(bytes: &[u8]) -> Result<String, YamlError> {
    let utf16 = |bytes: &[u8], unit: fn([u8; 2]) -> u16| {
        let units: Vec<u16> = bytes
            .chunks(2)
            .map(|pair| unit([pair[0], *pair.get(1).unwrap_or(&0)]))
            .collect();
        String::from_utf16(&units).map_err(|_| YamlError("invalid UTF-16 surrogate pair".into()))
    };
    match bytes {
        [0xFF, 0xFE, rest @ ..] => utf16(rest, u16::from_le_bytes),
        [0xFE, 0xFF, rest @ ..] => utf16(rest, u16::from_be_bytes),
        _ => String::from_utf8(bytes.to_vec())
            .map_err(|_| YamlError("invalid leading UTF-8 octet".into())),
    }
}

/// What sigs.k8s.io/yaml's `Unmarshal` makes of a text: its first document (`Node::Null` when
/// it holds none, as when it is only comments); what follows that document is not read.
pub fn unmarshal(text: &str) -> Result<Node, YamlError> {
    Ok(parse(text, 1)?.into_iter().next().unwrap_or(Node::Null))
}

/// The first `limit` documents of a stream.
fn parse(text: &str, limit: usize) -> Result<Vec<Node>, YamlError> {
    let mut options = Options::default();
    options.emit_comments = false;
    let mut builder = Builder::default();
    for event in Parser::new_from_str_with_options(text, options) {
        let (event, _span) = event.map_err(|e| YamlError(e.to_string()))?;
        let ends_document = matches!(event, Event::DocumentEnd);
        builder.event(event)?;
        if ends_document && builder.documents.len() >= limit {
            break;
        }
    }
    Ok(builder.documents)
}

/// A collection being built: its content, the anchor to record it under when it ends, and its
/// size in go-yaml's decode steps so far.
struct Open {
    content: Content,
    anchor: usize,
    size: u64,
}

enum Content {
    Seq(Vec<Node>),
    /// Entries so far, and the key waiting for its value.
    Map(Vec<(String, Node)>, Option<Key>),
}

/// A mapping key before it becomes a string: merge keys are kept apart.
enum Key {
    Merge,
    Text(String),
}

/// The tag go-yaml v2 reads `!!merge` as.
const MERGE_TAG: &str = "tag:yaml.org,2002:merge";

#[derive(Default)]
struct Builder {
    documents: Vec<Node>,
    stack: Vec<Open>,
    /// Anchored nodes, with their sizes in decode steps.
    anchors: HashMap<usize, (Node, u64)>,
    /// go-yaml v2's `decodeCount` and `aliasCount`: nodes decoded, and of those how many came
    /// from expanding aliases.
    decodes: u64,
    aliased: u64,
}

impl Builder {
    fn event(&mut self, event: Event<'_>) -> Result<(), YamlError> {
        match event {
            Event::DocumentStart(..) => {
                self.anchors.clear();
                self.count(1, 0)
            }
            Event::Alias(id) => {
                let size = self
                    .anchors
                    .get(&id)
                    .map(|(_, size)| *size)
                    .ok_or_else(|| YamlError("unknown anchor in an alias".into()))?;
                // Counted before the copy is made: an alias bomb fails here, small.
                self.count(1 + size, size)?;
                let node = self.anchors[&id].0.clone();
                self.push(node, 1 + size)
            }
            Event::Scalar(value, style, anchor, tag) => {
                let tag = tag.map(|t| format!("{}{}", t.handle(), t.suffix()));
                // go-yaml v2's `isMerge`: `<<` plain and untagged (or `!`), or tagged `!!merge`.
                let implicit =
                    style == ScalarStyle::Plain && tag.as_deref().is_none_or(|t| t == "!");
                let merge = value == "<<" && (implicit || tag.as_deref() == Some(MERGE_TAG));
                if merge && self.awaits_key() {
                    return self.push_key(Key::Merge);
                }
                self.count(1, 0)?;
                let node = resolve(&value, style, tag.as_deref())?;
                if anchor != 0 {
                    self.anchors.insert(anchor, (node.clone(), 1));
                }
                self.push(node, 1)
            }
            Event::SequenceStart(_, anchor, _) => self.open(Content::Seq(Vec::new()), anchor),
            Event::MappingStart(_, anchor, _) => self.open(Content::Map(Vec::new(), None), anchor),
            Event::SequenceEnd | Event::MappingEnd => {
                let open = self
                    .stack
                    .pop()
                    .ok_or_else(|| YamlError("unbalanced collection".into()))?;
                let node = match open.content {
                    Content::Seq(items) => Node::Seq(items),
                    Content::Map(entries, _) => Node::Map(entries),
                };
                if open.anchor != 0 {
                    self.anchors.insert(open.anchor, (node.clone(), open.size));
                }
                self.push(node, open.size)
            }
            _ => Ok(()),
        }
    }

    fn open(&mut self, content: Content, anchor: usize) -> Result<(), YamlError> {
        self.count(1, 0)?;
        self.stack.push(Open {
            content,
            anchor,
            size: 1,
        });
        Ok(())
    }

    /// go-yaml v2's guard against alias bombs ("billion laughs"): past 100 aliased nodes and
    /// 1,000 in all, the share of aliased ones may not pass [`allowed_alias_ratio`]. (The share
    /// only grows while an alias is expanded, so checking after a whole expansion is checking
    /// after each of its nodes, as go-yaml does.)
    fn count(&mut self, nodes: u64, aliased: u64) -> Result<(), YamlError> {
        self.decodes = self.decodes.saturating_add(nodes);
        self.aliased = self.aliased.saturating_add(aliased);
        if self.aliased > 100
            && self.decodes > 1000
            && self.aliased as f64 / self.decodes as f64 > allowed_alias_ratio(self.decodes)
        {
            return Err(YamlError("document contains excessive aliasing".into()));
        }
        Ok(())
    }

    fn awaits_key(&self) -> bool {
        matches!(
            self.stack.last(),
            Some(Open {
                content: Content::Map(_, None),
                ..
            })
        )
    }

    fn push_key(&mut self, key: Key) -> Result<(), YamlError> {
        if let Some(Open {
            content: Content::Map(_, pending),
            ..
        }) = self.stack.last_mut()
        {
            *pending = Some(key);
        }
        Ok(())
    }

    /// Adds a finished node (of `size` decode steps) where it belongs: a document, a list item,
    /// a key or a value.
    fn push(&mut self, node: Node, size: u64) -> Result<(), YamlError> {
        let Some(open) = self.stack.last_mut() else {
            self.documents.push(node);
            return Ok(());
        };
        open.size = open.size.saturating_add(size);
        match &mut open.content {
            Content::Seq(items) => items.push(node),
            Content::Map(_, pending @ None) => *pending = Some(Key::Text(key_text(&node)?)),
            Content::Map(entries, pending) => match pending.take() {
                Some(Key::Text(key)) => set(entries, key, node),
                Some(Key::Merge) => merge(entries, node)?,
                None => unreachable!("matched Some"),
            },
        }
        Ok(())
    }
}

/// go-yaml v2's `allowedAliasRatio`: 99% of a small document may come from aliases, 10% of a
/// very large one, scaling between 400,000 and 4,000,000 decode steps.
fn allowed_alias_ratio(decodes: u64) -> f64 {
    const LOW: u64 = 400_000;
    const HIGH: u64 = 4_000_000;
    match decodes {
        d if d <= LOW => 0.99,
        d if d >= HIGH => 0.10,
        d => 0.99 - 0.89 * ((d - LOW) as f64 / (HIGH - LOW) as f64),
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
        Node::Uint(u) => Ok(u.to_string()),
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
    match core {
        // The tags go-yaml resolves; any other (`!foo`, `!`, `!!merge`, `!!set` …) leaves the
        // text as it is.
        Some("null" | "bool" | "int" | "float" | "timestamp") => {}
        Some("binary") => return binary(text),
        _ if tag.is_some() => return Ok(Node::Str(text.to_string())),
        _ if style != ScalarStyle::Plain => return Ok(Node::Str(text.to_string())),
        _ => {}
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

/// `!!binary`: base64 (Go's standard encoding, which skips line breaks), decoded into the
/// string Go makes of the bytes.
fn binary(text: &str) -> Result<Node, YamlError> {
    use base64::Engine as _;
    let compact: String = text.chars().filter(|c| !matches!(c, '\r' | '\n')).collect();
    base64::engine::general_purpose::STANDARD
        .decode(compact)
        .map(|bytes| Node::Str(String::from_utf8_lossy(&bytes).into_owned()))
        .map_err(|_| YamlError("!!binary value contains invalid base64 data".into()))
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
        unmarshal(text).unwrap()
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
        assert!(unmarshal("? [a]\n: b\n").is_err());
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
        assert!(unmarshal("a: !!int abc\n").is_err());
    }

    #[test]
    fn the_first_document_is_read_and_only_it() {
        assert_eq!(
            one("---\nkind: A\n---\nkind: B\n").get("kind"),
            Some(&Node::Str("A".into()))
        );
        // Comments alone, or an empty document first, are null, as sigs.k8s.io/yaml reads them.
        assert_eq!(one("# nothing\n"), Node::Null);
        assert_eq!(one("---\n---\nkind: A\n"), Node::Null);
        // What follows the first document is not read.
        assert_eq!(
            one("kind: A\n---\n[unclosed\n").get("kind"),
            Some(&Node::Str("A".into()))
        );
        assert!(unmarshal("key: [unclosed\n").is_err());
    }

    #[test]
    fn merge_keys_may_be_tagged_and_other_tags_keep_the_text() {
        let doc = one(
            "b: &b {x: 1}\nm:\n  !!merge <<: *b\n  z: 2\nq: \"<<\"\nt: !!set abc\nu: !!binary aGk=\n",
        );
        let m = doc.get("m").unwrap();
        assert_eq!(m.get("x"), Some(&Node::Int(1)));
        assert_eq!(m.get("z"), Some(&Node::Int(2)));
        assert_eq!(doc.get("q"), Some(&Node::Str("<<".into())));
        assert_eq!(doc.get("t"), Some(&Node::Str("abc".into())));
        assert_eq!(doc.get("u"), Some(&Node::Str("hi".into())));
        // A quoted "<<" is a key like any other.
        let quoted = one("b: &b {x: 1}\nm:\n  \"<<\": *b\n");
        assert!(quoted.get("m").unwrap().get("<<").is_some());
        assert!(unmarshal("a: !!binary '%%'\n").is_err());
    }

    #[test]
    fn utf_16_with_a_byte_order_mark_is_read() {
        let le: Vec<u8> = [0xFF, 0xFE]
            .into_iter()
            .chain("kind: A\n".encode_utf16().flat_map(u16::to_le_bytes))
            .collect();
        let be: Vec<u8> = [0xFE, 0xFF]
            .into_iter()
            .chain("kind: A\n".encode_utf16().flat_map(u16::to_be_bytes))
            .collect();
        assert_eq!(decode_text(&le).unwrap(), "kind: A\n");
        assert_eq!(decode_text(&be).unwrap(), "kind: A\n");
        assert!(decode_text(b"kind: \xff\n").is_err());
    }

    #[test]
    fn alias_bombs_are_refused_as_go_yaml_refuses_them() {
        let mut bomb = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
        for i in 1..10 {
            let prev = format!("*a{}", i - 1);
            bomb.push_str(&format!("a{i}: &a{i} [{}]\n", vec![prev; 10].join(", ")));
        }
        let err = unmarshal(&bomb).unwrap_err();
        assert_eq!(err.to_string(), "document contains excessive aliasing");
        // Ordinary reuse of anchors is fine.
        let reuse = "base: &b {a: 1, b: 2}\nu: *b\nv: *b\nw: [*b, *b]\n";
        assert_eq!(one(reuse).get("v"), one(reuse).get("base"));
    }
}
