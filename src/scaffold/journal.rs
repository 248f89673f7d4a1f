//! The journal: what [`super::apply`] is doing, on disk, so that a command killed in the middle
//! (SIGKILL, a crash) can be undone by the next one.
//!
//! `.operator-rs.journal`, at the project root, exists only while a command writes. It lists the
//! directories the command creates and, for each file, its temporary file and the backup of the
//! original (a hard link to it, or a copy). It is written before anything else, and written again
//! as `committed` once every file is in place. The next command, holding the project lock,
//! [`recover`]s: a journal still `writing` is rolled back (see [`Journal::roll_back`]); a
//! `committed` one only has its backups removed. Either way the journal goes, and one line says
//! what was done.
//!
//! The format is line-based text, written to a temporary file and renamed into place: a journal
//! is whole or absent. Paths are relative to the project root when under it (so a project moved
//! after a crash still recovers) and written byte for byte, with `%XX` for anything outside
//! printable ASCII, spaces and `%` itself.

use std::fs;
use std::io::{self, ErrorKind};
use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result, bail};

use super::fault::{self, Step};

/// The journal's file name, at the project root.
pub const FILE: &str = ".operator-rs.journal";
/// Where the journal is written before it is renamed into place.
const TEMP_FILE: &str = ".operator-rs.journal.tmp";
const HEADER: &str = "operator-rs journal 1";

/// One file of a commit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Entry {
    /// The file written: the path planned, or the file a symbolic link there points to.
    pub target: PathBuf,
    /// The new contents, staged next to the target.
    pub temp: PathBuf,
    /// The original, kept next to it until the commit is complete; None: there was no original.
    pub backup: Option<PathBuf>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Journal {
    pub root: PathBuf,
    pub pid: u32,
    /// The command line, for the message of the command that recovers.
    pub command: String,
    pub committed: bool,
    /// Directories the commit creates, outermost first.
    pub dirs: Vec<PathBuf>,
    pub files: Vec<Entry>,
    /// How many times this journal was saved (for fault injection).
    saves: usize,
}

impl Journal {
    pub fn new(root: &Path) -> Self {
        // args_os: the command line may hold bytes that are not UTF-8.
        let command = std::env::args_os()
            .skip(1)
            .fold(String::from("operator-rs"), |line, arg| {
                line + " " + &arg.to_string_lossy()
            });
        Self {
            root: root.to_path_buf(),
            pid: std::process::id(),
            command,
            committed: false,
            dirs: Vec::new(),
            files: Vec::new(),
            saves: 0,
        }
    }

    fn path(root: &Path) -> PathBuf {
        root.join(FILE)
    }

    /// Writes the journal whole: to a temporary file first, then renamed over the journal.
    pub fn save(&mut self) -> Result<()> {
        self.saves += 1;
        let path = Self::path(&self.root);
        let temp = self.root.join(TEMP_FILE);
        let rel = |p: &Path| encode(p.strip_prefix(&self.root).unwrap_or(p));
        let mut text = format!(
            "{HEADER}\npid {}\ncommand {}\nstate {}\n",
            self.pid,
            encode(Path::new(&self.command)),
            if self.committed {
                "committed"
            } else {
                "writing"
            }
        );
        for dir in &self.dirs {
            text += &format!("dir {}\n", rel(dir));
        }
        for e in &self.files {
            let backup = e.backup.as_deref().map_or("-".to_string(), rel);
            text += &format!("file {} {} {backup}\n", rel(&e.target), rel(&e.temp));
        }
        let written = fault::fail(Step::Journal, self.saves)
            .and_then(|()| fs::write(&temp, text))
            .and_then(|()| fs::rename(&temp, &path));
        if let Err(err) = written {
            let _ = fs::remove_file(&temp);
            return Err(err).with_context(|| format!("writing {}", path.display()));
        }
        fault::after(Step::Journal, self.saves);
        Ok(())
    }

    /// The journal left in `root`, if any.
    pub fn load(root: &Path) -> Result<Option<Journal>> {
        let path = Self::path(root);
        let text = match fs::read_to_string(&path) {
            Ok(text) => text,
            Err(err) if err.kind() == ErrorKind::NotFound => return Ok(None),
            Err(err) => return Err(err).with_context(|| format!("reading {}", path.display())),
        };
        parse(root, &text).map(Some).with_context(|| {
            format!(
                "{} is damaged; restore the project from version control and delete the file",
                path.display()
            )
        })
    }

    /// Removes the journal (the end of a commit or of a recovery).
    pub fn remove(&self) -> io::Result<()> {
        let _ = fs::remove_file(self.root.join(TEMP_FILE));
        match fs::remove_file(Self::path(&self.root)) {
            Err(err) if err.kind() != ErrorKind::NotFound => Err(err),
            _ => Ok(()),
        }
    }

    /// Undoes a commit that did not complete, from whatever point it reached, and removes the
    /// journal. For each file, in the order the commit takes its steps (write the temporary file,
    /// link the backup; then, for all files, rename):
    /// - a temporary file still there was not renamed: it is removed, and so is the backup (a
    ///   link to the untouched original);
    /// - otherwise, a backup is renamed back over the target (the original returns, same inode,
    ///   same permissions), and a target that had no original is removed.
    ///
    /// Then the directories the commit created are removed, innermost first, when empty.
    /// Returns the first error; the journal stays then, for the next command to try again.
    pub fn roll_back(&self) -> io::Result<()> {
        let mut first = None;
        let mut note = |r: io::Result<()>| match r {
            Err(err) if err.kind() != ErrorKind::NotFound => {
                first.get_or_insert(err);
            }
            _ => {}
        };
        for e in self.files.iter().rev() {
            if fs::symlink_metadata(&e.temp).is_ok() {
                note(fs::remove_file(&e.temp));
                if let Some(backup) = &e.backup {
                    note(fs::remove_file(backup));
                }
            } else if let Some(backup) = &e.backup {
                note(fs::rename(backup, &e.target));
                // A file to be removed that was not removed yet is the same file as its backup
                // (a hard link), and renaming a link over itself does nothing: drop the backup.
                if fs::symlink_metadata(backup).is_ok() {
                    note(fs::remove_file(backup));
                }
            } else {
                note(fs::remove_file(&e.target));
            }
        }
        for dir in self.dirs.iter().rev() {
            // Best effort: a directory that is not empty holds something not ours.
            let _ = fs::remove_dir(dir);
        }
        match first {
            Some(err) => Err(err),
            None => self.remove(),
        }
    }

    /// After a complete commit: removes the backups (and any temporary file), then the journal.
    pub fn clean_up(&self) -> io::Result<()> {
        for (i, e) in self.files.iter().enumerate() {
            for file in e.backup.iter().chain([&e.temp]) {
                match fs::remove_file(file) {
                    Err(err) if err.kind() != ErrorKind::NotFound => return Err(err),
                    _ => {}
                }
            }
            fault::after(Step::Cleanup, i + 1);
        }
        self.remove()
    }
}

/// Finishes or undoes the command that left a journal in `root`, if one did, and says what was
/// done. The caller holds the project lock, so that command is no longer running.
pub fn recover(root: &Path) -> Result<Option<String>> {
    let Some(journal) = Journal::load(root)? else {
        // A journal being written when its command died.
        let _ = fs::remove_file(root.join(TEMP_FILE));
        return Ok(None);
    };
    let who = format!(
        "{:?} (pid {}) was interrupted",
        journal.command, journal.pid
    );
    if journal.committed {
        journal
            .clean_up()
            .with_context(|| format!("{who} after writing its files; removing its backups"))?;
        Ok(Some(format!(
            "{who} after writing every file; its backups were removed and the command is complete"
        )))
    } else {
        journal
            .roll_back()
            .with_context(|| format!("{who} while writing; undoing it"))?;
        Ok(Some(format!(
            "{who} while writing; its changes were undone and the project is as it was before it"
        )))
    }
}

fn parse(root: &Path, text: &str) -> Result<Journal> {
    let mut lines = text.lines();
    if lines.next() != Some(HEADER) {
        bail!("not an operator-rs journal");
    }
    let mut journal = Journal {
        root: root.to_path_buf(),
        pid: 0,
        command: String::new(),
        committed: false,
        dirs: Vec::new(),
        files: Vec::new(),
        saves: 0,
    };
    let path = |field: &str| -> Result<PathBuf> { Ok(root.join(decode(field)?)) };
    for line in lines {
        let fields: Vec<&str> = line.split(' ').collect();
        match fields[..] {
            ["pid", pid] => journal.pid = pid.parse()?,
            ["command", command] => {
                journal.command = decode(command)?.to_string_lossy().into_owned();
            }
            ["state", "writing"] => journal.committed = false,
            ["state", "committed"] => journal.committed = true,
            ["dir", dir] => journal.dirs.push(path(dir)?),
            ["file", target, temp, backup] => journal.files.push(Entry {
                target: path(target)?,
                temp: path(temp)?,
                backup: if backup == "-" {
                    None
                } else {
                    Some(path(backup)?)
                },
            }),
            _ => bail!("unexpected line {line:?}"),
        }
    }
    Ok(journal)
}

fn encode(path: &Path) -> String {
    let bytes = path_bytes(path);
    let mut out = String::with_capacity(bytes.len());
    for &b in bytes.iter() {
        if b.is_ascii_graphic() && b != b'%' {
            out.push(b as char);
        } else {
            out += &format!("%{b:02X}");
        }
    }
    if out.is_empty() {
        out.push('.');
    }
    out
}

fn decode(field: &str) -> Result<PathBuf> {
    let mut bytes = Vec::with_capacity(field.len());
    let mut rest = field.as_bytes();
    while let Some((&b, tail)) = rest.split_first() {
        if b == b'%' {
            let hex = tail.get(..2).context("truncated escape")?;
            bytes.push(u8::from_str_radix(std::str::from_utf8(hex)?, 16)?);
            rest = &tail[2..];
        } else {
            bytes.push(b);
            rest = tail;
        }
    }
    Ok(path_from_bytes(bytes))
}

#[cfg(unix)]
fn path_bytes(path: &Path) -> std::borrow::Cow<'_, [u8]> {
    use std::os::unix::ffi::OsStrExt as _;
    path.as_os_str().as_bytes().into()
}

#[cfg(unix)]
fn path_from_bytes(bytes: Vec<u8>) -> PathBuf {
    use std::os::unix::ffi::OsStringExt as _;
    std::ffi::OsString::from_vec(bytes).into()
}

#[cfg(not(unix))]
fn path_bytes(path: &Path) -> std::borrow::Cow<'_, [u8]> {
    path.to_string_lossy().into_owned().into_bytes().into()
}

#[cfg(not(unix))]
fn path_from_bytes(bytes: Vec<u8>) -> PathBuf {
    String::from_utf8_lossy(&bytes).into_owned().into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_journal_reads_back_as_written() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let mut journal = Journal::new(root);
        journal.command = "operator-rs create api --kind 'a b%\n'".into();
        journal.dirs = vec![root.join("new dir"), root.join("new dir/ü")];
        journal.files = vec![
            Entry {
                target: root.join("new dir/ü/x.rs"),
                temp: root.join("new dir/ü/.x.rs.tmp"),
                backup: None,
            },
            Entry {
                target: PathBuf::from("/elsewhere/PROJECT"),
                temp: PathBuf::from("/elsewhere/.PROJECT.tmp"),
                backup: Some(PathBuf::from("/elsewhere/.PROJECT.orig")),
            },
        ];
        journal.committed = true;
        journal.save().unwrap();
        let loaded = Journal::load(root).unwrap().unwrap();
        assert_eq!(loaded.command, journal.command);
        assert_eq!(loaded.dirs, journal.dirs);
        assert_eq!(loaded.files, journal.files);
        assert!(loaded.committed);
        assert_eq!(
            fs::read_dir(root).unwrap().count(),
            1,
            "only the journal is left"
        );
        journal.remove().unwrap();
        assert!(Journal::load(root).unwrap().is_none());
    }

    #[test]
    fn a_damaged_journal_is_an_error_that_names_it() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join(FILE), "operator-rs journal 1\nfile x\n").unwrap();
        let err = format!("{:#}", recover(dir.path()).unwrap_err());
        assert!(err.contains(FILE) && err.contains("damaged"), "{err}");
    }
}
