//! "vantage JSONL v1", the native format: a header record, then group, trajectory and tree
//! records, one JSON object per line. docs/FORMAT.md describes every field.

mod convert;
mod records;
mod tree;
pub mod write;

use std::sync::Arc;

use crate::load::lenient::{FieldError, parse_located, quote_non_finite};
use crate::load::{LoadError, LoadReport, Loader};
use crate::model::{BytesSource, GroupId, GrowingSource, NewGroup, RawWindow, Run, RunBuilder, TextSource, Warning};

use convert::{TokenColumns, check_spans, new_step, outcome};
use records::{JsonText, RawRecord, RawStep};

/// The format name shown to users.
pub const FORMAT_NAME: &str = "vantage JSONL v1";

/// The native JSONL loader.
pub struct NativeJsonl;

impl Loader for NativeJsonl {
    fn name(&self) -> &'static str {
        "vantage"
    }

    fn description(&self) -> &'static str {
        "vantage JSONL v1: header, group, trajectory and tree records (docs/FORMAT.md)"
    }

    paced!(load_paced);
}

/// Whether `record` is the vantage header (`"vantage"` key at top level).
fn header_version(first_line: &str) -> Option<serde_json::Value> {
    #[derive(serde::Deserialize)]
    struct Header {
        vantage: Option<serde_json::Value>,
    }
    // Only an object: serde would also fill the struct from a one-element array.
    if !first_line.trim_start().starts_with('{') {
        return None;
    }
    serde_json::from_str::<Header>(first_line).ok()?.vantage
}

/// Reads a native JSONL run (its texts copied into memory).
pub fn load(name: &str, bytes: &[u8], report: &mut LoadReport) -> Result<Run, LoadError> {
    crate::load::pace::block_on(load_paced(name, bytes, report))
}

/// Bytes fed to a [`NativeStream`] at a time by [`load_paced`]: enough for every core to have a
/// share. Where loads are paced (the web), one line at a time, with [`pace::pace`] between them.
///
/// [`pace::pace`]: crate::load::pace::pace
const FEED_BYTES: usize = 1 << 24;

/// Reads a native JSONL run, giving the event loop back between slices (see `load::pace`). The
/// texts are copied into memory (the bytes are only borrowed); [`load_shared_paced`] keeps them
/// in the log instead.
pub async fn load_paced(name: &str, bytes: &[u8], report: &mut LoadReport) -> Result<Run, LoadError> {
    let stream = NativeStream::start(name, bytes, std::mem::take(report))?;
    feed_all(stream, bytes, report).await
}

/// Reads a native JSONL run held in `bytes`, leaving its texts there (the run keeps the bytes).
pub async fn load_shared_paced(name: &str, bytes: Arc<[u8]>, report: &mut LoadReport) -> Result<Run, LoadError> {
    let mut stream = NativeStream::start(name, &bytes, std::mem::take(report))?;
    stream.keep_texts_in(Arc::new(BytesSource(Arc::clone(&bytes))));
    feed_all(stream, &bytes, report).await
}

async fn feed_all(mut stream: NativeStream, bytes: &[u8], report: &mut LoadReport) -> Result<Run, LoadError> {
    let mut offset = 0;
    let size = if crate::load::pace::is_paced() { 0 } else { FEED_BYTES };
    while offset < bytes.len() {
        let end = next_cut(bytes, offset, size);
        stream.feed(&bytes[offset..end], offset as u64);
        offset = end;
        crate::load::pace::pace().await;
    }
    stream.finish_into(report)
}

/// Where to end a piece that starts at `from` and is about `size` bytes long: just after a line
/// terminator, or at the end of `bytes`.
pub fn next_cut(bytes: &[u8], from: usize, size: usize) -> usize {
    let target = from.saturating_add(size);
    if target >= bytes.len() {
        return bytes.len();
    }
    match bytes[target..].iter().position(|&b| b == b'\n') {
        Some(i) => target + i + 1,
        None => bytes.len(),
    }
}

/// The whole lines at the start of `pending`, taken out of it (what follows the last line end
/// stays); `None` when no line has ended yet.
pub fn take_lines(pending: &mut Vec<u8>) -> Option<Vec<u8>> {
    let last = pending.iter().rposition(|&b| b == b'\n')?;
    let rest = pending.split_off(last + 1);
    Some(std::mem::replace(pending, rest))
}

/// The least bytes a part of a fed piece must have to be parsed on a thread of its own.
const MIN_PART_BYTES: usize = 1 << 20;
/// The most parts a fed piece is cut into.
const MAX_PARTS: usize = 64;

/// A native JSONL log read piece by piece: the pieces are whole lines, fed in file order (a log
/// read in chunks, or a file that is still growing); the run so far can be taken at any point.
///
/// Each piece is parsed in parts on every core (`credit::par::pipeline`) while its records are
/// added in file order on this thread, so the run, its ids, warnings and line numbers are the
/// same whatever the number of threads and however the log is cut into pieces.
pub struct NativeStream {
    loader: NativeLoader,
    /// Line number of the next line fed.
    next_line: u64,
    /// The header's line (it and the blank lines before it are not records).
    header_line: u64,
    /// Texts are left in the log ([`NativeStream::keep_texts_in`]).
    lazy: bool,
    min_part_bytes: usize,
}

impl NativeStream {
    /// Starts reading a log whose first bytes are `head` (which must hold the header line): checks
    /// the header. [`LoadError::Incompatible`] when this is not a vantage JSONL log.
    pub fn start(name: &str, head: &[u8], report: LoadReport) -> Result<Self, LoadError> {
        let head = head.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(head);
        let incompatible = |reason: &str| LoadError::Incompatible { format: FORMAT_NAME, reason: reason.to_owned() };
        let Some((index, header_bytes)) = head
            .split(|&b| b == b'\n')
            .map(|l| l.strip_suffix(b"\r").unwrap_or(l))
            .enumerate()
            .find(|(_, l)| !l.iter().all(u8::is_ascii_whitespace))
        else {
            return Err(incompatible("the file is empty"));
        };
        let header_line = index as u64 + 1;
        let Ok(header_text) = std::str::from_utf8(header_bytes) else {
            return Err(incompatible("the first line is not UTF-8"));
        };
        let header_text = quote_non_finite(header_text);
        let Some(version) = header_version(&header_text) else {
            return Err(incompatible("the first line is not a {\"vantage\": 1, …} header"));
        };
        if version.as_u64() != Some(1) {
            return Err(LoadError::Unsupported {
                line: header_line,
                field: "vantage".to_owned(),
                reason: format!("format version {version} is not supported (this build reads version 1)"),
            });
        }
        let mut loader = NativeLoader { builder: RunBuilder::new(name, FORMAT_NAME), report, ignored: Vec::new() };
        loader.header(header_line, &header_text);
        // The header's line and those before it are read; feeding starts over at line 1 and skips them.
        Ok(Self { loader, next_line: 1, lazy: false, min_part_bytes: MIN_PART_BYTES, header_line })
    }
    /// Leaves the texts of the records fed from now on in the log, read again from `source` (the
    /// log's bytes, each at the offset given to [`Self::feed`]).
    pub fn keep_texts_in(&mut self, source: Arc<dyn TextSource>) {
        self.loader.builder.set_text_source(source);
        self.lazy = true;
    }

    /// Parses pieces of at least `bytes` on threads of their own (tests cut tiny logs into many
    /// parts to check that the run does not depend on it).
    pub fn set_min_part_bytes(&mut self, bytes: usize) {
        self.min_part_bytes = bytes.max(1);
    }

    /// Reads `chunk`, whole lines of the log (the last may lack its terminator only when it is
    /// the log's last line), which begin at byte `offset` of the log.
    pub fn feed(&mut self, chunk: &[u8], offset: u64) {
        let first_line = self.next_line;
        let body = if offset == 0 { chunk.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(chunk) } else { chunk };
        let body_offset = offset + (chunk.len() - body.len()) as u64;
        let mut cuts = vec![0];
        let parts = (body.len() / self.min_part_bytes).clamp(1, MAX_PARTS);
        while *cuts.last().unwrap_or(&0) < body.len() {
            let from = *cuts.last().unwrap_or(&0);
            cuts.push(next_cut(body, from, body.len().div_ceil(parts)));
        }
        let pieces: Vec<&[u8]> = cuts.windows(2).map(|w| &body[w[0]..w[1]]).collect();
        let window = RawWindow::of(body, body_offset);
        self.loader.builder.set_raw_window(self.lazy.then_some(window));
        let mut line = first_line;
        let (loader, lazy, header_line) = (&mut self.loader, self.lazy, self.header_line);
        // Parts are parsed on the other cores while this thread adds the ones before, in order.
        // The parsed records go back to the thread that parsed them to be freed.
        crate::credit::par::pipeline(pieces, parse_piece, |parsed| {
            let mut used = Vec::with_capacity(parsed.len());
            for entry in parsed {
                if line > header_line {
                    used.extend(loader.apply(line, entry, lazy));
                }
                line += 1;
            }
            used
        });
        self.loader.builder.set_raw_window(None);
        self.next_line = line;
        self.loader.report.progress.set(offset + chunk.len() as u64);
    }

    /// The run so far (derived anew; the stream goes on).
    pub fn snapshot(&self) -> Run {
        crate::load::records::snapshot(&self.loader.builder, &self.loader.report)
    }

    /// What loading has found so far.
    pub fn report(&self) -> &LoadReport {
        &self.loader.report
    }

    /// Approximate heap bytes of the run so far.
    pub fn heap_bytes(&self) -> usize {
        self.loader.builder.heap_bytes()
    }

    /// Finishes the run, handing the report to `report`; an error when no record loaded.
    pub fn finish_into(self, report: &mut LoadReport) -> Result<Run, LoadError> {
        let NativeLoader { builder, report: own, .. } = self.loader;
        *report = own;
        crate::load::records::finish(builder, report, "trajectory")
    }
}

/// A vantage JSONL log that grows as its bytes arrive, in any pieces (the web build follows a
/// `?url=` log by asking for the bytes past what it has): whole lines are read as they complete,
/// an incomplete last line waits, and the texts stay in the bytes received ([`GrowingSource`]).
pub struct GrowingLog {
    stream: NativeStream,
    source: Arc<GrowingSource>,
    received: u64,
    fed: u64,
    pending: Vec<u8>,
}

impl GrowingLog {
    /// Starts with the log's first bytes (at least its header line).
    pub fn start(name: &str, bytes: &[u8]) -> Result<Self, LoadError> {
        let mut stream = NativeStream::start(name, bytes, LoadReport::new(name))?;
        let source = Arc::new(GrowingSource::default());
        stream.keep_texts_in(Arc::clone(&source) as Arc<dyn TextSource>);
        let mut log = Self { stream, source, received: 0, fed: 0, pending: Vec::new() };
        log.append(bytes);
        Ok(log)
    }

    /// Bytes of the log received so far.
    pub fn received(&self) -> u64 {
        self.received
    }

    /// Takes the next bytes of the log; returns whether whole lines arrived (and were read).
    pub fn append(&mut self, bytes: &[u8]) -> bool {
        self.received += bytes.len() as u64;
        self.pending.extend_from_slice(bytes);
        let Some(lines) = take_lines(&mut self.pending) else { return false };
        let lines: Arc<[u8]> = lines.into();
        self.source.push(self.fed, Arc::clone(&lines));
        self.stream.feed(&lines, self.fed);
        self.fed += lines.len() as u64;
        true
    }

    /// The run so far.
    pub fn snapshot(&self) -> Run {
        self.stream.snapshot()
    }

    /// What reading has found so far.
    pub fn report(&self) -> &LoadReport {
        self.stream.report()
    }
}

/// One line as the parallel parse leaves it for the records to be added in order.
enum Parsed<'a> {
    /// Blank: not a record.
    Blank,
    /// Not UTF-8.
    NotUtf8(usize),
    /// The line has bare `NaN` / `Infinity` to quote first: parsed when it is added.
    Quoted(&'a str),
    /// Parsed, with the unknown fields it had.
    Record(Box<RawRecord<'a>>, Vec<String>),
    /// Not a valid record.
    Invalid(FieldError),
}

/// Parses the lines of `piece` (one entry per line, a last line without terminator included).
fn parse_piece(piece: &[u8]) -> Vec<Parsed<'_>> {
    let piece = piece.strip_suffix(b"\n").unwrap_or(piece);
    let mut out = Vec::new();
    let mut ignored = Vec::new();
    // A piece that is all UTF-8 (the usual case) is split with a vectorised search for the line
    // ends; otherwise line by line, each line checked on its own.
    if let Ok(text) = std::str::from_utf8(piece) {
        for line in text.split('\n') {
            out.push(parse_line(line.strip_suffix('\r').unwrap_or(line), &mut ignored));
        }
        return out;
    }
    for line in piece.split(|&b| b == b'\n') {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        out.push(match std::str::from_utf8(line) {
            Ok(text) => parse_line(text, &mut ignored),
            Err(err) => Parsed::NotUtf8(err.valid_up_to()),
        });
    }
    out
}

/// Parses one line (UTF-8, without its terminator).
fn parse_line<'a>(text: &'a str, ignored: &mut Vec<String>) -> Parsed<'a> {
    if text.bytes().all(|b| b.is_ascii_whitespace()) {
        return Parsed::Blank;
    }
    // The fast parse; a record it refuses (an unknown field, an error) is parsed again with
    // field paths and unknown-field tracking, for its located warnings.
    if let Ok(record) = serde_json::from_str::<records::strict::RawRecord<'_>>(text) {
        return Parsed::Record(Box::new(record.into()), Vec::new());
    }
    ignored.clear();
    match parse_located::<RawRecord<'_>>(text, ignored) {
        Ok(record) => Parsed::Record(Box::new(record), std::mem::take(ignored)),
        // Bare `NaN` / `Infinity` are invalid JSON: quoted, the line is parsed again when it
        // is added (a line without them keeps its error). Looked for only when parsing
        // failed, which costs nothing on the lines that parse.
        Err(_) if matches!(quote_non_finite(text), std::borrow::Cow::Owned(_)) => Parsed::Quoted(text),
        Err(err) => Parsed::Invalid(err),
    }
}

struct NativeLoader {
    builder: RunBuilder,
    report: LoadReport,
    ignored: Vec<String>,
}

impl NativeLoader {
    fn header(&mut self, line: u64, text: &str) {
        self.report.records_seen += 1;
        self.ignored.clear();
        match parse_located::<RawRecord<'_>>(text, &mut self.ignored) {
            Ok(record) => {
                self.warn_ignored(line);
                self.report.records_loaded += 1;
                if let Some(name) = record.name {
                    self.builder.meta_mut().metadata.insert("name".to_owned(), serde_json::Value::String(name));
                }
                if let Some(meta) = record.meta {
                    self.builder.meta_mut().metadata.extend(meta);
                }
            }
            Err(FieldError { field, reason }) => self.report.warn(Warning::skipped(line, field, reason)),
        }
    }

    fn warn_ignored(&mut self, line: u64) {
        for field in self.ignored.drain(..) {
            self.report.warn(Warning::kept(line, field, "unknown field, ignored"));
        }
    }

    /// Adds one parsed line; `lazy`: its texts are literals in the builder's raw window. Hands
    /// back the parsed record, to be freed where it was made.
    fn apply<'a>(&mut self, line: u64, parsed: Parsed<'a>, lazy: bool) -> Option<Box<RawRecord<'a>>> {
        let result = match parsed {
            Parsed::Blank => return None,
            Parsed::NotUtf8(at) => {
                Err(Warning::skipped(line, "record", format!("invalid UTF-8 at byte {at} of the line")))
            }
            Parsed::Quoted(text) => {
                let text = quote_non_finite(text);
                self.ignored.clear();
                match parse_located::<RawRecord<'_>>(&text, &mut self.ignored) {
                    // The quoted line is a copy, outside the raw window: its texts are decoded.
                    Ok(mut record) => {
                        self.add_record(line, &mut record, true);
                        return None;
                    }
                    Err(FieldError { field, reason }) => Err(Warning::skipped(line, field, reason)),
                }
            }
            Parsed::Record(mut record, ignored) => {
                self.ignored = ignored;
                self.add_record(line, &mut record, !lazy);
                return Some(record);
            }
            Parsed::Invalid(FieldError { field, reason }) => Err(Warning::skipped(line, field, reason)),
        };
        self.report.records_seen += 1;
        self.count(result);
        None
    }

    /// Adds a parsed record (after the warnings for its unknown fields in `self.ignored`),
    /// its texts decoded first when `decode`.
    fn add_record(&mut self, line: u64, record: &mut RawRecord<'_>, decode: bool) {
        self.warn_ignored(line);
        if decode {
            records::decode_texts(record);
        }
        self.report.records_seen += 1;
        let result = self.record(line, record);
        self.count(result);
    }

    fn count(&mut self, result: Result<(), Warning>) {
        match result {
            Ok(()) => self.report.records_loaded += 1,
            Err(warning) => self.report.warn(warning),
        }
    }

    fn record(&mut self, line: u64, record: &RawRecord<'_>) -> Result<(), Warning> {
        match record.kind.as_deref() {
            Some("trajectory") => self.trajectory(line, record),
            Some("tree") => tree::tree(self.builder_and_report(), line, record),
            Some("group") => {
                let id = required_id(record.id.as_ref(), "id", line)?;
                let group = new_group(id, record);
                self.add_group(line, &group);
                Ok(())
            }
            Some(other) => Err(Warning::skipped(
                line,
                "type",
                format!("unknown record type {other:?} (expected group, trajectory or tree)"),
            )),
            None if record.vantage.is_some() => {
                Err(Warning::skipped(line, "vantage", "a second header; only the first line may be a header"))
            }
            None => Err(Warning::skipped(line, "type", "missing (expected group, trajectory or tree)")),
        }
    }

    fn builder_and_report(&mut self) -> (&mut RunBuilder, &mut LoadReport) {
        (&mut self.builder, &mut self.report)
    }

    fn add_group(&mut self, line: u64, group: &NewGroup<'_>) -> GroupId {
        add_group(&mut self.builder, &mut self.report, line, group)
    }

    fn trajectory(&mut self, line: u64, record: &RawRecord<'_>) -> Result<(), Warning> {
        let id = required_id(record.id.as_ref(), "id", line)?;
        if self.builder.has_trajectory(id) {
            return Err(Warning::skipped(line, "id", format!("duplicate trajectory id {id:?}")));
        }
        let group_key = required_id(record.group.as_ref(), "group", line)?;
        let Some(steps) = record.steps.as_ref() else {
            return Err(Warning::skipped(line, "steps", "missing; a trajectory needs at least one step"));
        };
        if steps.is_empty() {
            return Err(Warning::skipped(line, "steps", "empty; a trajectory needs at least one step"));
        }
        if record.nodes.is_some() {
            return Err(Warning::skipped(
                line,
                "nodes",
                "a trajectory record has steps, not nodes (use \"type\": \"tree\")",
            ));
        }
        let (tokens, num_tokens) = TokenColumns::from_raw(record.tokens.as_ref(), "tokens", line)?;
        let spans = steps.iter().enumerate().filter(|(_, s)| s.token_span.is_some());
        let spans = spans.map(|(i, s)| (format!("steps[{i}]"), s.token_span));
        check_spans(spans, num_tokens, line)?;
        let mut kept = Vec::new();
        for (i, step) in steps.iter().enumerate() {
            warn_tree_only_fields(step, &format!("steps[{i}]"), line, &mut kept);
        }
        let outcome = outcome(record.outcome.as_ref(), "outcome", line, &mut kept);
        let group = new_group(group_key, record);
        let group = self.add_group(line, &group);
        let new_steps: Vec<_> = steps.iter().map(new_step).collect();
        let texts = tokens.texts();
        self.builder.add_chain_trajectory(id, group, &new_steps, &outcome, &tokens.borrow_with(texts.as_deref()));
        for warning in kept {
            self.report.warn(warning);
        }
        Ok(())
    }
}

/// Adds (or merges) a group, reporting attributes that disagree with the first record.
fn add_group(builder: &mut RunBuilder, report: &mut LoadReport, line: u64, group: &NewGroup<'_>) -> GroupId {
    let (id, conflicts) = builder.add_group(group);
    for field in conflicts {
        report.warn(Warning::kept(
            line,
            field,
            format!("differs from the value first given for group {:?}; the first is kept", group.key),
        ));
    }
    id
}

fn new_group<'a>(key: &'a str, record: &'a RawRecord<'_>) -> NewGroup<'a> {
    NewGroup {
        key,
        task: record.task.as_ref().map(|t| t.0.as_str()),
        train_step: record.train_step,
        prompt: record.prompt.as_ref().map(JsonText::as_str),
        gold: record.gold.as_ref().map(JsonText::as_str),
    }
}

fn required_id<'a>(id: Option<&'a crate::load::lenient::Id>, field: &str, line: u64) -> Result<&'a str, Warning> {
    match id {
        None => Err(Warning::skipped(line, field, "missing")),
        Some(id) if id.0.is_empty() => Err(Warning::skipped(line, field, "empty")),
        Some(id) => Ok(&id.0),
    }
}

fn warn_tree_only_fields(step: &RawStep<'_>, field: &str, line: u64, warnings: &mut Vec<Warning>) {
    for (name, present) in [
        ("parent", step.parent.is_some()),
        ("outcome", step.outcome.is_some()),
        ("trajectory", step.trajectory.is_some()),
        ("tokens", step.tokens.is_some()),
    ] {
        if present {
            warnings.push(Warning::kept(
                line,
                format!("{field}.{name}"),
                "only tree nodes have this field; ignored in a trajectory's steps",
            ));
        }
    }
}
