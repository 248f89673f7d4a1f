//! operator-framework/api's `CustomResourceDefinitionValidator`: a CRD of the bundle, v1 or
//! v1beta1, defaulted and converted the way the API server does, then checked by
//! apiextensions-apiserver's static validation (`ValidateCustomResourceDefinition`), of which the
//! peer keeps every error whose field mentions neither `openAPIV3Schema` nor `status`. Messages
//! are apimachinery's (`<field>: Invalid value: …`).
//!
//! A v1beta1 CRD is accepted, as there, when it is otherwise valid: its defaults then apply
//! (`preserveUnknownFields: true`, which must be set to false, and the conversion review
//! versions `[v1beta1]`). What is not checked: CEL rules and the schemas (the peer leaves their
//! errors out), selectable fields.

use std::collections::BTreeSet;

use serde_json::Value;

use super::Report;
use super::fields::{at, flag, list, text};
use super::load::Typed;
use crate::k8s_names;

/// The CRD after defaulting and conversion to apiextensions' internal version.
struct Internal<'a> {
    v1beta1: bool,
    group: &'a str,
    scope: &'a str,
    names: Names,
    /// `spec.version`: the first version (v1), or v1beta1's field (defaulted).
    version: String,
    versions: Vec<Version<'a>>,
    /// Top-level fields: v1beta1's own, or v1's per-version ones when all versions agree.
    validation: Option<&'a Value>,
    subresources: Option<&'a Value>,
    columns: Vec<&'a Value>,
    preserve_unknown_fields: Option<bool>,
    conversion: Conversion<'a>,
}

struct Names {
    plural: String,
    singular: String,
    kind: String,
    list_kind: String,
    short_names: Vec<String>,
    categories: Vec<String>,
}

struct Version<'a> {
    name: &'a str,
    storage: bool,
    deprecated: bool,
    deprecation_warning: Option<&'a str>,
    schema: Option<&'a Value>,
    subresources: Option<&'a Value>,
    columns: Vec<&'a Value>,
}

struct Conversion<'a> {
    strategy: &'a str,
    client_config: Option<&'a Value>,
    review_versions: Vec<&'a str>,
}

fn internal(crd: &Value) -> Internal<'_> {
    let v1beta1 = text(crd, &["apiVersion"]) == "apiextensions.k8s.io/v1beta1";
    let spec = crd.get("spec").unwrap_or(&Value::Null);
    let kind = text(spec, &["names", "kind"]).to_string();
    let mut names = Names {
        plural: text(spec, &["names", "plural"]).to_string(),
        singular: text(spec, &["names", "singular"]).to_string(),
        list_kind: text(spec, &["names", "listKind"]).to_string(),
        short_names: strings(spec, &["names", "shortNames"]),
        categories: strings(spec, &["names", "categories"]),
        kind,
    };
    // SetDefaults_CustomResourceDefinitionSpec (v1 and v1beta1).
    if names.singular.is_empty() {
        names.singular = names.kind.to_lowercase();
    }
    if names.list_kind.is_empty() && !names.kind.is_empty() {
        names.list_kind = format!("{}List", names.kind);
    }
    let mut versions: Vec<Version> = list(spec, &["versions"])
        .iter()
        .map(|v| Version {
            name: text(v, &["name"]),
            storage: flag(v, &["storage"]),
            deprecated: flag(v, &["deprecated"]),
            deprecation_warning: at(v, &["deprecationWarning"]).and_then(Value::as_str),
            schema: at(v, &["schema"]),
            subresources: at(v, &["subresources"]),
            columns: list(v, &["additionalPrinterColumns"]).iter().collect(),
        })
        .collect();
    let mut version = if v1beta1 {
        text(spec, &["version"]).to_string()
    } else {
        String::new()
    };
    let mut validation = None;
    let mut subresources = None;
    let mut columns = Vec::new();
    let strategy_default;
    let conversion = at(spec, &["conversion"]);
    let preserve_unknown_fields;
    let review_versions: Vec<&str>;
    let client_config;
    if v1beta1 {
        // v1beta1's defaults: versions from spec.version and back, pruning off, reviews v1beta1.
        if versions.is_empty() && !version.is_empty() {
            versions.push(Version {
                name: text(spec, &["version"]),
                storage: true,
                deprecated: false,
                deprecation_warning: None,
                schema: None,
                subresources: None,
                columns: Vec::new(),
            });
        }
        if version.is_empty()
            && let Some(first) = versions.first()
        {
            version = first.name.to_string();
        }
        validation = at(spec, &["validation"]);
        subresources = at(spec, &["subresources"]);
        columns = list(spec, &["additionalPrinterColumns"]).iter().collect();
        preserve_unknown_fields = Some(
            at(spec, &["preserveUnknownFields"])
                .and_then(Value::as_bool)
                .unwrap_or(true),
        );
        strategy_default = conversion.map_or("None", |c| text(c, &["strategy"]));
        let reviews = conversion
            .map(|c| strs(c, &["conversionReviewVersions"]))
            .unwrap_or_default();
        review_versions = if strategy_default == "Webhook" && reviews.is_empty() {
            vec!["v1beta1"]
        } else {
            reviews
        };
        client_config = conversion.and_then(|c| at(c, &["webhookClientConfig"]));
    } else {
        // v1 → internal: the first version is spec.version, and per-version schemas,
        // subresources and columns that are the same everywhere move to the top level.
        if let Some(first) = versions.first() {
            version = first.name.to_string();
            if versions.iter().all(|v| v.schema == first.schema) {
                validation = first.schema;
            }
            if versions
                .iter()
                .all(|v| v.subresources == first.subresources)
            {
                subresources = first.subresources;
            }
            if versions.iter().all(|v| v.columns == first.columns) {
                columns = first.columns.clone();
            }
        }
        let (same_schema, same_sub, same_columns) = (
            validation.is_some() || versions.iter().all(|v| v.schema.is_none()),
            subresources.is_some() || versions.iter().all(|v| v.subresources.is_none()),
            !columns.is_empty() || versions.iter().all(|v| v.columns.is_empty()),
        );
        for v in &mut versions {
            if same_schema {
                v.schema = None;
            }
            if same_sub {
                v.subresources = None;
            }
            if same_columns {
                v.columns.clear();
            }
        }
        preserve_unknown_fields = Some(flag(spec, &["preserveUnknownFields"]));
        strategy_default = conversion.map_or("None", |c| text(c, &["strategy"]));
        review_versions = conversion
            .map(|c| strs(c, &["webhook", "conversionReviewVersions"]))
            .unwrap_or_default();
        client_config = conversion.and_then(|c| at(c, &["webhook", "clientConfig"]));
    }
    Internal {
        v1beta1,
        group: text(spec, &["group"]),
        scope: text(spec, &["scope"]),
        names,
        version,
        versions,
        validation,
        subresources,
        columns,
        preserve_unknown_fields,
        conversion: Conversion {
            strategy: strategy_default,
            client_config,
            review_versions,
        },
    }
}

fn strings(value: &Value, path: &[&str]) -> Vec<String> {
    strs(value, path).into_iter().map(str::to_string).collect()
}

fn strs<'a>(value: &'a Value, path: &[&str]) -> Vec<&'a str> {
    list(value, path).iter().filter_map(Value::as_str).collect()
}

/// A field error as apimachinery prints it, kept when the peer keeps it.
struct Errors<'r, 'p> {
    file: String,
    report: &'r mut Report<'p>,
}

impl Errors<'_, '_> {
    fn add(&mut self, field: &str, message: String) {
        // The peer leaves out what concerns the schemas or the status.
        if field.contains("openAPIV3Schema") || field.contains("status") {
            return;
        }
        self.report
            .error(format!("{}: {field}", self.file), message);
    }
    fn required(&mut self, field: &str, detail: &str) {
        let message = if detail.is_empty() {
            "Required value".to_string()
        } else {
            format!("Required value: {detail}")
        };
        self.add(field, message);
    }
    fn invalid(&mut self, field: &str, value: &str, detail: &str) {
        self.add(field, format!("Invalid value: {value:?}: {detail}"));
    }
    fn forbidden(&mut self, field: &str, detail: &str) {
        self.add(field, format!("Forbidden: {detail}"));
    }
}

pub fn check(crd: &Typed, report: &mut Report) {
    let mut errors = Errors {
        file: crd.file.clone(),
        report,
    };
    let value = &crd.value;
    let spec = internal(value);
    check_metadata(value, &spec, &mut errors);
    check_spec(&spec, value, &mut errors);
    check_api_approval(value, &spec, &mut errors);
    if spec.preserve_unknown_fields == Some(true) {
        errors.add(
            "spec.preserveUnknownFields",
            "Invalid value: true: cannot set to true, set x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema instead".into(),
        );
    }
}

fn check_metadata(crd: &Value, spec: &Internal, errors: &mut Errors) {
    let meta = crd.get("metadata").unwrap_or(&Value::Null);
    let name = text(meta, &["name"]);
    let required_name = format!("{}.{}", spec.names.plural, spec.group);
    if name.is_empty() {
        errors.required("metadata.name", "name or generateName is required");
    } else {
        for err in k8s_names::dns1123_subdomain(name) {
            errors.invalid("metadata.name", name, &err);
        }
        if name != required_name {
            errors.invalid(
                "metadata.name",
                name,
                "must be spec.names.plural+\".\"+spec.group",
            );
        }
    }
    if !text(meta, &["namespace"]).is_empty() {
        errors.forbidden("metadata.namespace", "not allowed on this type");
    }
    let file = errors.file.clone();
    let at = |field: &str| format!("{file}: metadata.{field}");
    super::objects::check_labels_and_annotations(meta, &at, errors.report);
}

fn check_spec(spec: &Internal, crd: &Value, errors: &mut Errors) {
    if spec.group.is_empty() {
        errors.required("spec.group", "");
    } else {
        let problems = k8s_names::dns1123_subdomain(spec.group);
        if !problems.is_empty() {
            errors.invalid("spec.group", spec.group, &problems.join(","));
        } else if !spec.group.contains('.') {
            errors.invalid(
                "spec.group",
                spec.group,
                "should be a domain with at least one dot",
            );
        }
    }
    let scope = if spec.v1beta1 && spec.scope.is_empty() {
        "Namespaced"
    } else {
        spec.scope
    };
    check_enum("spec.scope", scope, &["Cluster", "Namespaced"], errors);
    if spec.preserve_unknown_fields != Some(false) && has_defaults(crd) {
        errors.invalid(
            "spec.preserveUnknownFields",
            "true",
            "must be false in order to use defaults in the schema",
        );
    }
    let mut storage = 0;
    let mut seen = BTreeSet::new();
    let mut unique = true;
    for (i, version) in spec.versions.iter().enumerate() {
        let at = format!("spec.versions[{i}]");
        if version.storage {
            storage += 1;
        }
        if !seen.insert(version.name) {
            unique = false;
        }
        let problems = k8s_names::dns1035_label(version.name);
        if !problems.is_empty() {
            errors.invalid(&format!("{at}.name"), version.name, &problems.join(","));
        }
        if let Some(warning) = version.deprecation_warning {
            let field = format!("{at}.deprecationWarning");
            if !version.deprecated {
                errors.invalid(&field, warning, "can only be set for deprecated versions");
            }
            if warning.len() > 256 {
                errors.invalid(&field, warning, "must be <= 256 characters long");
            }
            if warning.is_empty() {
                errors.invalid(&field, warning, "must not be an empty string");
            }
            if warning.chars().any(|c| c.is_control()) {
                errors.invalid(
                    &field,
                    warning,
                    "must only contain printable UTF-8 characters",
                );
            }
        }
        if let Some(subresources) = version.subresources {
            check_subresources(subresources, &format!("{at}.subresources"), errors);
        }
        for (j, column) in version.columns.iter().enumerate() {
            check_column(
                column,
                &format!("{at}.additionalPrinterColumns[{j}]"),
                errors,
            );
        }
    }
    let per_version_schema = spec.versions.iter().any(|v| v.schema.is_some());
    let per_version_sub = spec.versions.iter().any(|v| v.subresources.is_some());
    let per_version_columns = spec.versions.iter().any(|v| !v.columns.is_empty());
    if spec.v1beta1 {
        if spec.validation.is_some() && per_version_schema {
            errors.forbidden(
                "spec.validation",
                "top-level and per-version schemas are mutually exclusive",
            );
        }
        if spec.subresources.is_some() && per_version_sub {
            errors.forbidden(
                "spec.subresources",
                "top-level and per-version subresources are mutually exclusive",
            );
        }
        if !spec.columns.is_empty() && per_version_columns {
            errors.forbidden(
                "spec.additionalPrinterColumns",
                "top-level and per-version additionalPrinterColumns are mutually exclusive",
            );
        }
        let identical = |get: &dyn Fn(&Version) -> Option<String>| {
            let first = spec.versions.first().and_then(get);
            first.is_some() && spec.versions.iter().all(|v| get(v) == first)
        };
        if identical(&|v| v.schema.map(Value::to_string)) {
            errors.add("spec.versions", "Invalid value: per-version schemas may not all be set to identical values (top-level validation should be used instead)".into());
        }
        if identical(&|v| v.subresources.map(Value::to_string)) {
            errors.add("spec.versions", "Invalid value: per-version subresources may not all be set to identical values (top-level subresources should be used instead)".into());
        }
        if identical(&|v| (!v.columns.is_empty()).then(|| format!("{:?}", v.columns))) {
            errors.add("spec.versions", "Invalid value: per-version additionalPrinterColumns may not all be set to identical values (top-level additionalPrinterColumns should be used instead)".into());
        }
    }
    if !unique {
        errors.add(
            "spec.versions",
            "Invalid value: must contain unique version names".into(),
        );
    }
    if storage != 1 {
        errors.add(
            "spec.versions",
            "Invalid value: must have exactly one version marked as storage version".into(),
        );
    }
    if !spec.version.is_empty() {
        let problems = k8s_names::dns1035_label(&spec.version);
        if !problems.is_empty() {
            errors.invalid("spec.version", &spec.version, &problems.join(","));
        }
        if let Some(first) = spec.versions.first()
            && first.name != spec.version
        {
            errors.invalid(
                "spec.version",
                &spec.version,
                "must match the first version in spec.versions",
            );
        }
    }
    check_names(&spec.names, errors);
    if let Some(subresources) = spec.subresources {
        check_subresources(subresources, "spec.subresources", errors);
    }
    for (i, column) in spec.columns.iter().enumerate() {
        check_column(
            column,
            &format!("spec.additionalPrinterColumns[{i}]"),
            errors,
        );
    }
    check_conversion(spec, errors);
}

fn check_enum(field: &str, value: &str, accepted: &[&str], errors: &mut Errors) {
    if value.is_empty() {
        errors.required(field, "");
    } else if !accepted.contains(&value) {
        let supported: Vec<String> = accepted.iter().map(|a| format!("{a:?}")).collect();
        errors.add(
            field,
            format!(
                "Unsupported value: {value:?}: supported values: {}",
                supported.join(", ")
            ),
        );
    }
}

fn check_names(names: &Names, errors: &mut Errors) {
    for (field, value) in [
        ("plural", &names.plural),
        ("singular", &names.singular),
        ("kind", &names.kind),
        ("listKind", &names.list_kind),
    ] {
        if value.is_empty() {
            errors.required(&format!("spec.names.{field}"), "");
        }
    }
    for (field, value, lower) in [
        ("plural", &names.plural, false),
        ("singular", &names.singular, false),
        ("kind", &names.kind, true),
        ("listKind", &names.list_kind, true),
    ] {
        if value.is_empty() {
            continue;
        }
        let problems = k8s_names::dns1035_label(&if lower {
            value.to_lowercase()
        } else {
            value.clone()
        });
        if !problems.is_empty() {
            let detail = if lower {
                format!(
                    "may have mixed case, but should otherwise match: {}",
                    problems.join(",")
                )
            } else {
                problems.join(",")
            };
            errors.invalid(&format!("spec.names.{field}"), value, &detail);
        }
    }
    for (kind, values) in [
        ("shortNames", &names.short_names),
        ("categories", &names.categories),
    ] {
        for (i, value) in values.iter().enumerate() {
            let problems = k8s_names::dns1035_label(value);
            if !problems.is_empty() {
                errors.invalid(
                    &format!("spec.names.{kind}[{i}]"),
                    value,
                    &problems.join(","),
                );
            }
        }
    }
    if !names.kind.is_empty() && names.kind == names.list_kind {
        errors.invalid(
            "spec.names.listKind",
            &names.list_kind,
            "kind and listKind may not be the same",
        );
    }
}

fn check_subresources(subresources: &Value, at: &str, errors: &mut Errors) {
    let Some(scale) = subresources.get("scale").filter(|s| !s.is_null()) else {
        return;
    };
    for (field, prefix, under) in [
        (
            "specReplicasPath",
            ".spec.",
            "should be a json path under .spec",
        ),
        (
            "statusReplicasPath",
            ".status.",
            "should be a json path under .status",
        ),
    ] {
        let path = text(scale, &[field]);
        let location = format!("{at}.scale.{field}");
        if path.is_empty() {
            errors.required(&location, "");
        } else if !simple_json_path(path, &location, errors) && !path.starts_with(prefix) {
            errors.invalid(&location, path, under);
        }
    }
    let selector = text(scale, &["labelSelectorPath"]);
    if !selector.is_empty() {
        let location = format!("{at}.scale.labelSelectorPath");
        if !simple_json_path(selector, &location, errors)
            && !selector.starts_with(".spec.")
            && !selector.starts_with(".status.")
        {
            errors.invalid(
                &location,
                selector,
                "should be a json path under either .spec or .status",
            );
        }
    }
}

/// apiextensions' `validateSimpleJSONPath`; true when it reported a problem.
fn simple_json_path(path: &str, field: &str, errors: &mut Errors) -> bool {
    if path.is_empty() {
        errors.invalid(field, path, "must not be empty");
        true
    } else if !path.starts_with('.') {
        errors.invalid(field, path, "must be a simple json path starting with .");
        true
    } else {
        false
    }
}

fn check_column(column: &Value, at: &str, errors: &mut Errors) {
    const TYPES: &str = "boolean,date,integer,number,string";
    const FORMATS: &str = "byte,date,date-time,double,float,int32,int64,password";
    if text(column, &["name"]).is_empty() {
        errors.required(&format!("{at}.name"), "");
    }
    let kind = text(column, &["type"]);
    if kind.is_empty() {
        errors.required(&format!("{at}.type"), &format!("must be one of {TYPES}"));
    } else if !TYPES.split(',').any(|t| t == kind) {
        errors.invalid(
            &format!("{at}.type"),
            kind,
            &format!("must be one of {TYPES}"),
        );
    }
    let format = text(column, &["format"]);
    if !format.is_empty() && !FORMATS.split(',').any(|f| f == format) {
        errors.invalid(
            &format!("{at}.format"),
            format,
            &format!("must be one of {FORMATS}"),
        );
    }
    // v1 calls it jsonPath, v1beta1 JSONPath.
    let path = [text(column, &["jsonPath"]), text(column, &["JSONPath"])]
        .into_iter()
        .find(|p| !p.is_empty())
        .unwrap_or("");
    let field = format!("{at}.JSONPath");
    if path.is_empty() {
        errors.required(&field, "");
    } else {
        simple_json_path(path, &field, errors);
    }
}

fn check_conversion(spec: &Internal, errors: &mut Errors) {
    let conversion = &spec.conversion;
    if conversion.strategy != "None" && spec.preserve_unknown_fields != Some(false) {
        errors.invalid(
            "spec.conversion.strategy",
            conversion.strategy,
            "must be None if spec.preserveUnknownFields is true",
        );
    }
    check_enum(
        "spec.conversion.strategy",
        conversion.strategy,
        &["None", "Webhook"],
        errors,
    );
    if conversion.strategy == "Webhook" {
        match conversion.client_config {
            None => errors.required(
                "spec.conversion.webhookClientConfig",
                "required when strategy is set to Webhook",
            ),
            Some(config) => check_client_config(config, errors),
        }
        check_review_versions(&conversion.review_versions, errors);
    } else {
        if conversion.client_config.is_some() {
            errors.forbidden(
                "spec.conversion.webhookClientConfig",
                "should not be set when strategy is not set to Webhook",
            );
        }
        if !conversion.review_versions.is_empty() {
            errors.forbidden(
                "spec.conversion.conversionReviewVersions",
                "should not be set when strategy is not set to Webhook",
            );
        }
    }
}

fn check_client_config(config: &Value, errors: &mut Errors) {
    let field = "spec.conversion.webhookClientConfig";
    let url = at(config, &["url"]).and_then(Value::as_str);
    let service = at(config, &["service"]);
    match (url, service) {
        (Some(_), Some(_)) | (None, None) => {
            errors.required(field, "exactly one of url or service is required")
        }
        (Some(url), None) => {
            let at = format!("{field}.url");
            match url.split_once("://") {
                Some((scheme, rest)) => {
                    if scheme != "https" {
                        errors.invalid(&at, scheme, "'https' is the only allowed URL scheme; desired format: https://host[/path]");
                    }
                    let host = rest.split(['/', '?', '#']).next().unwrap_or("");
                    if host.is_empty() {
                        errors.invalid(
                            &at,
                            host,
                            "host must be specified; desired format: https://host[/path]",
                        );
                    }
                    if host.contains('@') {
                        errors.invalid(&at, host, "user information is not permitted in the URL");
                    }
                    if rest.contains('#') {
                        errors.invalid(&at, url, "fragments are not permitted in the URL");
                    }
                    if rest.contains('?') {
                        errors.invalid(&at, url, "query parameters are not permitted in the URL");
                    }
                }
                None => errors.invalid(
                    &at,
                    "",
                    "'https' is the only allowed URL scheme; desired format: https://host[/path]",
                ),
            }
        }
        (None, Some(service)) => {
            let at = format!("{field}.service");
            if text(service, &["name"]).is_empty() {
                errors.required(&format!("{at}.name"), "");
            }
            if text(service, &["namespace"]).is_empty() {
                errors.required(&format!("{at}.namespace"), "");
            }
            let port = service.get("port").and_then(Value::as_i64).unwrap_or(443);
            if !(1..=65535).contains(&port) {
                errors.invalid(
                    &format!("{at}.port"),
                    &port.to_string(),
                    "port is not valid: must be between 1 and 65535, inclusive",
                );
            }
            let path = text(service, &["path"]);
            check_service_path(path, &format!("{at}.path"), errors);
        }
    }
}

fn check_service_path(path: &str, field: &str, errors: &mut Errors) {
    if path.is_empty() || path == "/" {
        return;
    }
    if path == "//" {
        return errors.invalid(field, path, "segment[0] may not be empty");
    }
    if !path.starts_with('/') {
        errors.invalid(field, path, "must start with a '/'");
    }
    let inner = path.get(1..).unwrap_or("");
    let inner = inner.strip_suffix('/').unwrap_or(inner);
    for (i, step) in inner.split('/').enumerate() {
        if step.is_empty() {
            errors.invalid(field, path, &format!("segment[{i}] may not be empty"));
            continue;
        }
        for failure in k8s_names::dns1123_subdomain(step) {
            errors.invalid(field, path, &format!("segment[{i}]: {failure}"));
        }
    }
}

fn check_review_versions(versions: &[&str], errors: &mut Errors) {
    let field = "spec.conversion.conversionReviewVersions";
    if versions.is_empty() {
        return errors.required(field, "");
    }
    let mut seen = BTreeSet::new();
    for (i, version) in versions.iter().enumerate() {
        if !seen.insert(*version) {
            errors.invalid(&format!("{field}[{i}]"), version, "duplicate version");
            continue;
        }
        for problem in k8s_names::dns1035_label(version) {
            errors.invalid(&format!("{field}[{i}]"), version, &problem);
        }
    }
    if !versions.iter().any(|v| matches!(*v, "v1" | "v1beta1")) {
        errors.add(
            field,
            format!("Invalid value: {versions:?}: must include at least one of v1, v1beta1"),
        );
    }
}

/// Whether any schema of the CRD has a `default`.
fn has_defaults(crd: &Value) -> bool {
    let spec = crd.get("spec").unwrap_or(&Value::Null);
    at(spec, &["validation", "openAPIV3Schema"]).is_some_and(schema_has_defaults)
        || list(spec, &["versions"])
            .iter()
            .filter_map(|v| at(v, &["schema", "openAPIV3Schema"]))
            .any(schema_has_defaults)
}

/// A schema's `default`s, where the schema allows them: in `properties`, `items`,
/// `additionalProperties`, `allOf`/`anyOf`/`oneOf`/`not` (not inside `default`, `enum` or
/// `example` values).
fn schema_has_defaults(schema: &Value) -> bool {
    let Some(map) = schema.as_object() else {
        return false;
    };
    if map.get("default").is_some_and(|d| !d.is_null()) {
        return true;
    }
    let nested = |key: &str| map.get(key);
    let in_map = |v: Option<&Value>| {
        v.and_then(Value::as_object)
            .is_some_and(|m| m.values().any(schema_has_defaults))
    };
    let in_list = |v: Option<&Value>| {
        v.and_then(Value::as_array)
            .is_some_and(|l| l.iter().any(schema_has_defaults))
    };
    in_map(nested("properties"))
        || in_map(nested("patternProperties"))
        || in_map(nested("definitions"))
        || nested("items").is_some_and(|i| schema_has_defaults(i) || in_list(Some(i)))
        || nested("additionalProperties").is_some_and(schema_has_defaults)
        || nested("additionalItems").is_some_and(schema_has_defaults)
        || nested("not").is_some_and(schema_has_defaults)
        || in_list(nested("allOf"))
        || in_list(nested("anyOf"))
        || in_list(nested("oneOf"))
}

/// apiextensions' `validateAPIApproval`: CRDs of Kubernetes' own groups need an approval.
fn check_api_approval(crd: &Value, spec: &Internal, errors: &mut Errors) {
    let group = spec.group;
    let protected = group == "k8s.io"
        || group.ends_with(".k8s.io")
        || group == "kubernetes.io"
        || group.ends_with(".kubernetes.io");
    if !protected {
        return;
    }
    const KEY: &str = "api-approved.kubernetes.io";
    let field = format!("metadata.annotations[{KEY}]");
    let annotation = text(crd, &["metadata", "annotations", KEY]);
    if annotation.is_empty() {
        errors.required(&field, &format!("protected groups must have approval annotation {KEY:?}, see https://github.com/kubernetes/enhancements/pull/1111"));
    } else if !annotation.starts_with("unapproved") {
        let is_url = annotation.split_once("://").is_some_and(|(scheme, rest)| {
            !scheme.is_empty() && !rest.is_empty() && !rest.starts_with('/')
        });
        if !is_url {
            errors.invalid(&field, annotation, &format!("protected groups must have approval annotation {KEY:?} with either a URL or a reason starting with \"unapproved\", see https://github.com/kubernetes/enhancements/pull/1111"));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kyaml;
    use crate::typed;
    use crate::validate::{Problem, Report};

    const GOOD: &str = "apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  names: {kind: Widget, plural: widgets}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema: {openAPIV3Schema: {type: object}}
";

    fn problems(text: &str) -> Vec<String> {
        let node = kyaml::first_document(text).unwrap().unwrap();
        let (value, errors) = typed::decode(&node, &typed::CRD);
        assert!(errors.is_empty(), "{errors:?}");
        let mut found: Vec<Problem> = Vec::new();
        check(
            &Typed {
                file: "crd.yaml".into(),
                value,
            },
            &mut Report::new("crd", &mut found),
        );
        found.into_iter().map(|p| p.to_string()).collect()
    }

    fn says(text: &str, words: &str) {
        let found = problems(text);
        assert!(
            found.iter().any(|p| p.contains(words)),
            "{words:?} not in {found:#?}"
        );
    }

    #[test]
    fn a_good_crd_passes() {
        assert_eq!(problems(GOOD), Vec::<String>::new());
    }

    /// (Columns the same in every version move to the top level in apiextensions' internal
    /// version, and the API server names them there: so does the peer, so does operator-rs.)
    #[test]
    fn names_scope_and_columns_are_apiextensions() {
        says(
            &GOOD.replace("name: widgets.example.com", "name: gadgets.example.com"),
            "metadata.name: Invalid value: \"gadgets.example.com\": must be spec.names.plural+\".\"+spec.group",
        );
        says(
            &GOOD.replace("group: example.com", "group: example"),
            "spec.group: Invalid value: \"example\": should be a domain with at least one dot",
        );
        says(
            &GOOD.replace("scope: Namespaced", "scope: Everywhere"),
            "spec.scope: Unsupported value: \"Everywhere\": supported values: \"Cluster\", \"Namespaced\"",
        );
        says(
            &GOOD.replace("  scope: Namespaced\n", ""),
            "spec.scope: Required value",
        );
        says(
            &GOOD.replace("kind: Widget,", "kind: Widget, listKind: Widget,"),
            "kind and listKind may not be the same",
        );
        says(
            &GOOD.replace("- name: v1", "- name: V1"),
            "spec.versions[0].name: Invalid value: \"V1\": a DNS-1035 label",
        );
        let columns = GOOD.replace("    storage: true\n", "    storage: true\n    additionalPrinterColumns: [{name: Size, type: size, jsonPath: spec.size}]\n");
        says(
            &columns,
            "spec.additionalPrinterColumns[0].type: Invalid value: \"size\": must be one of boolean,date,integer,number,string",
        );
        says(
            &columns,
            "spec.additionalPrinterColumns[0].JSONPath: Invalid value: \"spec.size\": must be a simple json path starting with .",
        );
    }

    #[test]
    fn conversion_webhooks_need_a_client_and_review_versions() {
        let webhook = format!(
            "{GOOD}  conversion:\n    strategy: Webhook\n    webhook:\n      clientConfig: {{url: 'http://example.com/convert'}}\n      conversionReviewVersions: [v2]\n"
        );
        says(
            &webhook,
            "spec.conversion.webhookClientConfig.url: Invalid value: \"http\": 'https' is the only allowed URL scheme",
        );
        says(
            &webhook,
            "spec.conversion.conversionReviewVersions: Invalid value: [\"v2\"]: must include at least one of v1, v1beta1",
        );
        let service = format!(
            "{GOOD}  conversion:\n    strategy: Webhook\n    webhook:\n      clientConfig: {{service: {{name: s, path: convert}}}}\n      conversionReviewVersions: [v1]\n"
        );
        says(
            &service,
            "spec.conversion.webhookClientConfig.service.namespace: Required value",
        );
        says(
            &service,
            "spec.conversion.webhookClientConfig.service.path: Invalid value: \"convert\": must start with a '/'",
        );
    }

    #[test]
    fn v1beta1_crds_are_read_with_their_defaults() {
        let v1beta1 = "apiVersion: apiextensions.k8s.io/v1beta1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  names: {kind: Widget, plural: widgets}
  version: v1
";
        // preserveUnknownFields defaults to true in v1beta1, which the API server refuses now.
        says(
            v1beta1,
            "spec.preserveUnknownFields: Invalid value: true: cannot set to true",
        );
        let pruned = format!("{v1beta1}  preserveUnknownFields: false\n");
        assert_eq!(problems(&pruned), Vec::<String>::new());
        // One version with its own schema: identical per-version schemas are refused in v1beta1.
        let per_version = format!(
            "{v1beta1}  preserveUnknownFields: false\n  versions:\n  - {{name: v1, served: true, storage: true, schema: {{openAPIV3Schema: {{type: object}}}}}}\n"
        );
        says(
            &per_version,
            "per-version schemas may not all be set to identical values",
        );
        let defaults = format!(
            "{v1beta1}  validation: {{openAPIV3Schema: {{type: object, properties: {{size: {{type: integer, default: 1}}}}}}}}\n"
        );
        says(
            &defaults,
            "spec.preserveUnknownFields: Invalid value: \"true\": must be false in order to use defaults in the schema",
        );
    }

    #[test]
    fn kubernetes_groups_need_an_approval() {
        let k8s = GOOD.replace("example.com", "widgets.k8s.io");
        says(
            &k8s,
            "metadata.annotations[api-approved.kubernetes.io]: Required value: protected groups must have approval annotation",
        );
        let approved = k8s.replace("metadata: {name: widgets.widgets.k8s.io}", "metadata: {name: widgets.widgets.k8s.io, annotations: {api-approved.kubernetes.io: 'https://github.com/kubernetes/enhancements/pull/1111'}}");
        assert_eq!(problems(&approved), Vec::<String>::new());
    }
}
