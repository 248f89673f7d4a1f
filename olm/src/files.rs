//! Reading the files of a bundle, a folder of manifests or a file a flag names, without trusting
//! what is there: only regular files are read, each up to [`MAX_FILE_SIZE`].
//!
//! A symbolic link is resolved (the operating system's `realpath`, which opens nothing) and its
//! target checked before anything is opened: a target outside the folder being read, or one that
//! is not a regular file (a named pipe, a socket, a device such as `/dev/zero`), is refused with
//! what it is, so that a pipe nobody writes to cannot hang a command and a device cannot feed it
//! without end. The file is then opened without blocking and checked again through the open
//! handle, which closes the gap between the check and the open (a file swapped for a pipe in
//! between is refused, not waited on), and read through a limit, so a file that grows while it
//! is read is cut off at the limit and refused.

use std::fmt;
use std::fs::{File, Metadata};
use std::io::{self, Read as _};
use std::path::{Path, PathBuf};

/// The largest file read: 16 MiB. operator-framework has no per-file limit, only one on the
/// whole bundle (1 MiB gzipped, `bundle validate`'s size check), so this is a generous bound
/// instead: ten times what the API server stores of one object (etcd's 1.5 MiB request limit),
/// so no manifest that could be installed comes near it, and YAML of that size compresses far
/// beyond the bundle limit anyway.
pub const MAX_FILE_SIZE: u64 = 16 << 20;

/// What a path is, when it is not a regular file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Special {
    NamedPipe,
    Socket,
    CharacterDevice,
    BlockDevice,
    Directory,
    Other,
}

impl Special {
    fn of(meta: &Metadata) -> Option<Special> {
        let kind = meta.file_type();
        if kind.is_file() {
            return None;
        }
        if kind.is_dir() {
            return Some(Special::Directory);
        }
        #[cfg(unix)]
        {
            use std::os::unix::fs::FileTypeExt as _;
            if kind.is_fifo() {
                return Some(Special::NamedPipe);
            }
            if kind.is_socket() {
                return Some(Special::Socket);
            }
            if kind.is_char_device() {
                return Some(Special::CharacterDevice);
            }
            if kind.is_block_device() {
                return Some(Special::BlockDevice);
            }
        }
        Some(Special::Other)
    }

    fn describe(self) -> &'static str {
        match self {
            Special::NamedPipe => "a named pipe (FIFO)",
            Special::Socket => "a socket",
            Special::CharacterDevice => "a character device",
            Special::BlockDevice => "a block device",
            Special::Directory => "a directory",
            Special::Other => "not a regular file",
        }
    }
}

/// Why a file was not read.
#[derive(Debug)]
pub enum Unreadable {
    /// A symbolic link (or a path through one) whose target is outside the folder being read
    /// (named by the noun of its [`Root`]: `bundle`, `folder`).
    Outside(PathBuf, &'static str),
    /// A symbolic link that leads nowhere: a loop, or a target that does not exist.
    Broken(io::Error),
    /// Not a regular file; `via` is the link's target when the path is a symbolic link.
    Special(Special, Option<PathBuf>),
    /// Larger than [`MAX_FILE_SIZE`] (the size, or the limit plus one when it grew while read).
    TooLarge(u64),
    /// The file could not be read, or is not UTF-8 where text is wanted.
    Io(io::Error),
}

impl Unreadable {
    /// The refusals of this module, as opposed to the errors the operating system reports on
    /// an ordinary file (a missing file, a permission denied).
    pub fn is_refusal(&self) -> bool {
        !matches!(
            self,
            Unreadable::Io(_) | Unreadable::Special(Special::Directory, _)
        )
    }

    /// The file does not exist (a link to nothing is [`Unreadable::Broken`]).
    pub fn is_not_found(&self) -> bool {
        matches!(self, Unreadable::Io(err) if err.kind() == io::ErrorKind::NotFound)
    }
}

impl fmt::Display for Unreadable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Unreadable::Outside(target, noun) => write!(
                f,
                "a symbolic link out of the {noun} (to {}): not followed, only files inside the {noun} are read",
                target.display()
            ),
            Unreadable::Broken(err) => write!(
                f,
                "a symbolic link that cannot be followed (a loop, or a link to nothing): {err}"
            ),
            Unreadable::Special(kind, None) => write!(
                f,
                "{}, not a regular file: only regular files are read",
                kind.describe()
            ),
            Unreadable::Special(kind, Some(target)) => write!(
                f,
                "a symbolic link to {} ({}), not a regular file: only regular files are read",
                kind.describe(),
                target.display()
            ),
            Unreadable::TooLarge(size) => write!(
                f,
                "{size} bytes, more than the {} MiB a manifest may have: not read",
                MAX_FILE_SIZE >> 20
            ),
            Unreadable::Io(err) => write!(f, "{err}"),
        }
    }
}

impl std::error::Error for Unreadable {}

/// A folder whose files are read: its canonical path, which links may not leave, and what it
/// is called in messages.
#[derive(Debug, Clone)]
pub struct Root {
    path: PathBuf,
    noun: &'static str,
}

impl Root {
    /// `dir` as the folder files are read from (as given when it cannot be resolved: then every
    /// path under it fails to resolve as well, and is reported so).
    pub fn new(dir: &Path, noun: &'static str) -> Root {
        Root {
            path: dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf()),
            noun,
        }
    }

    /// What `path` (inside this folder, or a link from it) is, without opening it: its size when
    /// it is a regular file the readers of this module read.
    pub fn check(&self, path: &Path) -> Result<u64, Unreadable> {
        check(Some(self), path)
    }

    /// The bytes of the regular file at `path`, which must not lead out of this folder.
    pub fn read(&self, path: &Path) -> Result<Vec<u8>, Unreadable> {
        read(Some(self), path)
    }

    /// [`Root::read`], as UTF-8 text.
    pub fn read_text(&self, path: &Path) -> Result<String, Unreadable> {
        text(self.read(path)?)
    }
}

/// The bytes of a file a user named (a flag's value): links are followed wherever they lead,
/// but only a regular file of at most [`MAX_FILE_SIZE`] is read.
pub fn read_named(path: &Path) -> Result<Vec<u8>, Unreadable> {
    read(None, path)
}

/// [`read_named`], as UTF-8 text.
pub fn read_named_text(path: &Path) -> Result<String, Unreadable> {
    text(read_named(path)?)
}

fn text(bytes: Vec<u8>) -> Result<String, Unreadable> {
    String::from_utf8(bytes)
        .map_err(|e| Unreadable::Io(io::Error::new(io::ErrorKind::InvalidData, e)))
}

fn check(root: Option<&Root>, path: &Path) -> Result<u64, Unreadable> {
    let own = std::fs::symlink_metadata(path).map_err(Unreadable::Io)?;
    let link = own.file_type().is_symlink();
    // Resolving the whole path catches links in its folders too; realpath opens nothing.
    let target = match path.canonicalize() {
        Ok(target) => target,
        Err(err) if link => return Err(Unreadable::Broken(err)),
        Err(err) => return Err(Unreadable::Io(err)),
    };
    if let Some(root) = root
        && !target.starts_with(&root.path)
    {
        return Err(Unreadable::Outside(target, root.noun));
    }
    let meta = if link {
        std::fs::metadata(&target).map_err(Unreadable::Broken)?
    } else {
        own
    };
    if let Some(kind) = Special::of(&meta) {
        return Err(Unreadable::Special(kind, link.then_some(target)));
    }
    if meta.len() > MAX_FILE_SIZE {
        return Err(Unreadable::TooLarge(meta.len()));
    }
    Ok(meta.len())
}

fn read(root: Option<&Root>, path: &Path) -> Result<Vec<u8>, Unreadable> {
    check(root, path)?;
    let file = open_without_blocking(path).map_err(Unreadable::Io)?;
    // The path may have changed since it was checked: what was opened is what counts.
    let meta = file.metadata().map_err(Unreadable::Io)?;
    if let Some(kind) = Special::of(&meta) {
        return Err(Unreadable::Special(kind, None));
    }
    let mut bytes = Vec::with_capacity(meta.len().min(MAX_FILE_SIZE) as usize);
    file.take(MAX_FILE_SIZE + 1)
        .read_to_end(&mut bytes)
        .map_err(Unreadable::Io)?;
    if bytes.len() as u64 > MAX_FILE_SIZE {
        return Err(Unreadable::TooLarge(MAX_FILE_SIZE + 1));
    }
    Ok(bytes)
}

/// Opening a named pipe for reading waits for a writer; `O_NONBLOCK` returns at once instead
/// (and changes nothing for a regular file).
fn open_without_blocking(path: &Path) -> io::Result<File> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        options.custom_flags(libc::O_NONBLOCK);
    }
    options.open(path)
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    fn fifo(path: &Path) {
        let name = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a valid NUL-terminated path; mkfifo touches nothing else.
        assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o644) }, 0);
    }

    #[test]
    fn regular_files_are_read_and_nothing_else_is() {
        let dir = tempfile::tempdir().unwrap();
        let root = Root::new(dir.path(), "folder");
        std::fs::write(dir.path().join("a.yaml"), "kind: A\n").unwrap();
        assert_eq!(
            root.read_text(&dir.path().join("a.yaml")).unwrap(),
            "kind: A\n"
        );

        fifo(&dir.path().join("pipe.yaml"));
        let err = root.read(&dir.path().join("pipe.yaml")).unwrap_err();
        assert!(
            matches!(err, Unreadable::Special(Special::NamedPipe, None)),
            "{err}"
        );
        assert!(err.to_string().contains("a named pipe (FIFO)"), "{err}");

        std::os::unix::fs::symlink(dir.path().join("pipe.yaml"), dir.path().join("to-pipe"))
            .unwrap();
        let err = root.read(&dir.path().join("to-pipe")).unwrap_err();
        assert!(
            matches!(err, Unreadable::Special(Special::NamedPipe, Some(_))),
            "{err}"
        );

        std::os::unix::fs::symlink("/dev/zero", dir.path().join("zero.yaml")).unwrap();
        let err = root.read(&dir.path().join("zero.yaml")).unwrap_err();
        assert!(matches!(err, Unreadable::Outside(..)), "{err}");
        // Named by a flag, the device is still refused, for what it is.
        let err = read_named(&dir.path().join("zero.yaml")).unwrap_err();
        assert!(
            matches!(err, Unreadable::Special(Special::CharacterDevice, Some(_))),
            "{err}"
        );

        std::os::unix::fs::symlink("nowhere", dir.path().join("dangling.yaml")).unwrap();
        assert!(matches!(
            root.read(&dir.path().join("dangling.yaml")),
            Err(Unreadable::Broken(_))
        ));
        std::os::unix::fs::symlink("loop", dir.path().join("loop")).unwrap();
        assert!(matches!(
            root.read(&dir.path().join("loop")),
            Err(Unreadable::Broken(_))
        ));
        assert!(
            root.read(&dir.path().join("missing"))
                .unwrap_err()
                .is_not_found()
        );
        assert!(matches!(
            root.read(dir.path()),
            Err(Unreadable::Special(Special::Directory, None))
        ));
    }

    #[test]
    fn links_inside_the_folder_are_followed() {
        let dir = tempfile::tempdir().unwrap();
        let root = Root::new(dir.path(), "folder");
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        std::fs::write(dir.path().join("sub/a.yaml"), "kind: A\n").unwrap();
        std::os::unix::fs::symlink("sub/a.yaml", dir.path().join("link.yaml")).unwrap();
        assert_eq!(
            root.read_text(&dir.path().join("link.yaml")).unwrap(),
            "kind: A\n"
        );
        // A folder reached through a link out of the root is out of it too.
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("b.yaml"), "kind: B\n").unwrap();
        std::os::unix::fs::symlink(outside.path(), dir.path().join("out")).unwrap();
        assert!(matches!(
            root.read(&dir.path().join("out/b.yaml")),
            Err(Unreadable::Outside(..))
        ));
    }

    #[test]
    fn files_over_the_limit_are_refused_before_they_are_read() {
        let dir = tempfile::tempdir().unwrap();
        let root = Root::new(dir.path(), "folder");
        let big = dir.path().join("big.yaml");
        let file = File::create(&big).unwrap();
        // Sparse: the size is there without the bytes.
        file.set_len(MAX_FILE_SIZE + 1).unwrap();
        let err = root.read(&big).unwrap_err();
        assert!(
            matches!(err, Unreadable::TooLarge(n) if n == MAX_FILE_SIZE + 1),
            "{err}"
        );
        file.set_len(MAX_FILE_SIZE).unwrap();
        assert_eq!(root.read(&big).unwrap().len() as u64, MAX_FILE_SIZE);
    }
}
