//! `/api/first/<id>`: what the page needs for the first view of a run served as a v2 dataset, in
//! one answer (docs/SERVE.md). The server reads it from disk as the page would read it by byte
//! ranges (the manifest, then the latest partition's footers and non-text columns:
//! `remote::read_first`), and sends those pieces as a pack (`vantage_v2::pack`): the page then
//! opens the run without waiting on a request for each piece, one after another.

use std::io::{Read as _, Seek as _, SeekFrom};
use std::path::{Path, PathBuf};

use crate::load::formats::vantage_v2::pack::Recorder;
use crate::load::formats::vantage_v2::remote::{self, Piece, PieceError, PieceSource, Want};

/// A dataset's directory, read in pieces, as the page reads it through the server (no file
/// outside the directory, through any link).
struct DiskPieces {
    root: PathBuf,
}

impl DiskPieces {
    fn open(&self, path: &str) -> Result<std::fs::File, PieceError> {
        let real = super::dataset_file(&self.root, Path::new(path)).ok_or(PieceError::Missing)?;
        std::fs::File::open(real).map_err(|e| PieceError::Failed(format!("{path}: {e}")))
    }
}

impl PieceSource for DiskPieces {
    async fn whole(&self, path: &str) -> Result<Vec<u8>, PieceError> {
        let mut bytes = Vec::new();
        self.open(path)?.read_to_end(&mut bytes).map_err(|e| PieceError::Failed(format!("{path}: {e}")))?;
        Ok(bytes)
    }

    async fn piece(&self, path: &str, want: Want) -> Result<Piece, PieceError> {
        let mut file = self.open(path)?;
        let failed = |e: std::io::Error| PieceError::Failed(format!("{path}: {e}"));
        let file_len = file.metadata().map_err(failed)?.len();
        let (start, end) = match want {
            Want::Tail(n) => (file_len.saturating_sub(n), file_len),
            Want::Range(start, len) => (start.min(file_len), start.saturating_add(len).min(file_len)),
        };
        file.seek(SeekFrom::Start(start)).map_err(failed)?;
        let mut bytes = Vec::new();
        file.take(end - start).read_to_end(&mut bytes).map_err(failed)?;
        Ok(Piece { offset: start, bytes, file_len })
    }
}

/// The most a pack holds: a first view larger than this (a training step of hundreds of MB of
/// numbers) is read by the page in ranges, as from any host, and the server holds no copy of it.
pub const PACK_LIMIT: u64 = 32 << 20;

/// Why there is no pack.
#[derive(Debug)]
pub enum NoPack {
    /// The first view reads more than [`PACK_LIMIT`] bytes.
    TooLarge,
    /// It could not be read.
    Failed(String),
}

/// The pack of the first view of the dataset at `dir` (canonical), shown as `name`.
pub fn pack(dir: &Path, name: &str) -> Result<Vec<u8>, NoPack> {
    let recorder = Recorder::new(DiskPieces { root: dir.to_path_buf() }, PACK_LIMIT);
    match crate::load::pace::block_on(remote::read_first(&recorder, name)) {
        Ok(()) => Ok(recorder.pack()),
        Err(_) if recorder.over_limit() => Err(NoPack::TooLarge),
        Err(e) => Err(NoPack::Failed(e.to_string())),
    }
}
