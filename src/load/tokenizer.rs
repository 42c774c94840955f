//! Decoding token ids with a Hugging Face `tokenizer.json`, for logs that save ids and no text
//! (open-instruct's rollouts). Only what decoding needs is read: the model's vocabulary (a BPE or
//! WordPiece `vocab` object, a Unigram `vocab` list), the `added_tokens`, and the `decoder`
//! (`ByteLevel`, `Metaspace`, `WordPiece`, `ByteFallback`, `Replace`, `Fuse`, `Strip` and a
//! `Sequence` of them), applied as the `tokenizers` library's `decode(ids,
//! skip_special_tokens=False)` applies them. Hand-written: the `tokenizers` crate would bring
//! `onig` (C) and a large dependency tree for a lookup table and a few string rules.

use std::collections::HashMap;
use std::sync::Arc;

/// What a `tokenizer.json` says about turning ids back into text.
#[derive(Clone, Debug, Default)]
pub struct Vocab {
    /// Each id's token (`None`: an id the file does not know).
    tokens: Vec<Option<Arc<str>>>,
    /// The decoder's steps, in order.
    steps: Vec<Step>,
}

/// A run's tokenizer, looked for the first time a format asks for it (most formats never do):
/// the opener gives the search (`source::disk::tokenizer_beside`), this keeps what it found.
pub struct LazyVocab {
    find: Box<dyn Fn() -> Option<Vocab> + Send + Sync>,
    found: std::sync::OnceLock<Option<Arc<Vocab>>>,
}

impl LazyVocab {
    /// A tokenizer that `find` reads when first asked for.
    pub fn new(find: impl Fn() -> Option<Vocab> + Send + Sync + 'static) -> Self {
        Self { find: Box::new(find), found: std::sync::OnceLock::new() }
    }

    /// The tokenizer, found now if it was not yet looked for; `None` when there is none.
    pub fn get(&self) -> Option<Arc<Vocab>> {
        self.found.get_or_init(|| (self.find)().map(Arc::new)).clone()
    }
}

impl std::fmt::Debug for LazyVocab {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LazyVocab").field("found", &self.found.get().map(Option::is_some)).finish_non_exhaustive()
    }
}

/// One decoder step of `tokenizer.json`.
#[derive(Clone, Debug, PartialEq)]
enum Step {
    /// GPT-2's byte-to-unicode map, undone.
    ByteLevel,
    /// `Metaspace`: the replacement character becomes a space, and a leading space is dropped
    /// when the tokenizer prepended one.
    Metaspace { replacement: char, strip_first: bool },
    /// `WordPiece`: `##` joins a token to the one before; the others get a space; with `cleanup`,
    /// the spaces before punctuation and contractions go (the library's `cleanup`).
    WordPiece { prefix: String, cleanup: bool },
    /// `<0xAB>` tokens are bytes.
    ByteFallback,
    /// A literal replaced in every token.
    Replace { pattern: String, content: String },
    /// The tokens joined into one.
    Fuse,
    /// `content` taken off the start (`start` times) and end (`stop` times) of each token.
    Strip { content: char, start: usize, stop: usize },
}

/// GPT-2's `bytes_to_unicode`, inverted: the byte each printable stand-in character is.
fn byte_of_char() -> HashMap<char, u8> {
    let mut map = HashMap::new();
    let mut n = 0u32;
    for b in 0..=255u8 {
        let printable = (b'!'..=b'~').contains(&b) || (0xA1..=0xAC).contains(&b) || (0xAE..=0xFF).contains(&b);
        let c = if printable {
            char::from(b)
        } else {
            n += 1;
            char::from_u32(255 + n).unwrap_or('\u{FFFD}')
        };
        map.insert(c, b);
    }
    map
}

fn step(value: &serde_json::Value, steps: &mut Vec<Step>) -> Result<(), String> {
    let field = |k: &str| value.get(k);
    let text = |k: &str| field(k).and_then(serde_json::Value::as_str);
    match text("type") {
        Some("Sequence") => {
            for inner in field("decoders").and_then(serde_json::Value::as_array).into_iter().flatten() {
                step(inner, steps)?;
            }
        }
        Some("ByteLevel") => steps.push(Step::ByteLevel),
        Some("Metaspace") => {
            let replacement = text("replacement").and_then(|r| r.chars().next()).unwrap_or('▁');
            let strip_first = match text("prepend_scheme") {
                Some(scheme) => scheme != "never",
                None => field("add_prefix_space").and_then(serde_json::Value::as_bool).unwrap_or(true),
            };
            steps.push(Step::Metaspace { replacement, strip_first });
        }
        Some("WordPiece") => steps.push(Step::WordPiece {
            prefix: text("prefix").unwrap_or("##").to_owned(),
            cleanup: field("cleanup").and_then(serde_json::Value::as_bool).unwrap_or(true),
        }),
        Some("ByteFallback") => steps.push(Step::ByteFallback),
        Some("Fuse") => steps.push(Step::Fuse),
        Some("Replace") => {
            let pattern = field("pattern").and_then(|p| p.get("String")).and_then(serde_json::Value::as_str);
            let Some(pattern) = pattern else { return Err("a Replace decoder with a regex pattern".to_owned()) };
            let content = text("content").unwrap_or("").to_owned();
            steps.push(Step::Replace { pattern: pattern.to_owned(), content });
        }
        Some("Strip") => {
            let content = text("content").and_then(|c| c.chars().next()).unwrap_or(' ');
            let count = |k: &str| field(k).and_then(serde_json::Value::as_u64).unwrap_or(0) as usize;
            steps.push(Step::Strip { content, start: count("start"), stop: count("stop") });
        }
        Some(other) => return Err(format!("the {other} decoder")),
        None => {}
    }
    Ok(())
}

impl Vocab {
    /// Reads a `tokenizer.json`; an error says what it holds that this reader does not decode.
    pub fn from_json(bytes: &[u8]) -> Result<Self, String> {
        let json: serde_json::Value = serde_json::from_slice(bytes).map_err(|e| format!("not JSON: {e}"))?;
        let mut pairs: Vec<(usize, String)> = Vec::new();
        match json.pointer("/model/vocab") {
            Some(serde_json::Value::Object(map)) => {
                for (token, id) in map {
                    let id = id.as_u64().ok_or_else(|| format!("model.vocab.{token}: not an id"))?;
                    pairs.push((id as usize, token.clone()));
                }
            }
            // Unigram: `[[token, score], …]`, the id the position.
            Some(serde_json::Value::Array(list)) => {
                for (id, entry) in list.iter().enumerate() {
                    let token = entry.get(0).and_then(serde_json::Value::as_str).unwrap_or("");
                    pairs.push((id, token.to_owned()));
                }
            }
            _ => return Err("no model.vocab".to_owned()),
        }
        for added in json.get("added_tokens").and_then(serde_json::Value::as_array).into_iter().flatten() {
            let (Some(id), Some(content)) = (
                added.get("id").and_then(serde_json::Value::as_u64),
                added.get("content").and_then(serde_json::Value::as_str),
            ) else {
                continue;
            };
            pairs.push((id as usize, content.to_owned()));
        }
        let len = pairs.iter().map(|(id, ..)| id + 1).max().unwrap_or(0);
        // The largest vocabularies hold about a million tokens.
        if len > 1 << 22 {
            return Err(format!("an id of {len}: more than a vocabulary holds"));
        }
        let mut vocab = Self { tokens: vec![None; len], steps: Vec::new() };
        for (id, token) in pairs {
            vocab.tokens[id] = Some(token.into());
        }
        if let Some(decoder) = json.get("decoder").filter(|d| !d.is_null()) {
            step(decoder, &mut vocab.steps)?;
        }
        Ok(vocab)
    }

    /// The text of `ids`, as the tokenizer decodes them with their special tokens (which go
    /// through the decoder with the others, as the library does); an id the file does not know
    /// reads `<id N>`.
    pub fn decode(&self, ids: &[u64]) -> String {
        let mut out = String::new();
        let mut run: Vec<String> = Vec::new();
        for &id in ids {
            if let Some(token) = usize::try_from(id).ok().and_then(|i| self.tokens.get(i)).and_then(Option::as_ref) {
                run.push(token.to_string());
            } else {
                out.push_str(&self.apply(std::mem::take(&mut run), out.is_empty()));
                out.push_str(&format!("<id {id}>"));
            }
        }
        out.push_str(&self.apply(run, out.is_empty()));
        out
    }

    /// The decoder's steps on a run of tokens (`first`: the run starts the text).
    fn apply(&self, mut tokens: Vec<String>, first: bool) -> String {
        if tokens.is_empty() {
            return String::new();
        }
        for step in &self.steps {
            tokens = match step {
                Step::ByteLevel => {
                    let table = byte_table();
                    let bytes: Vec<u8> = tokens
                        .concat()
                        .chars()
                        .flat_map(|c| match table.get(&c) {
                            Some(&b) => vec![b],
                            None => c.to_string().into_bytes(),
                        })
                        .collect();
                    vec![String::from_utf8_lossy(&bytes).into_owned()]
                }
                Step::Metaspace { replacement, strip_first } => tokens
                    .iter()
                    .enumerate()
                    .map(|(i, t)| {
                        let t = t.replace(*replacement, " ");
                        if i == 0 && first && *strip_first {
                            t.strip_prefix(' ').map(str::to_owned).unwrap_or(t)
                        } else {
                            t
                        }
                    })
                    .collect(),
                Step::WordPiece { prefix, cleanup } => tokens
                    .iter()
                    .enumerate()
                    .map(|(i, t)| {
                        let t = match t.strip_prefix(prefix.as_str()) {
                            Some(rest) if i > 0 || !first => rest.to_owned(),
                            _ if i == 0 && first => t.clone(),
                            _ => format!(" {t}"),
                        };
                        if *cleanup { clean_up(&t) } else { t }
                    })
                    .collect(),
                Step::ByteFallback => byte_fallback(&tokens),
                Step::Replace { pattern, content } => {
                    tokens.iter().map(|t| t.replace(pattern.as_str(), content)).collect()
                }
                Step::Fuse => vec![tokens.concat()],
                Step::Strip { content, start, stop } => tokens
                    .iter()
                    .map(|t| {
                        let chars: Vec<char> = t.chars().collect();
                        let from = chars.iter().take(*start).take_while(|c| *c == content).count();
                        let to = chars.len() - chars.iter().rev().take(*stop).take_while(|c| *c == content).count();
                        chars[from..to.max(from)].iter().collect()
                    })
                    .collect(),
            };
        }
        tokens.concat()
    }
}

/// The library's `cleanup` of decoded WordPiece text: no space before `.`, `?`, `!`, `,` and
/// English contractions.
fn clean_up(text: &str) -> String {
    let pairs = [
        (" .", "."),
        (" ?", "?"),
        (" !", "!"),
        (" ,", ","),
        (" ' ", "'"),
        (" n't", "n't"),
        (" 'm", "'m"),
        (" do not", " don't"),
        (" 's", "'s"),
        (" 've", "'ve"),
        (" 're", "'re"),
    ];
    pairs.iter().fold(text.to_owned(), |t, (from, to)| t.replace(from, to))
}

/// The inverted byte table, made once.
fn byte_table() -> &'static HashMap<char, u8> {
    static TABLE: std::sync::OnceLock<HashMap<char, u8>> = std::sync::OnceLock::new();
    TABLE.get_or_init(byte_of_char)
}

/// `<0xAB>` tokens as bytes: a run of them becomes the text they spell (U+FFFD for each byte that
/// is not valid UTF-8, as the `tokenizers` library writes it).
fn byte_fallback(tokens: &[String]) -> Vec<String> {
    let byte = |t: &str| {
        let hex = t.strip_prefix("<0x")?.strip_suffix('>')?;
        (hex.len() == 2).then(|| u8::from_str_radix(hex, 16).ok()).flatten()
    };
    let mut out = Vec::new();
    let mut pending: Vec<u8> = Vec::new();
    for t in tokens {
        if let Some(b) = byte(t) {
            pending.push(b);
            continue;
        }
        if !pending.is_empty() {
            out.push(bytes_text(&std::mem::take(&mut pending)));
        }
        out.push(t.clone());
    }
    if !pending.is_empty() {
        out.push(bytes_text(&pending));
    }
    out
}

fn bytes_text(bytes: &[u8]) -> String {
    match std::str::from_utf8(bytes) {
        Ok(text) => text.to_owned(),
        Err(_) => "\u{FFFD}".repeat(bytes.len()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_level_tokens_decode_to_their_bytes_and_added_tokens_stay() {
        let json = r#"{"model": {"type": "BPE", "vocab": {"Hello": 0, "Ġworld": 1, "Ċ": 2, "Ã©": 3}},
            "added_tokens": [{"id": 4, "content": "<|end|>", "special": true}],
            "decoder": {"type": "ByteLevel", "add_prefix_space": true, "trim_offsets": true, "use_regex": true}}"#;
        let vocab = Vocab::from_json(json.as_bytes()).unwrap();
        assert_eq!(vocab.decode(&[0, 1, 2, 3, 4, 0, 99]), "Hello world\né<|end|>Hello<id 99>");
    }

    #[test]
    fn a_sentencepiece_sequence_replaces_falls_back_to_bytes_and_strips() {
        let json = r#"{"model": {"type": "BPE", "vocab": {"▁Hello": 0, "▁world": 1, "<0xE2>": 2, "<0x82>": 3, "<0xAC>": 4, "<0x0A>": 5}},
            "decoder": {"type": "Sequence", "decoders": [
                {"type": "Replace", "pattern": {"String": "▁"}, "content": " "},
                {"type": "ByteFallback"}, {"type": "Fuse"},
                {"type": "Strip", "content": " ", "start": 1, "stop": 0}]}}"#;
        let vocab = Vocab::from_json(json.as_bytes()).unwrap();
        assert_eq!(vocab.decode(&[0, 1, 2, 3, 4, 5]), "Hello world€\n");
        // Half a character is one replacement character per byte.
        assert_eq!(vocab.decode(&[0, 2, 3]), "Hello\u{FFFD}\u{FFFD}");
    }

    #[test]
    fn a_lazy_tokenizer_is_looked_for_once_and_only_when_asked() {
        let looked = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let counter = std::sync::Arc::clone(&looked);
        let lazy = LazyVocab::new(move || {
            counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            Vocab::from_json(br#"{"model": {"vocab": {"a": 0}}}"#).ok()
        });
        assert_eq!(looked.load(std::sync::atomic::Ordering::SeqCst), 0);
        assert_eq!(lazy.get().map(|v| v.decode(&[0, 0])), Some("aa".to_owned()));
        assert!(lazy.get().is_some());
        assert_eq!(looked.load(std::sync::atomic::Ordering::SeqCst), 1);
    }

    #[test]
    fn a_decoder_it_does_not_know_is_an_error_naming_it() {
        let json = r#"{"model": {"vocab": {"a": 0}}, "decoder": {"type": "CTC"}}"#;
        assert_eq!(Vocab::from_json(json.as_bytes()).unwrap_err(), "the CTC decoder");
        assert!(Vocab::from_json(b"[]").unwrap_err().contains("model.vocab"));
    }
}
