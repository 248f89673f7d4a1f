//! What serde makes of generated Rust types, read from their source with syn: which wire name
//! each field has, which fields are optional, flattened or defaulted, which values an enum
//! takes, and how a `#[derive(CustomResource)]` kind lays out its object. [`Model::round_trip`]
//! reads a JSON value into those types and writes it back as serde would, so a test can prove,
//! without compiling the code, that an example object survives the generated types whole.
//! A spec type under `spec_or_default!` reads a missing or null spec as its `Default`, which the
//! model builds from the derives (and refuses where a type does not derive it).

use std::collections::BTreeMap;

use serde_json::{Map, Value};
use syn::{Attribute, Fields, Item, LitStr, Type as SynType};

/// A type as serde sees it.
#[derive(Debug, Clone, PartialEq)]
pub enum Ty {
    Bool,
    I32,
    I64,
    F64,
    String,
    IntOrString,
    Value,
    Option(Box<Ty>),
    Vec(Box<Ty>),
    Map(Box<Ty>),
    Named(String),
}

#[derive(Debug, Clone)]
pub struct FieldDef {
    pub rust: String,
    /// The name on the wire: `rename`, else the Rust name (camelCased under `rename_all`).
    pub wire: String,
    pub ty: Ty,
    pub flatten: bool,
    pub default: bool,
    pub skip_none: bool,
    /// `deserialize_with`: the generated `without_object_fields` leaves `apiVersion` and `kind`
    /// out of a flattened map.
    pub deserialize_with: Option<String>,
}

#[derive(Debug, Clone, Default)]
pub struct StructDef {
    pub fields: Vec<FieldDef>,
    /// `#[kube(...)]`: the struct derives a kind.
    pub kube: Option<KubeDef>,
    /// `#[derive(Default)]`.
    pub default: bool,
}

#[derive(Debug, Clone, Default)]
pub struct KubeDef {
    pub no_spec: bool,
    pub status: Option<String>,
    pub kind: String,
    pub root: Option<String>,
}

#[derive(Debug, Clone, Default)]
pub struct EnumDef {
    /// (Rust variant, wire value).
    pub variants: Vec<(String, String)>,
    /// The wire value of the `#[default]` variant, where the enum derives `Default`.
    pub default: Option<String>,
}

#[derive(Debug, Default)]
pub struct Model {
    pub structs: BTreeMap<String, StructDef>,
    pub enums: BTreeMap<String, EnumDef>,
    /// The types named by `spec_or_default!`: a missing or null value reads as their default.
    pub spec_or_default: Vec<String>,
}

impl Model {
    /// The model of `source`; Err if it does not parse or uses what the model does not know.
    pub fn parse(source: &str) -> Result<Self, String> {
        let file = syn::parse_file(source).map_err(|e| format!("does not parse: {e}"))?;
        let mut model = Model::default();
        for item in &file.items {
            match item {
                Item::Struct(s) => {
                    let name = s.ident.to_string();
                    let def = struct_def(&s.attrs, &s.fields)?;
                    if model.structs.insert(name.clone(), def).is_some() {
                        return Err(format!("struct {name} defined twice"));
                    }
                }
                Item::Enum(e) => {
                    let name = e.ident.to_string();
                    let mut def = EnumDef::default();
                    let derives_default = derives(&e.attrs, "Default");
                    for v in &e.variants {
                        let rust = v.ident.to_string();
                        let wire = serde_rename(&v.attrs)?.unwrap_or_else(|| rust.clone());
                        let marked = v.attrs.iter().any(|a| a.path().is_ident("default"));
                        if marked && (def.default.is_some() || !derives_default) {
                            return Err(format!("enum {name}: #[default] on {rust}"));
                        }
                        if marked {
                            def.default = Some(wire.clone());
                        }
                        if def.variants.iter().any(|(r, w)| *r == rust || *w == wire) {
                            return Err(format!("enum {name}: {rust} ({wire}) twice"));
                        }
                        def.variants.push((rust, wire));
                    }
                    if model.enums.insert(name.clone(), def).is_some()
                        || model.structs.contains_key(&name)
                    {
                        return Err(format!("type {name} defined twice"));
                    }
                }
                Item::Macro(m)
                    if m.mac.path.segments.last().unwrap().ident == "spec_or_default" =>
                {
                    let ty: syn::Ident = m.mac.parse_body().map_err(|e| e.to_string())?;
                    model.spec_or_default.push(ty.to_string());
                }
                _ => {}
            }
        }
        Ok(model)
    }

    /// The struct with `#[derive(CustomResource)]`.
    pub fn kind_struct(&self) -> Option<(&String, &StructDef)> {
        self.structs.iter().find(|(_, s)| s.kube.is_some())
    }

    /// `object` (a whole object of the kind) read into the kind's types and written back.
    pub fn round_trip_object(&self, object: &Value) -> Result<Value, String> {
        let (spec, def) = self.kind_struct().ok_or("no #[kube(...)] struct")?;
        let kube = def.kube.as_ref().unwrap();
        let map = object.as_object().ok_or("the object is not an object")?;
        let mut out = Map::new();
        for key in ["apiVersion", "kind", "metadata"] {
            out.insert(
                key.into(),
                map.get(key).cloned().ok_or(format!("no {key}"))?,
            );
        }
        if kube.no_spec {
            // serde hands a flattened struct every field the object's own do not take.
            let mut rest = map.clone();
            for key in ["metadata", "status"] {
                rest.remove(key);
            }
            let fields = self.read(&Ty::Named(spec.clone()), &Value::Object(rest), "")?;
            let fields = fields.as_object().cloned().unwrap_or_default();
            if let Some(key) = ["apiVersion", "kind"]
                .iter()
                .find(|k| fields.contains_key(**k))
            {
                return Err(format!(
                    "{key} is written twice: by kube, and by the flattened fields"
                ));
            }
            out.extend(fields);
        } else {
            let spec_type = Ty::Named(spec.clone());
            let value = match map.get("spec").filter(|v| !v.is_null()) {
                Some(value) => self.read(&spec_type, value, "spec")?,
                None if self.spec_or_default.contains(spec) => self.default_value(&spec_type)?,
                None => return Err("missing field spec".into()),
            };
            out.insert("spec".into(), value);
        }
        match (&kube.status, map.get("status")) {
            (Some(status), Some(value)) if !value.is_null() => {
                out.insert(
                    "status".into(),
                    self.read(&Ty::Named(status.clone()), value, "status")?,
                );
            }
            _ => {}
        }
        Ok(Value::Object(out))
    }

    /// `value` read as `ty` and written back, as serde would; Err names the path of a value
    /// the type refuses.
    pub fn read(&self, ty: &Ty, value: &Value, at: &str) -> Result<Value, String> {
        let wrong = |what: &str| Err(format!("{at}: {value} is not {what}"));
        match ty {
            Ty::Bool if value.is_boolean() => Ok(value.clone()),
            Ty::I32 if value.as_i64().is_some_and(|n| i32::try_from(n).is_ok()) => {
                Ok(value.clone())
            }
            Ty::I64 if value.is_i64() => Ok(value.clone()),
            // An `f64` writes back what it read as a float: `1` comes back as `1.0`.
            Ty::F64 if value.is_number() => Ok(serde_json::json!(value.as_f64().unwrap())),
            Ty::String if value.is_string() => Ok(value.clone()),
            Ty::IntOrString if value.is_i64() || value.is_string() => Ok(value.clone()),
            Ty::Value => Ok(value.clone()),
            Ty::Option(_) if value.is_null() => Ok(Value::Null),
            Ty::Option(inner) => self.read(inner, value, at),
            Ty::Vec(inner) => match value.as_array() {
                Some(items) => items
                    .iter()
                    .enumerate()
                    .map(|(i, v)| self.read(inner, v, &format!("{at}[{i}]")))
                    .collect::<Result<Vec<_>, _>>()
                    .map(Value::Array),
                None => wrong("an array"),
            },
            Ty::Map(inner) => match value.as_object() {
                Some(map) => map
                    .iter()
                    .map(|(k, v)| Ok((k.clone(), self.read(inner, v, &format!("{at}.{k}"))?)))
                    .collect::<Result<Map<_, _>, String>>()
                    .map(Value::Object),
                None => wrong("an object"),
            },
            Ty::Named(name) => {
                if let Some(e) = self.enums.get(name) {
                    return match value.as_str() {
                        Some(s) if e.variants.iter().any(|(_, w)| w == s) => Ok(value.clone()),
                        _ => wrong(&format!("a value of {name}")),
                    };
                }
                let def = self
                    .structs
                    .get(name)
                    .ok_or(format!("{at}: no type {name}"))?;
                let Some(map) = value.as_object() else {
                    return wrong("an object");
                };
                self.read_struct(name, def, map, at)
            }
            _ => wrong(&format!("a {ty:?}")),
        }
    }

    /// What `Default::default()` of `ty` writes; Err where a type does not derive `Default`.
    pub fn default_value(&self, ty: &Ty) -> Result<Value, String> {
        Ok(match ty {
            Ty::Bool => false.into(),
            Ty::I32 | Ty::I64 | Ty::IntOrString => 0.into(),
            Ty::F64 => serde_json::json!(0.0),
            Ty::String => "".into(),
            Ty::Value | Ty::Option(_) => Value::Null,
            Ty::Vec(_) => Value::Array(Vec::new()),
            Ty::Map(_) => Value::Object(Map::new()),
            Ty::Named(name) => {
                if let Some(e) = self.enums.get(name) {
                    let default = e.default.as_ref();
                    return default
                        .map(|w| w.as_str().into())
                        .ok_or(format!("{name}: no Default"));
                }
                let def = self.structs.get(name).ok_or(format!("no type {name}"))?;
                if !def.default {
                    return Err(format!("{name}: no Default"));
                }
                let mut out = Map::new();
                for field in &def.fields {
                    let value = self.default_value(&field.ty)?;
                    if field.flatten {
                        out.extend(value.as_object().cloned().unwrap_or_default());
                    } else if !(value.is_null() && field.skip_none) {
                        out.insert(field.wire.clone(), value);
                    }
                }
                Value::Object(out)
            }
        })
    }

    fn read_struct(
        &self,
        name: &str,
        def: &StructDef,
        map: &Map<String, Value>,
        at: &str,
    ) -> Result<Value, String> {
        let mut out = Map::new();
        let mut seen = Vec::new();
        for field in def.fields.iter().filter(|f| !f.flatten) {
            if seen.contains(&&field.wire) {
                return Err(format!("{name}: two fields read {}", field.wire));
            }
            seen.push(&field.wire);
            let path = format!("{at}.{}", field.wire);
            let value = match map.get(&field.wire) {
                Some(value) => self.read(&field.ty, value, &path)?,
                None if matches!(field.ty, Ty::Option(_)) || field.default => Value::Null,
                None => return Err(format!("{path}: missing field")),
            };
            if value.is_null() && field.skip_none {
                continue;
            }
            out.insert(field.wire.clone(), value);
        }
        let rest: Map<String, Value> = map
            .iter()
            .filter(|(k, _)| !seen.contains(k))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        for field in def.fields.iter().filter(|f| f.flatten) {
            let mut rest = rest.clone();
            if field.deserialize_with.as_deref() == Some("without_object_fields") {
                rest.remove("apiVersion");
                rest.remove("kind");
            }
            let kept = self.read(&field.ty, &Value::Object(rest), at)?;
            out.extend(kept.as_object().cloned().unwrap_or_default());
        }
        Ok(Value::Object(out))
    }
}

/// The types reachable from `name` in `a` are those in `b`: the same fields (Rust name, wire
/// name, type) and the same enum values; `skip`: fields of `name` itself left out (a scaffold's
/// own).
pub fn same_types(a: &Model, b: &Model, name: &str, skip: &[&str]) {
    let mut pending = vec![name.to_string()];
    let mut seen = Vec::new();
    while let Some(name) = pending.pop() {
        if seen.contains(&name) {
            continue;
        }
        seen.push(name.clone());
        if let Some(e) = a.enums.get(&name) {
            assert_eq!(
                Some(&e.variants),
                b.enums.get(&name).map(|e| &e.variants),
                "{name}"
            );
            continue;
        }
        let fields = |m: &Model| -> Vec<(String, String, Ty)> {
            m.structs[&name]
                .fields
                .iter()
                .filter(|f| !(seen.len() == 1 && skip.contains(&f.rust.as_str())))
                .map(|f| (f.rust.clone(), f.wire.clone(), f.ty.clone()))
                .collect()
        };
        let (left, right) = (fields(a), fields(b));
        assert_eq!(left, right, "{name}");
        for (_, _, ty) in left {
            let mut ty = &ty;
            while let Ty::Option(inner) | Ty::Vec(inner) | Ty::Map(inner) = ty {
                ty = inner;
            }
            if let Ty::Named(n) = ty {
                pending.push(n.clone());
            }
        }
    }
}

fn struct_def(attrs: &[Attribute], fields: &Fields) -> Result<StructDef, String> {
    let mut camel = false;
    let mut kube = None;
    let default = derives(attrs, "Default");
    for attr in attrs {
        if attr.path().is_ident("serde") {
            attr.parse_nested_meta(|meta| {
                if meta.path.is_ident("rename_all") {
                    camel = meta.value()?.parse::<LitStr>()?.value() == "camelCase";
                } else if meta.input.peek(syn::Token![=]) {
                    meta.value()?.parse::<syn::Expr>()?;
                }
                Ok(())
            })
            .map_err(|e| e.to_string())?;
        }
        if attr.path().is_ident("kube") {
            let def: &mut KubeDef = kube.get_or_insert_with(KubeDef::default);
            attr.parse_nested_meta(|meta| {
                let key = meta
                    .path
                    .get_ident()
                    .map(|i| i.to_string())
                    .unwrap_or_default();
                if key == "no_spec" {
                    def.no_spec = true;
                } else if meta.input.peek(syn::Token![=]) {
                    let value = meta.value()?.parse::<syn::Expr>()?;
                    let text = match value {
                        syn::Expr::Lit(syn::ExprLit {
                            lit: syn::Lit::Str(s),
                            ..
                        }) => s.value(),
                        _ => String::new(),
                    };
                    match key.as_str() {
                        "status" => def.status = Some(text),
                        "kind" => def.kind = text,
                        "root" => def.root = Some(text),
                        _ => {}
                    }
                }
                Ok(())
            })
            .map_err(|e| e.to_string())?;
        }
    }
    let Fields::Named(named) = fields else {
        return Ok(StructDef {
            fields: Vec::new(),
            kube,
            default,
        });
    };
    let mut out: Vec<FieldDef> = Vec::new();
    for field in &named.named {
        let ident = field.ident.as_ref().unwrap().to_string();
        let rust = ident.trim_start_matches("r#").to_string();
        if out.iter().any(|f| f.rust == rust) {
            return Err(format!("field {rust} declared twice"));
        }
        let mut def = FieldDef {
            wire: String::new(),
            rust: rust.clone(),
            ty: ty(&field.ty)?,
            flatten: false,
            default: false,
            skip_none: false,
            deserialize_with: None,
        };
        let mut rename = None;
        for attr in field.attrs.iter().filter(|a| a.path().is_ident("serde")) {
            attr.parse_nested_meta(|meta| {
                if meta.path.is_ident("rename") {
                    rename = Some(meta.value()?.parse::<LitStr>()?.value());
                } else if meta.path.is_ident("flatten") {
                    def.flatten = true;
                } else if meta.path.is_ident("default") {
                    def.default = true;
                } else if meta.path.is_ident("skip_serializing_if") {
                    def.skip_none = meta.value()?.parse::<LitStr>()?.value() == "Option::is_none";
                } else if meta.path.is_ident("deserialize_with") {
                    def.deserialize_with = Some(meta.value()?.parse::<LitStr>()?.value());
                } else if meta.input.peek(syn::Token![=]) {
                    meta.value()?.parse::<syn::Expr>()?;
                }
                Ok(())
            })
            .map_err(|e| e.to_string())?;
        }
        def.wire = match rename {
            // A flattened field has no name of its own on the wire.
            _ if def.flatten => "(flattened)".into(),
            Some(rename) => rename,
            None if camel => camel_case(&rust),
            None => rust,
        };
        out.push(def);
    }
    Ok(StructDef {
        fields: out,
        kube,
        default,
    })
}

/// Whether `#[derive(...)]` among `attrs` names `name`.
fn derives(attrs: &[Attribute], name: &str) -> bool {
    attrs
        .iter()
        .filter(|a| a.path().is_ident("derive"))
        .any(|a| {
            let mut found = false;
            let _ = a.parse_nested_meta(|meta| {
                found |= meta.path.is_ident(name);
                Ok(())
            });
            found
        })
}

/// serde's `rename_all = "camelCase"` of a snake_case field.
fn camel_case(field: &str) -> String {
    let mut out = String::new();
    let mut upper = false;
    for c in field.chars() {
        if c == '_' {
            upper = true;
        } else if upper {
            out.push(c.to_ascii_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    let mut chars = out.chars();
    match chars.next() {
        Some(first) => first.to_ascii_lowercase().to_string() + chars.as_str(),
        None => out,
    }
}

fn serde_rename(attrs: &[Attribute]) -> Result<Option<String>, String> {
    let mut rename = None;
    for attr in attrs.iter().filter(|a| a.path().is_ident("serde")) {
        attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("rename") {
                rename = Some(meta.value()?.parse::<LitStr>()?.value());
            }
            Ok(())
        })
        .map_err(|e| e.to_string())?;
    }
    Ok(rename)
}

/// The type of a field, by the last segment of each path (`std::collections::BTreeMap` and an
/// imported `BTreeMap` are one type).
pub fn ty(ty: &SynType) -> Result<Ty, String> {
    let SynType::Path(path) = ty else {
        return Err("a type that is not a path".into());
    };
    let last = path.path.segments.last().ok_or("an empty path")?;
    let args: Vec<Ty> = match &last.arguments {
        syn::PathArguments::AngleBracketed(a) => a
            .args
            .iter()
            .filter_map(|arg| match arg {
                syn::GenericArgument::Type(t) => Some(self::ty(t)),
                _ => None,
            })
            .collect::<Result<_, _>>()?,
        _ => Vec::new(),
    };
    Ok(match (last.ident.to_string().as_str(), args.as_slice()) {
        ("bool", []) => Ty::Bool,
        ("i32", []) => Ty::I32,
        ("i64", []) => Ty::I64,
        ("f64", []) => Ty::F64,
        ("String", []) => Ty::String,
        ("IntOrString", []) => Ty::IntOrString,
        ("Value", []) => Ty::Value,
        ("Option", [inner]) => Ty::Option(Box::new(inner.clone())),
        ("Vec", [inner]) => Ty::Vec(Box::new(inner.clone())),
        ("BTreeMap", [Ty::String, inner]) => Ty::Map(Box::new(inner.clone())),
        (name, []) => Ty::Named(name.to_string()),
        (name, _) => return Err(format!("an unknown generic type {name}")),
    })
}
