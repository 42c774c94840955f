//! The pieces of a dataset's files that a first view reads, in one answer: `vantage serve` reads
//! the manifest and the latest partition's footers and non-text columns for the page
//! ([`super::remote::read_first`] through a [`Recorder`]) and sends them as one pack
//! (`/api/first/<id>`, docs/SERVE.md); the page opens the dataset through a [`Packed`] source,
//! which hands those pieces over without a request, and asks the server for the rest. What the
//! page reads and what the server packed are found by the same code, so they are the same
//! pieces; a piece the pack lacks is simply fetched.
//!
//! A pack is one line of JSON, then the pieces' bytes one after another:
//! `{"vantage_pack":1,"pieces":[{"path":"manifest.json","offset":0,"len":812,"file_len":812},…]}\n`.

use std::cell::RefCell;
use std::collections::HashMap;

use super::remote::{Piece, PieceError, PieceSource, Want};

/// The pack's version, its header's `vantage_pack`.
const VERSION: u32 = 1;

#[derive(serde::Serialize, serde::Deserialize)]
struct Header {
    vantage_pack: u32,
    pieces: Vec<Entry>,
}

#[derive(serde::Serialize, serde::Deserialize)]
struct Entry {
    path: String,
    offset: u64,
    len: u64,
    file_len: u64,
}

/// A source whose every piece read is kept, to be sent as a pack: at most `limit` bytes of them
/// (a read past it fails, and [`Recorder::over_limit`] says why).
pub struct Recorder<S> {
    inner: S,
    read: RefCell<Vec<(String, Piece)>>,
    limit: u64,
    held: std::cell::Cell<u64>,
    over: std::cell::Cell<bool>,
}

impl<S: PieceSource> Recorder<S> {
    /// Records what is read from `inner`, up to `limit` bytes.
    pub const fn new(inner: S, limit: u64) -> Self {
        Self {
            inner,
            read: RefCell::new(Vec::new()),
            limit,
            held: std::cell::Cell::new(0),
            over: std::cell::Cell::new(false),
        }
    }

    /// Whether a read would have taken the pieces past the limit (what was read is not a pack).
    pub fn over_limit(&self) -> bool {
        self.over.get()
    }

    /// Keeps `piece` of `path`, or fails past the limit.
    fn keep(&self, path: &str, piece: Piece) -> Result<(), PieceError> {
        let held = self.held.get() + piece.bytes.len() as u64;
        if held > self.limit {
            self.over.set(true);
            return Err(PieceError::Failed(format!("more than {} bytes to read", self.limit)));
        }
        self.held.set(held);
        self.read.borrow_mut().push((path.to_owned(), piece));
        Ok(())
    }

    /// The pieces read, as a pack.
    pub fn pack(self) -> Vec<u8> {
        let read = self.read.into_inner();
        let pieces = read
            .iter()
            .map(|(path, p)| Entry {
                path: path.clone(),
                offset: p.offset,
                len: p.bytes.len() as u64,
                file_len: p.file_len,
            })
            .collect();
        let mut out = serde_json::to_vec(&Header { vantage_pack: VERSION, pieces }).unwrap_or_default();
        out.push(b'\n');
        for (_, piece) in &read {
            out.extend_from_slice(&piece.bytes);
        }
        out
    }
}

impl<S: PieceSource> PieceSource for Recorder<S> {
    async fn whole(&self, path: &str) -> Result<Vec<u8>, PieceError> {
        let bytes = self.inner.whole(path).await?;
        self.keep(path, Piece { offset: 0, file_len: bytes.len() as u64, bytes: bytes.clone() })?;
        Ok(bytes)
    }

    async fn piece(&self, path: &str, want: Want) -> Result<Piece, PieceError> {
        let piece = self.inner.piece(path, want).await?;
        self.keep(path, Piece { offset: piece.offset, bytes: piece.bytes.clone(), file_len: piece.file_len })?;
        Ok(piece)
    }

    fn tail(&self) -> u64 {
        self.inner.tail()
    }
}

/// A source that answers from a pack where it holds what is asked for, and from `inner` otherwise.
pub struct Packed<S> {
    inner: S,
    held: RefCell<HashMap<String, Vec<Piece>>>,
}

impl<S> Packed<S> {
    /// The pack `bytes` in front of `inner`; an error when they are not a pack.
    pub fn new(bytes: &[u8], inner: S) -> Result<Self, String> {
        let end = memchr::memchr(b'\n', bytes).ok_or("not a vantage pack: no header line")?;
        let header: Header =
            serde_json::from_slice(&bytes[..end]).map_err(|e| format!("not a vantage pack: its header: {e}"))?;
        if header.vantage_pack != VERSION {
            return Err(format!("a vantage pack of version {}, which this page does not read", header.vantage_pack));
        }
        let mut held: HashMap<String, Vec<Piece>> = HashMap::new();
        let mut at = end + 1;
        for entry in header.pieces {
            let len = usize::try_from(entry.len).map_err(|_e| "a piece too large")?;
            let body = at.checked_add(len).and_then(|to| bytes.get(at..to)).ok_or("a vantage pack cut short")?;
            at += len;
            if entry.offset.checked_add(entry.len).is_none_or(|to| to > entry.file_len) {
                return Err(format!("a vantage pack's piece of {} past the file's end", entry.path));
            }
            let piece = Piece { offset: entry.offset, bytes: body.to_vec(), file_len: entry.file_len };
            held.entry(entry.path).or_default().push(piece);
        }
        Ok(Self { inner, held: RefCell::new(held) })
    }

    /// The source behind the pack.
    pub const fn inner(&self) -> &S {
        &self.inner
    }

    /// How many pieces are held and not asked for yet.
    pub fn unused(&self) -> usize {
        self.held.borrow().values().map(Vec::len).sum()
    }

    /// Takes a held piece of `path` that `covers` says holds what is wanted.
    fn take(&self, path: &str, covers: impl Fn(&Piece) -> bool) -> Option<Piece> {
        let mut held = self.held.borrow_mut();
        let pieces = held.get_mut(path)?;
        let i = pieces.iter().position(covers)?;
        Some(pieces.swap_remove(i))
    }
}

impl<S: PieceSource> PieceSource for Packed<S> {
    async fn whole(&self, path: &str) -> Result<Vec<u8>, PieceError> {
        match self.take(path, |p| p.offset == 0 && p.bytes.len() as u64 == p.file_len) {
            Some(piece) => Ok(piece.bytes),
            None => self.inner.whole(path).await,
        }
    }

    async fn piece(&self, path: &str, want: Want) -> Result<Piece, PieceError> {
        let covers = |p: &Piece| {
            let end = p.offset + p.bytes.len() as u64;
            match want {
                Want::Tail(n) => end == p.file_len && p.offset <= p.file_len.saturating_sub(n),
                Want::Range(start, len) => p.offset <= start && start.saturating_add(len) <= end,
            }
        };
        match self.take(path, covers) {
            Some(piece) => Ok(piece),
            None => self.inner.piece(path, want).await,
        }
    }

    fn tail(&self) -> u64 {
        self.inner.tail()
    }
}
