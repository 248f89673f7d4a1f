//! Versions and version ranges as OLM reads them: github.com/blang/semver/v4.
//!
//! The Rust `semver` crate parses versions the same way, but its ranges are Cargo's (`^1.2`,
//! comma-separated), while OLM's `olm.skipRange`, dependency ranges and catalogs use blang's:
//! `>=1.0.0 <2.0.0` (a space means *and*), `<1.0.0 || >=2.0.0`, `1.x`, `!=1.2.3`. CSVs are also
//! read with blang's tolerant parser (`v1.2`, `01.2.3`), which no crate offers. Hence this port
//! of the grammar (parsing and matching; no formatting beyond `Display`).

use std::cmp::Ordering;
use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Version {
    pub major: u64,
    pub minor: u64,
    pub patch: u64,
    pub pre: Vec<Pre>,
    pub build: Vec<String>,
}

/// A pre-release identifier: numeric ones compare as numbers, below alphanumeric ones.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Pre {
    Num(u64),
    Alpha(String),
}

impl Version {
    /// blang's strict `Parse`: `MAJOR.MINOR.PATCH[-pre][+build]`, no leading zeros, no `v`.
    pub fn parse(text: &str) -> Result<Version, String> {
        if text.is_empty() {
            return Err("Version string empty".into());
        }
        let parts: Vec<&str> = text.splitn(3, '.').collect();
        if parts.len() != 3 {
            return Err("No Major.Minor.Patch elements found".into());
        }
        let major = number(parts[0], "major")?;
        let minor = number(parts[1], "minor")?;
        let mut rest = parts[2];
        let mut build = Vec::new();
        if let Some((head, meta)) = rest.split_once('+') {
            for item in meta.split('.') {
                if item.is_empty() {
                    return Err("Build meta data is empty".into());
                }
                if !alphanumeric(item) {
                    return Err(format!(
                        "Invalid character(s) found in build meta data {item:?}"
                    ));
                }
                build.push(item.to_string());
            }
            rest = head;
        }
        let mut pre = Vec::new();
        if let Some((head, identifiers)) = rest.split_once('-') {
            for item in identifiers.split('.') {
                pre.push(Pre::parse(item)?);
            }
            rest = head;
        }
        let patch = number(rest, "patch")?;
        Ok(Version {
            major,
            minor,
            patch,
            pre,
            build,
        })
    }

    /// blang's `ParseTolerant`, which reads a CSV's `spec.version`: surrounding spaces and a
    /// leading `v` are dropped, leading zeros removed, `1.2` and `1` completed with zeros.
    pub fn parse_tolerant(text: &str) -> Result<Version, String> {
        let text = text.trim();
        let text = text.strip_prefix('v').unwrap_or(text);
        let mut parts: Vec<String> = text.splitn(3, '.').map(str::to_string).collect();
        for part in &mut parts {
            if part.len() > 1 {
                let trimmed = part.trim_start_matches('0');
                *part = if trimmed.is_empty() || !trimmed.starts_with(|c: char| c.is_ascii_digit())
                {
                    format!("0{trimmed}")
                } else {
                    trimmed.to_string()
                };
            }
        }
        if parts.len() < 3 {
            if parts.last().is_some_and(|p| p.contains(['+', '-'])) {
                return Err("Short version cannot contain PreRelease/Build meta data".into());
            }
            while parts.len() < 3 {
                parts.push("0".into());
            }
        }
        Version::parse(&parts.join("."))
    }

    pub fn is_zero(&self) -> bool {
        self.major == 0
            && self.minor == 0
            && self.patch == 0
            && self.pre.is_empty()
            && self.build.is_empty()
    }
}

impl Pre {
    /// blang's `NewPRVersion`.
    pub fn parse(text: &str) -> Result<Pre, String> {
        if text.is_empty() {
            return Err("Prerelease is empty".into());
        }
        if text.bytes().all(|b| b.is_ascii_digit()) {
            if text.len() > 1 && text.starts_with('0') {
                return Err(format!(
                    "Numeric PreRelease version must not contain leading zeroes {text:?}"
                ));
            }
            return text.parse().map(Pre::Num).map_err(|e| e.to_string());
        }
        if alphanumeric(text) {
            return Ok(Pre::Alpha(text.to_string()));
        }
        Err(format!("Invalid character(s) found in prerelease {text:?}"))
    }
}

fn number(text: &str, what: &str) -> Result<u64, String> {
    if !text.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!(
            "Invalid character(s) found in {what} number {text:?}"
        ));
    }
    if text.len() > 1 && text.starts_with('0') {
        return Err(format!(
            "{} number must not contain leading zeroes {text:?}",
            capitalized(what)
        ));
    }
    text.parse()
        .map_err(|_| format!("{} number {text:?} is not a number", capitalized(what)))
}

fn capitalized(word: &str) -> String {
    let mut chars = word.chars();
    chars
        .next()
        .map(|c| c.to_ascii_uppercase().to_string() + chars.as_str())
        .unwrap_or_default()
}

fn alphanumeric(text: &str) -> bool {
    text.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
}

impl Ord for Version {
    /// Precedence as blang compares it (build metadata is ignored).
    fn cmp(&self, other: &Self) -> Ordering {
        (self.major, self.minor, self.patch)
            .cmp(&(other.major, other.minor, other.patch))
            .then_with(|| match (self.pre.is_empty(), other.pre.is_empty()) {
                (true, true) => Ordering::Equal,
                (true, false) => Ordering::Greater,
                (false, true) => Ordering::Less,
                (false, false) => {
                    for (a, b) in self.pre.iter().zip(&other.pre) {
                        let order = match (a, b) {
                            (Pre::Num(x), Pre::Num(y)) => x.cmp(y),
                            (Pre::Num(_), Pre::Alpha(_)) => Ordering::Less,
                            (Pre::Alpha(_), Pre::Num(_)) => Ordering::Greater,
                            (Pre::Alpha(x), Pre::Alpha(y)) => x.cmp(y),
                        };
                        if order != Ordering::Equal {
                            return order;
                        }
                    }
                    self.pre.len().cmp(&other.pre.len())
                }
            })
    }
}

impl PartialOrd for Version {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)?;
        for (i, pre) in self.pre.iter().enumerate() {
            f.write_str(if i == 0 { "-" } else { "." })?;
            match pre {
                Pre::Num(n) => write!(f, "{n}")?,
                Pre::Alpha(s) => f.write_str(s)?,
            }
        }
        for (i, build) in self.build.iter().enumerate() {
            f.write_str(if i == 0 { "+" } else { "." })?;
            f.write_str(build)?;
        }
        Ok(())
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Eq,
    Ne,
    Gt,
    Ge,
    Lt,
    Le,
}

/// A blang range: alternatives (`||`) of conjunctions (space-separated comparisons).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Range(Vec<Vec<(Op, Version)>>);

impl Range {
    /// blang's `ParseRange`.
    pub fn parse(text: &str) -> Result<Range, String> {
        let parts = split_and_trim(text);
        let mut alternatives: Vec<Vec<String>> = Vec::new();
        let mut last = 0;
        for (i, part) in parts.iter().enumerate() {
            if part == "||" {
                if i == 0 {
                    return Err("First element in range is '||'".into());
                }
                alternatives.push(parts[last..i].to_vec());
                last = i + 1;
            }
        }
        if last == parts.len() {
            return Err("Last element in range is '||'".into());
        }
        alternatives.push(parts[last..].to_vec());
        let mut out = Vec::new();
        for alternative in alternatives {
            let mut conjunction = Vec::new();
            for part in expand_wildcards(&alternative)? {
                let (op, version) = split_comparator(&part)?;
                let op = match op {
                    "" | "=" | "==" => Op::Eq,
                    "!" | "!=" => Op::Ne,
                    ">" => Op::Gt,
                    ">=" => Op::Ge,
                    "<" => Op::Lt,
                    "<=" => Op::Le,
                    _ => {
                        return Err(format!(
                            "Could not parse Range {part:?}: Could not parse comparator {op:?} in {part:?}"
                        ));
                    }
                };
                let version = Version::parse(version).map_err(|err| {
                    format!(
                        "Could not parse Range {part:?}: Could not parse version {version:?} in {part:?}: {err}"
                    )
                })?;
                conjunction.push((op, version));
            }
            out.push(conjunction);
        }
        Ok(Range(out))
    }

    pub fn contains(&self, version: &Version) -> bool {
        self.0.iter().any(|conjunction| {
            conjunction.iter().all(|(op, bound)| {
                let order = version.cmp(bound);
                match op {
                    Op::Eq => order == Ordering::Equal,
                    Op::Ne => order != Ordering::Equal,
                    Op::Gt => order == Ordering::Greater,
                    Op::Ge => order != Ordering::Less,
                    Op::Lt => order == Ordering::Less,
                    Op::Le => order != Ordering::Greater,
                }
            })
        })
    }
}

/// blang's `splitAndTrim`: split on spaces, except a space after `<`, `>` or `=` (so `>= 1.0.0`
/// is one comparison), then drop the spaces inside each part. As in blang, a part of one
/// character is dropped (`last < i-1`).
fn split_and_trim(text: &str) -> Vec<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut last: i64 = 0;
    let mut last_char = 0u8;
    for (i, &b) in bytes.iter().enumerate() {
        let i = i as i64;
        if b == b' ' && !matches!(last_char, b'>' | b'<' | b'=') {
            if last < i - 1 {
                out.push(text[last as usize..i as usize].to_string());
            }
            last = i + 1;
        } else if b != b' ' {
            last_char = b;
        }
    }
    if last < bytes.len() as i64 - 1 {
        out.push(text[last as usize..].to_string());
    }
    out.into_iter().map(|p| p.replace(' ', "")).collect()
}

fn split_comparator(part: &str) -> Result<(&str, &str), String> {
    let i = part
        .find(|c: char| c.is_ascii_digit())
        .ok_or_else(|| format!("Could not get version from string: {part:?}"))?;
    Ok((part[..i].trim(), &part[i..]))
}

/// blang's `expandWildcardVersion`: `1.x`, `>=1.2.x`, `!=1.x` become plain comparisons.
fn expand_wildcards(parts: &[String]) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    for part in parts {
        if !part.contains('x') {
            out.push(part.clone());
            continue;
        }
        let (op, version) = split_comparator(part)?;
        let pieces: Vec<&str> = version.split('.').collect();
        let wildcard = match (pieces.last(), pieces.len()) {
            (Some(&"x"), 2) => Some(2),
            (Some(&"x"), 3) => Some(3),
            _ => None,
        };
        let flat = {
            let v = version.replacen(".x.x", ".x", 1).replacen(".x", ".0", 1);
            if v.split('.').count() == 2 {
                format!("{v}.0")
            } else {
                v
            }
        };
        let increment = |v: &str, index: usize| -> String {
            let mut p: Vec<String> = v.split('.').map(str::to_string).collect();
            if let Some(n) = p.get(index).and_then(|n| n.parse::<u64>().ok()) {
                p[index] = (n + 1).to_string();
            }
            p.join(".")
        };
        let (result_op, bump) = match op {
            ">" => (">=", true),
            ">=" => (">=", false),
            "<" => ("<", false),
            "<=" => ("<", true),
            "" | "=" | "==" => {
                out.push(format!(">={flat}"));
                ("<", true)
            }
            "!=" | "!" => {
                out.push(format!("<{flat}"));
                (">=", true)
            }
            _ => ("", false),
        };
        let result_version = if bump {
            match wildcard {
                Some(3) => increment(&flat, 1),
                Some(2) => increment(&flat, 0),
                _ => String::new(),
            }
        } else {
            flat
        };
        out.push(format!("{result_op}{result_version}"));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_parse_as_blang_parses_them() {
        assert!(Version::parse("1.2.3-alpha.1+build.5").is_ok());
        for bad in [
            "", "1.2", "v1.2.3", "01.2.3", "1.2.3-", "1.2.3-01", "1.2.3+", "1.21",
        ] {
            assert!(Version::parse(bad).is_err(), "{bad}");
        }
        assert_eq!(
            Version::parse_tolerant(" v1.2 ").unwrap().to_string(),
            "1.2.0"
        );
        assert_eq!(
            Version::parse_tolerant("01.02.03").unwrap().to_string(),
            "1.2.3"
        );
        assert!(Version::parse_tolerant("1.2-beta").is_err());
        assert!(Version::parse_tolerant("").is_err());
        let v = |s| Version::parse(s).unwrap();
        assert!(v("1.0.0-alpha") < v("1.0.0-alpha.1"));
        assert!(v("1.0.0-alpha.1") < v("1.0.0-beta"));
        assert!(v("1.0.0-rc.1") < v("1.0.0"));
        assert_eq!(v("1.0.0+a").cmp(&v("1.0.0+b")), Ordering::Equal);
    }

    #[test]
    fn ranges_parse_and_match_as_blang_ranges() {
        let contains = |range: &str, version: &str| {
            Range::parse(range)
                .unwrap()
                .contains(&Version::parse(version).unwrap())
        };
        assert!(contains(">=4.1.0 <4.1.2", "4.1.1"));
        assert!(!contains(">=4.1.0 <4.1.2", "4.1.2"));
        assert!(contains(">= 1.0.0 < 2.0.0", "1.5.0"));
        assert!(contains("<1.0.0 || >=2.0.0", "2.1.0"));
        assert!(!contains("<1.0.0 || >=2.0.0", "1.1.0"));
        assert!(contains("1.x", "1.9.9"));
        assert!(!contains("1.x", "2.0.0"));
        assert!(contains("<=1.2.x", "1.2.9"));
        assert!(contains("!=1.2.3", "1.2.4"));
        assert!(contains("<0.0.2", "0.0.1"));
        for bad in [
            "",
            "||",
            "<1.0.0 ||",
            "|| <1.0.0",
            "abc",
            "<1.0",
            ">=v1.0.0",
            "~1.0.0",
        ] {
            assert!(Range::parse(bad).is_err(), "{bad:?}");
        }
    }
}
