//! Symbolic links in a bundle. The image build that copies the bundle follows them, so the
//! validators follow them too, but only inside the bundle: an image holds nothing else. A link
//! out of the bundle, a loop and a link to nothing are errors that name the link (Go's tools
//! would read through the first and fail on the others with the operating system's message).

use std::path::Path;

use super::Report;

/// Reports every symbolic link under `dir` that cannot be followed or leads out of it.
pub fn check(dir: &Path, report: &mut Report) {
    let Ok(root) = dir.canonicalize() else {
        return; // `validate` has made sure it is a directory; a race is the loader's to report.
    };
    for entry in walkdir::WalkDir::new(dir)
        .sort_by_file_name()
        .into_iter()
        .filter_map(Result::ok)
        .filter(|entry| entry.path_is_symlink())
    {
        let location = entry
            .path()
            .strip_prefix(dir)
            .unwrap_or(entry.path())
            .to_string_lossy()
            .into_owned();
        match entry.path().canonicalize() {
            Ok(target) if target.starts_with(&root) => {}
            Ok(target) => report.error(
                location,
                format!(
                    "a symbolic link out of the bundle (to {}); a bundle image holds only the bundle",
                    target.display()
                ),
            ),
            Err(err) => report.error(
                location,
                format!("a symbolic link that cannot be followed (a loop, or a link to nothing): {err}"),
            ),
        }
    }
}
