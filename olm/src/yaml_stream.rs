//! How operator-framework's Go tools cut a manifest file into YAML documents, byte for byte:
//! apimachinery's `YAMLReader` (k8s.io/apimachinery/pkg/util/yaml), which reads lines through a
//! `bufio.Reader` of 4096 bytes and splits the stream at lines that start with `---`.
//!
//! What it hands on is what the Go decoders see, and it differs from a YAML parser's documents:
//! - a blank or comment-only stretch before the first `---` is a document of its own, which
//!   decodes to `null` (an object without a kind), and so is a `---` line right after the one
//!   that opens the stream;
//! - a line that starts with `---` followed by anything but spaces or a comment is an error;
//! - CRLF line ends become LF.
//!
//! operator-framework/api's bundle loader (`loadBundle`) decodes each manifest twice with the
//! same decoder: once as an untyped object, then — after rewinding the file but not the
//! decoder's buffer — as the ClusterServiceVersion or CustomResourceDefinition it says it is.
//! The second read therefore starts where the first stopped in the buffer: in a file of one
//! document it is that document again (the buffer is empty, the rewound file is read anew), but
//! in a file of several it is the rest of the buffer followed by the file from its start, which
//! [`LoaderReads`] reproduces so that such files are judged as the peer judges them.

use std::borrow::Cow;
use std::fmt;

/// Go's `bufio` default buffer size, which decides where a second read picks up.
const BUFFER: usize = 4096;

/// A document separator line with something after it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeparatorError(pub String);

impl fmt::Display for SeparatorError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid Yaml document separator: {}", self.0)
    }
}

impl std::error::Error for SeparatorError {}

/// One read of the decoder: the bytes of a document, or `None` at the end of the stream (which
/// the Go decoder reports as `EOF`).
pub type Chunk = Result<Option<Vec<u8>>, SeparatorError>;

/// The first document of a file, as a fresh decoder reads it (operator-registry's
/// `DecodeFile`, `GetMediaType`, the loader's search for the CSV).
pub fn first_chunk(data: &[u8]) -> Chunk {
    Decoder::new(data.into()).read()
}

/// Every document of a file, in order (a stream read to its end by one decoder).
pub fn chunks(data: &[u8]) -> Result<Vec<Vec<u8>>, SeparatorError> {
    let mut decoder = Decoder::new(data.into());
    let mut out = Vec::new();
    while let Some(chunk) = decoder.read()? {
        out.push(chunk);
    }
    Ok(out)
}

/// The two reads `loadBundle` makes of one manifest file.
pub struct LoaderReads<'a> {
    decoder: Decoder<'a>,
}

impl<'a> LoaderReads<'a> {
    /// The reads of a file's bytes, borrowed or owned.
    pub fn new(data: impl Into<Cow<'a, [u8]>>) -> Self {
        Self {
            decoder: Decoder::new(data.into()),
        }
    }

    /// The file's bytes.
    pub fn bytes(&self) -> &[u8] {
        &self.decoder.file
    }

    /// The document decoded as an untyped object.
    pub fn object(&mut self) -> Chunk {
        self.decoder.read()
    }

    /// The document decoded as the typed CSV or CRD, read after [`LoaderReads::object`] once the
    /// file has been rewound (`resetFile`), with the decoder's buffer as it was left.
    pub fn typed(&mut self) -> Chunk {
        self.decoder.file_offset = 0;
        self.decoder.read()
    }
}

/// A `YAMLReader` over a `LineReader` over a `bufio.Reader` over the file.
struct Decoder<'a> {
    file: Cow<'a, [u8]>,
    file_offset: usize,
    buf: Vec<u8>,
    /// Read and write positions in `buf`, as bufio's `r` and `w`.
    r: usize,
    w: usize,
    /// bufio's pending error: the file's end was reached by the last fill.
    eof: bool,
}

enum SliceEnd {
    Delimiter,
    BufferFull,
    Eof,
}

impl<'a> Decoder<'a> {
    fn new(file: Cow<'a, [u8]>) -> Self {
        Self {
            file,
            file_offset: 0,
            buf: vec![0; BUFFER],
            r: 0,
            w: 0,
            eof: false,
        }
    }

    /// bufio's `fill`: slide the unread bytes to the front, then one read of the file (which
    /// returns bytes, or nothing and `EOF`).
    fn fill(&mut self) {
        if self.r > 0 {
            self.buf.copy_within(self.r..self.w, 0);
            self.w -= self.r;
            self.r = 0;
        }
        let offset = self.file_offset.min(self.file.len());
        let rest = &self.file[offset..];
        let n = rest.len().min(BUFFER - self.w);
        if n == 0 {
            self.eof = true;
            return;
        }
        self.buf[self.w..self.w + n].copy_from_slice(&rest[..n]);
        self.w += n;
        self.file_offset += n;
    }

    /// bufio's `ReadSlice('\n')`.
    fn read_slice(&mut self) -> (Vec<u8>, SliceEnd) {
        let mut searched = 0;
        loop {
            if let Some(i) = self.buf[self.r + searched..self.w]
                .iter()
                .position(|&b| b == b'\n')
            {
                let end = self.r + searched + i + 1;
                let line = self.buf[self.r..end].to_vec();
                self.r = end;
                return (line, SliceEnd::Delimiter);
            }
            if self.eof {
                // The pending error is returned once, then cleared (bufio's readErr).
                self.eof = false;
                let line = self.buf[self.r..self.w].to_vec();
                self.r = self.w;
                return (line, SliceEnd::Eof);
            }
            if self.w - self.r >= BUFFER {
                self.r = self.w;
                return (self.buf.clone(), SliceEnd::BufferFull);
            }
            searched = self.w - self.r;
            self.fill();
        }
    }

    /// bufio's `ReadLine`: the line without its `\n` or `\r\n`, whether it is cut short by a
    /// full buffer, and whether the end of the file was reached instead of a line.
    fn read_line(&mut self) -> (Vec<u8>, bool, bool) {
        let (mut line, end) = self.read_slice();
        match end {
            SliceEnd::BufferFull => {
                // A "\r\n" across the buffer's end: the '\r' is left for the next read.
                if line.last() == Some(&b'\r') {
                    self.r -= 1;
                    line.pop();
                }
                (line, true, false)
            }
            _ if line.is_empty() => (line, false, matches!(end, SliceEnd::Eof)),
            _ => {
                if line.last() == Some(&b'\n') {
                    line.pop();
                    if line.last() == Some(&b'\r') {
                        line.pop();
                    }
                }
                (line, false, false)
            }
        }
    }

    /// apimachinery's `LineReader.Read`: a whole line, with a `\n` put back, and whether the
    /// file's end came with it.
    fn read_full_line(&mut self) -> (Vec<u8>, bool) {
        let mut out = Vec::new();
        loop {
            let (line, prefix, eof) = self.read_line();
            out.extend_from_slice(&line);
            if !prefix || eof {
                out.push(b'\n');
                return (out, eof);
            }
        }
    }

    /// apimachinery's `YAMLReader.Read`: the lines up to the next separator.
    fn read(&mut self) -> Chunk {
        let mut document = Vec::new();
        loop {
            let (line, eof) = self.read_full_line();
            if let Some(after) = line.strip_prefix(b"---") {
                let trimmed = String::from_utf8_lossy(after);
                let trimmed = trimmed.trim();
                if !trimmed.is_empty() && !trimmed.starts_with('#') {
                    return Err(SeparatorError(trimmed.to_string()));
                }
                if !document.is_empty() {
                    return Ok(Some(document));
                }
                if eof {
                    return Ok(None);
                }
            }
            if eof {
                return Ok((!document.is_empty()).then_some(document));
            }
            document.extend_from_slice(&line);
        }
    }
}

/// Whether a document holds anything but blank lines, comments and its opening separator (a
/// YAML parser would find no value in it; the Go decoders find `null`).
pub fn has_content(chunk: &[u8]) -> bool {
    String::from_utf8_lossy(chunk).lines().any(|line| {
        let line = line.trim();
        !line.is_empty() && !line.starts_with('#') && line != "---"
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(chunk: Chunk) -> Option<String> {
        chunk
            .unwrap()
            .map(|bytes| String::from_utf8(bytes).unwrap())
    }

    #[test]
    fn documents_are_cut_at_separator_lines() {
        let all = chunks(b"a: 1\n--- # next\nb: 2\r\n---\n").unwrap();
        assert_eq!(all, vec![b"a: 1\n".to_vec(), b"b: 2\n".to_vec()]);
        assert_eq!(text(first_chunk(b"a: 1")), Some("a: 1\n".into()));
        assert_eq!(text(first_chunk(b"")), None);
        // A separator that opens the stream stays with the document it opens...
        assert_eq!(
            text(first_chunk(b"---\na: 1\n")),
            Some("---\na: 1\n".into())
        );
        // ...so a second one right after it ends a document of nothing (null to the decoders).
        assert_eq!(
            chunks(b"---\n---\na: 1\n").unwrap(),
            vec![b"---\n".to_vec(), b"a: 1\n".to_vec()]
        );
        assert_eq!(text(first_chunk(b"---\n")), Some("---\n".into()));
        // What comes before the first separator is the first document, if only a comment.
        assert_eq!(text(first_chunk(b"# c\n---\na: 1\n")), Some("# c\n".into()));
        assert_eq!(text(first_chunk(b"\n---\na: 1\n")), Some("\n".into()));
        assert_eq!(
            first_chunk(b"a: 1\n---- \n").unwrap_err(),
            SeparatorError("-".into())
        );
        assert!(!has_content(b"---\n# only a comment\n  \n"));
        assert!(has_content(b"# c\na: 1\n"));
    }

    #[test]
    fn the_typed_read_of_a_single_document_is_that_document_again() {
        let file = b"kind: A\nspec: {}\n";
        let mut reads = LoaderReads::new(&file[..]);
        assert_eq!(text(reads.object()), Some("kind: A\nspec: {}\n".into()));
        assert_eq!(text(reads.typed()), Some("kind: A\nspec: {}\n".into()));
        // Without a final line end, and with leading separators.
        let mut reads = LoaderReads::new(b"---\nkind: A");
        assert_eq!(text(reads.object()), Some("---\nkind: A\n".into()));
        assert_eq!(text(reads.typed()), Some("---\nkind: A\n".into()));
    }

    #[test]
    fn the_typed_read_of_several_documents_continues_in_the_buffer() {
        // A small file sits whole in the buffer: the rest of it, then the file from its start.
        let mut reads = LoaderReads::new(b"kind: A\n---\nkind: B\n");
        assert_eq!(text(reads.object()), Some("kind: A\n".into()));
        assert_eq!(text(reads.typed()), Some("kind: B\nkind: A\n".into()));
        // In a larger one the buffer ends inside a line, which the rewound file completes.
        let mut file = b"kind: A\n---\n".to_vec();
        file.extend(format!("pad: {}\n", "x".repeat(5000)).bytes());
        let mut reads = LoaderReads::new(&file[..]);
        assert_eq!(text(reads.object()), Some("kind: A\n".into()));
        let typed = text(reads.typed()).unwrap();
        let cut = BUFFER - "kind: A\n---\n".len();
        assert_eq!(
            typed,
            format!("pad: {}kind: A\n", "x".repeat(cut - "pad: ".len()))
        );
    }

    #[test]
    fn long_lines_and_crlf_across_the_buffer_are_whole_lines() {
        let long = format!("a: {}\r\nb: 1\r\n", "y".repeat(BUFFER * 2 + 7));
        let all = chunks(long.as_bytes()).unwrap();
        assert_eq!(
            all,
            vec![format!("a: {}\nb: 1\n", "y".repeat(BUFFER * 2 + 7)).into_bytes()]
        );
        // '\r' as the buffer's last byte, '\n' as the next one's first.
        let mut split = "z".repeat(BUFFER - 1);
        split.push_str("\r\nb: 2\n");
        assert_eq!(
            chunks(split.as_bytes()).unwrap(),
            vec![format!("{}\nb: 2\n", "z".repeat(BUFFER - 1)).into_bytes()]
        );
    }
}
