//! JSON-lines logs read piece by piece on every core: the machinery the vantage JSONL loader and the
//! importers of JSON-lines formats (verl dumps, OpenAI chat, the PRM sets, OpenHands outputs)
//! share.
//!
//! A log is fed in pieces of whole lines, in file order. Each piece is cut into parts parsed on
//! the other cores (`crate::par::pipeline`) while this thread adds the parsed records in file
//! order, so the run, its ids, warnings and line numbers are the same whatever the number of
//! threads and however the log is cut. Natively the pieces come from the file (`source::live`),
//! so a log is never held whole; bytes already in memory are fed in slices ([`read_all`]).

use std::sync::Arc;

use super::lenient::{FieldError, parse_located, quote_non_finite};
use super::records::Record;
use super::{LoadError, LoadReport};
use crate::model::{RawWindow, Run, RunBuilder, TextSource, Warning};

/// A log read piece by piece: what `source::live` and [`read_all`] feed (the vantage JSONL loader's
/// `VantageStream`, and a [`LineStream`] of each importer that has one).
pub trait LineFeed: Send {
    /// Reads `chunk`, whole lines of the log (the last may lack its terminator only when it is
    /// the log's last line), which begin at byte `offset` of the log's text source.
    fn feed(&mut self, chunk: &[u8], offset: u64);
    /// Counts the next line as a record skipped for being `bytes` long, past [`MAX_LINE`] (its
    /// bytes are never held: the reader passes over them).
    fn skip_long_line(&mut self, bytes: u64);
    /// Leaves the texts of the records fed from now on in the log, read again from `source`
    /// (where a format keeps texts as byte ranges; the others copy them).
    fn keep_texts_in(&mut self, source: Arc<dyn TextSource>);
    /// Parses parts of at least `bytes` on threads of their own (tests cut tiny logs into many
    /// parts to check that the run does not depend on it).
    fn set_min_part_bytes(&mut self, bytes: usize);
    /// The run so far (derived anew; the stream goes on).
    fn snapshot(&self) -> Run;
    /// What loading has found so far.
    fn report(&self) -> &LoadReport;
    /// Approximate heap bytes of the run so far.
    fn heap_bytes(&self) -> usize;
    /// The lines fed from now on are of the file `name` (a format that takes something from a
    /// file's name, as NeMo-RL's step, reads it here; the others ignore it).
    fn start_file(&mut self, _name: &str) {}
    /// Hands on the run read since the last cut and goes on with an empty one
    /// ([`RunBuilder::take_segment`]); the report goes on counting the whole log.
    fn take_segment(&mut self) -> Run;
    /// Finishes the run, handing the report to `report`; an error when nothing loaded.
    fn finish_into(self: Box<Self>, report: &mut LoadReport) -> Result<Run, LoadError>;
}

/// The longest line a JSON-lines log may have: a longer one is skipped with a located warning
/// (its bytes are passed over, never held), and the lines after it load.
pub const MAX_LINE: usize = 256 << 20;

/// The warning of a line of `bytes`, past [`MAX_LINE`].
pub fn long_line_warning(line: u64, bytes: u64) -> Warning {
    Warning::skipped(
        line,
        "record",
        format!(
            "the line is {} long, past the {} a record may be",
            super::budget::size(bytes),
            super::budget::size(MAX_LINE as u64)
        ),
    )
}

/// A JSON-lines format read by a [`LineStream`].
pub trait JsonLines: Send {
    /// One record as parsed on a parse thread.
    type Item: Send;
    /// What a record is called in "no … loaded".
    fn what(&self) -> &'static str;
    /// The lines added from now on are of the file `name` (see [`LineFeed::start_file`]).
    fn start_file(&mut self, _name: &str) {}
    /// Parses one non-blank line (on any thread).
    fn parse(text: &str) -> Result<Self::Item, FieldError>;
    /// Adds one parsed record, in file order. `record.text` is its line: within the builder's raw
    /// window when the stream keeps texts in the source (a copy when `NaN` had to be quoted);
    /// `index` counts the non-blank lines before it.
    fn add(&mut self, b: &mut RunBuilder, record: Record<'_>, index: usize, item: Self::Item, report: &mut LoadReport);
}

/// Adds one record of a [`Records`] format: the builder, the record, the number of non-blank
/// lines before it, the record parsed, the report.
pub type AddRecord<T> = fn(&mut RunBuilder, Record<'_>, usize, &T, &mut LoadReport);

/// A JSON-lines format whose lines each parse into `T` ([`parse_json`]) and are added by a
/// function, with no state of its own.
pub struct Records<T> {
    what: &'static str,
    add: AddRecord<T>,
}

/// A stream of a [`Records`] format into `builder`: records called `what`, added by `add`.
pub fn records<T: serde::de::DeserializeOwned + Send + 'static>(
    builder: RunBuilder,
    what: &'static str,
    add: AddRecord<T>,
    report: LoadReport,
) -> Box<dyn LineFeed> {
    Box::new(LineStream::new(Records { what, add }, builder, report))
}

impl<T: serde::de::DeserializeOwned + Send> JsonLines for Records<T> {
    type Item = T;

    fn what(&self) -> &'static str {
        self.what
    }

    fn parse(text: &str) -> Result<T, FieldError> {
        parse_json(text)
    }

    fn add(&mut self, b: &mut RunBuilder, record: Record<'_>, index: usize, item: T, report: &mut LoadReport) {
        (self.add)(b, record, index, &item, report);
    }
}

/// Parses a record into `T` (a plain parse; one that fails is parsed again with field paths, for
/// the located error). Unknown fields are ignored silently: other tools' logs carry many.
pub fn parse_json<T: serde::de::DeserializeOwned>(text: &str) -> Result<T, FieldError> {
    serde_json::from_str(text).or_else(|_| parse_located(text, &mut Vec::new()))
}

/// Bytes fed at a time by [`read_all`]: enough for every core to have a share. Where loads are
/// paced (the web), one line at a time, with `pace::pace` between them.
const FEED_BYTES: usize = 1 << 24;
/// The least bytes a part of a fed piece must have to be parsed on a thread of its own.
pub(crate) const MIN_PART_BYTES: usize = 1 << 20;
/// The most parts a fed piece is cut into.
const MAX_PARTS: usize = 64;

/// Reads all of `bytes` through `stream`, giving the event loop back between slices.
pub async fn read_all(mut stream: Box<dyn LineFeed>, bytes: &[u8], report: &mut LoadReport) -> Result<Run, LoadError> {
    let mut offset = 0;
    let size = if super::pace::is_paced() { 0 } else { FEED_BYTES };
    while offset < bytes.len() {
        let end = next_cut(bytes, offset, size);
        stream.feed(&bytes[offset..end], offset as u64);
        offset = end;
        super::pace::pace().await;
    }
    stream.finish_into(report)
}

/// Reads a JSON-lines format whose first lines `accepts`, through the stream `start` makes for
/// it; "not this format" (`format`, with `reason`) when they are not of it.
pub async fn read_format(
    (format, reason): (&'static str, &str),
    accepts: fn(&str) -> bool,
    start: fn(&str, LoadReport) -> Box<dyn LineFeed>,
    (name, bytes, report): (&str, &[u8], &mut LoadReport),
) -> Result<Run, LoadError> {
    if !accepts(&head_text(bytes)) {
        return Err(LoadError::Incompatible { format, reason: reason.to_owned() });
    }
    read_all(start(name, std::mem::take(report)), bytes, report).await
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

/// `body` cut at line ends into the parts parsed on threads of their own.
pub fn parts(body: &[u8], min_part_bytes: usize) -> Vec<&[u8]> {
    let mut cuts = vec![0];
    let parts = (body.len() / min_part_bytes.max(1)).clamp(1, MAX_PARTS);
    while *cuts.last().unwrap_or(&0) < body.len() {
        let from = *cuts.last().unwrap_or(&0);
        cuts.push(next_cut(body, from, body.len().div_ceil(parts)));
    }
    cuts.windows(2).map(|w| &body[w[0]..w[1]]).collect()
}

/// The lines of `part` (a last line without terminator included, `\r` taken off), each as text
/// or as where its UTF-8 breaks.
pub fn lines_of(part: &[u8]) -> Vec<Result<&str, usize>> {
    let part = part.strip_suffix(b"\n").unwrap_or(part);
    // A part that is all UTF-8 (the usual case), checked at once with SIMD, is split with a search
    // for the line ends; otherwise line by line, each line checked on its own (where it breaks).
    if let Ok(text) = simdutf8::basic::from_utf8(part) {
        // memchr's line search is SIMD (the standard library's `split` goes a word at a time).
        let mut lines = Vec::new();
        let mut from = 0;
        for end in memchr::memchr_iter(b'\n', part).chain([part.len()]) {
            let line = text.get(from..end).unwrap_or_default();
            lines.push(Ok(line.strip_suffix('\r').unwrap_or(line)));
            from = end + 1;
        }
        return lines;
    }
    part.split(|&b| b == b'\n')
        .map(|l| {
            let l = l.strip_suffix(b"\r").unwrap_or(l);
            std::str::from_utf8(l).map_err(|e| e.valid_up_to())
        })
        .collect()
}

/// The first lines of `bytes` as text, `NaN` and `Infinity` quoted: what formats are told by.
/// Up to eight non-blank lines, or 4 MiB.
pub fn head_text(bytes: &[u8]) -> String {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let mut end = 0;
    let mut lines = 0;
    while end < bytes.len() && lines < 8 && end < 1 << 22 {
        let next = next_cut(bytes, end, 0);
        lines += usize::from(!bytes[end..next].iter().all(u8::is_ascii_whitespace));
        end = next;
    }
    let text = String::from_utf8_lossy(&bytes[..end.min(1 << 22)]);
    quote_non_finite(&text).into_owned()
}

/// One line as the parse threads leave it.
enum Parsed<T> {
    Blank,
    NotUtf8(usize),
    Item(T),
    /// Parsed once its bare `NaN` / `Infinity` were quoted: the quoted copy.
    Quoted(String, T),
    Invalid(FieldError),
}

fn parse_line<F: JsonLines>(line: Result<&str, usize>) -> Parsed<F::Item> {
    let text = match line {
        Err(at) => return Parsed::NotUtf8(at),
        Ok(text) if text.trim().is_empty() => return Parsed::Blank,
        Ok(text) => text,
    };
    match F::parse(text) {
        Ok(item) => Parsed::Item(item),
        // Bare `NaN` / `Infinity` are invalid JSON: quoted, the line is parsed again (a line
        // without them keeps its error). Looked for only when parsing failed.
        Err(err) => match quote_non_finite(text) {
            std::borrow::Cow::Owned(quoted) => match F::parse(&quoted) {
                Ok(item) => Parsed::Quoted(quoted, item),
                Err(err) => Parsed::Invalid(err),
            },
            std::borrow::Cow::Borrowed(_) => Parsed::Invalid(err),
        },
    }
}

/// A JSON-lines log of format `F` read piece by piece (see the module's documentation).
pub struct LineStream<F: JsonLines> {
    format: F,
    builder: RunBuilder,
    report: LoadReport,
    /// Line number of the next line fed, and the number of non-blank lines before it.
    next_line: u64,
    index: usize,
    lazy: bool,
    min_part_bytes: usize,
}

impl<F: JsonLines> LineStream<F> {
    /// A stream that adds the records of `format` to `builder`.
    pub fn new(format: F, builder: RunBuilder, report: LoadReport) -> Self {
        Self { format, builder, report, next_line: 1, index: 0, lazy: false, min_part_bytes: MIN_PART_BYTES }
    }

    /// The format's own state.
    pub fn format(&self) -> &F {
        &self.format
    }

    /// The run's notes, to add to.
    pub fn builder_mut(&mut self) -> &mut RunBuilder {
        &mut self.builder
    }
}

impl<F: JsonLines> LineFeed for LineStream<F> {
    fn feed(&mut self, chunk: &[u8], offset: u64) {
        let body = if self.next_line == 1 { chunk.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(chunk) } else { chunk };
        let body_offset = offset + (chunk.len() - body.len()) as u64;
        let pieces = parts(body, self.min_part_bytes);
        self.builder.set_raw_window(self.lazy.then(|| RawWindow::of(body, body_offset)));
        let Self { format, builder, report, next_line, index, .. } = self;
        // Parts are parsed on the other cores while this thread adds the ones before, in order.
        crate::par::pipeline(
            pieces,
            |part| lines_of(part).into_iter().map(|line| (line, parse_line::<F>(line))).collect::<Vec<_>>(),
            |parsed| {
                for (line, entry) in parsed {
                    let at = *next_line;
                    *next_line += 1;
                    let text = line.unwrap_or_default();
                    let (text, item) = match entry {
                        Parsed::Blank => continue,
                        Parsed::NotUtf8(byte) => {
                            report.records_seen += 1;
                            *index += 1;
                            let reason = format!("invalid UTF-8 at byte {byte} of the line");
                            report.warn(Warning::skipped(at, "record", reason));
                            continue;
                        }
                        Parsed::Invalid(FieldError { field, reason }) => {
                            report.records_seen += 1;
                            *index += 1;
                            report.warn(Warning::skipped(at, field, reason));
                            continue;
                        }
                        Parsed::Item(item) => (std::borrow::Cow::Borrowed(text), item),
                        Parsed::Quoted(quoted, item) => (std::borrow::Cow::Owned(quoted), item),
                    };
                    report.records_seen += 1;
                    report.records_loaded += 1;
                    format.add(builder, Record { line: at, text: &text }, *index, item, report);
                    *index += 1;
                }
            },
        );
        self.builder.set_raw_window(None);
        self.report.progress.set(offset + chunk.len() as u64);
    }

    fn skip_long_line(&mut self, bytes: u64) {
        self.report.records_seen += 1;
        self.report.warn(long_line_warning(self.next_line, bytes));
        self.next_line += 1;
        self.index += 1;
    }

    fn keep_texts_in(&mut self, source: Arc<dyn TextSource>) {
        self.builder.set_text_source(source);
        self.lazy = true;
    }

    fn set_min_part_bytes(&mut self, bytes: usize) {
        self.min_part_bytes = bytes.max(1);
    }

    fn snapshot(&self) -> Run {
        super::records::snapshot(&self.builder, &self.report)
    }

    fn report(&self) -> &LoadReport {
        &self.report
    }

    fn heap_bytes(&self) -> usize {
        self.builder.heap_bytes()
    }

    fn start_file(&mut self, name: &str) {
        self.format.start_file(name);
    }

    fn take_segment(&mut self) -> Run {
        self.builder.take_segment()
    }

    fn finish_into(self: Box<Self>, report: &mut LoadReport) -> Result<Run, LoadError> {
        let Self { format, builder, report: own, .. } = *self;
        *report = own;
        super::records::finish(builder, report, format.what())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_and_cuts_fall_on_line_ends() {
        let body = b"aa\nbbbb\ncc\nd";
        assert_eq!(next_cut(body, 0, 4), 8);
        assert_eq!(next_cut(body, 8, 100), body.len());
        let parts = parts(body, 2);
        assert_eq!(parts.concat(), body);
        assert!(parts.iter().take(parts.len() - 1).all(|p| p.ends_with(b"\n")));
        assert_eq!(lines_of(b"x\r\n\xff\ny"), vec![Ok("x"), Err(0), Ok("y")]);
        let mut pending = b"one\ntw".to_vec();
        assert_eq!(take_lines(&mut pending).as_deref(), Some(&b"one\n"[..]));
        assert_eq!(pending, b"tw");
    }
}
