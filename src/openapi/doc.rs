//! A schema's description as a doc comment. Descriptions are free text that another project (or
//! the Go project being migrated) wrote for `kubectl explain`, often in Markdown: the comment
//! keeps the text, but nothing in it may become code, and clippy must have nothing to say about
//! it. rustdoc runs a fenced block without a language, and an indented block, as a doctest in
//! `cargo test` (Gateway API's descriptions have both), and rustc refuses bidirectional-text
//! controls even in comments. So:
//! - control and invisible characters become spaces, tabs four spaces;
//! - every fence is marked ```` ```text ```` (and closed if the description leaves it open), and
//!   an indented block becomes a ```` ```text ```` fence around the same lines;
//! - the lines after a list item are indented under it, as clippy's `doc_lazy_continuation` and
//!   `doc_overindented_list_items` want;
//! - the result is read back as rustdoc reads it (pulldown-cmark): unless every code block in it
//!   is a `text` fence and it holds nothing else that clippy questions or that Markdown makes
//!   hard to keep straight (quotes, HTML, footnotes, link definitions), the whole description is
//!   one `text` block instead, its fence longer than any run of backticks in it, which no line
//!   can close. The text is kept either way.

use std::fmt::Write as _;

use pulldown_cmark::{CodeBlockKind, Event, Options, Parser, Tag, TagEnd};

use crate::names::is_format_char;

/// Writes `description` as `///` lines indented by `indent`; nothing for None.
pub fn write(out: &mut String, indent: &str, description: Option<&str>) {
    let Some(description) = description else {
        return;
    };
    for line in lines(description) {
        if line.is_empty() {
            let _ = writeln!(out, "{indent}///");
        } else {
            let _ = writeln!(out, "{indent}/// {line}");
        }
    }
}

/// The doc comment's lines (without `///`).
pub fn lines(description: &str) -> Vec<String> {
    let text = sanitize(description);
    let text = text.trim();
    let mut out = Lines::default();
    for line in text.lines() {
        out.line(line.trim_end());
    }
    let markdown = out.finish();
    if is_inert(&markdown.join("\n")) {
        markdown
    } else {
        text_block(text)
    }
}

/// The Markdown options rustdoc reads doc comments with (clippy reads them so too, without smart
/// punctuation, which changes no structure).
fn rustdoc_options() -> Options {
    Options::ENABLE_TABLES
        | Options::ENABLE_FOOTNOTES
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_TASKLISTS
}

/// Whether `markdown` holds no code block but `text` fences, and nothing else that clippy's doc
/// lints question or that the line rewriting cannot keep straight: block quotes, HTML,
/// footnotes (or text that looks like one), link reference definitions, and lines of list items
/// that clippy reads as lazily or over-indented (see `ListIndents`).
fn is_inert(markdown: &str) -> bool {
    // Text is split into several events at brackets: looked for in the whole.
    if markdown.contains("[^") {
        return false;
    }
    let mut parser = Parser::new_ext(markdown, rustdoc_options()).into_offset_iter();
    let events: Vec<_> = parser.by_ref().collect();
    if parser.reference_definitions().iter().next().is_some() {
        return false;
    }
    let mut lists = ListIndents::default();
    events
        .iter()
        .enumerate()
        .all(|(i, (event, range))| match event {
            Event::Start(Tag::CodeBlock(CodeBlockKind::Fenced(info))) => info.trim() == "text",
            Event::Start(
                Tag::CodeBlock(CodeBlockKind::Indented)
                | Tag::BlockQuote(_)
                | Tag::HtmlBlock
                | Tag::FootnoteDefinition(_),
            )
            | Event::Html(_)
            | Event::InlineHtml(_)
            | Event::FootnoteReference(_) => false,
            _ => lists.follow(markdown, event, range.clone(), events.get(i + 1)),
        })
}

/// clippy's reading of list items (its `doc_lazy_continuation` and `doc_overindented_list_items`,
/// clippy_lints/src/doc): an item is as wide as the gap from its start to its first event, and
/// every line break inside items must be followed by exactly as many spaces as the items it is
/// in are wide. Modelled rather than approximated: clippy's widths differ from Markdown's (a task
/// marker or a heading on the item's line counts), and only the same sum agrees with it.
#[derive(Default)]
struct ListIndents {
    /// The widths of the items the current event is in, outermost first.
    items: Vec<usize>,
}

impl ListIndents {
    /// Follows `event` (at `range`, before the event `next`); false when clippy
    /// would flag the line the event breaks to.
    fn follow(
        &mut self,
        markdown: &str,
        event: &Event,
        range: std::ops::Range<usize>,
        next: Option<&(Event, std::ops::Range<usize>)>,
    ) -> bool {
        match event {
            Event::Start(Tag::Item) => {
                let width = next.map_or(0, |(_, at)| at.start.saturating_sub(range.start));
                self.items.push(width);
                true
            }
            Event::End(TagEnd::Item) => {
                self.items.pop();
                true
            }
            Event::SoftBreak | Event::HardBreak if !self.items.is_empty() => match next {
                Some((Event::End(_), _)) | None => true,
                Some((_, at)) => {
                    let gap = markdown.get(range.end..at.start).unwrap_or_default();
                    gap.chars().filter(|c| *c == ' ').count() == self.items.iter().sum::<usize>()
                }
            },
            _ => true,
        }
    }
}

/// `text` as one ```` ```text ```` block, its fence longer than any run of backticks in it.
fn text_block(text: &str) -> Vec<String> {
    let longest = text
        .split(|c| c != '`')
        .map(str::len)
        .max()
        .unwrap_or_default();
    let fence = "`".repeat(longest.max(2) + 1);
    let mut out = vec![format!("{fence}text")];
    out.extend(text.lines().map(|line| line.trim_end().to_string()));
    out.push(fence);
    out
}

/// The text with control and invisible characters replaced: tabs by four spaces, carriage
/// returns by line breaks, everything else by a space.
fn sanitize(text: &str) -> String {
    let text = text.replace("\r\n", "\n");
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\n' => out.push('\n'),
            '\r' => out.push('\n'),
            '\t' => out.push_str("    "),
            c if c.is_control() || is_format_char(c) || matches!(c, '\u{2028}' | '\u{2029}') => {
                out.push(' ')
            }
            c => out.push(c),
        }
    }
    out
}

/// An open fence: its character and length (a closing fence has at least as many).
#[derive(Clone, Copy)]
struct Fence {
    marker: char,
    count: usize,
}

#[derive(Default)]
struct Lines {
    out: Vec<String>,
    fence: Option<Fence>,
    /// In an indented block, turned into a fence: blank lines held until the block goes on.
    indented: Option<usize>,
    /// The column of the text of the current list item.
    item: Option<usize>,
    quote: bool,
    /// The previous line was blank (or there was none).
    after_blank: bool,
}

impl Lines {
    fn line(&mut self, line: &str) {
        if self.out.is_empty() {
            self.after_blank = true;
        }
        if let Some(fence) = self.fence {
            self.out.push(line.to_string());
            if closes(line, fence) {
                self.fence = None;
                self.after_blank = false;
            }
            return;
        }
        let trimmed = line.trim_start();
        let indent = line.len() - trimmed.len();
        if let Some(blanks) = self.indented {
            if line.is_empty() {
                self.indented = Some(blanks + 1);
                return;
            }
            if indent >= 4 {
                self.out.extend(std::iter::repeat_n(String::new(), blanks));
                self.out.push(line[4..].to_string());
                self.indented = Some(0);
                return;
            }
            self.out.push("```".into());
            self.indented = None;
            self.out.extend(std::iter::repeat_n(String::new(), blanks));
            self.after_blank = blanks > 0;
            if blanks == 0 {
                // Text right after a code block starts a paragraph of its own.
                self.out.push(String::new());
                self.after_blank = true;
            }
        }
        if line.is_empty() {
            self.out.push(String::new());
            self.after_blank = true;
            self.item = None;
            self.quote = false;
            return;
        }
        if indent >= 4 && self.after_blank && self.item.is_none() {
            // An indented code block: a doctest unless fenced as text.
            self.out.push("```text".into());
            self.out.push(line[4..].to_string());
            self.indented = Some(0);
            self.quote = false;
            return;
        }
        if let Some(fence) = opens(trimmed) {
            self.out.push(format!(
                "{}{}text",
                &line[..indent],
                fence.marker.to_string().repeat(fence.count)
            ));
            self.fence = Some(fence);
            self.item = None;
            self.quote = false;
            return;
        }
        if let Some(width) = list_marker(trimmed) {
            self.item = Some(indent + width);
            self.out.push(line.to_string());
        } else if let Some(column) = self.item {
            self.out.push(format!("{}{trimmed}", " ".repeat(column)));
        } else if self.quote && !trimmed.starts_with('>') {
            self.out.push(String::new());
            self.out.push(line.to_string());
        } else {
            self.out.push(line.to_string());
        }
        self.quote = trimmed.starts_with('>');
        self.after_blank = false;
    }

    fn finish(mut self) -> Vec<String> {
        if let Some(fence) = self.fence {
            self.out.push(fence.marker.to_string().repeat(fence.count));
        }
        if self.indented.is_some() {
            self.out.push("```".into());
        }
        self.out
    }
}

/// The fence a line opens, if it opens one: three or more backticks or tildes (a backtick
/// fence's info string has no backtick).
fn opens(trimmed: &str) -> Option<Fence> {
    let marker = trimmed.chars().next().filter(|c| *c == '`' || *c == '~')?;
    let count = trimmed.chars().take_while(|c| *c == marker).count();
    let info = &trimmed[count..];
    (count >= 3 && !(marker == '`' && info.contains('`'))).then_some(Fence { marker, count })
}

fn closes(line: &str, fence: Fence) -> bool {
    let trimmed = line.trim_start();
    let count = trimmed.chars().take_while(|c| *c == fence.marker).count();
    line.len() - trimmed.len() < 4 && count >= fence.count && trimmed[count..].trim().is_empty()
}

/// Where the text of a list item starts, from the start of `trimmed`, if the line starts one:
/// after its marker and the spaces that follow (`- ` 2, `10.  x` 5), and after the markers of
/// lists that start on the same line (`1. - x` 5).
fn list_marker(trimmed: &str) -> Option<usize> {
    let mut column = 0;
    while let Some(width) = one_list_marker(&trimmed[column..]) {
        column += width;
    }
    (column > 0).then_some(column)
}

/// The width of one list marker at the start of `text` with the spaces after it: one to four
/// (more make an indented block in the item, which starts after one).
fn one_list_marker(text: &str) -> Option<usize> {
    let marker = if text.starts_with(['-', '*', '+']) {
        1
    } else {
        let digits = text.chars().take_while(char::is_ascii_digit).count();
        let rest = &text[digits..];
        ((1..=9).contains(&digits) && rest.starts_with(['.', ')'])).then_some(digits + 1)?
    };
    let spaces = text[marker..].chars().take_while(|c| *c == ' ').count();
    match spaces {
        0 => None,
        1..=4 if marker + spaces < text.len() => Some(marker + spaces),
        _ => Some(marker + 1),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(text: &str) -> String {
        let mut out = String::new();
        write(&mut out, "", Some(text));
        out
    }

    #[test]
    fn list_continuations_are_indented() {
        assert_eq!(
            doc("Types:\n- Available: all\nis well\n\nThe end."),
            "/// Types:\n/// - Available: all\n///   is well\n///\n/// The end.\n"
        );
        assert_eq!(
            doc("1. one\ngoes on\n10. ten\ngoes on"),
            "/// 1. one\n///    goes on\n/// 10. ten\n///     goes on\n"
        );
    }

    #[test]
    fn list_items_that_open_lists() {
        assert_eq!(
            doc("10) - [ ] task\n===\nmore"),
            "/// 10) - [ ] task\n///       ===\n///       more\n"
        );
        assert_eq!(doc("-   wide\nnext"), "/// -   wide\n///     next\n");
        // Found by hack/fuzz: a table row after a list item.
        let found = doc("- tab\tinside\n\n\t\n  ``` ```\n| a | b |\n- assert!(false);");
        assert!(found.starts_with("/// ````text\n"), "{found}");
        // Found by hack/fuzz: a heading in an item (its underline tab-indented).
        let found = doc("   - [ ] task\nbidi \u{202e} zero\u{200b}width\n\t===");
        assert!(found.starts_with("/// ```text\n"), "{found}");
        // Found by hack/fuzz: a marker too far in is the item's text, overindented.
        assert_eq!(
            doc("|---|---|\n- Plain text.\n      - [ ] task"),
            "/// ```text\n/// |---|---|\n/// - Plain text.\n///       - [ ] task\n/// ```\n"
        );
        // Found by hack/fuzz: clippy counts a task marker or heading into the item's width.
        for found in [
            "- [ ] task\n---\n  - carriage\rreturn\n  ",
            "- [ ] task\n\n  - carriage\n    return",
            "- [ ] # task\n  - carriage\n    return",
        ] {
            let found = doc(found);
            assert!(found.starts_with("/// ```text\n"), "{found}");
        }
        assert_eq!(
            doc("- a\n  - b\n    more of b\n\n  more of a"),
            "/// - a\n///   - b\n///     more of b\n///\n///   more of a\n"
        );
    }

    #[test]
    fn code_never_becomes_a_doctest() {
        // Gateway API's style: a fence without a language.
        assert_eq!(
            doc("Example:\n```\nfn main() {}\n```\nDone."),
            "/// Example:\n/// ```text\n/// fn main() {}\n/// ```\n/// Done.\n"
        );
        assert_eq!(
            doc("a\n~~~~yaml\nb: 1"),
            "/// a\n/// ~~~~text\n/// b: 1\n/// ~~~~\n"
        );
        assert_eq!(
            doc("Example:\n\n    let x = 1;\n\n    x + 1\nMore."),
            "/// Example:\n///\n/// ```text\n/// let x = 1;\n///\n/// x + 1\n/// ```\n///\n/// More.\n"
        );
        // Indented lines that continue a paragraph are text.
        assert_eq!(doc("a\n    b"), "/// a\n///     b\n");
    }

    #[test]
    fn invisible_characters_and_quotes() {
        assert_eq!(doc("a\u{202E}b\tc\u{7}"), "/// a b    c\n");
    }

    /// What the line rewriting cannot keep straight is kept as text, in one block that no line
    /// can close.
    #[test]
    fn quotes_html_and_footnotes_become_one_text_block() {
        assert_eq!(
            doc("Quoted:\n> ```\n> fn main() {}\n> ```"),
            "/// ````text\n/// Quoted:\n/// > ```\n/// > fn main() {}\n/// > ```\n/// ````\n"
        );
        assert_eq!(
            doc("a ```` b\n<pre>\n```\n</pre>"),
            "/// `````text\n/// a ```` b\n/// <pre>\n/// ```\n/// </pre>\n/// `````\n"
        );
        assert!(doc("see [^1]").starts_with("/// ```text\n"));
        assert!(doc("[a]: http://example.com").starts_with("/// ```text\n"));
        assert!(doc("- item\n\n      indented").starts_with("/// - item"));
    }
}
