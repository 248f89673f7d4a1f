//! The identifier policy: how a name that comes from outside becomes a Rust identifier, a
//! module, a file or folder name, or a type. Every command goes through here: the kinds, groups
//! and versions of `create api`, `create webhook` and PROJECT, another project's kinds and groups
//! (external kinds), the field names and enum values of a CRD's schema (external kinds and `alpha
//! migrate`), and the kinds and groups of a Go project being migrated.
//!
//! Each place a name lands is a [`Site`], with its case, what it must not be, and what the name
//! becomes when its own spelling cannot be used there. A name from another project is never
//! refused for its spelling: [`Site::derive`] makes it usable and the original stays on the wire
//! (`#[serde(rename)]`, `#[kube(kind)]`). A name the user chose (`--kind`, `--version`,
//! `--controller-name`, a group of their own) is checked by [`Site::unusable`] and refused with
//! the reason, as kubebuilder refuses names it cannot use.
//! - only ASCII letters and digits survive; every other character separates words (`a-b`,
//!   `a.b`, `a b` and `a_b` are the same words), and a name without any gets a neutral stem
//!   (`field`, `Empty`, the site's suffix);
//! - a keyword becomes a raw identifier where Rust allows one (`r#type` for a field), and gets
//!   a suffix elsewhere (`self_`, `SelfValue`, the module `type_kind`): `self`, `Self`, `super`,
//!   `crate` and `_` cannot be raw, and a module or file named like a keyword reads badly;
//! - modules keep clear of the crates and modules the generated code names ([`super::reserved`]),
//!   types of the names its templates import and of Rust's prelude;
//! - names that collide after this (`fooBar` and `foo_bar`, `aB` and `a-b`) are told apart by a
//!   number, chosen the same way whatever order the names come in: the name already spelled as
//!   the Rust one keeps it, the others get `_2`, `_3` … in the order of their original spelling
//!   (see [`Namer`]).

use std::collections::{BTreeMap, BTreeSet};

use heck::{ToSnakeCase as _, ToUpperCamelCase as _};

use super::reserved::{RESERVED_TYPES, RUST_KEYWORDS, is_crate_name, reserved_module};

/// Keywords that cannot be raw identifiers (`r#self` is refused by the compiler).
const NOT_RAW: &[&str] = &["self", "Self", "super", "crate", "_"];

/// Where a name from outside lands in the generated code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Site {
    /// A struct field, snake_case: `imageURL` → `image_url`, `type` → `r#type`.
    Field,
    /// An enum variant, PascalCase: `digital signature` → `DigitalSignature`.
    Variant,
    /// A type of its own next to what the generated code imports: a kind's, PascalCase.
    Type,
    /// A module, and so a file or folder name, snake_case: a kind's, a group's, a version's, a
    /// controller's.
    Module,
    /// The project's crate: its package name (`--project-name`) with `-` as `_`, which the
    /// generated binaries and tests `use` beside the crates it depends on.
    Crate,
}

impl Site {
    /// The natural spelling of `outside` here: its words in the site's case, possibly empty,
    /// starting with a digit or a keyword (a stem, not yet an identifier).
    pub fn stem(self, outside: &str) -> String {
        match self {
            Site::Field | Site::Module | Site::Crate => snake_stem(outside),
            Site::Variant | Site::Type => pascal_stem(outside),
        }
    }

    /// Why `name` (spelled for this site) cannot be used here as it is, if it cannot. A field
    /// that is a keyword Rust takes raw (`r#type`) is usable.
    pub fn unusable(self, name: &str) -> Option<&'static str> {
        if name.is_empty() {
            return Some("is empty");
        }
        if name.starts_with(|c: char| c.is_ascii_digit()) {
            return Some("cannot start with a digit: no Rust identifier can");
        }
        if !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Some("has characters other than ASCII letters, digits and '_'");
        }
        match self {
            Site::Field | Site::Variant if NOT_RAW.contains(&name) => {
                Some("is a Rust keyword that cannot be a raw identifier")
            }
            Site::Field | Site::Variant => None,
            Site::Type if is_keyword(name) => Some("is a Rust keyword"),
            Site::Type if RESERVED_TYPES.contains(&name) => Some(
                "is a name the generated Rust code already uses (imported from kube, \
                 k8s-openapi, serde, the runtime crate, or Rust's prelude)",
            ),
            Site::Type => None,
            Site::Module => reserved_module(name),
            Site::Crate if is_keyword(name) => Some("is a Rust keyword, which cannot name a crate"),
            Site::Crate if is_crate_name(name) => Some(
                "is the name of a crate that the generated project uses, and the two would clash",
            ),
            Site::Crate => None,
        }
    }

    /// `outside` as a name usable here, before de-duplication: its [`stem`](Self::stem) when that
    /// is usable, else the stem with the site's fallback (`field_9lives`, `self_`, `V12`,
    /// `SelfValue`, `Empty`, `BoxKind`, `type_kind`). Fields that are keywords stay keywords
    /// here, and become raw identifiers when written ([`raw_if_keyword`]).
    pub fn derive(self, outside: &str) -> String {
        let stem = self.stem(outside);
        match self {
            Site::Field if stem.is_empty() => "field".into(),
            Site::Field if stem.starts_with(|c: char| c.is_ascii_digit()) => {
                format!("field_{stem}")
            }
            Site::Field if NOT_RAW.contains(&stem.as_str()) => format!("{stem}_"),
            Site::Field => stem,
            Site::Variant if stem.is_empty() => "Empty".into(),
            Site::Variant if stem.starts_with(|c: char| c.is_ascii_digit()) => format!("V{stem}"),
            Site::Variant if stem == "Self" => "SelfValue".into(),
            Site::Variant => stem,
            Site::Type => {
                let stem = if stem.is_empty() || stem.starts_with(|c: char| c.is_ascii_digit()) {
                    format!("Kind{stem}")
                } else {
                    stem
                };
                std::iter::once(stem.clone())
                    .chain((1..).map(|n| numbered(&format!("{stem}Kind"), n, "")))
                    .find(|name| Site::Type.unusable(name).is_none())
                    .expect("some number is free")
            }
            Site::Module => self.derive_module(outside, "module"),
            // Derived as a module is: a name a module can take, a crate can too.
            Site::Crate => Site::Module.derive_module(outside, "operator"),
        }
    }

    /// `outside` as a module name: its stem, or, when that cannot name a module, the stem with
    /// `suffix` (`type` → `type_kind`, `3d` → `kind_3d`, `` → `kind`), numbered until usable.
    pub fn derive_module(self, outside: &str, suffix: &str) -> String {
        debug_assert_eq!(self, Site::Module);
        let stem = snake_stem(outside);
        if Site::Module.unusable(&stem).is_none() {
            return stem;
        }
        let base = if stem.is_empty() {
            suffix.to_string()
        } else if stem.starts_with(|c: char| c.is_ascii_digit()) {
            format!("{suffix}_{stem}")
        } else {
            format!("{stem}_{suffix}")
        };
        (1..)
            .map(|n| numbered(&base, n, "_"))
            .find(|name| Site::Module.unusable(name).is_none())
            .expect("some number is free")
    }
}

/// `base` for 1, else `base` with `n` after `separator`.
fn numbered(base: &str, n: usize, separator: &str) -> String {
    if n == 1 {
        base.to_string()
    } else {
        format!("{base}{separator}{n}")
    }
}

/// `text` with every character that cannot be in an identifier turned into `sep`.
fn words(text: &str, sep: char) -> String {
    text.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { sep })
        .collect()
}

/// The snake_case form of `text` (`imageURL` → `image_url`), possibly empty or starting with a
/// digit: a stem, not yet an identifier.
pub fn snake_stem(text: &str) -> String {
    words(text, '_').to_snake_case()
}

/// The PascalCase form of `text` (`digital signature` → `DigitalSignature`), possibly empty or
/// starting with a digit: a stem, not yet an identifier.
pub fn pascal_stem(text: &str) -> String {
    words(text, ' ').to_upper_camel_case()
}

/// Whether `name` is a keyword (strict, reserved or 2024's `gen`).
pub fn is_keyword(name: &str) -> bool {
    RUST_KEYWORDS.contains(&name) || name == "Self"
}

/// A snake_case field name for the JSON name `json` ([`Site::Field`]).
pub fn field_name(json: &str) -> String {
    Site::Field.derive(json)
}

/// A PascalCase enum variant for the value `value` ([`Site::Variant`]).
pub fn variant_name(value: &str) -> String {
    Site::Variant.derive(value)
}

/// `name` as it is written in Rust: a keyword as a raw identifier (`r#type`). Keywords that
/// cannot be raw identifiers never get here: [`Namer`] gives them a suffix.
pub fn raw_if_keyword(name: &str) -> String {
    if is_keyword(name) && !NOT_RAW.contains(&name) {
        format!("r#{name}")
    } else {
        name.to_string()
    }
}

/// What serde's `#[serde(rename_all = "camelCase")]` makes of the Rust field `field` (without
/// `r#`): the wire name a struct with that attribute reads and writes.
pub fn serde_camel_case(field: &str) -> String {
    let mut pascal = String::new();
    let mut capitalize = true;
    for c in field.chars() {
        if c == '_' {
            capitalize = true;
        } else if capitalize {
            pascal.push(c.to_ascii_uppercase());
            capitalize = false;
        } else {
            pascal.push(c);
        }
    }
    match pascal.chars().next() {
        Some(first) => first.to_ascii_lowercase().to_string() + &pascal[first.len_utf8()..],
        None => pascal,
    }
}

/// De-duplicates the Rust names of a set of outside names (the fields of one struct, the
/// variants of one enum), so that the result does not depend on the order the names come in.
///
/// Every name's natural Rust name (`fooBar` → `foo_bar`) is taken first by the name that is
/// spelled exactly that way, else by the first of its claimants in byte order; the others get
/// the natural name with `_2`, `_3` … (`Name2` for PascalCase), skipping every name taken.
/// Names reserved beforehand (the scaffold's fields, kube's root fields) are never given out.
#[derive(Debug, Default)]
pub struct Namer {
    reserved: BTreeSet<String>,
    /// Separator before the number: `_` for snake_case, `` for PascalCase.
    separator: &'static str,
}

impl Namer {
    /// A namer for snake_case names (fields, modules).
    pub fn snake() -> Self {
        Self {
            reserved: BTreeSet::new(),
            separator: "_",
        }
    }

    /// A namer for PascalCase names (enum variants).
    pub fn pascal() -> Self {
        Self {
            reserved: BTreeSet::new(),
            separator: "",
        }
    }

    /// Keeps `name` out of the names given.
    pub fn reserve(mut self, names: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.reserved.extend(names.into_iter().map(Into::into));
        self
    }

    /// The Rust names of `outside` (as returned by `natural`, e.g. [`field_name`]), in the
    /// same order, all distinct, none reserved and none a keyword that cannot be raw.
    pub fn names(&self, outside: &[&str], natural: fn(&str) -> String) -> Vec<String> {
        let naturals: Vec<String> = outside.iter().map(|o| natural(o)).collect();
        let mut taken = self.reserved.clone();
        taken.extend(NOT_RAW.iter().map(|k| k.to_string()));
        let mut claimants: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
        for (i, name) in naturals.iter().enumerate() {
            claimants.entry(name).or_default().push(i);
        }
        let mut result = vec![String::new(); outside.len()];
        let mut losers = Vec::new();
        for (name, mut indices) in claimants {
            // The one spelled like its Rust name first, then in byte order of the spelling.
            indices.sort_by_key(|&i| (outside[i] != name, outside[i]));
            let mut rest = indices.into_iter();
            if taken.contains(name) {
                losers.extend(rest);
            } else {
                let winner = rest.next().expect("every natural name has a claimant");
                result[winner] = name.to_string();
                losers.extend(rest);
            }
        }
        // Winners are settled before any number is handed out, so that `foo_2` as a name of
        // its own keeps its name against the second `foo`.
        taken.extend(result.iter().filter(|n| !n.is_empty()).cloned());
        losers.sort_by_key(|&i| (naturals[i].clone(), outside[i]));
        for i in losers {
            let base = &naturals[i];
            // `self_` gets `self_2`: a doubled `_` is not snake_case (rustc warns).
            let separator = if base.ends_with('_') {
                ""
            } else {
                self.separator
            };
            let name = (2..)
                .map(|n| format!("{base}{separator}{n}"))
                .find(|candidate| !taken.contains(candidate))
                .expect("some number is free");
            taken.insert(name.clone());
            result[i] = name;
        }
        result.iter().map(|name| raw_if_keyword(name)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_are_snake_case_and_keyword_safe() {
        assert_eq!(field_name("imageURL"), "image_url");
        assert_eq!(field_name("9lives"), "field_9lives");
        assert_eq!(field_name("$ref"), "ref");
        assert_eq!(field_name("名前"), "field");
        assert_eq!(field_name("self"), "self_");
        assert_eq!(raw_if_keyword("type"), "r#type");
        assert_eq!(raw_if_keyword("gen"), "r#gen");
        assert_eq!(raw_if_keyword("self"), "self");
    }

    #[test]
    fn variants_are_pascal_case_and_keyword_safe() {
        assert_eq!(variant_name("digital signature"), "DigitalSignature");
        assert_eq!(variant_name(""), "Empty");
        assert_eq!(variant_name("1.2"), "V12");
        assert_eq!(variant_name("self"), "SelfValue");
    }

    #[test]
    fn types_keep_clear_of_keywords_and_the_generated_code_s_names() {
        assert_eq!(Site::Type.derive("postgresql"), "Postgresql");
        assert_eq!(Site::Type.derive("my-kind"), "MyKind");
        assert_eq!(Site::Type.derive("Self"), "SelfKind");
        assert_eq!(Site::Type.derive("Box"), "BoxKind");
        assert_eq!(Site::Type.derive("option"), "OptionKind");
        assert_eq!(Site::Type.derive("crate"), "Crate");
        assert_eq!(Site::Type.derive("9lives"), "Kind9lives");
        assert_eq!(Site::Type.derive("名"), "Kind");
        assert!(Site::Type.unusable("Condition").is_some());
        assert!(Site::Type.unusable("Captain").is_none());
    }

    #[test]
    fn modules_keep_clear_of_keywords_crates_and_the_project_s_modules() {
        let module = |text: &str| Site::Module.derive_module(text, "kind");
        assert_eq!(module("FirstMate"), "first_mate");
        assert_eq!(module("Self"), "self_kind");
        assert_eq!(module("Box"), "box_kind");
        assert_eq!(module("crate"), "crate_kind");
        assert_eq!(module("Kube"), "kube_kind");
        assert_eq!(module("u8"), "u8_kind");
        assert_eq!(module("3d"), "kind_3d");
        assert_eq!(module("名"), "kind");
        assert_eq!(Site::Module.derive("type"), "type_module");
        for bad in [
            "self", "gen", "std", "serde", "manager", "str", "", "9a", "a-b",
        ] {
            assert!(Site::Module.unusable(bad).is_some(), "{bad}");
        }
        assert!(Site::Module.unusable("captain").is_none());
    }

    #[test]
    fn collisions_are_numbered_the_same_way_in_any_order() {
        let namer = Namer::snake();
        let names = namer.names(&["fooBar", "foo_bar", "foo_bar_2"], field_name);
        assert_eq!(names, ["foo_bar_3", "foo_bar", "foo_bar_2"]);
        let reversed = namer.names(&["foo_bar_2", "foo_bar", "fooBar"], field_name);
        assert_eq!(reversed, ["foo_bar_2", "foo_bar", "foo_bar_3"]);
        assert_eq!(namer.names(&["aB", "a-b"], field_name), ["a_b_2", "a_b"]);
        // Keywords that cannot be raw get a suffix; the others are raw.
        assert_eq!(
            namer.names(&["self", "super", "crate", "type"], field_name),
            ["self_", "super_", "crate_", "r#type"]
        );
        assert_eq!(
            namer.names(&["self", "Self"], field_name),
            ["self_2", "self_"]
        );
        let reserved = Namer::snake().reserve(["foo"]);
        assert_eq!(
            reserved.names(&["Foo", "foo_2"], field_name),
            ["foo_3", "foo_2"]
        );
        let variants = Namer::pascal().names(&["a-b", "aB", "A_B"], variant_name);
        assert_eq!(variants, ["AB2", "AB3", "AB"]);
    }

    #[test]
    fn serde_camel_case_is_serde_s() {
        assert_eq!(serde_camel_case("image_url"), "imageUrl");
        assert_eq!(serde_camel_case("ipv4_address"), "ipv4Address");
        assert_eq!(serde_camel_case("type"), "type");
        assert_eq!(serde_camel_case("field_9lives"), "field9lives");
    }
}
