//! What a bundle holds besides regular files. The image build copies the bundle as it is, so
//! the validators follow symbolic links, but only inside the bundle: an image holds nothing
//! else. Every entry the readers of [`crate::files`] refuse is named here, once: a link
//! out of the bundle (not read), a loop or a link to nothing, a named pipe, a socket or a device
//! (never opened: a pipe would hang the run, a device feed it without end), a file over the
//! size limit. The readers then pass such entries by; Go's tools would read through the first,
//! fail on the next two with the operating system's message, and hang on a pipe.

use std::path::Path;

use super::Report;
use crate::files::Root;

/// Reports every entry under the bundle that is not a folder, a regular file, or a link to one
/// of them inside the bundle.
pub fn check(root: &Root, dir: &Path, report: &mut Report) {
    for entry in walkdir::WalkDir::new(dir)
        .sort_by_file_name()
        .into_iter()
        .filter_map(Result::ok)
        .filter(|entry| !entry.file_type().is_dir())
    {
        if let Err(err) = root.check(entry.path())
            && err.is_refusal()
        {
            let location = entry
                .path()
                .strip_prefix(dir)
                .unwrap_or(entry.path())
                .to_string_lossy()
                .into_owned();
            report.error(location, err.to_string());
        }
    }
}
