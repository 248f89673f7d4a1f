//! Request bodies read as the API server reads them, with Go's words for what is wrong: a JSON
//! syntax error as Go's encoding/json scanner reports it (`invalid character 'n' looking for
//! beginning of object key string`, `unexpected end of JSON input`), and the keys that appear
//! twice in an object (`duplicate field "spec.size"`, an error under `fieldValidation=Strict`).
//!
//! Written here because serde_json's messages are not Go's, and serde_json keeps the last of
//! duplicate keys without saying so.

/// What a scan of a JSON document found.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct Scan {
    /// Go's error, if the document is not JSON.
    pub(super) error: Option<String>,
    /// The paths of keys given twice in the same object (`spec.size`, `spec.items[0].name`).
    pub(super) duplicates: Vec<String>,
}

/// Scans `body` as Go's `json.Unmarshal` would before decoding it.
pub(super) fn scan(body: &[u8]) -> Scan {
    let mut scanner = Scanner {
        bytes: body,
        at: 0,
        duplicates: Vec::new(),
    };
    let error = scanner.document().err();
    Scan {
        error,
        duplicates: scanner.duplicates,
    }
}

/// A character as Go quotes it in its errors: `'n'`, `'"'`, `'\n'` (which is how Rust's `Debug`
/// of a `char` writes them too).
fn quote(byte: u8) -> String {
    format!("{:?}", char::from(byte))
}

struct Scanner<'a> {
    bytes: &'a [u8],
    at: usize,
    duplicates: Vec<String>,
}

type Scanned = Result<(), String>;

impl Scanner<'_> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    fn skip_space(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
    }

    /// The error at the current byte, `context` saying what was expected there.
    fn invalid(&self, context: &str) -> String {
        match self.peek() {
            Some(byte) => format!("invalid character {} {context}", quote(byte)),
            None => "unexpected end of JSON input".to_owned(),
        }
    }

    fn document(&mut self) -> Scanned {
        self.value("")?;
        self.skip_space();
        match self.peek() {
            None => Ok(()),
            Some(_) => Err(self.invalid("after top-level value")),
        }
    }

    fn value(&mut self, path: &str) -> Scanned {
        self.skip_space();
        match self.peek() {
            Some(b'{') => self.object(path),
            Some(b'[') => self.array(path),
            Some(b'"') => self.string().map(|_| ()),
            Some(b'-' | b'0'..=b'9') => self.number(),
            Some(b't') => self.literal("true"),
            Some(b'f') => self.literal("false"),
            Some(b'n') => self.literal("null"),
            _ => Err(self.invalid("looking for beginning of value")),
        }
    }

    fn object(&mut self, path: &str) -> Scanned {
        self.at += 1;
        self.skip_space();
        if self.peek() == Some(b'}') {
            self.at += 1;
            return Ok(());
        }
        let mut keys: Vec<String> = Vec::new();
        loop {
            self.skip_space();
            if self.peek() != Some(b'"') {
                return Err(self.invalid("looking for beginning of object key string"));
            }
            let key = self.string()?;
            let child = if path.is_empty() {
                key.clone()
            } else {
                format!("{path}.{key}")
            };
            if keys.contains(&key) {
                self.duplicates.push(child.clone());
            } else {
                keys.push(key);
            }
            self.skip_space();
            if self.peek() != Some(b':') {
                return Err(self.invalid("after object key"));
            }
            self.at += 1;
            self.value(&child)?;
            self.skip_space();
            match self.peek() {
                Some(b',') => self.at += 1,
                Some(b'}') => {
                    self.at += 1;
                    return Ok(());
                }
                _ => return Err(self.invalid("after object key:value pair")),
            }
        }
    }

    fn array(&mut self, path: &str) -> Scanned {
        self.at += 1;
        self.skip_space();
        if self.peek() == Some(b']') {
            self.at += 1;
            return Ok(());
        }
        let mut index = 0;
        loop {
            self.value(&format!("{path}[{index}]"))?;
            index += 1;
            self.skip_space();
            match self.peek() {
                Some(b',') => self.at += 1,
                Some(b']') => {
                    self.at += 1;
                    return Ok(());
                }
                _ => return Err(self.invalid("after array element")),
            }
        }
    }

    /// A string, returned decoded (for keys).
    fn string(&mut self) -> Result<String, String> {
        let start = self.at;
        self.at += 1;
        loop {
            match self.peek() {
                None => return Err(self.invalid("")),
                Some(b'"') => {
                    self.at += 1;
                    let raw = &self.bytes[start..self.at];
                    return Ok(serde_json::from_slice(raw).unwrap_or_default());
                }
                Some(b'\\') => {
                    self.at += 1;
                    self.escape()?;
                }
                Some(byte) if byte < 0x20 => return Err(self.invalid("in string literal")),
                Some(_) => self.at += 1,
            }
        }
    }

    fn escape(&mut self) -> Scanned {
        match self.peek() {
            Some(b'b' | b'f' | b'n' | b'r' | b't' | b'\\' | b'/' | b'"') => {
                self.at += 1;
                Ok(())
            }
            Some(b'u') => {
                self.at += 1;
                for _ in 0..4 {
                    match self.peek() {
                        Some(byte) if byte.is_ascii_hexdigit() => self.at += 1,
                        _ => return Err(self.invalid("in \\u hexadecimal character escape")),
                    }
                }
                Ok(())
            }
            _ => Err(self.invalid("in string escape code")),
        }
    }

    fn digits(&mut self) {
        while matches!(self.peek(), Some(b'0'..=b'9')) {
            self.at += 1;
        }
    }

    fn number(&mut self) -> Scanned {
        if self.peek() == Some(b'-') {
            self.at += 1;
        }
        match self.peek() {
            Some(b'0') => self.at += 1,
            Some(b'1'..=b'9') => self.digits(),
            _ => return Err(self.invalid("in numeric literal")),
        }
        if self.peek() == Some(b'.') {
            self.at += 1;
            if !matches!(self.peek(), Some(b'0'..=b'9')) {
                return Err(self.invalid("after decimal point in numeric literal"));
            }
            self.digits();
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.at += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.at += 1;
            }
            if !matches!(self.peek(), Some(b'0'..=b'9')) {
                return Err(self.invalid("in exponent of numeric literal"));
            }
            self.digits();
        }
        Ok(())
    }

    fn literal(&mut self, word: &str) -> Scanned {
        for (index, expected) in word.bytes().enumerate() {
            if self.peek() != Some(expected) {
                let context = format!("in literal {word} (expecting {})", quote(expected));
                return Err(if index == 0 {
                    self.invalid("looking for beginning of value")
                } else {
                    self.invalid(&context)
                });
            }
            self.at += 1;
        }
        Ok(())
    }
}

/// The first bytes of a body, as the API server shows them in an error: the text of what
/// looks like an object, else hexadecimal; cut at 30 bytes.
pub(super) fn summary(body: &[u8]) -> String {
    const MAX: usize = 30;
    let cut = &body[..body.len().min(MAX)];
    let more = if body.len() > MAX { " ..." } else { "" };
    match body.first() {
        None => "<empty>".to_owned(),
        Some(b'{') => format!("{}{more}", String::from_utf8_lossy(cut)),
        Some(_) => {
            let hex: String = cut.iter().map(|byte| format!("{byte:02x}")).collect();
            format!("{hex}{more}")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error(text: &str) -> Option<String> {
        scan(text.as_bytes()).error
    }

    #[test]
    fn go_words_for_syntax_errors() {
        assert_eq!(error(r#"{"a": [1, {"b": true}]}"#), None);
        assert_eq!(
            error("{ not json").as_deref(),
            Some("invalid character 'n' looking for beginning of object key string")
        );
        assert_eq!(
            error(r#"{"a" 1}"#).as_deref(),
            Some("invalid character '1' after object key")
        );
        assert_eq!(
            error(r#"{"a": 1 "b"}"#).as_deref(),
            Some("invalid character '\"' after object key:value pair")
        );
        assert_eq!(
            error(r#"[1 2]"#).as_deref(),
            Some("invalid character '2' after array element")
        );
        assert_eq!(
            error(r#"{"a": tru}"#).as_deref(),
            Some("invalid character '}' in literal true (expecting 'e')")
        );
        assert_eq!(
            error(r#"{"a": 1"#).as_deref(),
            Some("unexpected end of JSON input")
        );
        assert_eq!(error("").as_deref(), Some("unexpected end of JSON input"));
        assert_eq!(
            error("{} x").as_deref(),
            Some("invalid character 'x' after top-level value")
        );
        assert_eq!(
            error("-x").as_deref(),
            Some("invalid character 'x' in numeric literal")
        );
        assert_eq!(
            error("\"a\nb\"").as_deref(),
            Some("invalid character '\\n' in string literal")
        );
    }

    #[test]
    fn duplicate_keys_by_path() {
        let found = scan(br#"{"spec":{"size":1,"size":2,"items":[{"a":1,"a":2}]}}"#);
        assert_eq!(found.duplicates, ["spec.size", "spec.items[0].a"]);
        assert_eq!(summary(b"{ not json"), "{ not json");
        assert_eq!(summary(b"[1]"), "5b315d");
    }
}
