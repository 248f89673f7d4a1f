//! Fuzz target: schema descriptions (free Markdown that another project wrote for `kubectl
//! explain`) become doc comments that rustdoc never compiles and clippy never flags, whatever they
//! hold: code fences of either kind and any length, nested, unclosed or inside `>` quotes and list
//! items, indented blocks in quotes and lists, HTML, footnotes, link definitions, tables, tabs and
//! invisible characters.
//!
//! The oracle is the real tools: a batch of descriptions becomes the doc comments of one small
//! crate, which must pass `cargo clippy -- -D warnings` and whose `cargo test --doc` must find no
//! doctest at all. A failure names the descriptions of the items the tools complained about.

mod support;

use std::fmt::Write as _;
use std::path::Path;
use std::process::Command;

use operator_rs::openapi::doc;
use proptest::prelude::*;
use support::fuzz;

/// One line of Markdown: a container prefix (quotes, list items, indentation) and a body.
fn line() -> impl Strategy<Value = String> {
    const PREFIXES: &[&str] = &[
        "", "", "", "> ", ">", "> > ", ">> ", "- ", "* ", "1. ", "10) ", "  ", "   ", "    ",
        "      ", "\t", "> - ", "- > ", ">     ", "-     ", "1.     ", "  - ",
    ];
    const BODIES: &[&str] = &[
        "Plain text.",
        "fn main() { panic!() }",
        "assert!(false);",
        "let x: u8 = 300;",
        "```",
        "```rust",
        "```ignore",
        "```should_panic",
        "````",
        "~~~",
        "~~~~rust",
        "```yaml",
        "``` ```",
        "<details>",
        "</details>",
        "<pre>",
        "</pre>",
        "<!-- a comment",
        "-->",
        "<div>x</div>",
        "<script>alert(1)</script>",
        "a footnote[^1] here",
        "[^1]: the note",
        "[link]: http://example.com",
        "[text](http://example.com)",
        "# Heading",
        "Setext",
        "===",
        "---",
        "| a | b |",
        "|---|---|",
        "*emphasis* and `code`",
        "",
        "",
        "tab\tinside",
        "bidi \u{202E} zero\u{200B}width",
        "carriage\rreturn",
        "*/ /* not a comment",
        "///",
        "#![deny(warnings)]",
        "# hidden doctest line",
        "- [ ] task",
    ];
    (
        proptest::sample::select(PREFIXES),
        proptest::sample::select(BODIES),
    )
        .prop_map(|(prefix, body)| format!("{prefix}{body}"))
}

fn description() -> impl Strategy<Value = String> {
    proptest::collection::vec(line(), 1..14).prop_map(|lines| lines.join("\n"))
}

/// The crate of the descriptions' doc comments, one `pub struct D<i>` each.
fn crate_source(descriptions: &[String]) -> String {
    let mut out = String::from("//! Descriptions as doc comments.\n\n");
    for (i, text) in descriptions.iter().enumerate() {
        for line in doc::lines(text) {
            if line.is_empty() {
                out.push_str("///\n");
            } else {
                let _ = writeln!(out, "/// {line}");
            }
        }
        let _ = writeln!(out, "pub struct D{i};\n");
    }
    out
}

/// Runs cargo in `dir`; its status and output.
fn cargo(dir: &Path, args: &[&str]) -> (bool, String) {
    let out = Command::new(env!("CARGO"))
        .args(args)
        .current_dir(dir)
        .env("CARGO_TARGET_DIR", dir.join("target"))
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_BUILD_RUSTFLAGS")
        .output()
        .expect("cargo runs");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

/// The descriptions of the items (`D<i>`) that `output` names.
fn blamed(output: &str, source: &str, descriptions: &[String]) -> String {
    let lines: Vec<&str> = source.lines().collect();
    let mut out = String::new();
    // rustdoc names a doctest by its item: `src/lib.rs - D3 (line 12)`.
    for (i, _) in output.match_indices("src/lib.rs - D") {
        let item = output[i + 14..]
            .split(|c: char| !c.is_ascii_digit())
            .next()
            .and_then(|n| n.parse::<usize>().ok());
        if let Some(item) = item.filter(|&item| item < descriptions.len()) {
            let _ = writeln!(out, "D{item}: {:?}", descriptions[item]);
        }
    }
    // rustc and clippy name a line: `src/lib.rs:12:5`.
    for (i, _) in output.match_indices("src/lib.rs:") {
        let line: usize = output[i + 11..]
            .split(':')
            .next()
            .and_then(|n| n.parse().ok())
            .unwrap_or(0);
        let item = lines
            .iter()
            .skip(line.saturating_sub(1))
            .find_map(|l| l.strip_prefix("pub struct D"))
            .and_then(|rest| rest.trim_end_matches(';').parse::<usize>().ok());
        if let Some(item) = item {
            let _ = writeln!(out, "D{item}: {:?}", descriptions[item]);
        }
    }
    out
}

/// One batch: the descriptions as one crate, checked by clippy and rustdoc.
fn check_batch(descriptions: &[String]) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::create_dir(dir.join("src")).unwrap();
    std::fs::write(
        dir.join("Cargo.toml"),
        "[package]\nname = \"descriptions\"\nversion = \"0.0.0\"\nedition = \"2024\"\n\n[workspace]\n",
    )
    .unwrap();
    let source = crate_source(descriptions);
    std::fs::write(dir.join("src/lib.rs"), &source).unwrap();

    let (ok, output) = cargo(dir, &["clippy", "--quiet", "--", "-D", "warnings"]);
    assert!(
        ok,
        "clippy refuses the doc comments of:\n{}\n{output}",
        blamed(&output, &source, descriptions)
    );
    let (ok, output) = cargo(dir, &["test", "--doc"]);
    assert!(
        ok,
        "doctests ran, and failed, in the doc comments of:\n{}\n{output}",
        blamed(&output, &source, descriptions)
    );
    let found = output
        .lines()
        .find_map(|l| l.trim().strip_prefix("running "))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse::<usize>().ok());
    assert_eq!(
        found,
        Some(0),
        "rustdoc found doctests in the doc comments of:\n{}\n{output}",
        blamed(&output, &source, descriptions)
    );
}

/// Batches of 300 descriptions (one without a time budget), until the budget is spent.
#[test]
fn descriptions_never_compile_and_clippy_accepts_them() {
    const BATCH: u32 = 300;
    let budget = fuzz::Budget::from_env(BATCH);
    let start = std::time::Instant::now();
    let mut cases = 0;
    while cases < budget.cases && budget.time_left(start.elapsed()) {
        let size = BATCH.min(budget.cases - cases);
        check_batch(&fuzz::sample(&description(), size as usize));
        cases += size;
    }
    println!(
        "fuzz descriptions: {cases} cases in {:.1}s",
        start.elapsed().as_secs_f64()
    );
}
