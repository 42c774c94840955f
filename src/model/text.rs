//! The text arena: every text of a run (thoughts, actions, observations, prompts, token strings),
//! addressed by [`TextId`].
//!
//! A text is either held in memory (one `String` with an offsets array, Arrow's layout) or left
//! where it is in the log: a byte range of the run's [`TextSource`] (the file natively, its bytes
//! in the browser), decoded when something asks for it (a view on screen, search, export). A
//! large log's texts are most of its bytes, so a run read this way takes a fraction of the file's
//! size in memory.

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

use super::TextId;

/// Where a run's texts that were left in the log can be read again: the log's bytes.
pub trait TextSource: Send + Sync + fmt::Debug {
    /// `len` bytes from `offset`, or `None` when they cannot be read (the file was truncated,
    /// replaced or removed since it was opened).
    fn read_at(&self, offset: u64, len: usize) -> Option<Cow<'_, [u8]>>;
}

/// A log's bytes held in memory (the browser, a file already read whole).
#[derive(Clone, Debug)]
pub struct BytesSource(pub Arc<[u8]>);

impl TextSource for BytesSource {
    fn read_at(&self, offset: u64, len: usize) -> Option<Cow<'_, [u8]>> {
        let start = usize::try_from(offset).ok()?;
        self.0.get(start..start.checked_add(len)?).map(Cow::Borrowed)
    }
}

/// A log that grows while it is followed (the web build's `?url=` log polled with HTTP Range
/// requests): the bytes received so far, in pieces of whole lines, each at its offset.
#[derive(Debug, Default)]
pub struct GrowingSource {
    pieces: std::sync::RwLock<Vec<(u64, Arc<[u8]>)>>,
}

impl GrowingSource {
    /// Adds the bytes from `offset` on (pieces are added in order, without gaps).
    pub fn push(&self, offset: u64, bytes: Arc<[u8]>) {
        if let Ok(mut pieces) = self.pieces.write() {
            pieces.push((offset, bytes));
        }
    }
}

impl TextSource for GrowingSource {
    fn read_at(&self, offset: u64, len: usize) -> Option<Cow<'_, [u8]>> {
        let pieces = self.pieces.read().ok()?;
        // A text lies within one piece: pieces hold whole lines.
        let i = pieces.partition_point(|(start, _)| *start <= offset).checked_sub(1)?;
        let (start, bytes) = pieces.get(i)?;
        let from = usize::try_from(offset - start).ok()?;
        bytes.get(from..from.checked_add(len)?).map(|b| Cow::Owned(b.to_vec()))
    }
}

/// Bit of a [`TextId`] that marks a text left in the source (the rest is its index in the spans).
const IN_SOURCE: u32 = 1 << 31;

/// The text shown for a text of the source that can no longer be read.
pub const UNREADABLE: &str = "⟨text unavailable: the log changed since it was opened⟩";

/// Where the texts a loader hands the builder are raw JSON text of the source: the bytes
/// `[start, end)` of the loader's buffer (as addresses), which begin at byte `offset` of the
/// source. Such a text is either a whole JSON string literal, quotes included, or a piece of a
/// literal's inside, escapes as they are in the file (a loader that splits one string into
/// several texts); it is kept as a byte range instead of a copy.
#[derive(Clone, Copy, Debug)]
pub struct RawWindow {
    start: usize,
    end: usize,
    offset: u64,
}

impl RawWindow {
    /// The window of `buffer`, which holds the source's bytes from `offset` on.
    pub fn of(buffer: &[u8], offset: u64) -> Self {
        let start = buffer.as_ptr() as usize;
        Self { start, end: start + buffer.len(), offset }
    }

    /// The source offset of `text` when it lies inside the window.
    fn locate(&self, text: &str) -> Option<u64> {
        let at = text.as_ptr() as usize;
        (at >= self.start && at + text.len() <= self.end).then(|| self.offset + (at - self.start) as u64)
    }
}

/// All texts of a run.
#[derive(Clone, Debug, Default)]
pub struct TextArena {
    bytes: String,
    ends: Vec<u64>,
    /// Texts left in the source: the offset and length of each one's raw JSON string content
    /// (without quotes; escapes are decoded when it is read).
    span_start: Vec<u64>,
    span_len: Vec<u32>,
    source: Option<Arc<dyn TextSource>>,
    window: Option<RawWindow>,
}

impl TextArena {
    /// Whether every text is held in memory (none is left in the log or a dataset, to be read
    /// when asked for).
    pub fn holds_every_text(&self) -> bool {
        self.span_start.is_empty()
    }

    /// Stores `text`; the empty string is not stored and gets [`TextId::NONE`]. While a
    /// [`RawWindow`] is set and `text` lies in it, `text` is raw JSON (a literal with its quotes,
    /// or a piece of one's inside) and only its place is kept.
    pub fn push(&mut self, text: &str) -> TextId {
        if let Some(offset) = self.window.and_then(|w| w.locate(text)) {
            return match text.strip_prefix('"').and_then(|t| t.strip_suffix('"')) {
                Some(inside) if text.len() >= 2 => self.push_span(inside, offset + 1),
                _ => self.push_span(text, offset),
            };
        }
        if text.is_empty() {
            return TextId::NONE;
        }
        self.bytes.push_str(text);
        self.ends.push(self.bytes.len() as u64);
        TextId::from_index(self.ends.len() - 1)
    }

    /// Keeps `raw` (the inside of a JSON string, at `offset` of the source) as a span.
    fn push_span(&mut self, raw: &str, offset: u64) -> TextId {
        if raw.is_empty() {
            return TextId::NONE;
        }
        // The builder refuses to grow past u32 ids; a single text over 4 GiB is copied instead.
        let Ok(len) = u32::try_from(raw.len()) else { return self.push_decoded(raw) };
        if self.span_len.len() >= (IN_SOURCE - 1) as usize {
            return self.push_decoded(raw);
        }
        // Whether it has escapes is found when it is read (one text, not every text at load).
        self.span_start.push(offset);
        self.span_len.push(len);
        TextId(IN_SOURCE | (self.span_len.len() - 1) as u32)
    }

    /// Raw JSON string content that cannot be kept as a span: decoded and copied.
    fn push_decoded(&mut self, raw: &str) -> TextId {
        let window = self.window.take();
        let id = match decode_raw(raw.as_bytes()) {
            Some(text) => self.push(&text),
            None => TextId::NONE,
        };
        self.window = window;
        id
    }

    /// A text the source holds under `key` (a vantage Parquet v2 dataset's file, column and row),
    /// read from it when asked: the source hands it back as the inside of a JSON string literal,
    /// as it does a log's texts.
    pub fn push_external(&mut self, key: u64) -> TextId {
        if self.span_len.len() >= (IN_SOURCE - 1) as usize {
            return TextId::NONE;
        }
        self.span_start.push(key);
        self.span_len.push(0);
        TextId(IN_SOURCE | (self.span_len.len() - 1) as u32)
    }

    /// Stores `text` if present.
    pub fn push_opt(&mut self, text: Option<&str>) -> TextId {
        text.map_or(TextId::NONE, |t| self.push(t))
    }

    /// An empty arena that reads texts left in the log from the same source.
    pub fn empty_like(&self) -> Self {
        Self { source: self.source.clone(), ..Self::default() }
    }

    /// Reads texts left in the log from `source` from now on.
    pub fn set_source(&mut self, source: Arc<dyn TextSource>) {
        self.source = Some(source);
    }

    /// Whether `text` lies in the window of raw JSON.
    pub fn in_window(&self, text: &str) -> bool {
        self.window.is_some_and(|w| w.locate(text).is_some())
    }

    /// Sets (or clears) the window of raw JSON literals (see [`RawWindow`]).
    pub fn set_window(&mut self, window: Option<RawWindow>) {
        self.window = window;
    }

    /// The text of `id`, `""` for [`TextId::NONE`]; a text left in the log is read from it and
    /// decoded ([`UNREADABLE`] when the log changed).
    pub fn get(&self, id: TextId) -> Cow<'_, str> {
        if id.0 & IN_SOURCE == 0 {
            return Cow::Borrowed(self.get_owned(id));
        }
        let i = (id.0 & !IN_SOURCE) as usize;
        let (Some(&start), Some(&len)) = (self.span_start.get(i), self.span_len.get(i)) else {
            return Cow::Borrowed("");
        };
        self.read_span(start, len).unwrap_or(Cow::Borrowed(UNREADABLE))
    }

    fn get_owned(&self, id: TextId) -> &str {
        let Some(&end) = self.ends.get(id.index()) else {
            return "";
        };
        let start = if id.0 == 0 { 0 } else { self.ends[id.index() - 1] };
        self.bytes.get(start as usize..end as usize).unwrap_or("")
    }

    fn read_span(&self, start: u64, len: u32) -> Option<Cow<'_, str>> {
        match self.source.as_ref()?.read_at(start, len as usize)? {
            Cow::Borrowed(raw) if !raw.contains(&b'\\') => std::str::from_utf8(raw).ok().map(Cow::Borrowed),
            raw => decode_raw(&raw).map(|t| Cow::Owned(t.into_owned())),
        }
    }

    /// Whether the text of `id` is `text` (raw JSON while the window holds it).
    pub fn equals(&self, id: TextId, text: &str) -> bool {
        if self.window.is_some_and(|w| w.locate(text).is_some()) {
            let inside = text.strip_prefix('"').and_then(|t| t.strip_suffix('"')).unwrap_or(text);
            return decode_raw(inside.as_bytes()).is_some_and(|t| self.get(id) == t);
        }
        self.get(id) == text
    }

    /// Releases spare capacity.
    pub fn shrink_to_fit(&mut self) {
        self.bytes.shrink_to_fit();
        self.ends.shrink_to_fit();
        self.span_start.shrink_to_fit();
        self.span_len.shrink_to_fit();
    }

    /// Number of stored texts (in memory and in the source).
    pub fn len(&self) -> usize {
        self.ends.len() + self.span_len.len()
    }

    /// Whether nothing is stored.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Number of texts left in the source.
    pub fn in_source(&self) -> usize {
        self.span_len.len()
    }

    /// Total bytes of text held in memory.
    pub fn text_bytes(&self) -> usize {
        self.bytes.len()
    }

    /// Heap bytes used (the source's bytes are not counted).
    pub fn heap_bytes(&self) -> usize {
        self.bytes.capacity() + self.ends.capacity() * 8 + self.span_start.capacity() * 8 + self.span_len.capacity() * 4
    }
}

/// The first `n` characters of `text`, with "…" when it was longer (whole characters, never a
/// byte cut).
pub fn truncate(text: &str, n: usize) -> String {
    match text.char_indices().nth(n) {
        Some((i, _)) => format!("{}…", &text[..i]),
        None => text.to_owned(),
    }
}

/// The text of `raw`, the inside of a JSON string literal (escapes as written); `None` when it is
/// not valid JSON string content.
pub fn decode_raw(raw: &[u8]) -> Option<Cow<'_, str>> {
    if !raw.contains(&b'\\') {
        return std::str::from_utf8(raw).ok().map(Cow::Borrowed);
    }
    let mut literal = Vec::with_capacity(raw.len() + 2);
    literal.push(b'"');
    literal.extend_from_slice(raw);
    literal.push(b'"');
    serde_json::from_slice::<String>(&literal).ok().map(Cow::Owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn truncate_keeps_whole_characters_and_says_it_cut() {
        assert_eq!(truncate("héllo", 2), "hé…");
        assert_eq!(truncate("héllo", 5), "héllo");
    }

    #[test]
    fn texts_in_the_window_are_kept_as_spans_and_decoded_when_read() {
        let log: Arc<[u8]> = br#"{"a": "plain", "b": "two\nlines \"q\"", "c": ""}"#.to_vec().into();
        let text = std::str::from_utf8(&log).unwrap_or_default();
        let mut arena = TextArena::default();
        arena.set_source(Arc::new(BytesSource(Arc::clone(&log))));
        arena.set_window(Some(RawWindow::of(&log, 0)));
        let literal = |from: &str, len: usize| {
            let at = text.find(from).unwrap_or_default();
            &text[at..at + len]
        };
        let plain = arena.push(literal("\"plain", 7));
        let escaped = arena.push(literal("\"two", 18));
        let empty = arena.push(literal("\"\"}", 2));
        let copied = arena.push("copied");
        arena.set_window(None);
        assert_eq!(arena.in_source(), 2);
        assert_eq!(arena.get(plain), "plain");
        assert_eq!(arena.get(escaped), "two\nlines \"q\"");
        assert_eq!(empty, TextId::NONE);
        assert_eq!(arena.get(copied), "copied");
        assert!(arena.equals(escaped, "two\nlines \"q\""));
        assert_eq!(arena.len(), 3);
    }

    #[test]
    fn pieces_of_a_literal_are_kept_as_spans_with_their_escapes() {
        let log: Arc<[u8]> = br#"{"out": "<think>a\tb</think> said \"hi\"\n"}"#.to_vec().into();
        let text = std::str::from_utf8(&log).unwrap_or_default();
        let mut arena = TextArena::default();
        arena.set_source(Arc::new(BytesSource(Arc::clone(&log))));
        arena.set_window(Some(RawWindow::of(&log, 0)));
        let piece = |from: &str, to: &str| {
            let at = text.find(from).unwrap_or_default();
            &text[at..text.find(to).unwrap_or_default()]
        };
        let thought = arena.push(piece("a\\t", "</"));
        let said = arena.push(piece("said", "\\n"));
        assert!(arena.equals(thought, "a\tb"));
        arena.set_window(None);
        assert_eq!(arena.in_source(), 2);
        assert_eq!(arena.get(thought), "a\tb");
        assert_eq!(arena.get(said), "said \"hi\"");
        assert_eq!(decode_raw(br"x\u00e9"), Some(Cow::Borrowed("x\u{e9}")));
    }

    #[test]
    fn a_growing_source_reads_each_piece_at_its_offset() {
        let source = GrowingSource::default();
        source.push(0, Arc::from(&b"\"ab\"\n"[..]));
        source.push(5, Arc::from(&b"\"cd\"\n\"ef\"\n"[..]));
        assert_eq!(source.read_at(0, 4).as_deref(), Some(&b"\"ab\""[..]));
        assert_eq!(source.read_at(10, 4).as_deref(), Some(&b"\"ef\""[..]));
        assert_eq!(source.read_at(12, 4), None, "past the end");
    }

    #[test]
    fn a_text_whose_source_is_gone_says_so() {
        let mut arena = TextArena::default();
        let log = br#""gone""#;
        arena.set_window(Some(RawWindow::of(log, 0)));
        let id = arena.push(std::str::from_utf8(log).unwrap_or_default());
        arena.set_window(None);
        arena.set_source(Arc::new(BytesSource(Arc::from(&b"x"[..]))));
        assert_eq!(arena.get(id), UNREADABLE);
    }
}
