//! The identifier policy: how a name that comes from outside (a CRD's field names and enum
//! values, the kind and group of another project, a module name) becomes a Rust identifier.
//!
//! Such a name is never refused for its spelling: the Rust name is derived from it, and the
//! original stays on the wire (`#[serde(rename)]`, `#[kube(kind)]`). The rules:
//! - only ASCII letters and digits survive; every other character separates words (`a-b`,
//!   `a.b`, `a b` and `a_b` are the same words), and a name without any gets a neutral stem
//!   (`field`, `Empty`);
//! - a keyword becomes a raw identifier (`r#type`), except `self`, `Self`, `super`, `crate` and
//!   `_`, which cannot be raw and get a suffix instead;
//! - names that collide after this (`fooBar` and `foo_bar`, `aB` and `a-b`) are told apart by a
//!   number, chosen the same way whatever order the names come in: the name already spelled as
//!   the Rust one keeps it, the others get `_2`, `_3` … in the order of their original spelling
//!   (see [`Namer`]).

use std::collections::{BTreeMap, BTreeSet};

use heck::{ToSnakeCase as _, ToUpperCamelCase as _};

use super::RUST_KEYWORDS;

/// Keywords that cannot be raw identifiers (`r#self` is refused by the compiler).
const NOT_RAW: &[&str] = &["self", "Self", "super", "crate", "_"];

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

/// A snake_case field name for the JSON name `json`, keyword-safe (`r#type`), before
/// de-duplication: `field_9lives` for a name that starts with a digit, `field` for one without
/// letters or digits, `self_` for `self`.
pub fn field_name(json: &str) -> String {
    let stem = snake_stem(json);
    if stem.is_empty() {
        "field".into()
    } else if stem.starts_with(|c: char| c.is_ascii_digit()) {
        format!("field_{stem}")
    } else if NOT_RAW.contains(&stem.as_str()) {
        format!("{stem}_")
    } else {
        stem
    }
}

/// A PascalCase name for an enum variant or a type, keyword-safe, before de-duplication:
/// `Empty` for a value without letters or digits, `V9` for one that starts with a digit,
/// `SelfValue` for `self`.
pub fn variant_name(value: &str) -> String {
    let stem = pascal_stem(value);
    if stem.is_empty() {
        "Empty".into()
    } else if stem.starts_with(|c: char| c.is_ascii_digit()) {
        format!("V{stem}")
    } else if stem == "Self" {
        "SelfValue".into()
    } else {
        stem
    }
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
            let name = (2..)
                .map(|n| format!("{base}{}{n}", self.separator))
                .find(|candidate| !taken.contains(candidate))
                .expect("some number is free");
            taken.insert(name.clone());
            result[i] = name;
        }
        result.iter().map(|name| raw_if_keyword(name)).collect()
    }
}

/// A name for a Rust module derived from an outside name (`cert-manager.io` → `cert_manager_io`),
/// or None when the stem is not one a module can have (empty, a digit first, a keyword).
pub fn module_stem(text: &str) -> Option<String> {
    let stem = snake_stem(text);
    let usable =
        !stem.is_empty() && !stem.starts_with(|c: char| c.is_ascii_digit()) && !is_keyword(&stem);
    usable.then_some(stem)
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
    fn collisions_are_numbered_the_same_way_in_any_order() {
        let namer = Namer::snake();
        let names = namer.names(&["fooBar", "foo_bar", "foo_bar_2"], field_name);
        assert_eq!(names, ["foo_bar_3", "foo_bar", "foo_bar_2"]);
        let reversed = namer.names(&["foo_bar_2", "foo_bar", "fooBar"], field_name);
        assert_eq!(reversed, ["foo_bar_2", "foo_bar", "foo_bar_3"]);
        assert_eq!(namer.names(&["aB", "a-b"], field_name), ["a_b_2", "a_b"]);
        // Keywords that cannot be raw get a number; the others are raw.
        assert_eq!(
            namer.names(&["self", "super", "crate", "type"], field_name),
            ["self_", "super_", "crate_", "r#type"]
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

    #[test]
    fn module_stems() {
        assert_eq!(
            module_stem("cert-manager.io").as_deref(),
            Some("cert_manager_io")
        );
        assert_eq!(module_stem("3d.io"), None);
        assert_eq!(module_stem("type"), None);
    }
}
