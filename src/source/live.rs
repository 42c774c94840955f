//! Native: a run read from a path piece by piece, shown while it is read, and followed while it
//! grows.
//!
//! These paths are read this way, each by the core's incremental reader:
//! * a JSON-lines file of a format that has one (`load::line_feed`: vantage JSONL, verl dumps,
//!   OpenAI chat lines, the PRM sets, OpenHands outputs): read in pieces at line boundaries, each
//!   piece parsed on every core. The texts of vantage JSONL and verl dumps stay in the file (a
//!   [`FileSource`]), so the run takes a fraction of the file's size in memory;
//! * a verl `rollout_data_dir` directory of `<step>.jsonl` files (its texts stay in the files, a
//!   [`FilesSource`]);
//! * a TRL `completions/` directory of `completions_<step>.parquet` files (`load::formats::trl_parquet::TrlRun`, with the
//!   `parquet` feature).
//!
//! Gzip and zstd files are decompressed as streams into the same readers (their texts are copied,
//! as there is no file to read them from again). Every other file is read whole.
//!
//! Following ([`Live::poll`]) reads what was added since the last look: the bytes appended to a
//! file (an incomplete last line waits for its end), the new files of a directory. A file that
//! shrinks or is replaced is read again from its start, with a notice.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::load::compressed::Compression;
use crate::load::lines::{LineFeed, MAX_LINE};
use crate::load::{LoadError, LoadReport, budget};
use crate::model::{Run, TextSource};

use super::folders::FileLister;
use super::listing::head;
use super::text_files::{FileSource, FilesSource};

/// Where a load shows the run so far: called with it, returns `false` when the load was cancelled.
pub type ShowRun<'a> = &'a mut dyn FnMut(Run, &LoadReport) -> bool;

/// The first piece read of a file: small, so the first groups are on screen at once.
const FIRST_PIECE: usize = 2 << 20;
/// Later pieces: large enough for every core to have a share.
const PIECE: usize = 32 << 20;
/// The least time between two runs shown while a large file is read.
const SNAPSHOT_EVERY: Duration = Duration::from_secs(1);

/// A file's identity, to notice that it was replaced (a new file under the old name).
fn identity(meta: &std::fs::Metadata) -> (u64, u64) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt as _;
        (meta.dev(), meta.ino())
    }
    #[cfg(not(unix))]
    {
        let created = meta.created().ok().and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok());
        (0, created.map_or(0, |d| d.as_nanos() as u64))
    }
}

/// Passing over a line longer than `MAX_LINE`, never holding it: its bytes so far, while passing.
#[derive(Debug, Default)]
struct LongLine(Option<u64>);

impl LongLine {
    /// Starts passing over a line whose first `bytes` were read.
    fn start(&mut self, bytes: usize) {
        self.0 = Some(bytes as u64);
    }

    /// While passing: how many of `bytes` belong to the long line (up to and with its line feed),
    /// and the line's whole length once it ends in them. `None` when no line is being passed.
    fn pass(&mut self, bytes: &[u8]) -> Option<(usize, Option<u64>)> {
        let passed = self.0?;
        if let Some(at) = memchr::memchr(b'\n', bytes) {
            self.0 = None;
            Some((at + 1, Some(passed + at as u64 + 1)))
        } else {
            self.0 = Some(passed + bytes.len() as u64);
            Some((bytes.len(), None))
        }
    }

    /// The line's length so far when the input ends inside it (it is over then).
    fn end(&mut self) -> Option<u64> {
        self.0.take()
    }
}

/// One file read as it grows: where reading has come to, and the start of a line still being written.
#[derive(Debug)]
struct Tail {
    path: PathBuf,
    file: std::fs::File,
    identity: (u64, u64),
    /// Bytes read from the file.
    read: u64,
    /// Bytes of the file handed out as whole lines; `read - fed` are pending in `buffer`.
    fed: u64,
    /// Read bytes from `start` on are pending (one allocation, reused piece after piece).
    buffer: Vec<u8>,
    start: usize,
    /// Passing over a line longer than `MAX_LINE`.
    skipping: LongLine,
    /// A line passed over since last asked ([`Tail::take_skipped`]): its length.
    skipped: Option<u64>,
    /// The next piece was read while the last was parsed ([`Tail::feed_reading_ahead`]): it is
    /// in `buffer` already, so the next [`Tail::next_lines`] reads nothing.
    ahead: bool,
    /// The second buffer a piece is read ahead into.
    spare: Vec<u8>,
}

impl Tail {
    fn open(path: &Path) -> Result<Self, LoadError> {
        let name = path.display().to_string();
        let file = std::fs::File::open(path).map_err(|e| LoadError::from(e).with_path(&name))?;
        let meta = file.metadata().map_err(|e| LoadError::from(e).with_path(&name))?;
        Ok(Self {
            path: path.to_owned(),
            file,
            identity: identity(&meta),
            read: 0,
            fed: 0,
            buffer: Vec::new(),
            start: 0,
            skipping: LongLine::default(),
            skipped: None,
            ahead: false,
            spare: Vec::new(),
        })
    }

    /// Whether the file at the path is no longer the one being read, or is shorter than what was read.
    fn changed(&self) -> Option<&'static str> {
        let Ok(meta) = std::fs::metadata(&self.path) else { return Some("removed") };
        if identity(&meta) != self.identity {
            Some("replaced")
        } else if meta.len() < self.read {
            Some("truncated")
        } else {
            None
        }
    }

    fn len(&self) -> u64 {
        self.file.metadata().map_or(0, |m| m.len())
    }

    /// Reads up to `size` more bytes and returns the whole lines among what is pending, with
    /// the offset of their first byte (`None`: nothing new, or no line finished yet).
    fn next_lines(&mut self, size: usize) -> Result<Option<(&[u8], u64)>, LoadError> {
        if self.start > 0 {
            self.buffer.drain(..self.start);
            self.start = 0;
        }
        let take =
            if std::mem::take(&mut self.ahead) { 0 } else { self.len().saturating_sub(self.read).min(size as u64) };
        if take > 0 {
            let got = read_at(&self.file, self.read, take, &mut self.buffer).map_err(|e| self.failed(e))?;
            self.read += got as u64;
        }
        if self.pass_long_line() {
            return Ok(None);
        }
        let Some(last) = memchr::memrchr(b'\n', &self.buffer) else {
            // A line past `MAX_LINE` is passed over, not held.
            if self.buffer.len() > MAX_LINE {
                self.skipping.start(0);
                self.pass_long_line();
            }
            return Ok(None);
        };
        let offset = self.fed;
        self.fed += last as u64 + 1;
        self.start = last + 1;
        Ok(Some((&self.buffer[..=last], offset)))
    }

    /// An error reading the file.
    fn failed(&self, e: std::io::Error) -> LoadError {
        LoadError::from(e).with_path(&self.path.display().to_string())
    }

    /// Hands the lines the last [`Tail::next_lines`] gave to `feed` while the next piece, of up to
    /// `size` bytes, is read on another thread: of this file, or when this one has no more bytes,
    /// the first of `next` (a directory's next file). The next `next_lines` of the tail read
    /// into finds its piece there. Reading from the page cache is a fifth of a load; this way the
    /// parse threads do not wait for it.
    fn feed_reading_ahead(
        &mut self,
        size: usize,
        next: Option<&mut Self>,
        feed: impl FnOnce(&[u8]),
    ) -> Result<(), LoadError> {
        let lines = self.start;
        let own = self.len().saturating_sub(self.read).min(size as u64);
        if self.skipping.0.is_some() {
            // Passing over a long line: `next_lines` reads on its own.
            feed(&self.buffer[..lines]);
        } else if own > 0 {
            // Into the second buffer, after the start of a line still pending; the two swap.
            let Self { file, buffer, spare, read, .. } = self;
            spare.clear();
            spare.extend_from_slice(&buffer[lines..]);
            let got = read_beside(file, *read, own, spare, || feed(&buffer[..lines]));
            let got = got.map_err(|e| self.failed(e))?;
            self.read += got as u64;
            std::mem::swap(&mut self.buffer, &mut self.spare);
            self.start = 0;
            self.ahead = true;
        } else if let Some(next) = next.filter(|n| n.skipping.0.is_none() && !n.ahead && n.more()) {
            next.buffer.drain(..next.start);
            next.start = 0;
            let take = next.len().saturating_sub(next.read).min(size as u64);
            let got = read_beside(&next.file, next.read, take, &mut next.buffer, || feed(&self.buffer[..lines]));
            next.read += got.map_err(|e| next.failed(e))? as u64;
            next.ahead = true;
        } else {
            feed(&self.buffer[..lines]);
        }
        Ok(())
    }

    /// While passing over a long line: drops what is pending up to its end; `true` until the
    /// line's end has been passed (then [`Tail::take_skipped`] gives its length).
    fn pass_long_line(&mut self) -> bool {
        let Some((dropped, ended)) = self.skipping.pass(&self.buffer[self.start..]) else { return false };
        self.fed += dropped as u64;
        self.start += dropped;
        self.buffer.drain(..self.start);
        self.start = 0;
        if ended.is_some() {
            self.skipped = ended;
        }
        true
    }

    /// The length of the long line passed over since last asked, if any.
    fn take_skipped(&mut self) -> Option<u64> {
        self.skipped.take()
    }

    /// Frees the read buffer but for what is pending (a directory's files are read one after the
    /// other: each would otherwise keep a piece's worth of memory).
    fn release(&mut self) {
        self.buffer.drain(..self.start);
        self.start = 0;
        self.buffer.shrink_to_fit();
        self.spare = Vec::new();
    }

    /// Takes `spare` as the read buffer when this one has none (the files of a directory are read
    /// one after the other in one buffer: a new one for each file cost a page fault for every
    /// page read, a tenth of a directory's load).
    fn borrow_buffer(&mut self, spare: &mut Vec<u8>) {
        if self.buffer.capacity() == 0 {
            self.buffer = std::mem::take(spare);
            self.buffer.clear();
        }
    }

    /// [`Tail::release`], the buffer handed back to `spare` when nothing is pending in it.
    fn release_into(&mut self, spare: &mut Vec<u8>) {
        self.buffer.drain(..self.start);
        self.start = 0;
        self.spare = Vec::new();
        if self.buffer.is_empty() {
            *spare = std::mem::take(&mut self.buffer);
        } else {
            self.buffer.shrink_to_fit();
        }
    }

    /// Whether bytes remain to be read.
    fn more(&self) -> bool {
        self.len() > self.read
    }

    /// The unterminated last line, taken (at the end of a load that does not follow).
    fn take_last(&mut self) -> Option<(Vec<u8>, u64)> {
        if let Some(passed) = self.skipping.end() {
            // The file ends inside a long line.
            let rest = (self.buffer.len() - self.start) as u64;
            self.fed += rest;
            self.skipped = Some(passed + rest);
            self.buffer.clear();
            self.start = 0;
            return None;
        }
        let rest = self.buffer.get(self.start..).filter(|r| !r.is_empty())?.to_vec();
        let offset = self.fed;
        self.fed += rest.len() as u64;
        self.buffer.clear();
        self.start = 0;
        Some((rest, offset))
    }
}

/// Reads up to `take` bytes at `at` of `file` to the end of `into` (into its spare room, which is
/// not zeroed first: `read_to_end` reads a file into uninitialised memory). The texts' own reads
/// are positioned (`FileSource`), so moving the file's cursor here does not disturb them.
fn read_at(file: &std::fs::File, at: u64, take: u64, into: &mut Vec<u8>) -> std::io::Result<usize> {
    use std::io::{Read as _, Seek as _, SeekFrom};
    into.reserve(take as usize);
    let mut file = file;
    file.seek(SeekFrom::Start(at))?;
    file.take(take).read_to_end(into)
}

/// [`read_at`] on another thread while this one does `work`.
fn read_beside(
    file: &std::fs::File,
    at: u64,
    take: u64,
    into: &mut Vec<u8>,
    work: impl FnOnce(),
) -> std::io::Result<usize> {
    let into = std::sync::Mutex::new(into);
    let read = || match into.lock() {
        Ok(mut into) => read_at(file, at, take, &mut into),
        Err(_) => Err(std::io::Error::other("a read thread failed")),
    };
    std::thread::scope(|s| {
        let Ok(reader) = std::thread::Builder::new().name("load read".to_owned()).spawn_scoped(s, read) else {
            // No thread to be had: one after the other.
            work();
            return read();
        };
        work();
        reader.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    })
}

/// How the run is being read.
enum State {
    /// A JSON-lines file (texts left in it where the format allows).
    Jsonl { tail: Tail, stream: Box<dyn LineFeed> },
    /// A compressed file, read once (it cannot be followed).
    Compressed { stream: Box<dyn LineFeed> },
    /// A directory of numbered JSON-lines files (a verl `rollout_data_dir`, a NeMo-RL log
    /// directory): each file's tail, at its offset in the texts' source.
    Verl {
        dir: PathBuf,
        list: FileLister,
        tails: Vec<(u64, Tail, u64)>,
        stream: Box<dyn LineFeed>,
        source: std::sync::Arc<FilesSource>,
        skipped: Vec<String>,
    },
    /// A directory of whole files, each added as it appears: TRL's `completions/`, an ART split
    /// folder.
    Files {
        dir: PathBuf,
        list: FileLister,
        run: Box<dyn crate::load::FileRun>,
        report: LoadReport,
        done: Vec<PathBuf>,
        waiting: Vec<(PathBuf, u64, Instant)>,
        skipped: Vec<String>,
    },
}

impl State {
    /// A directory of whole files, listed by `list` (`skipped`: the other entries it found),
    /// read into `run`.
    fn files(
        dir: &Path,
        list: FileLister,
        run: Box<dyn crate::load::FileRun>,
        report: LoadReport,
        skipped: Vec<String>,
    ) -> Self {
        Self::Files { dir: dir.to_owned(), list, run, report, done: Vec::new(), waiting: Vec::new(), skipped }
    }

    /// A directory of numbered JSON-lines files listed by `list`, read by `stream` (its texts
    /// left in the files).
    fn numbered(dir: &Path, list: FileLister, mut stream: Box<dyn LineFeed>, skipped: Vec<String>) -> Self {
        let source = std::sync::Arc::new(FilesSource::default());
        stream.keep_texts_in(std::sync::Arc::clone(&source) as std::sync::Arc<dyn TextSource>);
        Self::Verl { dir: dir.to_owned(), list, tails: Vec::new(), stream, source, skipped }
    }
}

/// A run being read, or followed, from a path.
pub struct Live {
    path: PathBuf,
    name: String,
    /// The format given instead of told by the content.
    format: Option<String>,
    state: State,
    budget: u64,
    /// When records last arrived.
    pub last_data: Option<Instant>,
    /// Things the reader noticed (a file replaced or truncated and read again, files skipped).
    pub notices: Vec<String>,
    /// Whether the path is followed: an unterminated last line waits for its end.
    following: bool,
}

impl Live {
    /// Opens `path` for reading piece by piece; `None` when it is not such a path (a JSON-lines
    /// file of a format read that way, a compressed one, a verl or TRL directory). Nothing is read
    /// yet beyond the first lines (a compressed file is read whole here: it cannot be followed).
    /// The run may hold at most the report's budget.
    pub fn open(path: &Path, report: LoadReport) -> Result<Option<Self>, LoadError> {
        Self::open_as(path, None, report)
    }

    /// [`Self::open`] with the format given (`--format`) instead of told by the content.
    pub fn open_as(path: &Path, format: Option<&str>, report: LoadReport) -> Result<Option<Self>, LoadError> {
        Self::open_with(path, format, report, None)
    }

    /// [`Self::open_as`] for a conversion that takes the run in pieces: a compressed file, which
    /// is read here, hands them to `segments` as it goes.
    pub fn open_segmented(
        path: &Path,
        format: Option<&str>,
        report: LoadReport,
        segments: &mut Segments<'_>,
    ) -> Result<Option<Self>, LoadError> {
        Self::open_with(path, format, report, Some(segments))
    }

    fn open_with(
        path: &Path,
        format: Option<&str>,
        report: LoadReport,
        segments: Option<&mut Segments<'_>>,
    ) -> Result<Option<Self>, LoadError> {
        let budget = report.budget;
        let name = path.display().to_string();
        let mut report = report;
        report.file.clone_from(&name);
        let state = if path.is_dir() {
            let Some(super::folders::Found { format: folder, files, others: skipped }) = super::folders::of_dir(path)
            else {
                return Ok(None);
            };
            match folder.reading {
                super::folders::Reading::Lines { stream, first_file } => {
                    let first = files.first().map(|(_, p)| head(p)).unwrap_or_default();
                    if !first_file(&crate::load::lines::head_text(&first)) {
                        // Numbered files of another format: read as one log by its loader.
                        return Ok(None);
                    }
                    State::numbered(path, folder.list, stream(&name, std::mem::take(&mut report)), skipped)
                }
                super::folders::Reading::Files(run) => {
                    let Some(run) = run(&name) else { return Ok(None) };
                    State::files(path, folder.list, run, std::mem::take(&mut report), skipped)
                }
                super::folders::Reading::Joined => return Ok(None),
            }
        } else {
            let tail = Tail::open(path)?;
            let head = head(path);
            if let Some(kind) = Compression::of(&head) {
                return match Self::compressed(path, kind, format, &report, budget, segments) {
                    Ok(live) => Ok(Some(live)),
                    // Another format inside: read whole (and decompressed) by its loader.
                    Err(err) if err.is_incompatible() => Ok(None),
                    Err(err) => Err(err),
                };
            }
            let mut stream = match crate::load::line_feed(&name, &head, format, &report) {
                Ok(Some(stream)) => stream,
                Ok(None) => return Ok(None),
                Err(err) => return Err(err.with_path(&name)),
            };
            let source = FileSource { file: tail.file.try_clone().map_err(|e| LoadError::from(e).with_path(&name))? };
            stream.keep_texts_in(std::sync::Arc::new(source));
            budget::check(budget, 0, 0, tail.len())?;
            State::Jsonl { tail, stream }
        };
        Ok(Some(Self {
            path: path.to_owned(),
            name,
            format: format.map(str::to_owned),
            state,
            budget,
            last_data: None,
            notices: Vec::new(),
            following: false,
        }))
    }

    /// A compressed file: read through its decoder, every piece fed as it comes (no snapshots:
    /// the first piece arrives quickly and the whole is read at once).
    fn compressed(
        path: &Path,
        kind: Compression,
        format: Option<&str>,
        report: &LoadReport,
        budget: u64,
        mut segments: Option<&mut Segments<'_>>,
    ) -> Result<Self, LoadError> {
        let name = path.display().to_string();
        let file = std::fs::File::open(path).map_err(|e| LoadError::from(e).with_path(&name))?;
        let mut pending: Vec<u8> = Vec::new();
        let mut stream: Option<Box<dyn LineFeed>> = None;
        let mut fed = 0u64;
        let feed = |stream: &mut dyn LineFeed, lines: &[u8], fed: &mut u64| {
            stream.feed(lines, *fed);
            *fed += lines.len() as u64;
        };
        let another = || LoadError::Incompatible {
            format: "compressed JSON lines",
            reason: format!("a {} file holding a format that is read whole", kind.name()),
        };
        let mut passing = LongLine::default();
        // Whether a line ended in what is pending since whole lines were last taken.
        let mut untaken_line = false;
        crate::load::compressed::for_each_piece(kind, std::io::BufReader::new(file), |mut piece| {
            if let Some(s) = stream.as_mut()
                && let Some((dropped, ended)) = passing.pass(piece)
            {
                fed += dropped as u64;
                piece = &piece[dropped..];
                let Some(bytes) = ended else { return Ok(()) };
                s.skip_long_line(bytes);
            }
            pending.extend_from_slice(piece);
            untaken_line |= memchr::memchr(b'\n', piece).is_some();
            if stream.is_none() {
                // The format is told by the first lines (eight, or what 4 MiB holds).
                let lines = pending.iter().filter(|&&b| b == b'\n').count();
                if lines < 8 && pending.len() < 4 << 20 {
                    return Ok(());
                }
                let started = crate::load::line_feed(&name, &pending, format, report)?;
                stream = Some(started.ok_or_else(another)?);
            }
            // Whole lines are taken once a piece's worth is pending, and only when a line ended
            // since the last time (a long line is not searched again for every piece).
            if pending.len() >= PIECE
                && untaken_line
                && let Some(s) = stream.as_mut()
            {
                untaken_line = false;
                if let Some(lines) = crate::load::formats::vantage_jsonl::take_lines(&mut pending) {
                    feed(s.as_mut(), &lines, &mut fed);
                    budget::check(budget, s.heap_bytes() as u64, 1, 1)?;
                    if let Some(segments) = segments.as_deref_mut() {
                        segments.cut(s.heap_bytes(), || s.take_segment())?;
                    }
                }
            }
            // What is pending is one unfinished line: past `MAX_LINE`, it is passed over.
            if pending.len() > MAX_LINE && stream.is_some() && !untaken_line {
                passing.start(pending.len());
                fed += pending.len() as u64;
                pending = Vec::new();
            }
            Ok(())
        })
        .map_err(|e| e.with_path(&name))?;
        let mut stream = match stream {
            Some(stream) => stream,
            None => crate::load::line_feed(&name, &pending, format, report)
                .map_err(|e| e.with_path(&name))?
                .ok_or_else(another)?,
        };
        feed(stream.as_mut(), &pending, &mut fed);
        if let Some(bytes) = passing.end() {
            stream.skip_long_line(bytes);
        }
        Ok(Self {
            path: path.to_owned(),
            name,
            format: format.map(str::to_owned),
            state: State::Compressed { stream },
            budget,
            last_data: Some(Instant::now()),
            notices: Vec::new(),
            following: false,
        })
    }

    /// The display name (the path).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Follows the path from now on: an unterminated last line of a file is not read until it
    /// ends (it is still being written).
    pub fn follow(&mut self) {
        self.following = true;
    }

    /// Whether the path can be followed (a compressed file cannot).
    pub fn can_follow(&self) -> bool {
        !matches!(self.state, State::Compressed { .. })
    }

    /// Reads everything available now, calling `shown` with the run so far after the first piece
    /// and then at most once a second while more remains (`shown` returns `false` to stop: the load
    /// was cancelled). Returns whether records arrived.
    pub fn read(&mut self, shown: Option<ShowRun<'_>>) -> Result<bool, LoadError> {
        self.read_with(shown, None)
    }

    /// Reads everything available now and hands the run on in pieces ([`Segments`]); what the
    /// last piece holds is left for [`Self::finish`].
    pub fn read_segments(&mut self, segments: Segments<'_>) -> Result<bool, LoadError> {
        self.read_with(None, Some(segments))
    }

    fn read_with<'s>(&mut self, shown: Option<ShowRun<'s>>, segments: Option<Segments<'s>>) -> Result<bool, LoadError> {
        let mut show = Shown { shown, last: None, name: &self.name, segments };
        let arrived = match &mut self.state {
            State::Compressed { .. } => false,
            State::Jsonl { tail, stream } => read_jsonl(tail, stream.as_mut(), self.budget, &mut show)?,
            State::Verl { dir, list, tails, stream, source, skipped } => {
                let mut at = VerlAt { dir, list: *list, tails, source, skipped, following: self.following };
                read_verl(&mut at, stream.as_mut(), self.budget, &mut show)?
            }
            State::Files { dir, list, run, report, done, waiting, skipped } => {
                let mut at = FilesAt { dir, list: *list, done, waiting, skipped };
                read_files(&mut at, run.as_mut(), report, self.budget, &mut show)?
            }
        };
        if arrived {
            self.last_data = Some(Instant::now());
        }
        Ok(arrived)
    }

    /// Follows the path: reads what was added since the last look (see [`Self::read`]). A file
    /// that was truncated, replaced or removed is read again from its start, with a notice.
    pub fn poll(&mut self) -> Result<bool, LoadError> {
        let changed = match &self.state {
            State::Jsonl { tail, .. } => tail.changed(),
            State::Verl { tails, .. } => tails.iter().find_map(|(_, t, _)| t.changed()),
            _ => None,
        };
        if let Some(how) = changed {
            self.notices.push(format!("{}: the log was {how} while followed; read again from its start", self.name));
            let report = LoadReport::with_budget(&self.name, self.budget);
            match Self::open_as(&self.path, self.format.as_deref(), report)? {
                Some(fresh) => {
                    let notices = std::mem::take(&mut self.notices);
                    *self = fresh;
                    self.notices = notices;
                    self.following = true;
                }
                None => {
                    return Err(LoadError::Incompatible {
                        format: "followed log",
                        reason: format!("{} is no longer a log that can be followed", self.name),
                    });
                }
            }
        }
        self.read(None)
    }

    /// Hands on the run read since the last piece was handed on (a conversion that follows its
    /// log writes what each look brought), with the notes of what was skipped.
    pub fn take_segment(&mut self) -> Run {
        let mut run = match &mut self.state {
            State::Jsonl { stream, .. } | State::Compressed { stream } | State::Verl { stream, .. } => {
                stream.take_segment()
            }
            State::Files { run, .. } => run.take_segment(),
        };
        self.note_skipped(&mut run.meta.notes);
        run
    }

    /// The run so far, with the notes of what was skipped.
    pub fn snapshot(&self) -> Run {
        let mut run = match &self.state {
            State::Jsonl { stream, .. } | State::Compressed { stream } | State::Verl { stream, .. } => {
                stream.snapshot()
            }
            State::Files { run, report, .. } => run.snapshot(report),
        };
        self.note_skipped(&mut run.meta.notes);
        run
    }

    fn note_skipped(&self, notes: &mut Vec<String>) {
        let (State::Verl { skipped, .. } | State::Files { skipped, .. }) = &self.state else { return };
        if !skipped.is_empty() {
            let name = crate::model::last_name(&self.name);
            let skipped: Vec<(String, String)> =
                skipped.iter().map(|f| (f.clone(), "not part of the run".to_owned())).collect();
            notes.push(super::folder::skipped_note(name, &skipped));
        }
    }

    /// What loading has found so far.
    pub fn report(&self) -> &LoadReport {
        match &self.state {
            State::Jsonl { stream, .. } | State::Compressed { stream } | State::Verl { stream, .. } => stream.report(),
            State::Files { report, .. } => report,
        }
    }

    /// Ends a load that does not follow: an unterminated last line is read as the last record.
    pub fn finish(self, report: &mut LoadReport) -> Result<Run, LoadError> {
        let mut notes = Vec::new();
        self.note_skipped(&mut notes);
        let name = self.name.clone();
        let mut run = match self.state {
            State::Jsonl { mut tail, mut stream } => {
                if let Some((line, offset)) = tail.take_last() {
                    stream.feed(&line, offset);
                }
                if let Some(bytes) = tail.take_skipped() {
                    stream.skip_long_line(bytes);
                }
                stream.finish_into(report)
            }
            State::Compressed { stream } | State::Verl { stream, .. } => stream.finish_into(report),
            State::Files { run, report: own, .. } => {
                *report = own;
                run.finish(report)
            }
        }
        .map_err(|e| e.with_path(&name))?;
        run.meta.notes.extend(notes);
        Ok(run)
    }
}

/// Cuts a run being read into pieces that hold about `bytes` of memory each and hands each on
/// (`vantage convert` to a v2 dataset): the reading holds one piece at a time, whatever the size
/// of the log.
pub struct Segments<'a> {
    /// The memory a piece may hold before it is handed on.
    pub bytes: usize,
    /// Takes each piece.
    pub each: &'a mut dyn FnMut(Run) -> Result<(), LoadError>,
    /// Hand on what the first piece of the log read holds at once, whatever its size (a
    /// followed conversion: a reader of the dataset sees the log's first steps at once).
    pub first_alone: bool,
}

impl Segments<'_> {
    /// Hands on the run `held` holds when it is past the size of a piece (or when it is the
    /// first piece read, and that goes alone).
    fn cut(&mut self, held: usize, take: impl FnOnce() -> Run) -> Result<(), LoadError> {
        if held >= self.bytes || std::mem::take(&mut self.first_alone) { (self.each)(take()) } else { Ok(()) }
    }
}

/// The `shown` callback of [`Live::read`], called at most once a second; and, for a conversion,
/// where the pieces of the run go instead.
struct Shown<'s, 'n> {
    shown: Option<ShowRun<'s>>,
    last: Option<Instant>,
    name: &'n str,
    segments: Option<Segments<'s>>,
}

impl Shown<'_, '_> {
    /// The bytes of the log to read next, at most `size`: no more than a piece of the run holds
    /// when the run is handed on in pieces (a small piece is cut small).
    fn piece_size(&self, size: usize) -> usize {
        self.segments.as_ref().map_or(size, |s| size.min(s.bytes.max(4096)))
    }

    /// After a piece of the log was fed: checks the memory held against the budget (only what
    /// is held when the run is handed on in pieces, else the whole run extrapolated from how
    /// far reading came) and hands on a piece when one is full.
    fn fed(&mut self, stream: &mut dyn LineFeed, budget: u64, done: u64, total: u64) -> Result<(), LoadError> {
        let held = stream.heap_bytes();
        if let Some(segments) = self.segments.as_mut() {
            budget::check(budget, held as u64, 1, 1).map_err(|e| e.with_path(self.name))?;
            return segments.cut(held, || stream.take_segment());
        }
        budget::check(budget, held as u64, done, total).map_err(|e| e.with_path(self.name))
    }

    /// Shows the run `snapshot` makes when a second has passed since the last (or at the first
    /// call); an error when the callback says the load was cancelled.
    fn maybe(&mut self, snapshot: impl FnOnce() -> (Run, LoadReport)) -> Result<(), LoadError> {
        // Nobody to show it to (the CLI): no copy of the run is made.
        let Some(shown) = self.shown.as_mut() else { return Ok(()) };
        if self.last.is_some_and(|t| t.elapsed() < SNAPSHOT_EVERY) {
            return Ok(());
        }
        self.last = Some(Instant::now());
        let (run, report) = snapshot();
        if shown(run, &report) { Ok(()) } else { Err(cancelled(self.name)) }
    }
}

/// Reads what a JSONL file has beyond what was read, in pieces.
fn read_jsonl(
    tail: &mut Tail,
    stream: &mut dyn LineFeed,
    budget: u64,
    show: &mut Shown<'_, '_>,
) -> Result<bool, LoadError> {
    let total = tail.len();
    let mut first = tail.read == 0;
    let mut arrived = false;
    loop {
        let size = show.piece_size(if first { FIRST_PIECE } else { PIECE });
        let first_piece = first;
        first = false;
        let Some((lines, offset)) = tail.next_lines(size)? else {
            if let Some(bytes) = tail.take_skipped() {
                stream.skip_long_line(bytes);
                continue;
            }
            if tail.more() {
                continue;
            }
            tail.release();
            return Ok(arrived);
        };
        if first_piece {
            // The first view waits for the first piece alone, not for the next one's read too.
            stream.feed(lines, offset);
        } else {
            tail.feed_reading_ahead(show.piece_size(PIECE), None, |lines| stream.feed(lines, offset))?;
        }
        arrived = true;
        show.fed(stream, budget, tail.read, total.max(tail.read))?;
        if !tail.more() && !tail.ahead {
            tail.release();
            return Ok(arrived);
        }
        show.maybe(|| (stream.snapshot(), stream.report().clone()))?;
    }
}

/// Where a verl directory's reading stands.
struct VerlAt<'a> {
    dir: &'a Path,
    list: FileLister,
    tails: &'a mut Vec<(u64, Tail, u64)>,
    source: &'a FilesSource,
    skipped: &'a mut Vec<String>,
    following: bool,
}

/// Reads what a verl directory has beyond what was read: new lines of its files, new files.
fn read_verl(
    at: &mut VerlAt<'_>,
    stream: &mut dyn LineFeed,
    budget: u64,
    show: &mut Shown<'_, '_>,
) -> Result<bool, LoadError> {
    let (files, others) = (at.list)(at.dir);
    for other in others {
        if !at.skipped.contains(&other) {
            at.skipped.push(other);
        }
    }
    for (step, path) in files {
        if !at.tails.iter().any(|(_, t, _)| t.path == path) {
            let tail = Tail::open(&path)?;
            let name = path.display().to_string();
            let file = tail.file.try_clone().map_err(|e| LoadError::from(e).with_path(&name))?;
            let Some(base) = at.source.add(file) else { continue };
            at.tails.push((step, tail, base));
        }
    }
    at.tails.sort_by_key(|(step, ..)| *step);
    let mut arrived = false;
    let mut spare = Vec::new();
    for i in 0..at.tails.len() {
        let (these, later) = at.tails.split_at_mut(i + 1);
        let Some((_, tail, base)) = these.last_mut() else { break };
        let mut next = later.first_mut().map(|(_, next, _)| next);
        // The file's path within the directory: a format may read its step from a folder's name.
        let file_name = tail.path.strip_prefix(at.dir).unwrap_or(&tail.path).display().to_string();
        stream.start_file(&file_name);
        tail.borrow_buffer(&mut spare);
        if let Some(next) = next.as_deref_mut() {
            next.borrow_buffer(&mut spare);
        }
        loop {
            let size = show.piece_size(PIECE);
            if let Some((_, offset)) = tail.next_lines(size)? {
                let base = *base;
                tail.feed_reading_ahead(size, next.as_deref_mut(), |lines| stream.feed(lines, base + offset))?;
                arrived = true;
                show.fed(stream, budget, 0, 0)?;
                show.maybe(|| (stream.snapshot(), stream.report().clone()))?;
                continue;
            }
            if let Some(bytes) = tail.take_skipped() {
                stream.skip_long_line(bytes);
                continue;
            }
            if tail.more() {
                continue;
            }
            // The file's last line without a terminator: its end, unless followed.
            if !at.following
                && let Some((lines, offset)) = tail.take_last()
            {
                stream.feed(&lines, *base + offset);
                arrived = true;
            }
            if let Some(bytes) = tail.take_skipped() {
                stream.skip_long_line(bytes);
            }
            tail.release_into(&mut spare);
            break;
        }
    }
    Ok(arrived)
}

/// Where a directory of whole files stands.
struct FilesAt<'a> {
    dir: &'a Path,
    list: FileLister,
    done: &'a mut Vec<PathBuf>,
    waiting: &'a mut Vec<(PathBuf, u64, Instant)>,
    skipped: &'a mut Vec<String>,
}

/// Reads the files a directory of whole files has that were not read yet. A file that is not
/// Parquet yet (still being written) is tried again until it stops growing for five seconds, then
/// skipped with a note.
fn read_files(
    at: &mut FilesAt<'_>,
    run: &mut dyn crate::load::FileRun,
    report: &mut LoadReport,
    budget: u64,
    show: &mut Shown<'_, '_>,
) -> Result<bool, LoadError> {
    let (files, others) = (at.list)(at.dir);
    for other in others {
        if !at.skipped.contains(&other) {
            at.skipped.push(other);
        }
    }
    let mut arrived = false;
    for (_, path) in files {
        if at.done.contains(&path) {
            continue;
        }
        let file_name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let bytes = std::fs::read(&path).map_err(|e| LoadError::from(e).with_path(&path.display().to_string()))?;
        let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        match run.add_file(&bytes, Some(&stem), report) {
            Ok(()) => {
                at.done.push(path.clone());
                at.waiting.retain(|(p, _, _)| *p != path);
                arrived = true;
            }
            Err(err) => {
                let size = bytes.len() as u64;
                match at.waiting.iter_mut().find(|(p, _, _)| *p == path) {
                    Some((_, old, since)) if *old == size && since.elapsed() > Duration::from_secs(5) => {
                        at.done.push(path.clone());
                        at.skipped.push(format!("{file_name} ({err})"));
                    }
                    Some((_, old, since)) if *old != size => {
                        *old = size;
                        *since = Instant::now();
                    }
                    Some(_) => {}
                    None => at.waiting.push((path.clone(), size, Instant::now())),
                }
            }
        }
        budget::check(budget, run.heap_bytes() as u64, 0, 0).map_err(|e| e.with_path(show.name))?;
        if let Some(segments) = show.segments.as_mut() {
            segments.cut(run.heap_bytes(), || run.take_segment())?;
        }
    }
    Ok(arrived)
}

fn cancelled(name: &str) -> LoadError {
    LoadError::from(std::io::Error::new(std::io::ErrorKind::Interrupted, "loading was cancelled")).with_path(name)
}

/// Reads `path` to its end through [`Live`], showing the run so far with `shown` (see
/// [`Live::read`]); `None` when the path is read whole instead.
pub fn load(path: &Path, report: &mut LoadReport, shown: Option<ShowRun<'_>>) -> Option<Result<Run, LoadError>> {
    let mut live = match Live::open(path, report.clone()) {
        Ok(Some(live)) => live,
        Ok(None) => return None,
        Err(err) => return Some(Err(err)),
    };
    Some(live.read(shown).and_then(|_| live.finish(report)))
}
