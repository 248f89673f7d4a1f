//! Line endings of the files operator-rs edits: a file checked out with CRLF line endings (git's
//! `core.autocrlf` on Windows) keeps them when operator-rs edits it, and counts as unchanged when
//! only its line endings differ from what operator-rs wrote.

use std::borrow::Cow;

/// Whether `text` has CRLF line endings, judged by its first line.
pub fn is_crlf(text: &str) -> bool {
    text.find('\n').is_some_and(|i| text[..i].ends_with('\r'))
}

/// `text` with LF line endings.
pub fn to_lf(text: &str) -> Cow<'_, str> {
    if text.contains("\r\n") {
        Cow::Owned(text.replace("\r\n", "\n"))
    } else {
        Cow::Borrowed(text)
    }
}

/// `text` (any line endings) with the line endings of `like`.
pub fn like(like: &str, text: &str) -> String {
    let lf = to_lf(text);
    if is_crlf(like) {
        lf.replace('\n', "\r\n")
    } else {
        lf.into_owned()
    }
}

/// Runs `edit` on `text` with LF line endings, and gives its result the line endings of `text`.
/// Text that `edit` leaves alone is returned as it was.
pub fn edit_lf<E>(text: &str, edit: impl FnOnce(&str) -> Result<String, E>) -> Result<String, E> {
    let lf = to_lf(text);
    let edited = edit(&lf)?;
    Ok(if edited == *lf {
        text.to_string()
    } else {
        like(text, &edited)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edits_keep_the_line_endings() {
        let crlf = "a\r\nb\r\n";
        let out = edit_lf(crlf, |t| Ok::<_, ()>(t.replace("a\n", "a\nx\n"))).unwrap();
        assert_eq!(out, "a\r\nx\r\nb\r\n");
        let lf = "a\nb\n";
        let out = edit_lf(lf, |t| Ok::<_, ()>(t.replace("a\n", "a\nx\n"))).unwrap();
        assert_eq!(out, "a\nx\nb\n");
        // Untouched text stays byte for byte, mixed line endings included.
        let mixed = "a\r\nb\nc\r\n";
        assert_eq!(
            edit_lf(mixed, |t| Ok::<_, ()>(t.to_string())).unwrap(),
            mixed
        );
        assert!(is_crlf(crlf) && !is_crlf(lf) && !is_crlf("no line break"));
        assert_eq!(like(crlf, "x\ny\n"), "x\r\ny\r\n");
        assert_eq!(like(lf, "x\r\ny\n"), "x\ny\n");
    }
}
