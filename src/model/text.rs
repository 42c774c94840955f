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

/// The length of a span that marks a text made of parts ([`TextArena::push_composed`]): its start
/// is the place of its parts in `parts`.
const COMPOSED: u32 = u32::MAX;

/// A part of a text made of several ([`TextArena::push_composed`]).
#[derive(Clone, Copy, Debug)]
pub enum TextPart<'a> {
    /// Text as it is.
    Plain(&'a str),
    /// The inside of a JSON string literal of the log, escapes as they are: kept as its place
    /// when it lies in the raw window, else decoded.
    Raw(&'a str),
}

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
    /// Every text handed over in the window is the inside of a literal (or a piece of one), so
    /// its bytes need not be looked at for quotes ([`RawWindow::of_insides`]).
    insides: bool,
}

impl RawWindow {
    /// The window of `buffer`, which holds the source's bytes from `offset` on.
    pub fn of(buffer: &[u8], offset: u64) -> Self {
        let start = buffer.as_ptr() as usize;
        Self { start, end: start + buffer.len(), offset, insides: false }
    }

    /// The window of `buffer`, where the loader hands over only the insides of literals: the
    /// arena keeps each one's place without reading its first and last bytes (on the thread that
    /// builds the run they are seldom in its cache: the line was parsed on another core).
    pub fn of_insides(buffer: &[u8], offset: u64) -> Self {
        Self { insides: true, ..Self::of(buffer, offset) }
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
    /// The parts of the texts made of several, each text's count of parts then its parts.
    parts: Vec<TextId>,
    /// The plain parts held in memory, each once (`[tool search] ` recurs at every step).
    shared: std::collections::HashMap<Box<str>, TextId, foldhash::fast::FixedState>,
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
        if let Some((offset, window)) = self.window.and_then(|w| Some((w.locate(text)?, w))) {
            if window.insides {
                return self.push_span(text, offset);
            }
            return match text.strip_prefix('"').and_then(|t| t.strip_suffix('"')) {
                Some(inside) if text.len() >= 2 => self.push_span(inside, offset + 1),
                _ => self.push_span(text, offset),
            };
        }
        self.push_owned(text)
    }

    /// Keeps `raw` (the inside of a JSON string, at `offset` of the source) as a span.
    fn push_span(&mut self, raw: &str, offset: u64) -> TextId {
        if raw.is_empty() {
            return TextId::NONE;
        }
        // The builder refuses to grow past u32 ids; a single text over 4 GiB is copied instead.
        let Some(len) = u32::try_from(raw.len()).ok().filter(|&len| len != COMPOSED) else {
            return self.push_decoded(raw);
        };
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
        decode_raw(raw.as_bytes()).map_or(TextId::NONE, |text| self.push_owned(&text))
    }

    /// Stores the text made of `parts`, in their order: a raw part that lies in the window is
    /// kept as its place in the log and each plain part is held once, so that a text that is
    /// mostly the log's (`[tool search] ` and a tool's output) costs a few numbers; with no raw
    /// part in the window, the parts joined are stored as one text, as [`TextArena::push`] would.
    pub fn push_composed(&mut self, parts: &[TextPart<'_>]) -> TextId {
        let window = self.window;
        let in_window = move |text: &str| window.and_then(|w| w.locate(text));
        if !parts.iter().any(|p| matches!(p, TextPart::Raw(t) if !t.is_empty() && in_window(t).is_some())) {
            let mut text = String::new();
            for part in parts {
                match part {
                    TextPart::Plain(t) => text.push_str(t),
                    TextPart::Raw(t) => text.push_str(&decode_raw(t.as_bytes()).unwrap_or_default()),
                }
            }
            return self.push_owned(&text);
        }
        let mut ids = Vec::with_capacity(parts.len());
        for part in parts {
            let id = match *part {
                TextPart::Raw(t) => match in_window(t) {
                    Some(offset) => self.push_span(t, offset),
                    None => self.push_decoded(t),
                },
                TextPart::Plain(t) => self.push_shared(t),
            };
            if id.is_some() {
                ids.push(id);
            }
        }
        match ids.as_slice() {
            [] => TextId::NONE,
            [one] => *one,
            _ if self.span_len.len() >= (IN_SOURCE - 1) as usize => {
                let text: String = ids.iter().map(|&id| self.get(id)).collect();
                self.push_owned(&text)
            }
            _ => {
                self.span_start.push(self.parts.len() as u64);
                self.span_len.push(COMPOSED);
                self.parts.push(TextId(ids.len() as u32));
                self.parts.extend(ids);
                TextId(IN_SOURCE | (self.span_len.len() - 1) as u32)
            }
        }
    }

    /// Stores `text` in memory, whatever the window.
    fn push_owned(&mut self, text: &str) -> TextId {
        if text.is_empty() {
            return TextId::NONE;
        }
        self.bytes.push_str(text);
        self.ends.push(self.bytes.len() as u64);
        TextId::from_index(self.ends.len() - 1)
    }

    /// Stores `text` in memory once: the same text again gets the same id.
    fn push_shared(&mut self, text: &str) -> TextId {
        if text.is_empty() {
            return TextId::NONE;
        }
        if let Some(&id) = self.shared.get(text) {
            return id;
        }
        let id = self.push_owned(text);
        self.shared.insert(text.into(), id);
        id
    }

    /// The text made of the parts at `at` in `parts`.
    fn composed(&self, at: u64) -> String {
        let at = usize::try_from(at).unwrap_or(usize::MAX);
        let Some(count) = self.parts.get(at) else { return String::new() };
        let parts = self.parts.get(at + 1..at + 1 + count.index()).unwrap_or_default();
        parts.iter().map(|&id| self.get(id)).collect()
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
        let Some((start, len)) = self.span(id) else { return Cow::Borrowed("") };
        if len == COMPOSED {
            return Cow::Owned(self.composed(start));
        }
        self.read_span(start, len).unwrap_or(Cow::Borrowed(UNREADABLE))
    }

    /// The texts of `ids` in their order, as [`TextArena::get`] gives each, those left in the log
    /// read a stretch of it at a time: the texts of neighbouring records lie close together, and
    /// a read for each (a system call and a buffer) was a sixth of converting a log to a dataset.
    pub fn get_many(&self, ids: &[TextId]) -> Vec<Cow<'_, str>> {
        /// The longest stretch read at once, and the widest gap between two texts within one.
        const STRETCH: u64 = 4 << 20;
        const GAP: u64 = 64 << 10;
        let mut texts: Vec<Cow<'_, str>> = ids.iter().map(|_| Cow::Borrowed("")).collect();
        // The texts in the log, by their place in `ids`: (place, start, length).
        let mut spans = Vec::new();
        for (place, &id) in ids.iter().enumerate() {
            match self.span(id) {
                Some((start, len)) if len > 0 && len != COMPOSED => spans.push((place, start, u64::from(len))),
                _ => texts[place] = self.get(id),
            }
        }
        let mut from = 0;
        while from < spans.len() {
            let (_, first, first_len) = spans[from];
            let mut end = first + first_len;
            let mut to = from + 1;
            while let Some(&(_, start, len)) = spans.get(to) {
                if start < first || start > end.saturating_add(GAP) || start + len - first > STRETCH {
                    break;
                }
                end = end.max(start + len);
                to += 1;
            }
            let stretch = self.source.as_ref().and_then(|s| s.read_at(first, usize::try_from(end - first).ok()?));
            for &(place, start, len) in &spans[from..to] {
                let raw =
                    stretch.as_deref().and_then(|b| b.get((start - first) as usize..(start - first + len) as usize));
                texts[place] = match raw.map(decode_raw) {
                    Some(Some(text)) => Cow::Owned(text.into_owned()),
                    _ => Cow::Borrowed(UNREADABLE),
                };
            }
            from = to;
        }
        texts
    }

    /// Where the text of `id` is in the source (offset, length), when it was left there.
    fn span(&self, id: TextId) -> Option<(u64, u32)> {
        if id.0 & IN_SOURCE == 0 {
            return None;
        }
        let i = (id.0 & !IN_SOURCE) as usize;
        Some((*self.span_start.get(i)?, *self.span_len.get(i)?))
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
            // Text without escapes stays borrowed from the source (`decode_raw` decodes nothing).
            Cow::Borrowed(raw) => decode_raw(raw),
            Cow::Owned(raw) => decode_raw(&raw).map(|t| Cow::Owned(t.into_owned())),
        }
    }

    /// The length of the text of `id` as stored, without reading it: the bytes of a text held in
    /// memory, the raw JSON bytes (escapes not decoded) of one left in the log; `None` for a text
    /// a dataset holds, whose length is known only once read. Two texts written by one writer are
    /// equal only if these are, so a comparison of many texts can look at these first.
    pub fn stored_len(&self, id: TextId) -> Option<usize> {
        if id.is_none() {
            return Some(0);
        }
        match self.span(id) {
            Some((_, 0 | COMPOSED)) => None,
            Some((_, len)) => Some(len as usize),
            None => Some(self.get_owned(id).len()),
        }
    }

    /// Whether the text of `id` is `text` (raw JSON while the window holds it).
    pub fn equals(&self, id: TextId, text: &str) -> bool {
        if let Some(window) = self.window.filter(|w| w.locate(text).is_some()) {
            let literal = (!window.insides).then(|| text.strip_prefix('"').and_then(|t| t.strip_suffix('"')));
            let inside = literal.flatten().unwrap_or(text);
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
        self.parts.shrink_to_fit();
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
        self.bytes.capacity()
            + self.ends.capacity() * 8
            + self.span_start.capacity() * 8
            + self.span_len.capacity() * 4
            + self.parts.capacity() * 4
            + self.shared.capacity() * 40
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
///
/// Decoded here rather than by `serde_json` (which wants the literal with its quotes, copied, and
/// copies the text out of its scratch buffer again): the same texts and the same refusals, as
/// `serde_json` reads a string (control characters and a bare `"` refused, `\u` escapes joined
/// into surrogate pairs and a lone surrogate refused), at a third of the cost; converting a log
/// decodes every text once.
pub fn decode_raw(raw: &[u8]) -> Option<Cow<'_, str>> {
    let text = simdutf8::basic::from_utf8(raw).ok()?;
    let Some(mut at) = memchr::memchr(b'\\', raw) else {
        return Some(Cow::Borrowed(text));
    };
    let plain = |from: usize, to: usize| text.get(from..to).filter(|p| !has_unescaped(p.as_bytes()));
    let mut out = String::with_capacity(raw.len());
    let mut from = 0;
    loop {
        out.push_str(plain(from, at)?);
        let (ch, len) = decode_escape(raw, at)?;
        out.push(ch);
        from = at + len;
        let Some(next) = memchr::memchr(b'\\', raw.get(from..)?) else {
            out.push_str(plain(from, raw.len())?);
            return Some(Cow::Owned(out));
        };
        at = from + next;
    }
}

/// The character of the JSON escape at `raw[at]` (a backslash) and its length in bytes, as
/// `serde_json` reads it: `\u` escapes of a surrogate pair joined; `None` for an invalid escape or
/// a lone surrogate.
pub fn decode_escape(raw: &[u8], at: usize) -> Option<(char, usize)> {
    let hex = |at: usize| {
        let digits = raw.get(at..at + 4)?;
        digits.iter().try_fold(0u32, |n, &d| Some(n * 16 + char::from(d).to_digit(16)?))
    };
    Some(match *raw.get(at + 1)? {
        b'"' => ('"', 2),
        b'\\' => ('\\', 2),
        b'/' => ('/', 2),
        b'b' => ('\u{8}', 2),
        b'f' => ('\u{c}', 2),
        b'n' => ('\n', 2),
        b'r' => ('\r', 2),
        b't' => ('\t', 2),
        b'u' => match hex(at + 2)? {
            lead @ 0xD800..0xDC00 => {
                if raw.get(at + 6..at + 8) != Some(b"\\u") {
                    return None;
                }
                let trail = hex(at + 8).filter(|t| (0xDC00..0xE000).contains(t))?;
                (char::from_u32(0x10000 + ((lead - 0xD800) << 10) + (trail - 0xDC00))?, 12)
            }
            code => (char::from_u32(code)?, 6),
        },
        _ => return None,
    })
}

/// Whether `bytes` holds a control character or a `"`, which a JSON string may not hold
/// unescaped: eight bytes at a time (a byte-by-byte look was most of [`decode_raw`]'s own time).
fn has_unescaped(bytes: &[u8]) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    // Some byte of `x` is below `n` (n ≤ 128), or is zero.
    let below = |x: u64, n: u64| x.wrapping_sub(ONES * n) & !x & HIGH != 0;
    let mut words = bytes.chunks_exact(8);
    for word in &mut words {
        let x = u64::from_le_bytes(word.try_into().unwrap_or_default());
        if below(x, 0x20) || below(x ^ (ONES * u64::from(b'"')), 1) {
            return true;
        }
    }
    words.remainder().iter().any(|&b| b < 0x20 || b == b'"')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decode_raw_reads_and_refuses_what_serde_json_does() {
        let serde = |raw: &[u8]| {
            let literal = [b"\"".as_slice(), raw, b"\""].concat();
            serde_json::from_slice::<String>(&literal).ok()
        };
        let mut cases: Vec<Vec<u8>> = [
            r#"plain"#,
            r#"a\nb\t\"q\" \\ \/ \b\f\r"#,
            r#"\u00e9\u4E2D"#,
            r#"\ud83d\ude00!"#,
            r#"\ud83d"#,
            r#"\ud83dx"#,
            r#"\ud83d\u0041"#,
            r#"\ude00"#,
            r#"\u12"#,
            r#"\u12G4"#,
            r#"\x"#,
            r#"end\"#,
            "tab\t\u{1}",
            "bare \" quote\\n",
            "é\\n",
            r#"\uDBFF\uDFFF"#,
            r#"\u0000"#,
            "",
        ]
        .iter()
        .map(|c| c.as_bytes().to_vec())
        .collect();
        cases.push(b"bad \xff\\n".to_vec());
        // Escape-dense random strings (a fixed generator: the same cases every run).
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let pieces: [&[u8]; 12] =
            [b"\\", b"u", b"d83d", b"DE00", b"00e9", b"n", b"\"", b"a", "é".as_bytes(), b"\\u", b"\x01", b"7"];
        for _ in 0..20_000 {
            let mut case = Vec::new();
            for _ in 0..(state % 9) {
                state = state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
                case.extend_from_slice(pieces[(state >> 33) as usize % pieces.len()]);
            }
            cases.push(case);
        }
        for raw in &cases {
            let bytewise = raw.iter().any(|&b| b < 0x20 || b == b'"');
            assert_eq!(has_unescaped(raw), bytewise, "{:?}", String::from_utf8_lossy(raw));
            // A text without escapes is taken as it is (a span was a string literal serde_json read).
            let expected =
                if raw.contains(&b'\\') { serde(raw) } else { std::str::from_utf8(raw).ok().map(str::to_owned) };
            assert_eq!(decode_raw(raw).map(Cow::into_owned), expected, "{:?}", String::from_utf8_lossy(raw));
        }
    }

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
