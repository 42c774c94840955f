//! Opening a v2 dataset from somewhere that hands out byte ranges of its files: the web build's
//! `?url=…/run/` (HTTP Range requests), a folder dropped on the page (the browser's `File`
//! objects, sliced), or in tests a directory. The manifest is read first; then, for each file
//! of the partitions in the chosen training steps (by default the latest that fit in
//! [`super::manifest::DEFAULT_WINDOW`]), its footer and the chunks of every column but the texts. Texts are read when
//! shown: [`RemoteTexts`] answers with a placeholder and lists what is wanted, and
//! [`fetch_wanted`] reads those text columns' chunks. A source that cannot read parts of a file
//! (a server that ignores Range) hands the whole file over, and then everything, texts too, is
//! read from it.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use super::manifest::{MANIFEST, Manifest, Partition};
use super::read::{DatasetReader, FileBytes, PartBytes, TAIL, TEXT_COLUMNS};
use crate::load::parquet_file::{Column, ParquetMeta};
use crate::load::{LoadError, LoadReport};
use crate::model::Run;

/// What a text still being read shows.
pub const PLACEHOLDER: &str = "…";

/// Which bytes of a file to read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Want {
    /// The last `n` bytes (or the whole file when it is shorter).
    Tail(u64),
    /// `len` bytes from `start`.
    Range(u64, u64),
}

/// Bytes read from a file: at least the bytes wanted, maybe the whole file.
#[derive(Debug)]
pub struct Piece {
    /// Where they start in the file.
    pub offset: u64,
    /// The bytes.
    pub bytes: Vec<u8>,
    /// The file's length.
    pub file_len: u64,
}

/// Why a read gave nothing.
#[derive(Debug)]
pub enum PieceError {
    /// There is no such file (a part without tokens has no tokens file).
    Missing,
    /// Anything else, said for the user.
    Failed(String),
}

/// Where a dataset's files can be read piece by piece.
#[expect(async_fn_in_trait, reason = "used only with concrete sources, on the thread that made them")]
pub trait PieceSource {
    /// The whole of a small file (the manifest), by its path under the dataset's root.
    async fn whole(&self, path: &str) -> Result<Vec<u8>, PieceError>;
    /// The bytes `want` of the file at `path`, or more of it.
    async fn piece(&self, path: &str, want: Want) -> Result<Piece, PieceError>;
    /// How many bytes at a file's end to read first, for its footer: one request that holds
    /// every footer vantage writes, and small files whole ([`TAIL`]).
    fn tail(&self) -> u64 {
        TAIL
    }
}

impl std::fmt::Display for PieceError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Missing => f.write_str("not found"),
            Self::Failed(why) => f.write_str(why),
        }
    }
}

/// An HTTP `Content-Range: bytes A-B/LEN` as (A, LEN).
pub fn parse_content_range(header: &str) -> Option<(u64, u64)> {
    let rest = header.trim().strip_prefix("bytes ")?;
    let (span, len) = rest.split_once('/')?;
    let (start, _) = span.split_once('-')?;
    Some((start.trim().parse().ok()?, len.trim().parse().ok()?))
}

/// How long to wait before asking again for a file a server answered `status` with its
/// `Retry-After` header: only a 503 (`vantage serve` answers so while it converts a run, and when
/// its connections are all taken) that says a number of seconds, at most 10, and only while the
/// waits so far (`waited`, in seconds) and this one stay within [`RETRY_FOR`] seconds.
pub fn retry_after(status: u16, header: Option<&str>, waited: u32) -> Option<u32> {
    let seconds: u32 = header?.trim().parse().ok()?;
    (status == 503 && seconds <= 10 && waited + seconds.max(1) <= RETRY_FOR).then_some(seconds.max(1))
}

/// How long a dataset's requests keep waiting on a server that says to try again: as long as
/// `vantage serve` may take to convert a large run before its first pieces can be read.
pub const RETRY_FOR: u32 = 300;

fn failed(path: &str, err: &PieceError) -> LoadError {
    LoadError::from(std::io::Error::other(err.to_string())).with_path(path)
}

/// The manifest of the dataset at `source`.
pub async fn manifest(source: &impl PieceSource, name: &str) -> Result<Manifest, LoadError> {
    let bytes = source.whole(MANIFEST).await.map_err(|e| failed(&format!("{name}{MANIFEST}"), &e))?;
    let text = String::from_utf8_lossy(&bytes);
    Manifest::parse(&text)
        .map_err(|reason| LoadError::Incompatible { format: "vantage Parquet v2", reason }.with_path(name))
}

/// A partition's size for choosing what opens: its bytes as the manifest recorded them, or an
/// estimate from its rows.
fn size(p: &Partition) -> u64 {
    if p.bytes > 0 { p.bytes } else { (p.groups + p.trajectories + p.steps) * 256 + p.tokens * 16 }
}

/// Reads one file of a part: its footer, then the ranges `ranges` picks from it (all of it,
/// when the source hands the whole file over).
async fn read_file(
    source: &impl PieceSource,
    path: &str,
    ranges: fn(&ParquetMeta) -> Vec<(u64, u64)>,
) -> Result<(FileBytes, ParquetMeta), PieceError> {
    let tail = source.piece(path, Want::Tail(source.tail())).await?;
    let mut bytes = FileBytes { len: tail.file_len, pieces: vec![(tail.offset, tail.bytes)] };
    let (start, len) = super::read::footer_range(&bytes).map_err(PieceError::Failed)?;
    if bytes.get(start, len).is_none() {
        let piece = source.piece(path, Want::Range(start, len)).await?;
        bytes.pieces.push((piece.offset, piece.bytes));
    }
    let meta = bytes.meta().map_err(PieceError::Failed)?;
    for (start, len) in ranges(&meta) {
        if bytes.get(start, len).is_none() {
            let piece = source.piece(path, Want::Range(start, len)).await?;
            bytes.pieces.push((piece.offset, piece.bytes));
        }
    }
    Ok((bytes, meta))
}

fn everything(meta: &ParquetMeta) -> Vec<(u64, u64)> {
    let leaves = 0..meta.leaves.len();
    let mut ranges: Vec<(u64, u64)> = leaves.flat_map(|l| meta.chunks(l)).map(|c| (c.start, c.len)).collect();
    ranges.sort_unstable();
    ranges
}

/// The files of one part as read: the groups and steps files with their footers (their texts
/// are read later, from these), the trajectories and tokens files.
#[derive(Clone)]
struct PartRead {
    groups: (FileBytes, ParquetMeta),
    steps: (FileBytes, ParquetMeta),
    trajectories: FileBytes,
    tokens: Option<FileBytes>,
}

/// Reads the files of part `part` of `partition`: of the groups and steps files their footers
/// and every column but the texts, the trajectories and tokens files whole.
async fn read_part(source: &impl PieceSource, partition: &Partition, part: u32) -> Result<PartRead, LoadError> {
    let read = |table: &str| partition.file(table, part);
    let (groups, steps, trajectories) = futures_util::future::join3(
        read_file(source, &read("groups"), super::read::ranges_without_texts),
        read_file(source, &read("steps"), super::read::ranges_without_texts),
        read_file(source, &read("trajectories"), everything),
    )
    .await;
    let groups = groups.map_err(|e| failed(&read("groups"), &e))?;
    let steps = steps.map_err(|e| failed(&read("steps"), &e))?;
    let trajectories = trajectories.map_err(|e| failed(&read("trajectories"), &e))?.0;
    // A partition without token rows has no tokens files (not asked for: no 404s).
    let tokens = match partition.tokens {
        0 => None,
        _ => match read_file(source, &read("tokens"), everything).await {
            Ok((bytes, _)) => Some(bytes),
            Err(PieceError::Missing) => None,
            Err(e) => return Err(failed(&read("tokens"), &e)),
        },
    };
    Ok(PartRead { groups, steps, trajectories, tokens })
}

/// Reads every part of `partitions` (side by side: a browser keeps several requests in flight),
/// in the order given.
async fn read_parts(source: &impl PieceSource, partitions: &[&Partition]) -> Result<Vec<PartRead>, LoadError> {
    let reads = partitions.iter().flat_map(|p| (0..p.parts).map(move |part| read_part(source, p, part)));
    futures_util::future::join_all(reads).await.into_iter().collect()
}

/// The run of `partitions` (of `manifest`, chosen from it), from their parts' files `reads` (in
/// the order of the partitions and their parts), with its texts' source.
fn build(
    name: &str,
    manifest: &Manifest,
    partitions: &[&Partition],
    reads: Vec<PartRead>,
    report: &mut LoadReport,
) -> Result<(Run, Arc<RemoteTexts>), LoadError> {
    let mut reader = DatasetReader::new(name, manifest);
    let texts = Arc::new(RemoteTexts::default());
    reader.leave_texts(Arc::clone(&texts) as Arc<dyn crate::model::TextSource>);
    let parts = partitions.iter().flat_map(|p| (0..p.parts).map(move |part| (*p, part)));
    let mut files_read = 0usize;
    for ((partition, part), read) in parts.zip(reads) {
        let PartRead { groups: (groups, gm), steps: (steps, sm), trajectories, tokens } = read;
        files_read += 3 + usize::from(tokens.is_some());
        let files = PartBytes { groups, trajectories, steps, tokens };
        reader.add_part(partition, part, &files, report).map_err(|e| e.with_path(name))?;
        // The groups and steps files, as the reader registered them (in that order).
        let PartBytes { groups, steps, .. } = files;
        texts.hold(partition.file("groups", part), groups, gm);
        texts.hold(partition.file("steps", part), steps, sm);
    }
    let _: Result<(), Vec<String>> = texts.files.set(reader.text_files());
    let mut run = reader.finish_with_ids(report).map_err(|e| e.with_path(name))?.0;
    log::info!("{name}: {} partition(s), {files_read} file(s) read in pieces", partitions.len());
    if partitions.len() < manifest.partitions.len() {
        super::read::note_window(&mut run, manifest, partitions);
    }
    Ok((run, texts))
}

/// What is shown first while a dataset opens: the run of its latest partition and its texts'
/// source, as [`open_showing_first`] hands it over.
pub type First<'a> = &'a mut dyn FnMut(Run, Arc<RemoteTexts>, &LoadReport);

/// Opens the dataset at `source` (shown as `name`): the partitions of the training steps in
/// `range`, or as [`Manifest::opening_range`] chooses them. Returns the run and its texts' source.
pub async fn open(
    source: &impl PieceSource,
    name: &str,
    range: Option<(i64, i64)>,
    report: &mut LoadReport,
) -> Result<(Run, Arc<RemoteTexts>), LoadError> {
    open_showing_first(source, name, range, report, None).await
}

/// Opens the dataset as [`open`] does; with `first`, when more than one partition opens, the
/// latest is read first and handed to `first` as a run of its own (the first view of a large
/// run waits for one partition, not the window), then the others are read and the whole run
/// returned.
pub async fn open_showing_first(
    source: &impl PieceSource,
    name: &str,
    range: Option<(i64, i64)>,
    report: &mut LoadReport,
    first: Option<First<'_>>,
) -> Result<(Run, Arc<RemoteTexts>), LoadError> {
    let manifest = manifest(source, name).await?;
    let (range, note) = manifest.opening_range(range, size);
    let partitions = super::read::select(&manifest, range, name)?;
    let (mut run, texts) = match (first, partitions.split_last()) {
        (Some(first), Some((latest, earlier))) if !earlier.is_empty() => {
            let latest_read = read_parts(source, &[latest]).await?;
            // The run shown first is built from the same bytes as the whole run after it.
            let mut scratch = LoadReport::new(name);
            let (mut shown, texts) = build(name, &manifest, &[latest], latest_read.clone(), &mut scratch)?;
            shown.meta.notes.push(format!(
                "the latest training step's partition, shown while the {} others are read",
                earlier.len()
            ));
            first(shown, texts, &scratch);
            // The page draws the first view before the other partitions' requests are made.
            crate::load::pace::after_frame().await;
            let mut reads = read_parts(source, earlier).await?;
            reads.extend(latest_read);
            build(name, &manifest, &partitions, reads, report)?
        }
        _ => {
            let reads = read_parts(source, &partitions).await?;
            build(name, &manifest, &partitions, reads, report)?
        }
    };
    run.meta.notes.extend(note.map(str::to_owned));
    Ok((run, texts))
}

/// Reads what the first view of the dataset at `source` needs, as [`open_showing_first`] reads
/// it: the manifest and the latest partition of the steps that open (what `vantage serve` reads
/// for the page in one answer, `super::pack`).
pub async fn read_first(source: &impl PieceSource, name: &str) -> Result<(), LoadError> {
    let manifest = manifest(source, name).await?;
    let (range, _) = manifest.opening_range(None, size);
    let partitions = super::read::select(&manifest, range, name)?;
    if let Some(latest) = partitions.last() {
        read_parts(source, &[latest]).await?;
    }
    Ok(())
}

/// The texts of a run opened piece by piece: the text columns read so far, the files held
/// whole, and the columns asked for that are still to be read.
#[derive(Debug, Default)]
pub struct RemoteTexts {
    /// The files texts are left in, by the index their keys hold.
    files: OnceLock<Vec<String>>,
    /// What was read of each file (by path), with its footer.
    held: Mutex<HashMap<String, (FileBytes, ParquetMeta)>>,
    /// Text columns read, by (file, column).
    columns: Mutex<HashMap<(usize, usize), Arc<Column>>>,
    /// Columns asked for and not read yet.
    wanted: Mutex<Vec<(usize, usize)>>,
}

impl std::fmt::Debug for FileBytes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "FileBytes({} bytes, {} pieces)", self.len, self.pieces.len())
    }
}

impl RemoteTexts {
    fn hold(&self, path: String, bytes: FileBytes, meta: ParquetMeta) {
        if let Ok(mut held) = self.held.lock() {
            held.insert(path, (bytes, meta));
        }
    }

    /// The column, read from the bytes held if they have it.
    fn column(&self, file: usize, column: usize) -> Option<Arc<Column>> {
        if let Some(c) = self.columns.lock().ok()?.get(&(file, column)) {
            return Some(Arc::clone(c));
        }
        let path = self.files.get()?.get(file)?;
        let name = TEXT_COLUMNS.get(column)?;
        let held = self.held.lock().ok()?;
        let (bytes, meta) = held.get(path)?;
        let decoded = super::read::read_column(meta, bytes, name).ok()?;
        let decoded = Arc::new(decoded);
        self.columns.lock().ok()?.insert((file, column), Arc::clone(&decoded));
        Some(decoded)
    }

    /// How many text columns are asked for and not read yet.
    pub fn pending(&self) -> usize {
        self.wanted.lock().map_or(0, |w| w.len())
    }
}

impl crate::model::TextSource for RemoteTexts {
    fn read_at(&self, key: u64, _len: usize) -> Option<std::borrow::Cow<'_, [u8]>> {
        let (file, column, row) = super::read::split_text_key(key);
        if let Some(texts) = self.column(file, column) {
            return Some(std::borrow::Cow::Owned(super::read::json_inside(texts.str(row)?)));
        }
        if let Ok(mut wanted) = self.wanted.lock()
            && !wanted.contains(&(file, column))
        {
            wanted.push((file, column));
        }
        Some(std::borrow::Cow::Borrowed(PLACEHOLDER.as_bytes()))
    }
}

/// Reads the text columns `texts` was asked for; returns how many were read.
pub async fn fetch_wanted(source: &impl PieceSource, texts: &RemoteTexts) -> Result<usize, String> {
    let wanted: Vec<(usize, usize)> = texts.wanted.lock().map(|w| w.clone()).unwrap_or_default();
    let Some(files) = texts.files.get() else { return Ok(0) };
    for &(file, column) in &wanted {
        let (Some(path), Some(name)) = (files.get(file), TEXT_COLUMNS.get(column)) else { continue };
        let ranges = {
            let held = texts.held.lock().map_err(|_e| "poisoned")?;
            let Some((bytes, meta)) = held.get(path) else { continue };
            super::read::column_ranges(meta, &[name])
                .into_iter()
                .filter(|&(s, l)| bytes.get(s, l).is_none())
                .collect::<Vec<_>>()
        };
        let mut pieces = Vec::with_capacity(ranges.len());
        for (start, len) in ranges {
            let piece = source.piece(path, Want::Range(start, len)).await.map_err(|e| format!("{path}: {e}"))?;
            pieces.push((piece.offset, piece.bytes));
        }
        if let Ok(mut held) = texts.held.lock()
            && let Some((bytes, _)) = held.get_mut(path)
        {
            bytes.pieces.extend(pieces);
        }
        if let Ok(mut w) = texts.wanted.lock() {
            w.retain(|&k| k != (file, column));
        }
    }
    Ok(wanted.len())
}

#[cfg(test)]
mod tests {
    #[test]
    fn content_range() {
        assert_eq!(super::parse_content_range("bytes 100-199/5000"), Some((100, 5000)));
        assert_eq!(super::parse_content_range("bytes */5000"), None);
        assert_eq!(super::parse_content_range("bytes 0-9/*"), None);
    }

    #[test]
    fn retry_after() {
        use super::{RETRY_FOR, retry_after};
        // vantage serve converting a run: 503, Retry-After: 2.
        assert_eq!(retry_after(503, Some("2"), 0), Some(2));
        assert_eq!(retry_after(503, Some(" 0 "), 0), Some(1), "asked again at once is still a wait");
        assert_eq!(retry_after(503, Some("2"), RETRY_FOR - 2), Some(2));
        assert_eq!(retry_after(503, Some("2"), RETRY_FOR - 1), None, "no wait past the limit");
        // Not a wait: another status, no header, a date, a long wait.
        assert_eq!(retry_after(500, Some("2"), 0), None);
        assert_eq!(retry_after(429, Some("2"), 0), None);
        assert_eq!(retry_after(503, None, 0), None);
        assert_eq!(retry_after(503, Some("Wed, 21 Oct 2026 07:28:00 GMT"), 0), None);
        assert_eq!(retry_after(503, Some("60"), 0), None);
    }
}
