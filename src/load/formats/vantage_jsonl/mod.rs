//! "vantage JSONL v1", vantage's own format: a header record, then group, trajectory and tree
//! records, one JSON object per line. docs/FORMAT.md describes every field.

mod convert;
mod fast;
mod records;
mod scan;
mod tree;
pub mod write;

use std::sync::Arc;

use crate::load::lenient::{FieldError, parse_located, quote_non_finite};
pub use crate::load::lines::{LineFeed, next_cut, take_lines};
use crate::load::lines::{MIN_PART_BYTES, lines_of, parts, read_all};
use crate::load::{LoadError, LoadReport, Loader};
use crate::model::{BytesSource, GroupId, GrowingSource, NewGroup, RawWindow, Run, RunBuilder, TextSource, Warning};

use convert::{TokenColumns, check_spans, new_step, outcome};
use records::{JsonText, RawRecord, RawStep, located};

/// The format name shown to users.
pub const FORMAT_NAME: &str = "vantage JSONL v1";

/// The vantage JSONL loader.
pub struct VantageJsonl;

impl Loader for VantageJsonl {
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

/// Whether the fast path of a line agrees with `serde_json` on `line` (the fuzz target
/// `vantage_fast_path`): when it reads a record, `serde_json` reads the same one.
pub fn fast_path_agrees(line: &str) -> bool {
    fast::agrees_with_serde(line)
}

/// Reads a vantage JSONL run (its texts copied into memory).
pub fn load(name: &str, bytes: &[u8], report: &mut LoadReport) -> Result<Run, LoadError> {
    crate::load::pace::block_on(load_paced(name, bytes, report))
}

/// Reads a vantage JSONL run, giving the event loop back between slices (see `load::pace`). The
/// texts are copied into memory (the bytes are only borrowed); [`load_shared_paced`] keeps them
/// in the log instead.
pub async fn load_paced(name: &str, bytes: &[u8], report: &mut LoadReport) -> Result<Run, LoadError> {
    // A clone: the report stays with the caller when this is not the format.
    let stream = VantageStream::start(name, bytes, report.clone())?;
    read_all(Box::new(stream), bytes, report).await
}

/// Reads a vantage JSONL run held in `bytes`, leaving its texts there (the run keeps the bytes).
pub async fn load_shared_paced(name: &str, bytes: Arc<[u8]>, report: &mut LoadReport) -> Result<Run, LoadError> {
    let mut stream = VantageStream::start(name, &bytes, report.clone())?;
    stream.keep_texts_in(Arc::new(BytesSource(Arc::clone(&bytes))));
    read_all(Box::new(stream), &bytes, report).await
}

/// A vantage JSONL log read piece by piece: the pieces are whole lines, fed in file order (a log
/// read in chunks, or a file that is still growing); the run so far can be taken at any point.
///
/// Each piece is parsed in parts on every core (`crate::par::pipeline`) while its records are
/// added in file order on this thread, so the run, its ids, warnings and line numbers are the
/// same whatever the number of threads and however the log is cut into pieces.
pub struct VantageStream {
    loader: VantageLoader,
    /// Line number of the next line fed.
    next_line: u64,
    /// The header's line (it and the blank lines before it are not records).
    header_line: u64,
    /// Texts are left in the log ([`VantageStream::keep_texts_in`]).
    lazy: bool,
    min_part_bytes: usize,
}

impl VantageStream {
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
        let mut loader = VantageLoader { builder: RunBuilder::new(name, FORMAT_NAME), report, ignored: Vec::new() };
        loader.header(header_line, &header_text);
        // The header's line and those before it are read; feeding starts over at line 1 and skips them.
        Ok(Self { loader, next_line: 1, lazy: false, min_part_bytes: MIN_PART_BYTES, header_line })
    }
}

impl LineFeed for VantageStream {
    fn skip_long_line(&mut self, bytes: u64) {
        if self.next_line > self.header_line {
            self.loader.report.records_seen += 1;
            self.loader.report.warn(crate::load::lines::long_line_warning(self.next_line, bytes));
        }
        self.next_line += 1;
    }

    fn keep_texts_in(&mut self, source: Arc<dyn TextSource>) {
        self.loader.builder.set_text_source(source);
        self.lazy = true;
    }

    fn set_min_part_bytes(&mut self, bytes: usize) {
        self.min_part_bytes = bytes.max(1);
    }

    fn feed(&mut self, chunk: &[u8], offset: u64) {
        let first_line = self.next_line;
        let body = if offset == 0 { chunk.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(chunk) } else { chunk };
        let body_offset = offset + (chunk.len() - body.len()) as u64;
        let pieces = parts(body, self.min_part_bytes);
        let window = RawWindow::of_insides(body, body_offset);
        self.loader.builder.set_raw_window(self.lazy.then_some(window));
        let mut line = first_line;
        let (loader, lazy, header_line) = (&mut self.loader, self.lazy, self.header_line);
        // Parts are parsed on the other cores while this thread adds the ones before, in order.
        // The parsed records go back to the thread that parsed them to be freed.
        crate::par::pipeline(pieces, parse_piece, |parsed| {
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

    fn snapshot(&self) -> Run {
        crate::load::records::snapshot(&self.loader.builder, &self.loader.report)
    }

    fn report(&self) -> &LoadReport {
        &self.loader.report
    }

    fn heap_bytes(&self) -> usize {
        self.loader.builder.heap_bytes()
    }

    fn take_segment(&mut self) -> Run {
        self.loader.builder.take_segment()
    }

    fn finish_into(self: Box<Self>, report: &mut LoadReport) -> Result<Run, LoadError> {
        let VantageLoader { builder, report: own, .. } = self.loader;
        *report = own;
        crate::load::records::finish(builder, report, "trajectory")
    }
}

/// A vantage JSONL log that grows as its bytes arrive, in any pieces (the web build follows a
/// `?url=` log by asking for the bytes past what it has): whole lines are read as they complete,
/// an incomplete last line waits, and the texts stay in the bytes received ([`GrowingSource`]).
pub struct GrowingLog {
    stream: VantageStream,
    source: Arc<GrowingSource>,
    received: u64,
    fed: u64,
    pending: Vec<u8>,
}

impl GrowingLog {
    /// Starts with the log's first bytes (at least its header line).
    pub fn start(name: &str, bytes: &[u8]) -> Result<Self, LoadError> {
        let mut stream = VantageStream::start(name, bytes, LoadReport::new(name))?;
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
    let mut ignored = Vec::new();
    let mut labels = fast::Labels::default();
    lines_of(piece)
        .into_iter()
        .map(|line| match line {
            Ok(text) => parse_line(text, &mut ignored, &mut labels),
            Err(at) => Parsed::NotUtf8(at),
        })
        .collect()
}

/// Parses one line (UTF-8, without its terminator).
fn parse_line<'a>(text: &'a str, ignored: &mut Vec<String>, labels: &mut fast::Labels<'a>) -> Parsed<'a> {
    if text.bytes().all(|b| b.is_ascii_whitespace()) {
        return Parsed::Blank;
    }
    // The fast path of a trajectory of the common shape (`fast`), else the fast parse; a record
    // it refuses (an unknown field, an error) is parsed again with field paths and unknown-field
    // tracking, for its located warnings.
    if let Some(record) = fast::parse(text, labels) {
        return Parsed::Record(Box::new(record), Vec::new());
    }
    if let Ok(record) = serde_json::from_str::<RawRecord<'_>>(text) {
        return Parsed::Record(Box::new(record), Vec::new());
    }
    ignored.clear();
    match parse_located::<located::RawRecord<'_>>(text, ignored) {
        Ok(record) => Parsed::Record(Box::new(record.into()), std::mem::take(ignored)),
        // Bare `NaN` / `Infinity` are invalid JSON: quoted, the line is parsed again when it
        // is added (a line without them keeps its error). Looked for only when parsing
        // failed, which costs nothing on the lines that parse.
        Err(_) if matches!(quote_non_finite(text), std::borrow::Cow::Owned(_)) => Parsed::Quoted(text),
        Err(err) => Parsed::Invalid(err),
    }
}

struct VantageLoader {
    builder: RunBuilder,
    report: LoadReport,
    ignored: Vec<String>,
}

impl VantageLoader {
    fn header(&mut self, line: u64, text: &str) {
        self.report.records_seen += 1;
        self.ignored.clear();
        match parse_located::<located::RawRecord<'_>>(text, &mut self.ignored) {
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
                match parse_located::<located::RawRecord<'_>>(&text, &mut self.ignored) {
                    // The quoted line is a copy, outside the raw window: its texts are decoded.
                    Ok(record) => {
                        let mut record = RawRecord::from(record);
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
        // No step: its outcome alone (a trial whose agent did nothing), when it has one.
        let outcome_only = steps.is_empty();
        if outcome_only && record.outcome.as_ref().is_none_or(|o| o.reward.is_none() && o.success.is_none()) {
            return Err(Warning::skipped(
                line,
                "steps",
                "empty and no outcome; a trajectory needs at least one step, or an outcome alone",
            ));
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
            warn_tree_only_fields(step, || format!("steps[{i}]"), line, &mut kept);
        }
        let outcome = outcome(record.outcome.as_ref(), "outcome", line, &mut kept);
        let group = new_group(group_key, record);
        let group = self.add_group(line, &group);
        if outcome_only {
            self.builder.add_outcome_only_trajectory(id, group, &outcome);
        } else {
            let new_steps: Vec<_> = steps.iter().map(new_step).collect();
            let texts = tokens.texts();
            self.builder.add_chain_trajectory(id, group, &new_steps, &outcome, &tokens.borrow_with(texts.as_deref()));
        }
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
        mc: record.mc.as_ref().map(|m| crate::model::McStats { n: m.n, mean: m.mean.0 }),
        mc_rollouts: convert::rollouts(record.mc.as_ref()),
    }
}

fn required_id<'a>(id: Option<&'a crate::load::lenient::Id>, field: &str, line: u64) -> Result<&'a str, Warning> {
    match id {
        None => Err(Warning::skipped(line, field, "missing")),
        Some(id) if id.0.is_empty() => Err(Warning::skipped(line, field, "empty")),
        Some(id) => Ok(&id.0),
    }
}

/// `field` names the step (made only when there is a warning: most steps have none).
fn warn_tree_only_fields(step: &RawStep<'_>, field: impl Fn() -> String, line: u64, warnings: &mut Vec<Warning>) {
    for (name, present) in [
        ("parent", step.parent.is_some()),
        ("outcome", step.outcome.is_some()),
        ("trajectory", step.trajectory.is_some()),
        ("tokens", step.tokens.is_some()),
    ] {
        if present {
            warnings.push(Warning::kept(
                line,
                format!("{}.{name}", field()),
                "only tree nodes have this field; ignored in a trajectory's steps",
            ));
        }
    }
}
