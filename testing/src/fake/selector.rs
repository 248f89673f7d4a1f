//! The label and field selectors of list and watch requests (`?labelSelector=…&fieldSelector=…`),
//! parsed as the API server parses them (the lexer and parser of apimachinery's `labels`
//! package, and `fields.ParseSelector`), with its words for what does not parse.
//!
//! Written here because kube has selector types for building queries (`kube::core::Selector`) but
//! no parser for the text a client sends.

use std::collections::BTreeMap;

use serde_json::Value;

use super::errors::go_quote;
use super::names;

/// A parsed selector: every requirement must hold.
#[derive(Clone, Debug, Default)]
pub(super) struct Selector(Vec<Requirement>);

#[derive(Clone, Debug)]
enum Requirement {
    Equals(String, String),
    NotEquals(String, String),
    In(String, Vec<String>),
    NotIn(String, Vec<String>),
    Exists(String),
    DoesNotExist(String),
    GreaterThan(String, i64),
    LessThan(String, i64),
}

/// A token of a label selector.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Token {
    End,
    ClosedParen,
    Comma,
    Not,
    DoubleEquals,
    Equals,
    GreaterThan,
    Identifier,
    In,
    LessThan,
    NotEquals,
    NotIn,
    OpenParen,
    Error,
}

fn is_space(byte: u8) -> bool {
    matches!(byte, b' ' | b'\t' | b'\r' | b'\n')
}

fn is_special(byte: u8) -> bool {
    matches!(byte, b'=' | b'!' | b'(' | b')' | b',' | b'>' | b'<')
}

fn symbol(text: &str) -> Option<Token> {
    Some(match text {
        ")" => Token::ClosedParen,
        "," => Token::Comma,
        "!" => Token::Not,
        "==" => Token::DoubleEquals,
        "=" => Token::Equals,
        ">" => Token::GreaterThan,
        "in" => Token::In,
        "<" => Token::LessThan,
        "!=" => Token::NotEquals,
        "notin" => Token::NotIn,
        "(" => Token::OpenParen,
        _ => return None,
    })
}

/// Splits a label selector into tokens, as the API server's lexer.
fn lex(text: &str) -> Vec<(Token, String)> {
    let bytes = text.as_bytes();
    let mut at = 0;
    let mut tokens = Vec::new();
    loop {
        while at < bytes.len() && is_space(bytes[at]) {
            at += 1;
        }
        if at >= bytes.len() {
            tokens.push((Token::End, String::new()));
            return tokens;
        }
        let start = at;
        if is_special(bytes[at]) {
            let mut last: Option<(Token, usize)> = None;
            while at < bytes.len() && is_special(bytes[at]) {
                at += 1;
                match symbol(&text[start..at]) {
                    Some(token) => last = Some((token, at)),
                    None if last.is_some() => {
                        at -= 1;
                        break;
                    }
                    None => {}
                }
            }
            match last {
                Some((token, end)) => {
                    at = end;
                    tokens.push((token, text[start..end].to_owned()));
                }
                None => tokens.push((
                    Token::Error,
                    format!("error expected: keyword found '{}'", &text[start..at]),
                )),
            }
            continue;
        }
        while at < bytes.len() && !is_special(bytes[at]) && !is_space(bytes[at]) {
            at += 1;
        }
        let word = &text[start..at];
        tokens.push((symbol(word).unwrap_or(Token::Identifier), word.to_owned()));
    }
}

/// Whether the parser reads values (where `in` and `notin` are identifiers).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Context {
    KeyAndOperator,
    Values,
}

struct Parser {
    tokens: Vec<(Token, String)>,
    at: usize,
}

impl Parser {
    fn look(&self, context: Context) -> (Token, String) {
        let (token, literal) = self.tokens[self.at.min(self.tokens.len() - 1)].clone();
        match token {
            Token::In | Token::NotIn if context == Context::Values => (Token::Identifier, literal),
            token => (token, literal),
        }
    }

    fn take(&mut self, context: Context) -> (Token, String) {
        let item = self.look(context);
        self.at += 1;
        item
    }

    fn parse(&mut self) -> Result<Vec<Requirement>, String> {
        let mut requirements = Vec::new();
        loop {
            let (token, literal) = self.look(Context::Values);
            match token {
                Token::Identifier | Token::Not => {
                    let requirement = self
                        .requirement()
                        .map_err(|error| format!("unable to parse requirement: {error}"))?;
                    requirements.push(requirement);
                    let (token, literal) = self.take(Context::Values);
                    match token {
                        Token::End => return Ok(requirements),
                        Token::Comma => {
                            let (next, literal) = self.look(Context::Values);
                            if next != Token::Identifier && next != Token::Not {
                                return Err(format!(
                                    "found '{literal}', expected: identifier after ','"
                                ));
                            }
                        }
                        _ => {
                            return Err(format!(
                                "found '{literal}', expected: ',' or 'end of string'"
                            ));
                        }
                    }
                }
                Token::End => return Ok(requirements),
                _ => {
                    return Err(format!(
                        "found '{literal}', expected: !, identifier, or 'end of string'"
                    ));
                }
            }
        }
    }

    fn requirement(&mut self) -> Result<Requirement, String> {
        let (mut token, mut key) = self.take(Context::Values);
        let negated = token == Token::Not;
        if negated {
            (token, key) = self.take(Context::Values);
        }
        if token != Token::Identifier {
            return Err(format!("found '{key}', expected: identifier"));
        }
        check_key(&key, "<nil>")?;
        let (next, _) = self.look(Context::Values);
        if negated {
            return Ok(Requirement::DoesNotExist(key));
        }
        if matches!(next, Token::End | Token::Comma) {
            return Ok(Requirement::Exists(key));
        }
        let (operator, literal) = self.take(Context::KeyAndOperator);
        let requirement = match operator {
            Token::In | Token::NotIn => {
                let values = self.values()?;
                check_values(&key, &values)?;
                if operator == Token::In {
                    Requirement::In(key, values)
                } else {
                    Requirement::NotIn(key, values)
                }
            }
            Token::Equals | Token::DoubleEquals | Token::NotEquals => {
                let value = self.exact_value()?;
                check_values(&key, std::slice::from_ref(&value))?;
                match operator {
                    Token::NotEquals => Requirement::NotEquals(key, value),
                    _ => Requirement::Equals(key, value),
                }
            }
            Token::GreaterThan | Token::LessThan => {
                let value = self.exact_value()?;
                let number = value.parse::<i64>().map_err(|_| {
                    format!("values[0]: Invalid value: {}: for 'Gt', 'Lt' operators, the value must be an integer", go_quote(&value))
                })?;
                match operator {
                    Token::GreaterThan => Requirement::GreaterThan(key, number),
                    _ => Requirement::LessThan(key, number),
                }
            }
            _ => {
                return Err(format!(
                    "found '{literal}', expected: in, notin, =, ==, !=, gt, lt"
                ));
            }
        };
        Ok(requirement)
    }

    /// `(a,b)`: a set of values, sorted and without repeats as the API server keeps them.
    fn values(&mut self) -> Result<Vec<String>, String> {
        let (token, literal) = self.take(Context::Values);
        if token != Token::OpenParen {
            return Err(format!("found '{literal}' expected: '('"));
        }
        let (token, literal) = self.look(Context::Values);
        let mut values = match token {
            Token::Identifier | Token::Comma => {
                let values = self.identifiers()?;
                if self.take(Context::Values).0 != Token::ClosedParen {
                    return Err(format!("found '{literal}', expected: ')'"));
                }
                values
            }
            Token::ClosedParen => {
                self.take(Context::Values);
                vec![String::new()]
            }
            _ => {
                return Err(format!(
                    "found '{literal}', expected: ',', ')' or identifier"
                ));
            }
        };
        values.sort();
        values.dedup();
        Ok(values)
    }

    fn identifiers(&mut self) -> Result<Vec<String>, String> {
        let mut values = Vec::new();
        loop {
            let (token, literal) = self.take(Context::Values);
            match token {
                Token::Identifier => {
                    values.push(literal);
                    let (next, literal) = self.look(Context::Values);
                    match next {
                        Token::Comma => continue,
                        Token::ClosedParen => return Ok(values),
                        _ => return Err(format!("found '{literal}', expected: ',' or ')'")),
                    }
                }
                Token::Comma => {
                    if values.is_empty() {
                        values.push(String::new());
                    }
                    match self.look(Context::Values).0 {
                        Token::ClosedParen => {
                            values.push(String::new());
                            return Ok(values);
                        }
                        Token::Comma => {
                            self.take(Context::Values);
                            values.push(String::new());
                        }
                        _ => {}
                    }
                }
                _ => return Err(format!("found '{literal}', expected: ',', or identifier")),
            }
        }
    }

    fn exact_value(&mut self) -> Result<String, String> {
        let (token, _) = self.look(Context::Values);
        if matches!(token, Token::End | Token::Comma) {
            return Ok(String::new());
        }
        let (token, literal) = self.take(Context::Values);
        if token == Token::Identifier {
            return Ok(literal);
        }
        Err(format!("found '{literal}', expected: identifier"))
    }
}

/// A label key of a selector must be a qualified name.
fn check_key(key: &str, path: &str) -> Result<(), String> {
    let errors = names::qualified_name(key);
    if errors.is_empty() {
        return Ok(());
    }
    Err(format!(
        "{path}: Invalid value: {}: {}",
        go_quote(key),
        errors.join("; ")
    ))
}

fn check_values(key: &str, values: &[String]) -> Result<(), String> {
    let errors: Vec<String> = values
        .iter()
        .enumerate()
        .filter_map(|(index, value)| {
            let errors = names::label_value(value);
            (!errors.is_empty()).then(|| {
                format!(
                    "values[{index}][{key}]: Invalid value: {}: {}",
                    go_quote(value),
                    errors.join("; ")
                )
            })
        })
        .collect();
    match errors.as_slice() {
        [] => Ok(()),
        [one] => Err(one.clone()),
        many => Err(format!("[{}]", many.join(", "))),
    }
}

impl Selector {
    /// Parses a label selector: `a=b`, `a==b`, `a!=b`, `a in (b,c)`, `a notin (b)`, `a`, `!a`,
    /// `a>1`, `a<1`, separated by commas. An empty text selects everything.
    pub(super) fn labels(text: &str) -> Result<Self, String> {
        let mut parser = Parser {
            tokens: lex(text),
            at: 0,
        };
        parser.parse().map(Self)
    }

    /// Parses a field selector: `metadata.name=x`, `status.phase!=Running`, separated by commas
    /// (`\,` and `\=` escape them in values); each field must be one the kind lets clients
    /// select by (`supported`), or the error is the kind's.
    pub(super) fn fields(
        text: &str,
        supported: &dyn Fn(&str) -> Result<(), String>,
    ) -> Result<Self, String> {
        let mut terms = split_terms(text);
        terms.sort();
        let mut requirements = Vec::new();
        for term in terms.into_iter().filter(|term| !term.is_empty()) {
            let invalid = || format!("invalid selector: '{text}'; can't understand '{term}'");
            let (field, operator, value) = split_term(&term).ok_or_else(invalid)?;
            let value = unescape(value)?;
            supported(field)?;
            requirements.push(match operator {
                "!=" => Requirement::NotEquals(field.to_owned(), value),
                _ => Requirement::Equals(field.to_owned(), value),
            });
        }
        Ok(Self(requirements))
    }

    /// Whether `object`'s labels satisfy this (label) selector.
    pub(super) fn matches_labels(&self, object: &Value) -> bool {
        let labels: BTreeMap<String, String> = object["metadata"]["labels"]
            .as_object()
            .map(|labels| {
                labels
                    .iter()
                    .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_owned())))
                    .collect()
            })
            .unwrap_or_default();
        self.matches(|key| labels.get(key).cloned())
    }

    /// Whether `object`'s fields satisfy this (field) selector.
    pub(super) fn matches_fields(&self, object: &Value) -> bool {
        self.matches(|path| {
            let value = path
                .split('.')
                .try_fold(object, |value, key| value.get(key))?;
            Some(match value {
                Value::String(text) => text.clone(),
                Value::Null => String::new(),
                other => other.to_string(),
            })
        })
    }

    fn matches(&self, get: impl Fn(&str) -> Option<String>) -> bool {
        self.0.iter().all(|requirement| match requirement {
            Requirement::Equals(key, value) => get(key).unwrap_or_default() == *value,
            Requirement::NotEquals(key, value) => get(key).unwrap_or_default() != *value,
            Requirement::In(key, values) => get(key).is_some_and(|v| values.contains(&v)),
            Requirement::NotIn(key, values) => !get(key).is_some_and(|v| values.contains(&v)),
            Requirement::Exists(key) => get(key).is_some(),
            Requirement::DoesNotExist(key) => get(key).is_none(),
            Requirement::GreaterThan(key, limit) => get(key)
                .and_then(|v| v.parse::<i64>().ok())
                .is_some_and(|v| v > *limit),
            Requirement::LessThan(key, limit) => get(key)
                .and_then(|v| v.parse::<i64>().ok())
                .is_some_and(|v| v < *limit),
        })
    }
}

/// Splits a field selector at the commas that are not escaped.
fn split_terms(text: &str) -> Vec<String> {
    if text.is_empty() {
        return Vec::new();
    }
    let (mut terms, mut start, mut escaped) = (Vec::new(), 0, false);
    for (index, character) in text.char_indices() {
        match character {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            ',' => {
                terms.push(text[start..index].to_owned());
                start = index + 1;
            }
            _ => {}
        }
    }
    terms.push(text[start..].to_owned());
    terms
}

/// A term's field, operator and value: at the first operator (`!=`, `==`, `=`).
fn split_term(term: &str) -> Option<(&str, &str, &str)> {
    for index in 0..term.len() {
        let rest = &term[index..];
        for operator in ["!=", "==", "="] {
            if let Some(value) = rest.strip_prefix(operator) {
                return Some((&term[..index], operator, value));
            }
        }
    }
    None
}

fn unescape(value: &str) -> Result<String, String> {
    let mut out = String::new();
    let mut chars = value.chars();
    while let Some(character) = chars.next() {
        match character {
            '\\' => match chars.next() {
                Some(escaped @ ('\\' | ',' | '=')) => out.push(escaped),
                _ => {
                    return Err(format!(
                        "invalid escape sequence in field selector value: {value}"
                    ));
                }
            },
            ',' | '=' => {
                return Err(format!(
                    "unescaped {character} in field selector value: {value}"
                ));
            }
            other => out.push(other),
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn labelled(labels: Value) -> Value {
        json!({ "metadata": { "name": "a", "labels": labels } })
    }

    #[test]
    fn label_selectors() {
        let object = labelled(json!({ "app": "web", "tier": "front", "n": "3" }));
        for (selector, expected) in [
            ("", true),
            ("app=web", true),
            ("app==web,tier=front", true),
            ("app=db", false),
            ("app!=db", true),
            ("app in (db, web)", true),
            ("app notin (db,web)", false),
            ("tier", true),
            ("!tier", false),
            ("!missing,app in (web),tier!=back", true),
            ("n>2", true),
            ("n<2", false),
        ] {
            let parsed = Selector::labels(selector).unwrap();
            assert_eq!(parsed.matches_labels(&object), expected, "{selector}");
        }
        assert_eq!(
            Selector::labels("tier===x").unwrap_err(),
            "unable to parse requirement: found '=', expected: identifier"
        );
        assert!(Selector::labels("app in web)").is_err());
        assert!(Selector::labels("a b").is_err());
    }

    #[test]
    fn field_selectors() {
        let any = |_: &str| Ok(());
        let object =
            json!({ "metadata": { "name": "a", "namespace": "ns" }, "status": { "n": 3 } });
        for (selector, expected) in [
            ("metadata.name=a", true),
            ("metadata.name==b", false),
            ("metadata.namespace!=ns", false),
            ("status.n=3,metadata.name=a", true),
            ("spec.missing=", true),
        ] {
            let parsed = Selector::fields(selector, &any).unwrap();
            assert_eq!(parsed.matches_fields(&object), expected, "{selector}");
        }
        assert_eq!(
            Selector::fields("metadata.name", &any).unwrap_err(),
            "invalid selector: 'metadata.name'; can't understand 'metadata.name'"
        );
    }
}
