//! Formatting of rendered Rust files with rustfmt, as kubebuilder runs goimports on its Go output.
//!
//! Templates are written rustfmt-clean for ordinary names, but a long kind or group name can move
//! a line past rustfmt's width and change its layout, and generated projects must pass
//! `cargo fmt --check` as written. When `rustfmt` is not installed the text is returned as it is
//! (it is valid Rust either way); a text rustfmt cannot parse is returned as it is too, so the
//! user sees the compiler's message rather than ours.

use std::io::Write as _;
use std::process::{Command, Stdio};

/// `text` formatted like `cargo fmt` formats an edition-2024 crate.
pub fn format(text: &str) -> String {
    try_format(text).unwrap_or_else(|| text.to_string())
}

fn try_format(text: &str) -> Option<String> {
    let mut child = Command::new("rustfmt")
        .args(["--edition", "2024", "--emit", "stdout", "--quiet"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    // Write from another thread so a large output cannot fill the pipe and block both sides.
    let mut stdin = child.stdin.take()?;
    let input = text.to_string();
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let output = child.wait_with_output().ok()?;
    writer.join().ok()?.ok()?;
    if !output.status.success() {
        return None;
    }
    String::from_utf8(output.stdout).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_or_leaves_as_is() {
        let formatted = format("fn main( ) {let x=1;}\n");
        // Either rustfmt is installed and formatted it, or the text is unchanged.
        assert!(
            formatted == "fn main() {\n    let x = 1;\n}\n"
                || formatted == "fn main( ) {let x=1;}\n",
            "{formatted}"
        );
        assert_eq!(format("fn main( {"), "fn main( {");
    }
}
