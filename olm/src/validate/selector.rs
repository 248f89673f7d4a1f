//! Kubernetes label selectors (`name=community`, `suite=operatorframework,name!=multiarch`,
//! `name in (community,multiarch)`), which `--select-optional` takes as operator-sdk does.

use std::collections::BTreeMap;

use anyhow::{Result, bail};

#[derive(Debug, Clone, PartialEq, Eq)]
enum Requirement {
    Equals(String, String),
    NotEquals(String, String),
    In(String, Vec<String>),
    NotIn(String, Vec<String>),
    Exists(String),
    NotExists(String),
}

/// A parsed selector: every requirement must hold.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Selector(Vec<Requirement>);

impl Selector {
    pub fn parse(text: &str) -> Result<Selector> {
        let mut requirements = Vec::new();
        for part in split_top_level(text)? {
            let part = part.trim();
            if part.is_empty() {
                bail!("--select-optional {text:?}: an empty requirement");
            }
            requirements.push(
                requirement(part)
                    .map_err(|e| anyhow::anyhow!("--select-optional {text:?}: {e}"))?,
            );
        }
        Ok(Selector(requirements))
    }

    pub fn matches(&self, labels: &BTreeMap<&str, &str>) -> bool {
        self.0.iter().all(|r| match r {
            Requirement::Equals(k, v) => labels.get(k.as_str()) == Some(&v.as_str()),
            Requirement::NotEquals(k, v) => labels.get(k.as_str()) != Some(&v.as_str()),
            Requirement::In(k, vs) => labels
                .get(k.as_str())
                .is_some_and(|l| vs.iter().any(|v| v == l)),
            Requirement::NotIn(k, vs) => labels
                .get(k.as_str())
                .is_none_or(|l| !vs.iter().any(|v| v == l)),
            Requirement::Exists(k) => labels.contains_key(k.as_str()),
            Requirement::NotExists(k) => !labels.contains_key(k.as_str()),
        })
    }

    /// The same selector with `values` of `key` renamed (aliases of a suite's name).
    pub fn with_aliases(mut self, key: &str, aliases: &[(&str, &str)]) -> Selector {
        let rename = |v: &mut String| {
            if let Some((_, to)) = aliases.iter().find(|(from, _)| *from == v) {
                *v = to.to_string();
            }
        };
        for r in &mut self.0 {
            match r {
                Requirement::Equals(k, v) | Requirement::NotEquals(k, v) if k == key => rename(v),
                Requirement::In(k, vs) | Requirement::NotIn(k, vs) if k == key => {
                    vs.iter_mut().for_each(rename)
                }
                _ => {}
            }
        }
        self
    }
}

/// Splits on commas outside parentheses.
fn split_top_level(text: &str) -> Result<Vec<&str>> {
    let mut parts = Vec::new();
    let mut depth = 0i32;
    let mut start = 0;
    for (i, c) in text.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
        if depth < 0 {
            bail!("--select-optional {text:?}: unbalanced parentheses");
        }
    }
    if depth != 0 {
        bail!("--select-optional {text:?}: unbalanced parentheses");
    }
    parts.push(&text[start..]);
    Ok(parts)
}

fn valid_key(key: &str) -> Result<String, String> {
    let key = key.trim();
    if key.is_empty()
        || !key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./".contains(c))
    {
        return Err(format!("{key:?} is not a label key"));
    }
    Ok(key.to_string())
}

fn requirement(part: &str) -> Result<Requirement, String> {
    if let Some((key, value)) = part.split_once("!=") {
        return Ok(Requirement::NotEquals(
            valid_key(key)?,
            value.trim().to_string(),
        ));
    }
    if let Some((key, value)) = part.split_once("==").or_else(|| part.split_once('=')) {
        return Ok(Requirement::Equals(
            valid_key(key)?,
            value.trim().to_string(),
        ));
    }
    for (word, notin) in [(" notin ", true), (" in ", false)] {
        if let Some((key, values)) = part.split_once(word) {
            let values = values
                .trim()
                .strip_prefix('(')
                .and_then(|v| v.strip_suffix(')'))
                .ok_or_else(|| {
                    format!("{part:?}: the values of `in` and `notin` go in parentheses")
                })?;
            let values = values.split(',').map(|v| v.trim().to_string()).collect();
            let key = valid_key(key)?;
            return Ok(if notin {
                Requirement::NotIn(key, values)
            } else {
                Requirement::In(key, values)
            });
        }
    }
    match part.strip_prefix('!') {
        Some(key) => Ok(Requirement::NotExists(valid_key(key)?)),
        None => Ok(Requirement::Exists(valid_key(part)?)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels<'a>(pairs: &[(&'a str, &'a str)]) -> BTreeMap<&'a str, &'a str> {
        pairs.iter().copied().collect()
    }

    #[test]
    fn selectors_match_as_kubernetes_label_selectors() {
        let hub = labels(&[("name", "operatorhubv2"), ("suite", "operatorframework")]);
        let community = labels(&[("name", "community")]);
        let select = |s: &str| Selector::parse(s).unwrap();
        assert!(select("suite=operatorframework").matches(&hub));
        assert!(!select("suite=operatorframework").matches(&community));
        assert!(select("name in (community, multiarch)").matches(&community));
        assert!(select("name notin (community)").matches(&hub));
        assert!(select("suite=operatorframework,name!=community").matches(&hub));
        assert!(select("!suite").matches(&community));
        assert!(select("suite").matches(&hub));
        assert!(Selector::parse("name in community").is_err());
        assert!(Selector::parse("name=a,").is_err());
        assert!(Selector::parse("na me=a").is_err());
        let aliased = select("name=standardcapabilities")
            .with_aliases("name", &[("standardcapabilities", "capabilities")]);
        assert!(aliased.matches(&labels(&[("name", "capabilities")])));
    }
}
