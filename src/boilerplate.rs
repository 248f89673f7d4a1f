//! License headers and the values derived from the clock or from names.

/// Path of the license header, relative to the project root.
pub const BOILERPLATE_FILE: &str = "hack/boilerplate.rs.txt";

/// The license header of generated Rust files (`--license`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum License {
    /// The Apache License 2.0 header.
    Apache2,
    /// A copyright line only (`// Copyright <year> <owner>.`).
    Copyright,
    /// No license header.
    None,
}

impl License {
    pub fn as_str(self) -> &'static str {
        match self {
            License::Apache2 => "apache2",
            License::Copyright => "copyright",
            License::None => "none",
        }
    }
}

/// The header of generated Rust files (also written to `hack/boilerplate.rs.txt`, which later
/// commands read so that a user's edits to it carry over). Empty with `--license none`.
pub fn header(license: License, owner: &str, year: i64) -> String {
    match license {
        License::None => String::new(),
        License::Copyright => {
            let holder = if owner.is_empty() {
                String::new()
            } else {
                format!(" {owner}")
            };
            format!("// Copyright {year}{holder}.\n")
        }
        License::Apache2 => {
            let holder = if owner.is_empty() {
                String::new()
            } else {
                format!(" {owner}")
            };
            let text = format!(
                "Copyright {year}{holder}.

Licensed under the Apache License, Version 2.0 (the \"License\");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an \"AS IS\" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License."
            );
            text.lines()
                .map(|l| format!("// {l}").trim_end().to_string() + "\n")
                .collect()
        }
    }
}

/// A header that [`header`] writes, read back: the flags and the year that write it again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recognized {
    pub license: License,
    pub owner: String,
    pub year: i64,
}

impl Recognized {
    /// A `SOURCE_DATE_EPOCH` within the header's year (noon on January 1st, UTC), for
    /// [`current_year`] to give that year back.
    pub fn source_date_epoch(&self) -> i64 {
        days_before_year(self.year) * 86_400 + 12 * 3_600
    }
}

/// The license, owner and year of a header that `--license` and `--owner` write, if `text` is
/// exactly one of those (`None` for any other text, such as a `--license-file` header).
pub fn recognize(text: &str) -> Option<Recognized> {
    let (year, owner) = owner_and_year(text)?;
    [License::Apache2, License::Copyright]
        .into_iter()
        .find(|&license| header(license, &owner, year) == text)
        .map(|license| Recognized {
            license,
            owner,
            year,
        })
}

/// The year and owner in the first line of a header operator-rs wrote,
/// `// Copyright <year>[ <owner>].`.
pub fn owner_and_year(header: &str) -> Option<(i64, String)> {
    let first = header.lines().next()?;
    let rest = first.strip_prefix("// Copyright ")?;
    let rest = rest.strip_suffix('.').unwrap_or(rest);
    let (year, owner) = rest.split_once(' ').unwrap_or((rest, ""));
    if year.is_empty() || !year.chars().all(|c| c.is_ascii_digit()) {
        return None;
    }
    Some((year.parse().ok()?, owner.to_string()))
}

/// kubebuilder's placeholder for the year in a license header (`Copyright YEAR Acme.`), in a
/// `--license-file` and in `hack/boilerplate.rs.txt`: the file keeps it, and each Rust file gets
/// the year it is written in its place ([`with_year`]), as kubebuilder's scaffolds and
/// controller-gen's `headerFile` do.
pub const YEAR: &str = "YEAR";

/// `header` with every standalone [`YEAR`] (not part of a longer word, as Go's `\bYEAR\b`)
/// replaced by `year`.
pub fn with_year(header: &str, year: i64) -> String {
    let mut out = String::with_capacity(header.len());
    let mut rest = header;
    while let Some(at) = find_year(rest) {
        out.push_str(&rest[..at]);
        out.push_str(&year.to_string());
        rest = &rest[at + YEAR.len()..];
    }
    out.push_str(rest);
    out
}

/// `text` without `header` on top of it, where each [`YEAR`] of `header` may stand for any year
/// (the header of a file written in an earlier year): None when `text` does not start with it.
pub fn strip_header<'a>(text: &'a str, header: &str) -> Option<&'a str> {
    let mut text = text;
    let mut header = header;
    while let Some(at) = find_year(header) {
        text = text.strip_prefix(&header[..at])?;
        let digits = text.len() - text.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        if digits == 0 {
            return None;
        }
        text = &text[digits..];
        header = &header[at + YEAR.len()..];
    }
    text.strip_prefix(header)
}

/// Where the first standalone [`YEAR`] of `text` starts.
fn find_year(text: &str) -> Option<usize> {
    let word = |c: char| c.is_alphanumeric() || c == '_';
    text.match_indices(YEAR).map(|(at, _)| at).find(|&at| {
        !text[..at].chars().next_back().is_some_and(word)
            && !text[at + YEAR.len()..].chars().next().is_some_and(word)
    })
}

/// The header from a `--license-file`: its text as it is (kubebuilder copies it too, [`YEAR`]
/// included), checked like `hack/boilerplate.rs.txt` and ending with a line break.
pub fn from_license_file(path: &std::path::Path) -> anyhow::Result<String> {
    let shown = path.display();
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
            anyhow::bail!("license file \"{shown}\" does not exist")
        }
        Err(err) => anyhow::bail!("reading license file \"{shown}\": {err}"),
    };
    if text.trim().is_empty() {
        anyhow::bail!("license file \"{shown}\" is empty; pass --license none for no header");
    }
    check_header(&text).map_err(|problem| {
        anyhow::anyhow!(
            "license file \"{shown}\" {problem}; it goes on top of every Rust file, so it must be a \
             comment (a /* ... */ block or // lines)"
        )
    })?;
    let mut text = text.trim_end().to_string();
    text.push('\n');
    Ok(text)
}

/// Checks a license header as read back from `hack/boilerplate.rs.txt`, which goes on top of
/// every generated Rust file: it must be nothing but plain comments (`//` lines or `/* */`
/// blocks; not doc comments, which would attach to the wrong item or come after the file's own
/// `//!`), without the bidirectional-text controls that rustc refuses in comments. The error
/// says what is wrong, for a message about the file.
pub fn check_header(text: &str) -> Result<(), String> {
    if let Some(c) = text
        .chars()
        .find(|&c| crate::names::is_bidi_control(c) || (c.is_control() && !"\n\r\t".contains(c)))
    {
        return Err(format!(
            "has the character U+{:04X}, which rustc refuses in comments",
            u32::from(c)
        ));
    }
    let mut rest = text;
    loop {
        rest = rest.trim_start();
        if rest.is_empty() {
            return Ok(());
        }
        let doc = ["///", "//!", "/**", "/*!"]
            .iter()
            .any(|d| rest.starts_with(d) && !rest.starts_with("////") && !rest.starts_with("/***"))
            && !rest.starts_with("/**/");
        if doc {
            return Err("has a doc comment (///, //!, /** or /*!); use plain // comments".into());
        }
        if let Some(line) = rest.strip_prefix("//") {
            rest = line.split_once('\n').map_or("", |(_, next)| next);
        } else if rest.starts_with("/*") {
            // Block comments nest in Rust.
            let mut depth = 0usize;
            let mut end = None;
            let bytes = rest.as_bytes();
            let mut i = 0;
            while i + 1 < bytes.len() {
                match &bytes[i..i + 2] {
                    b"/*" => {
                        depth += 1;
                        i += 2;
                    }
                    b"*/" => {
                        depth -= 1;
                        i += 2;
                        if depth == 0 {
                            end = Some(i);
                            break;
                        }
                    }
                    _ => i += 1,
                }
            }
            match end {
                Some(i) => rest = &rest[i..],
                None => return Err("has a /* comment that is never closed".into()),
            }
        } else {
            let line = rest.lines().next().unwrap_or_default();
            return Err(format!(
                "has a line that is not a comment: {}",
                crate::names::shown(line)
            ));
        }
    }
}

/// The current year, or the year of `SOURCE_DATE_EPOCH` when set (the reproducible-builds
/// convention), so that snapshot tests and packagers get byte-identical trees.
pub fn current_year() -> i64 {
    let seconds = std::env::var("SOURCE_DATE_EPOCH")
        .ok()
        .and_then(|s| s.trim().parse::<i64>().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_secs() as i64)
                .unwrap_or(0)
        });
    year_of(seconds)
}

/// The civil (proleptic Gregorian, UTC) year of a Unix timestamp.
fn year_of(unix_seconds: i64) -> i64 {
    // Howard Hinnant's days-to-civil algorithm, reduced to the year.
    let days = unix_seconds.div_euclid(86_400) + 719_468;
    let era = days.div_euclid(146_097);
    let doe = days - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    yoe + era * 400 + i64::from(month <= 2)
}

/// Days from 1970-01-01 to January 1st of `year` (proleptic Gregorian).
fn days_before_year(year: i64) -> i64 {
    let y = year - 1;
    365 * (year - 1970) + (y.div_euclid(4) - y.div_euclid(100) + y.div_euclid(400)) - 477
}

/// 32-bit FNV-1a, as kubebuilder's `hashFNV` (leader election IDs `<8 hex>.<domain>`).
pub fn fnv1a32(text: &str) -> u32 {
    text.bytes().fold(0x811c_9dc5_u32, |hash, byte| {
        (hash ^ u32::from(byte)).wrapping_mul(0x0100_0193)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn years() {
        assert_eq!(year_of(0), 1970);
        assert_eq!(year_of(1_798_761_599), 2026); // 2026-12-31T23:59:59Z
        assert_eq!(year_of(1_798_761_600), 2027);
        assert_eq!(year_of(951_782_400), 2000); // 2000-02-29
    }

    #[test]
    fn years_round_trip_through_source_date_epoch() {
        for year in [1970, 1999, 2000, 2024, 2026, 2100] {
            let r = Recognized {
                license: License::Copyright,
                owner: String::new(),
                year,
            };
            assert_eq!(year_of(r.source_date_epoch()), year);
            assert_eq!(year_of(r.source_date_epoch() - 13 * 3_600), year - 1);
        }
    }

    #[test]
    fn headers_are_recognized_only_as_written() {
        for license in [License::Apache2, License::Copyright] {
            for owner in ["", "Acme", "The Kubernetes authors", "Zoë 株式会社 v1.2"] {
                let text = header(license, owner, 2024);
                let back = recognize(&text).unwrap();
                assert_eq!(
                    (back.license, back.owner.as_str(), back.year),
                    (license, owner, 2024)
                );
            }
        }
        let edited = header(License::Apache2, "Acme", 2024).replace("AS IS", "as is");
        assert_eq!(recognize(&edited), None);
        assert_eq!(recognize("/* Copyright 2024 Acme. */\n"), None);
        assert_eq!(recognize(""), None);
    }

    #[test]
    fn fnv_matches_the_reference_values() {
        assert_eq!(fnv1a32(""), 0x811c_9dc5);
        assert_eq!(fnv1a32("a"), 0xe40c_292c);
        assert_eq!(fnv1a32("foobar"), 0xbf9c_f968);
    }

    #[test]
    fn headers() {
        assert_eq!(header(License::None, "Acme", 2026), "");
        let h = header(License::Apache2, "Acme", 2026);
        assert!(
            h.starts_with("// Copyright 2026 Acme.\n//\n// Licensed"),
            "{h}"
        );
        assert!(h.lines().all(|l| l.starts_with("//") && l == l.trim_end()));
        assert!(header(License::Apache2, "", 2026).starts_with("// Copyright 2026.\n"));
        assert_eq!(
            header(License::Copyright, "Acme", 2026),
            "// Copyright 2026 Acme.\n"
        );
        assert_eq!(check_header(&header(License::Copyright, "", 2026)), Ok(()));
        assert_eq!(check_header(&h), Ok(()));
    }

    #[test]
    fn headers_read_back_must_be_plain_comments() {
        for ok in [
            "",
            "// Copyright Acme\n//\n",
            "/*\nCopyright 2026 The Kubernetes authors.\n*/\n",
            "/* a /* nested */ b */ // and a line\n",
            "//// four slashes are a plain comment\n/**/\n",
            "// Zoë 株式会社 😀\n",
        ] {
            assert_eq!(check_header(ok), Ok(()), "{ok:?}");
        }
        for (bad, why) in [
            ("Copyright Acme\n", "not a comment"),
            ("// ok\nfn main() {}\n", "not a comment"),
            ("/// Copyright\n", "doc comment"),
            ("//! Copyright\n", "doc comment"),
            ("/** x */\n", "doc comment"),
            ("/* never closed\n", "never closed"),
            ("// a \u{202e} b\n", "U+202E"),
            ("// a \u{0} b\n", "U+0000"),
        ] {
            let err = check_header(bad).unwrap_err();
            assert!(err.contains(why), "{bad:?}: {err}");
        }
    }

    #[test]
    fn the_year_placeholder_is_replaced_where_it_stands_alone() {
        assert_eq!(
            with_year("/*\nCopyright YEAR Acme.\n*/\n", 2026),
            "/*\nCopyright 2026 Acme.\n*/\n"
        );
        assert_eq!(
            with_year("// YEAR, YEAR-2030 (YEAR)\n", 2027),
            "// 2027, 2027-2030 (2027)\n"
        );
        // Part of a longer word: kept, as by kubebuilder's \bYEAR\b.
        for kept in [
            "// YEARS",
            "// _YEAR",
            "// MYYEAR",
            "// YEAR2",
            "// yEAR",
            "// ÉYEAR",
        ] {
            assert_eq!(with_year(kept, 2026), kept);
        }
        assert_eq!(with_year("", 2026), "");
    }

    #[test]
    fn a_header_with_the_placeholder_matches_any_year() {
        let header = "// Copyright YEAR Acme.\n// (c) YEAR\n";
        assert_eq!(
            strip_header("// Copyright 2024 Acme.\n// (c) 2025\nfn f() {}\n", header),
            Some("fn f() {}\n")
        );
        assert_eq!(
            strip_header("// Copyright  Acme.\n// (c) 2025\n", header),
            None
        );
        assert_eq!(strip_header("// Copyright 2024 Acme.\n", header), None);
        assert_eq!(
            strip_header("// Copyright 2024 Acme.\nrest", "// Copyright 2024 Acme.\n"),
            Some("rest")
        );
        assert_eq!(
            strip_header("// Other.\n", "// Copyright 2024 Acme.\n"),
            None
        );
    }
}
