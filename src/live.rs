//! Native: a run read from a path piece by piece, shown while it is read, and followed while it
//! grows.
//!
//! Three kinds of path are read this way, each by the core's incremental reader:
//! * a vantage JSONL file ([`NativeStream`]): read in pieces at line boundaries, each piece parsed
//!   on every core; its texts stay in the file (a [`FileSource`]), so the run takes a fraction of
//!   the file's size in memory;
//! * a verl `rollout_data_dir` directory of `<step>.jsonl` files ([`VerlStream`]);
//! * a TRL `completions/` directory of `completions_<step>.parquet` files ([`TrlRun`], with the
//!   `parquet` feature).
//!
//! Gzip and zstd files are decompressed as streams into the same readers (their texts are copied,
//! as there is no file to read them from again). Every other file is read whole.
//!
//! Following ([`Live::poll`]) reads what was added since the last look: the bytes appended to a
//! file (an incomplete last line waits for its end), the new files of a directory. A file that
//! shrinks or is replaced is read again from its start, with a notice.

use std::borrow::Cow;
use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::load::compressed::Compression;
use crate::load::native::NativeStream;
use crate::load::verl_dump::VerlStream;
use crate::load::{LoadError, LoadReport, budget};
use crate::model::{Run, TextSource};

/// A file the run's texts are read from again when shown (positioned reads, no memory map: a map of
/// a file that is truncated while followed would end the process).
#[derive(Debug)]
pub struct FileSource {
    file: std::fs::File,
}

impl TextSource for FileSource {
    fn read_at(&self, offset: u64, len: usize) -> Option<Cow<'_, [u8]>> {
        let mut buffer = vec![0; len];
        read_exact_at(&self.file, &mut buffer, offset).ok()?;
        Some(Cow::Owned(buffer))
    }
}

#[cfg(unix)]
fn read_exact_at(file: &std::fs::File, buffer: &mut [u8], offset: u64) -> std::io::Result<()> {
    std::os::unix::fs::FileExt::read_exact_at(file, buffer, offset)
}

#[cfg(windows)]
fn read_exact_at(file: &std::fs::File, mut buffer: &mut [u8], mut offset: u64) -> std::io::Result<()> {
    while !buffer.is_empty() {
        match std::os::windows::fs::FileExt::seek_read(file, buffer, offset)? {
            0 => return Err(std::io::ErrorKind::UnexpectedEof.into()),
            n => {
                buffer = &mut buffer[n..];
                offset += n as u64;
            }
        }
    }
    Ok(())
}

/// Where a load shows the run so far: called with it, returns `false` when the load was cancelled.
pub type ShowRun<'a> = &'a mut dyn FnMut(Run, &LoadReport) -> bool;

/// The first piece read of a file: small, so the first groups are on screen at once.
const FIRST_PIECE: usize = 2 << 20;
/// Later pieces: large enough for every core to have a share.
const PIECE: usize = 32 << 20;
/// The least time between two runs shown while a large file is read.
const SNAPSHOT_EVERY: Duration = Duration::from_secs(1);

/// The files of a directory that `step` gives a step number, in step order, and the names of the
/// others, sorted.
fn list_dir(dir: &Path, step: impl Fn(&Path) -> Option<u64>) -> (Vec<(u64, PathBuf)>, Vec<String>) {
    let (mut files, mut others) = (Vec::new(), Vec::new());
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        match step(&path).filter(|_| path.is_file()) {
            Some(step) => files.push((step, path)),
            None => others.push(entry.file_name().to_string_lossy().into_owned()),
        }
    }
    files.sort();
    others.sort();
    (files, others)
}

/// Which files of a directory are a verl dump: `<step>.jsonl`, by step.
pub fn verl_files(dir: &Path) -> (Vec<(u64, PathBuf)>, Vec<String>) {
    list_dir(dir, |path| {
        let step = path.file_stem().and_then(|s| s.to_str()).and_then(|s| s.parse::<u64>().ok());
        step.filter(|_| path.extension().is_some_and(|e| e == "jsonl"))
    })
}

/// Which files of a directory are TRL completions: `*.parquet`, by the step in their name.
fn trl_files(dir: &Path) -> (Vec<(u64, PathBuf)>, Vec<String>) {
    list_dir(dir, |path| {
        let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or_default();
        let digits: String = stem.chars().filter(char::is_ascii_digit).collect();
        path.extension().is_some_and(|e| e == "parquet").then(|| digits.parse().unwrap_or(u64::MAX))
    })
}

/// The first 64 KiB of a file (fewer when it is shorter or unreadable): enough to tell its format.
fn head(path: &Path) -> Vec<u8> {
    let mut head = Vec::new();
    let read = std::fs::File::open(path).and_then(|f| f.take(1 << 16).read_to_end(&mut head));
    if read.is_err() {
        head.clear();
    }
    head
}

/// What kind of run a directory holds: a verl dump, TRL completions, or neither.
pub fn directory_kind(dir: &Path) -> Option<&'static str> {
    if !dir.is_dir() {
        return None;
    }
    if !verl_files(dir).0.is_empty() {
        return Some("verl");
    }
    let trl = trl_files(dir).0;
    let named = |p: &PathBuf| p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with("completions"));
    let is_completions_dir = dir.file_name().is_some_and(|n| n == "completions");
    (!trl.is_empty() && (is_completions_dir || trl.iter().all(|(_, p)| named(p)))).then_some("trl")
}

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
        use std::io::{Seek as _, SeekFrom};
        if self.start > 0 {
            self.buffer.drain(..self.start);
            self.start = 0;
        }
        let take = self.len().saturating_sub(self.read).min(size as u64);
        if take > 0 {
            let failed = |e: std::io::Error| LoadError::from(e).with_path(&self.path.display().to_string());
            self.buffer.reserve(take as usize);
            // Into the buffer's spare room, which is not zeroed first (`read_to_end` reads a file
            // into uninitialised memory); the texts' own reads are positioned (`FileSource`).
            (&self.file).seek(SeekFrom::Start(self.read)).map_err(failed)?;
            let got = (&self.file).take(take).read_to_end(&mut self.buffer).map_err(failed)?;
            self.read += got as u64;
        }
        let Some(last) = self.buffer.iter().rposition(|&b| b == b'\n') else { return Ok(None) };
        let offset = self.fed;
        self.fed += last as u64 + 1;
        self.start = last + 1;
        Ok(Some((&self.buffer[..=last], offset)))
    }

    /// Whether bytes remain to be read.
    fn more(&self) -> bool {
        self.len() > self.read
    }

    /// The unterminated last line, taken (at the end of a load that does not follow).
    fn take_last(&mut self) -> Option<(Vec<u8>, u64)> {
        let rest = self.buffer.get(self.start..).filter(|r| !r.is_empty())?.to_vec();
        let offset = self.fed;
        self.fed += rest.len() as u64;
        self.buffer.clear();
        self.start = 0;
        Some((rest, offset))
    }
}

/// How the run is being read.
enum State {
    /// A vantage JSONL file, texts left in it.
    Jsonl { tail: Tail, stream: Box<NativeStream> },
    /// A compressed file, read once (it cannot be followed).
    Compressed { stream: Box<NativeStream> },
    /// A verl `rollout_data_dir`.
    Verl { dir: PathBuf, tails: Vec<(u64, Tail)>, stream: Box<VerlStream>, next_line: u64, skipped: Vec<String> },
    /// A TRL `completions/` directory.
    #[cfg(feature = "parquet")]
    Trl {
        dir: PathBuf,
        run: Box<crate::load::trl_parquet::TrlRun>,
        done: Vec<PathBuf>,
        waiting: Vec<(PathBuf, u64, Instant)>,
        skipped: Vec<String>,
    },
}

/// A run being read, or followed, from a path.
pub struct Live {
    path: PathBuf,
    name: String,
    state: State,
    report: LoadReport,
    budget: u64,
    /// When records last arrived.
    pub last_data: Option<Instant>,
    /// Things the reader noticed (a file replaced or truncated and read again, files skipped).
    pub notices: Vec<String>,
    /// Whether the path is followed: an unterminated last line waits for its end.
    following: bool,
}

impl Live {
    /// Opens `path` for reading piece by piece; `None` when it is not such a path (a vantage
    /// JSONL file, a compressed file, a verl or TRL directory). Nothing is read yet beyond the
    /// header (a compressed file is read whole here: it cannot be followed).
    pub fn open(path: &Path, report: LoadReport, budget: u64) -> Result<Option<Self>, LoadError> {
        let name = path.display().to_string();
        let mut report = report;
        report.file.clone_from(&name);
        let state = if path.is_dir() {
            match directory_kind(path) {
                Some("verl") => {
                    let (files, skipped) = verl_files(path);
                    let first = files.first().map(|(_, p)| head(p)).unwrap_or_default();
                    if !VerlStream::accepts(&String::from_utf8_lossy(&first)) {
                        // Numbered files of another format: read as one log by its loader.
                        return Ok(None);
                    }
                    State::Verl {
                        dir: path.to_owned(),
                        tails: Vec::new(),
                        stream: Box::new(VerlStream::new(&name)),
                        next_line: 1,
                        skipped,
                    }
                }
                #[cfg(feature = "parquet")]
                Some("trl") => {
                    let (_, skipped) = trl_files(path);
                    State::Trl {
                        dir: path.to_owned(),
                        run: Box::new(crate::load::trl_parquet::TrlRun::new(&name)),
                        done: Vec::new(),
                        waiting: Vec::new(),
                        skipped,
                    }
                }
                _ => return Ok(None),
            }
        } else {
            let tail = Tail::open(path)?;
            let head = head(path);
            if let Some(kind) = Compression::of(&head) {
                return match Self::compressed(path, kind, report, budget) {
                    Ok(live) => Ok(Some(live)),
                    // Another format inside: read whole (and decompressed) by its loader.
                    Err(err) if err.is_incompatible() => Ok(None),
                    Err(err) => Err(err),
                };
            }
            let mut stream = match NativeStream::start(&name, &head, std::mem::take(&mut report)) {
                Ok(stream) => Box::new(stream),
                Err(err) if err.is_incompatible() => return Ok(None),
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
            state,
            report,
            budget,
            last_data: None,
            notices: Vec::new(),
            following: false,
        }))
    }

    /// A compressed file: read through its decoder, every piece fed as it comes (no snapshots:
    /// the first piece arrives quickly and the whole is read at once).
    fn compressed(path: &Path, kind: Compression, report: LoadReport, budget: u64) -> Result<Self, LoadError> {
        let name = path.display().to_string();
        let file = std::fs::File::open(path).map_err(|e| LoadError::from(e).with_path(&name))?;
        let mut pending: Vec<u8> = Vec::new();
        let mut stream: Option<Box<NativeStream>> = None;
        let mut report = Some(report);
        let mut fed = 0u64;
        let feed = |stream: &mut NativeStream, lines: &[u8], fed: &mut u64| {
            stream.feed(lines, *fed);
            *fed += lines.len() as u64;
        };
        crate::load::compressed::for_each_piece(kind, std::io::BufReader::new(file), |piece| {
            pending.extend_from_slice(piece);
            if stream.is_none() {
                let Some(end) = pending.iter().position(|&b| b == b'\n') else { return Ok(()) };
                let started = NativeStream::start(&name, &pending[..=end], report.take().unwrap_or_default());
                stream = Some(Box::new(started.map_err(|e| {
                    if e.is_incompatible() {
                        LoadError::Incompatible {
                            format: crate::load::native::FORMAT_NAME,
                            reason: format!(
                                "a {} file holding another format: open it decompressed, or as a vantage JSONL log",
                                kind.name()
                            ),
                        }
                    } else {
                        e
                    }
                })?));
            }
            if pending.len() >= PIECE
                && let Some(s) = stream.as_mut()
                && let Some(lines) = crate::load::native::take_lines(&mut pending)
            {
                feed(s, &lines, &mut fed);
                budget::check(budget, s.heap_bytes() as u64, 1, 1)?;
            }
            Ok(())
        })
        .map_err(|e| e.with_path(&name))?;
        let Some(mut stream) = stream else {
            return Err(LoadError::Incompatible {
                format: crate::load::native::FORMAT_NAME,
                reason: format!("a {} file without a vantage header line", kind.name()),
            }
            .with_path(&name));
        };
        feed(&mut stream, &pending, &mut fed);
        Ok(Self {
            path: path.to_owned(),
            name,
            state: State::Compressed { stream },
            report: LoadReport::default(),
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
        let mut show = Shown { shown, last: None, name: &self.name };
        let arrived = match &mut self.state {
            State::Compressed { .. } => false,
            State::Jsonl { tail, stream } => read_jsonl(tail, stream, self.budget, &mut show)?,
            State::Verl { dir, tails, stream, next_line, skipped } => {
                let mut at = VerlAt { dir, tails, next_line, skipped, following: self.following };
                read_verl(&mut at, stream, &mut self.report, self.budget, &mut show)?
            }
            #[cfg(feature = "parquet")]
            State::Trl { dir, run, done, waiting, skipped } => {
                let mut at = TrlAt { dir, done, waiting, skipped };
                read_trl(&mut at, run, &mut self.report, self.budget, &self.name)?
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
            State::Verl { tails, .. } => tails.iter().find_map(|(_, t)| t.changed()),
            _ => None,
        };
        if let Some(how) = changed {
            self.notices.push(format!("{}: the log was {how} while followed; read again from its start", self.name));
            let report = LoadReport::new(&self.name);
            match Self::open(&self.path, report, self.budget)? {
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

    /// The run so far, with the notes of what was skipped.
    pub fn snapshot(&self) -> Run {
        let mut run = match &self.state {
            State::Jsonl { stream, .. } | State::Compressed { stream } => stream.snapshot(),
            State::Verl { stream, .. } => stream.snapshot(&self.report),
            #[cfg(feature = "parquet")]
            State::Trl { run, .. } => run.snapshot(&self.report),
        };
        self.note_skipped(&mut run.meta.notes);
        run
    }

    fn note_skipped(&self, notes: &mut Vec<String>) {
        let skipped = match &self.state {
            State::Verl { skipped, .. } => skipped,
            #[cfg(feature = "parquet")]
            State::Trl { skipped, .. } => skipped,
            _ => return,
        };
        if !skipped.is_empty() {
            notes.push(format!("files in the directory that are not part of the run, skipped: {}", skipped.join(", ")));
        }
    }

    /// What loading has found so far.
    pub fn report(&self) -> &LoadReport {
        match &self.state {
            State::Jsonl { stream, .. } | State::Compressed { stream } => stream.report(),
            _ => &self.report,
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
                stream.finish_into(report)
            }
            State::Compressed { stream } => stream.finish_into(report),
            State::Verl { stream, .. } => {
                *report = self.report;
                stream.finish(report)
            }
            #[cfg(feature = "parquet")]
            State::Trl { run, .. } => {
                *report = self.report;
                run.finish(report)
            }
        }
        .map_err(|e| e.with_path(&name))?;
        run.meta.notes.extend(notes);
        Ok(run)
    }
}

/// The `shown` callback of [`Live::read`], called at most once a second.
struct Shown<'s, 'n> {
    shown: Option<ShowRun<'s>>,
    last: Option<Instant>,
    name: &'n str,
}

impl Shown<'_, '_> {
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
    stream: &mut NativeStream,
    budget: u64,
    show: &mut Shown<'_, '_>,
) -> Result<bool, LoadError> {
    let total = tail.len();
    let mut first = tail.read == 0;
    let mut arrived = false;
    loop {
        let size = if first { FIRST_PIECE } else { PIECE };
        first = false;
        let Some((lines, offset)) = tail.next_lines(size)? else {
            if tail.more() {
                continue;
            }
            return Ok(arrived);
        };
        stream.feed(lines, offset);
        arrived = true;
        budget::check(budget, stream.heap_bytes() as u64, tail.read, total.max(tail.read))
            .map_err(|e| e.with_path(show.name))?;
        if !tail.more() {
            return Ok(arrived);
        }
        show.maybe(|| (stream.snapshot(), stream.report().clone()))?;
    }
}

/// Where a verl directory's reading stands.
struct VerlAt<'a> {
    dir: &'a Path,
    tails: &'a mut Vec<(u64, Tail)>,
    next_line: &'a mut u64,
    skipped: &'a mut Vec<String>,
    following: bool,
}

/// Reads what a verl directory has beyond what was read: new lines of its files, new files.
fn read_verl(
    at: &mut VerlAt<'_>,
    stream: &mut VerlStream,
    report: &mut LoadReport,
    budget: u64,
    show: &mut Shown<'_, '_>,
) -> Result<bool, LoadError> {
    let (files, others) = verl_files(at.dir);
    for other in others {
        if !at.skipped.contains(&other) {
            at.skipped.push(other);
        }
    }
    for (step, path) in files {
        if !at.tails.iter().any(|(_, t)| t.path == path) {
            at.tails.push((step, Tail::open(&path)?));
        }
    }
    at.tails.sort_by_key(|(step, _)| *step);
    let mut arrived = false;
    for (_, tail) in &mut *at.tails {
        loop {
            let next = tail.next_lines(PIECE)?.map(|(lines, _)| lines.to_vec());
            let lines = match next {
                Some(lines) => lines,
                None if tail.more() => continue,
                // The file's last line without a terminator: its end, unless followed.
                None if !at.following => match tail.take_last() {
                    Some((lines, _)) => lines,
                    None => break,
                },
                None => break,
            };
            *at.next_line = stream.feed(&lines, *at.next_line, report);
            arrived = true;
            budget::check(budget, stream.heap_bytes() as u64, 0, 0).map_err(|e| e.with_path(show.name))?;
            show.maybe(|| (stream.snapshot(report), report.clone()))?;
        }
    }
    Ok(arrived)
}

/// Where a TRL directory's reading stands.
#[cfg(feature = "parquet")]
struct TrlAt<'a> {
    dir: &'a Path,
    done: &'a mut Vec<PathBuf>,
    waiting: &'a mut Vec<(PathBuf, u64, Instant)>,
    skipped: &'a mut Vec<String>,
}

/// Reads the files a TRL directory has that were not read yet. A file that is not Parquet yet
/// (still being written) is tried again until it stops growing for five seconds, then skipped
/// with a note.
#[cfg(feature = "parquet")]
fn read_trl(
    at: &mut TrlAt<'_>,
    run: &mut crate::load::trl_parquet::TrlRun,
    report: &mut LoadReport,
    budget: u64,
    name: &str,
) -> Result<bool, LoadError> {
    let (files, others) = trl_files(at.dir);
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
        let stem = file_name.trim_end_matches(".parquet").to_owned();
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
        budget::check(budget, run.heap_bytes() as u64, 0, 0).map_err(|e| e.with_path(name))?;
    }
    Ok(arrived)
}

fn cancelled(name: &str) -> LoadError {
    LoadError::from(std::io::Error::new(std::io::ErrorKind::Interrupted, "loading was cancelled")).with_path(name)
}

/// Reads `path` to its end through [`Live`], showing the run so far with `shown` (see
/// [`Live::read`]); `None` when the path is read whole instead.
pub fn load(path: &Path, report: &mut LoadReport, shown: Option<ShowRun<'_>>) -> Option<Result<Run, LoadError>> {
    let mut live = match Live::open(path, report.clone(), budget::get()) {
        Ok(Some(live)) => live,
        Ok(None) => return None,
        Err(err) => return Some(Err(err)),
    };
    Some(live.read(shown).and_then(|_| live.finish(report)))
}
