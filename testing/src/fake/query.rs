//! The query parameters of a request and the options they make (`CreateOptions`,
//! `UpdateOptions`, `PatchOptions`, `DeleteOptions`), validated as the API server validates them:
//! `dryRun` must be `All`, `fieldValidation` one of `Ignore`, `Warn` and `Strict`, a
//! `fieldManager` at most 128 printable characters (and given for an apply), `force` only for an
//! apply; a refusal is `422 Invalid` of the options' kind (`CreateOptions.meta.k8s.io "" is
//! invalid: dryRun: Unsupported value: []string{"Yes"}: supported values: "All"`).

use serde_json::Value;

use super::errors::{ApiError, ErrorType, FieldError, OptionsKind, go_quote};

/// The query parameters of a request, decoded.
pub(super) struct Query(Vec<(String, String)>);

impl Query {
    pub(super) fn parse(query: &str) -> Self {
        let pairs = query
            .split('&')
            .filter(|pair| !pair.is_empty())
            .map(|pair| {
                let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
                (percent_decode(key), percent_decode(value))
            })
            .collect();
        Self(pairs)
    }

    /// The first value of `key`.
    pub(super) fn get(&self, key: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, value)| value.as_str())
    }

    /// Every value of `key` (`dryRun` may be given more than once).
    pub(super) fn all(&self, key: &str) -> Vec<&str> {
        self.0
            .iter()
            .filter(|(k, _)| k == key)
            .map(|(_, value)| value.as_str())
            .collect()
    }

    pub(super) fn flag(&self, key: &str) -> bool {
        matches!(self.get(key), Some("true" | "1"))
    }
}

/// Decodes `application/x-www-form-urlencoded` text (`%3D` and `+`). Written here because the
/// crates that do it are not dependencies of the runtime.
pub(super) fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut index = 0;
    while index < bytes.len() {
        if bytes[index] == b'%'
            && let Some(byte) = text
                .get(index + 1..index + 3)
                .and_then(|hex| u8::from_str_radix(hex, 16).ok())
        {
            decoded.push(byte);
            index += 3;
            continue;
        }
        decoded.push(if bytes[index] == b'+' {
            b' '
        } else {
            bytes[index]
        });
        index += 1;
    }
    String::from_utf8_lossy(&decoded).into_owned()
}

/// What `fieldValidation` asks of fields the kind does not know or that appear twice.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum FieldValidation {
    Ignore,
    /// The default: the write goes on, with a warning.
    Warn,
    Strict,
}

/// The options of a write.
#[derive(Clone, Debug)]
pub(super) struct WriteOptions {
    pub(super) dry_run: bool,
    /// `fieldManager`, if given.
    pub(super) field_manager: Option<String>,
    pub(super) validation: FieldValidation,
    pub(super) force: bool,
}

/// The kind of a request's options.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Options {
    Create,
    Update,
    /// A patch; `true` for an apply.
    Patch(bool),
}

impl Options {
    fn kind(self) -> &'static str {
        match self {
            Options::Create => "CreateOptions",
            Options::Update => "UpdateOptions",
            Options::Patch(_) => "PatchOptions",
        }
    }
}

/// The options of a write, or the API server's refusal of them.
pub(super) fn write_options(query: &Query, options: Options) -> Result<WriteOptions, ApiError> {
    let mut errors = Vec::new();
    let manager = query.get("fieldManager").unwrap_or_default();
    match options {
        Options::Patch(false) if query.get("force").is_some() => errors.push(FieldError::new(
            ErrorType::Forbidden,
            "force",
            None,
            "may not be specified for non-apply patch",
        )),
        Options::Patch(true) if manager.is_empty() => errors.push(FieldError::new(
            ErrorType::Required,
            "fieldManager",
            None,
            "is required for apply patch",
        )),
        _ => {}
    }
    errors.extend(field_manager_errors(manager));
    errors.extend(dry_run_errors(query));
    let validation = match query.get("fieldValidation").unwrap_or_default() {
        "Ignore" => FieldValidation::Ignore,
        "" | "Warn" => FieldValidation::Warn,
        "Strict" => FieldValidation::Strict,
        other => {
            errors.push(FieldError::new(
                ErrorType::NotSupported,
                "fieldValidation",
                Some(Value::from(other)),
                "supported values: \"\", \"Ignore\", \"Strict\", \"Warn\"",
            ));
            FieldValidation::Warn
        }
    };
    if !errors.is_empty() {
        return Err(ApiError::invalid_fields(
            &OptionsKind(options.kind()),
            "",
            &errors,
        ));
    }
    Ok(WriteOptions {
        dry_run: !query.all("dryRun").is_empty(),
        field_manager: (!manager.is_empty()).then(|| manager.to_owned()),
        validation,
        force: query.flag("force"),
    })
}

fn field_manager_errors(manager: &str) -> Vec<FieldError> {
    let mut errors = Vec::new();
    if manager.len() > 128 {
        errors.push(FieldError::new(
            ErrorType::TooLong,
            "fieldManager",
            None,
            "must have at most 128 bytes",
        ));
    }
    for (position, character) in manager.char_indices() {
        if character.is_control() {
            errors.push(FieldError::new(
                ErrorType::Invalid,
                "fieldManager",
                Some(Value::from(manager)),
                format!(
                    "invalid character U+{:04X} (at position {position})",
                    u32::from(character)
                ),
            ));
        }
    }
    errors
}

/// `dryRun` takes `All` only (and may be given more than once).
pub(super) fn dry_run_errors(query: &Query) -> Vec<FieldError> {
    let values = query.all("dryRun");
    if values.iter().all(|value| *value == "All") {
        return Vec::new();
    }
    let quoted: Vec<String> = values.iter().map(|value| go_quote(value)).collect();
    vec![FieldError::go(
        ErrorType::NotSupported,
        "dryRun",
        format!("[]string{{{}}}", quoted.join(", ")),
        "supported values: \"All\"",
    )]
}

/// The options of a delete, from its body (`DeleteOptions`) or its query, or the API server's
/// refusal of them.
pub(super) fn delete_options(query: &Query, body: &Value) -> Result<Value, ApiError> {
    let mut options = body.clone();
    if !options.is_object() {
        options = Value::Object(serde_json::Map::new());
    }
    for key in [
        "propagationPolicy",
        "gracePeriodSeconds",
        "orphanDependents",
    ] {
        if options.get(key).is_none()
            && let Some(value) = query.get(key)
        {
            options[key] = match key {
                "propagationPolicy" => Value::from(value),
                "gracePeriodSeconds" => value.parse::<i64>().map_or(Value::Null, Value::from),
                _ => Value::Bool(value == "true"),
            };
        }
    }
    let mut errors = Vec::new();
    let policy = &options["propagationPolicy"];
    if policy.is_string() && options["orphanDependents"].is_boolean() {
        errors.push(FieldError::new(
            ErrorType::Invalid,
            "propagationPolicy",
            Some(policy.clone()),
            "orphanDependents and deletionPropagation cannot be both set",
        ));
    }
    if let Some(policy) = policy.as_str()
        && !matches!(policy, "Foreground" | "Background" | "Orphan")
    {
        errors.push(FieldError::new(
            ErrorType::NotSupported,
            "propagationPolicy",
            Some(Value::from(policy)),
            "supported values: \"Foreground\", \"Background\", \"Orphan\", \"nil\"",
        ));
    }
    errors.extend(dry_run_errors(query));
    if !errors.is_empty() {
        return Err(ApiError::invalid_fields(
            &OptionsKind("DeleteOptions"),
            "",
            &errors,
        ));
    }
    Ok(options)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queries_are_decoded() {
        let query = Query::parse("&watch=true&labelSelector=app%3Dweb%2Ctier+in+%28a%29&x");
        assert!(query.flag("watch"));
        assert_eq!(query.get("labelSelector"), Some("app=web,tier in (a)"));
        assert_eq!(query.get("x"), Some(""));
        assert_eq!(query.get("y"), None);
        assert_eq!(percent_decode("100%"), "100%");
        assert_eq!(percent_decode("%zz%41"), "%zzA");
    }

    #[test]
    fn options_are_validated() {
        let refused = |query: &str, options| {
            write_options(&Query::parse(query), options)
                .unwrap_err()
                .message
        };
        assert_eq!(
            refused("dryRun=Yes", Options::Create),
            r#"CreateOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: []string{"Yes"}: supported values: "All""#
        );
        assert_eq!(
            refused("", Options::Patch(true)),
            r#"PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch"#
        );
        let options = write_options(
            &Query::parse("dryRun=All&fieldValidation=Strict"),
            Options::Update,
        )
        .unwrap();
        assert!(options.dry_run);
        assert_eq!(options.validation, FieldValidation::Strict);
    }
}
