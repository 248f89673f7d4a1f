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
/// footnotes (or text that looks like one), link reference definitions.
fn is_inert(markdown: &str) -> bool {
    // Text is split into several events at brackets: looked for in the whole.
    if markdown.contains("[^") {
        return false;
    }
    // A table row beside a list: clippy's reader and ours disagree on where the item ends (a
    // row may end it or continue it lazily).
    let table_rows = markdown
        .lines()
        .any(|line| line.trim_start().starts_with('|'));
    let mut parser = Parser::new_ext(markdown, rustdoc_options()).into_offset_iter();
    // Where the list items the event is in start (see `heading_on_first_line`).
    let mut items: Vec<usize> = Vec::new();
    let inert = parser.by_ref().all(|(event, range)| {
        match event {
            // Every line of a list item must be indented to where its text starts (clippy's
            // `doc_lazy_continuation` flags a line that is not).
            Event::Start(Tag::Item) => {
                items.push(range.start);
                !table_rows && continuation_indented(markdown, range)
            }
            Event::End(TagEnd::Item) => {
                items.pop();
                true
            }
            Event::Start(Tag::Heading { .. }) => {
                items.is_empty() || heading_on_first_line(markdown, items[items.len() - 1], range)
            }
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
            _ => true,
        }
    });
    inert && parser.reference_definitions().iter().next().is_none()
}

/// Whether the list item at `item` (a byte range of `markdown`, from its marker) is one clippy
/// has nothing to say about: it has text, and every line after its first is blank, indented to
/// exactly where its text starts (`doc_lazy_continuation` flags less, `doc_overindented_list_items`
/// more), or is in a list nested in it (which its own item checks) or in a fence of it.
fn continuation_indented(markdown: &str, item: std::ops::Range<usize>) -> bool {
    let end = item.end.min(markdown.len());
    let start = item.start.min(end);
    let line_start = markdown[..start].rfind('\n').map_or(0, |i| i + 1);
    let Some(marker) = one_list_marker(&markdown[start..end]) else {
        return false;
    };
    let column = start - line_start + marker;
    let first_line_end = markdown[start..end].find('\n').map_or(end, |i| start + i);
    // A list may start on the item's first line (`1. - a`): its lines are its own items'.
    let mut nested = list_marker(&markdown[start + marker..first_line_end]).is_some();
    let mut fence = false;
    markdown[first_line_end..end].lines().all(|line| {
        let trimmed = line.trim_start();
        let indent = line.len() - trimmed.len();
        if trimmed.is_empty() || fence {
            fence &= !(trimmed.starts_with("```") || trimmed.starts_with("~~~"));
            return true;
        }
        // A marker four columns or more past the item's text is not a list (it continues the
        // text, which clippy's `doc_overindented_list_items` flags).
        if (column..column + 4).contains(&indent) && list_marker(trimmed).is_some() {
            nested = true;
            return true;
        }
        nested &= indent > column;
        fence = indent == column && (trimmed.starts_with("```") || trimmed.starts_with("~~~"));
        indent == column || nested
    })
}

/// Whether the heading at `heading` (a byte range of `markdown`) in the list item starting at
/// `item` is the item's first line, alone (with its setext underline): a heading of more lines, or
/// under a later line, is one that clippy's `doc_lazy_continuation` reads as an unindented
/// continuation of the item.
fn heading_on_first_line(markdown: &str, item: usize, heading: std::ops::Range<usize>) -> bool {
    let before = markdown.get(item..heading.start).unwrap_or("\n");
    let text = markdown.get(heading).unwrap_or("\n\n\n");
    !before.contains('\n') && text.trim_end().lines().count() <= 2
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
