//! The fast path of a vantage JSONL line: a trajectory record of the common shape (its ids, step,
//! prompt, outcome, and steps of texts, kinds, roles, scores, environment rewards and state keys)
//! read straight into [`RawRecord`], without serde's machinery per value.
//!
//! Hand-written, not a crate, because the cost of a step-dense log was serde's work per value
//! (a visitor, a `RawValue` and a struct moved for every field, a `Vec` grown for every list), not
//! the JSON itself; `serde_json` stays the reader of everything else. The rule that keeps the two
//! equal: this path gives a record only when `serde_json` would give the same one, and gives up
//! (`None`) on anything it does not read exactly as `serde_json` does: an unknown or repeated
//! field, a field it does not take (tokens, trees, Monte-Carlo statistics, retrieved documents,
//! token spans, the header's fields), an escape in a name, id or label, an integer id, a number
//! out of range, a control character or a bad escape in a string. The line is then read by
//! `serde_json`, with its located errors. A test and a fuzz target hold the two equal.

use std::borrow::Cow;
use std::collections::BTreeMap;

use super::records::{JsonText, RawOutcome, RawRecord, RawStep, Scores};
use super::scan;
use crate::load::lenient::{Id, Key, Num};

/// The record of `line` when it is a trajectory of the common shape, read as `serde_json` reads
/// it; `None` otherwise (the caller reads the line with `serde_json`). Its labels (kinds, roles,
/// state keys, score names) are taken from `labels`, the piece's first place of each.
pub fn parse<'a>(line: &'a str, labels: &mut Labels<'a>) -> Option<RawRecord<'a>> {
    let mut c = Cursor { text: line, bytes: line.as_bytes(), at: 0, labels };
    let record = c.record()?;
    c.space();
    (c.at == c.bytes.len()).then_some(record)
}

/// The labels of a piece of the log, each at the first place the piece gives it: a step's kind,
/// role, state key and score names then point at the same few bytes, which stay in the cache of
/// the thread that adds the records to the run (the run's interner reads each label; reading it
/// at every step's own place in the log missed the cache each time).
#[derive(Default)]
pub struct Labels<'a>(std::collections::HashMap<&'a str, &'a str, foldhash::fast::FixedState>);

impl<'a> Labels<'a> {
    /// The first place of `label` in the piece.
    fn first(&mut self, label: &'a str) -> &'a str {
        self.0.entry(label).or_insert(label)
    }
}

/// A place in the line.
struct Cursor<'a, 'l> {
    text: &'a str,
    bytes: &'a [u8],
    at: usize,
    labels: &'l mut Labels<'a>,
}

/// A field seen twice is `serde_json`'s error: each field's bit in a mask.
fn first_time(seen: &mut u32, field: u32) -> Option<()> {
    let bit = 1 << field;
    (*seen & bit == 0).then(|| *seen |= bit)
}

impl<'a> Cursor<'a, '_> {
    /// Skips JSON whitespace.
    fn space(&mut self) {
        while let Some(b' ' | b'\n' | b'\t' | b'\r') = self.bytes.get(self.at) {
            self.at += 1;
        }
    }

    /// The next byte after whitespace, not taken.
    fn peek(&mut self) -> Option<u8> {
        self.space();
        self.bytes.get(self.at).copied()
    }

    /// Takes `byte` after whitespace.
    fn eat(&mut self, byte: u8) -> Option<()> {
        (self.peek()? == byte).then(|| self.at += 1)
    }

    /// Takes `word` (`null`, `true`, `false`) if it is next.
    fn word(&mut self, word: &[u8]) -> bool {
        self.space();
        let found = self.bytes.get(self.at..self.at + word.len()) == Some(word);
        if found {
            self.at += word.len();
        }
        found
    }

    /// Takes `null` if it is next.
    fn null(&mut self) -> bool {
        self.word(b"null")
    }

    /// The members of an object, each key (without escapes) handed to `member`, which reads its
    /// value; `None` when the object is not well formed or `member` gives up.
    fn object(&mut self, mut member: impl FnMut(&mut Self, &'a str) -> Option<()>) -> Option<()> {
        self.eat(b'{')?;
        if self.eat(b'}').is_some() {
            return Some(());
        }
        loop {
            let (key, escaped) = self.string()?;
            if escaped {
                return None;
            }
            self.eat(b':')?;
            member(self, key)?;
            match self.peek()? {
                b',' => self.at += 1,
                b'}' => {
                    self.at += 1;
                    return Some(());
                }
                _ => return None,
            }
        }
    }

    /// The inside of the string that is next, and whether it has escapes. Every escape is checked
    /// as `serde_json` decodes it (a `\u` surrogate only as the first of a pair); a control
    /// character is refused, as `serde_json` refuses it.
    fn string(&mut self) -> Option<(&'a str, bool)> {
        self.eat(b'"')?;
        let start = self.at;
        let (quote, escaped) = scan::string_end(self.bytes, start)?;
        let inside = self.text.get(start..quote)?;
        self.at = quote + 1;
        Some((inside, escaped))
    }

    /// A string without escapes, borrowed.
    fn plain(&mut self) -> Option<&'a str> {
        match self.string()? {
            (text, false) => Some(text),
            (_, true) => None,
        }
    }

    /// A text field into `slot`: `null`, or a string kept as its literal's inside.
    fn text_field(&mut self, slot: &mut Option<JsonText<'a>>) -> Option<()> {
        *slot = if self.null() { None } else { Some(JsonText::Literal(self.string()?.0)) };
        Some(())
    }

    /// A label field into `slot` (`Cow` borrowed from the piece): `null`, or a string without
    /// escapes.
    fn label_field(&mut self, slot: &mut Option<Cow<'a, str>>) -> Option<()> {
        *slot = if self.null() {
            None
        } else {
            let label = self.plain()?;
            Some(Cow::Borrowed(self.labels.first(label)))
        };
        Some(())
    }

    /// An id field into `slot`: `null`, or a string without escapes (an integer id is left to
    /// `serde_json`).
    fn id_field(&mut self, slot: &mut Option<Id>) -> Option<()> {
        *slot = if self.null() { None } else { Some(Id(self.plain()?.to_owned())) };
        Some(())
    }

    /// A boolean field into `slot`: `null`, `true` or `false`.
    fn bool_field(&mut self, slot: &mut Option<bool>) -> Option<()> {
        *slot = if self.null() {
            None
        } else if self.word(b"true") {
            Some(true)
        } else if self.word(b"false") {
            Some(false)
        } else {
            return None;
        };
        Some(())
    }

    /// The number that is next, as its text and whether it is an integer (JSON's grammar:
    /// `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`).
    fn number_text(&mut self) -> Option<(&'a str, bool)> {
        self.space();
        let start = self.at;
        let digits = |c: &mut Self| {
            let from = c.at;
            while c.bytes.get(c.at).is_some_and(u8::is_ascii_digit) {
                c.at += 1;
            }
            c.at > from
        };
        if self.bytes.get(self.at) == Some(&b'-') {
            self.at += 1;
        }
        match self.bytes.get(self.at)? {
            b'0' => self.at += 1,
            b'1'..=b'9' => {
                digits(self);
            }
            _ => return None,
        }
        let mut integer = true;
        if self.bytes.get(self.at) == Some(&b'.') {
            self.at += 1;
            integer = false;
            if !digits(self) {
                return None;
            }
        }
        if let Some(b'e' | b'E') = self.bytes.get(self.at) {
            self.at += 1;
            integer = false;
            if let Some(b'+' | b'-') = self.bytes.get(self.at) {
                self.at += 1;
            }
            if !digits(self) {
                return None;
            }
        }
        Some((self.text.get(start..self.at)?, integer))
    }

    /// A number as [`Num`] reads it: an integer through `i64` (as `serde_json` hands it over),
    /// any other number through `f64` (both round correctly, `serde_json` with `float_roundtrip`
    /// and the standard library); `null` is NaN.
    fn num(&mut self) -> Option<Num> {
        if self.null() {
            return Some(Num(f32::NAN));
        }
        let (text, integer) = self.number_text()?;
        if integer {
            // `-0` is a float to serde_json, and a long integer may not fit: both left to it.
            if text.len() > 18 || text == "-0" {
                return None;
            }
            return Some(Num(text.parse::<i64>().ok()? as f32));
        }
        let value = text.parse::<f64>().ok().filter(|v| v.is_finite())?;
        Some(Num(value as f32))
    }

    /// An optional number into `slot`: `null` is absent.
    fn num_field(&mut self, slot: &mut Option<Num>) -> Option<()> {
        *slot = if self.null() { None } else { Some(self.num()?) };
        Some(())
    }

    /// An integer field (`train_step`) into `slot`: `null`, or an integer that fits `i64`.
    fn i64_field(&mut self, slot: &mut Option<i64>) -> Option<()> {
        *slot = if self.null() {
            None
        } else {
            match self.number_text()? {
                (text, true) if text.len() <= 18 && text != "-0" => Some(text.parse().ok()?),
                _ => return None,
            }
        };
        Some(())
    }

    fn record(&mut self) -> Option<RawRecord<'a>> {
        let mut record = RawRecord::default();
        let mut seen = 0u32;
        self.object(|c, key| {
            match key {
                "type" => {
                    first_time(&mut seen, 0)?;
                    c.label_field(&mut record.kind)?;
                }
                "id" => {
                    first_time(&mut seen, 1)?;
                    c.id_field(&mut record.id)?;
                }
                "group" => {
                    first_time(&mut seen, 2)?;
                    c.id_field(&mut record.group)?;
                }
                "task" => {
                    first_time(&mut seen, 3)?;
                    c.id_field(&mut record.task)?;
                }
                "train_step" => {
                    first_time(&mut seen, 4)?;
                    c.i64_field(&mut record.train_step)?;
                }
                "prompt" => {
                    first_time(&mut seen, 5)?;
                    c.text_field(&mut record.prompt)?;
                }
                "gold" => {
                    first_time(&mut seen, 6)?;
                    c.text_field(&mut record.gold)?;
                }
                "outcome" => {
                    first_time(&mut seen, 7)?;
                    record.outcome = if c.null() { None } else { Some(c.outcome()?) };
                }
                "steps" => {
                    first_time(&mut seen, 8)?;
                    record.steps = if c.null() { None } else { Some(c.steps()?) };
                }
                _ => return None,
            }
            Some(())
        })?;
        Some(record)
    }

    fn outcome(&mut self) -> Option<RawOutcome> {
        let mut outcome = RawOutcome::default();
        let mut seen = 0u32;
        self.object(|c, key| {
            match key {
                "reward" => {
                    first_time(&mut seen, 0)?;
                    c.num_field(&mut outcome.reward)?;
                }
                "success" => {
                    first_time(&mut seen, 1)?;
                    c.bool_field(&mut outcome.success)?;
                }
                "finish" => {
                    first_time(&mut seen, 2)?;
                    let mut finish = None;
                    c.label_field(&mut finish)?;
                    outcome.finish = finish.map(Cow::into_owned);
                }
                "components" => {
                    first_time(&mut seen, 3)?;
                    outcome.components = if c.null() {
                        None
                    } else {
                        let mut components = BTreeMap::new();
                        c.object(|c, name| {
                            components.insert(name.to_owned(), c.num()?);
                            Some(())
                        })?;
                        Some(components)
                    };
                }
                _ => return None,
            }
            Some(())
        })?;
        Some(outcome)
    }

    fn steps(&mut self) -> Option<Vec<RawStep<'a>>> {
        self.eat(b'[')?;
        let mut steps = Vec::new();
        if self.eat(b']').is_some() {
            return Some(steps);
        }
        loop {
            steps.push(self.step()?);
            match self.peek()? {
                b',' => self.at += 1,
                b']' => {
                    self.at += 1;
                    return Some(steps);
                }
                _ => return None,
            }
        }
    }

    fn step(&mut self) -> Option<RawStep<'a>> {
        let mut step = RawStep::default();
        let mut seen = 0u32;
        self.object(|c, key| {
            match key {
                "id" => {
                    first_time(&mut seen, 0)?;
                    c.id_field(&mut step.id)?;
                }
                "kind" => {
                    first_time(&mut seen, 1)?;
                    c.label_field(&mut step.kind)?;
                }
                "role" => {
                    first_time(&mut seen, 2)?;
                    c.label_field(&mut step.role)?;
                }
                "thought" => {
                    first_time(&mut seen, 3)?;
                    c.text_field(&mut step.thought)?;
                }
                "action" => {
                    first_time(&mut seen, 4)?;
                    c.text_field(&mut step.action)?;
                }
                "observation" => {
                    first_time(&mut seen, 5)?;
                    c.text_field(&mut step.observation)?;
                }
                "scores" => {
                    first_time(&mut seen, 6)?;
                    step.scores = if c.null() { None } else { Some(c.scores()?) };
                }
                "env_reward" => {
                    first_time(&mut seen, 7)?;
                    c.num_field(&mut step.env_reward)?;
                }
                "state" => {
                    first_time(&mut seen, 8)?;
                    let mut state = None;
                    c.label_field(&mut state)?;
                    step.state = state.map(Key);
                }
                "first_error" => {
                    first_time(&mut seen, 9)?;
                    c.bool_field(&mut step.first_error)?;
                }
                "invalid_action" => {
                    first_time(&mut seen, 10)?;
                    c.bool_field(&mut step.invalid_action)?;
                }
                "selected" => {
                    first_time(&mut seen, 11)?;
                    c.bool_field(&mut step.selected)?;
                }
                _ => return None,
            }
            Some(())
        })?;
        Some(step)
    }

    fn scores(&mut self) -> Option<Scores<'a>> {
        let mut scores = Scores::default();
        self.object(|c, name| {
            let name = c.labels.first(name);
            scores.push(Cow::Borrowed(name), c.num()?);
            Some(())
        })?;
        Some(scores)
    }
}

/// Whether the fast path agrees with `serde_json` on `line`: when it gives a record, `serde_json`
/// gives the same one (the fuzz target `vantage_fast_path`, and the tests).
pub fn agrees_with_serde(line: &str) -> bool {
    let Some(fast) = parse(line, &mut Labels::default()) else { return true };
    match serde_json::from_str::<RawRecord<'_>>(line) {
        Ok(slow) => format!("{fast:?}") == format!("{slow:?}"),
        Err(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fast_path_reads_what_serde_json_reads_and_leaves_it_the_rest() {
        let taken = [
            r#"{"type": "trajectory", "id": "g/r0", "group": "g", "task": "t", "train_step": 3, "prompt": "Solve \"x\"\n", "outcome": {"reward": 1.0, "success": true}, "steps": [{"kind": "search", "thought": "a\tb \u00e9 \ud83d\ude42", "action": "q()", "observation": "o", "scores": {"prm": 0.25, "format": 1}, "env_reward": -0.5, "state": "room1"}]}"#,
            r#"{"type":"trajectory","id":"a","group":"b","steps":[],"outcome":{"reward":null,"success":null,"finish":"length","components":{"x":2,"y":1e-3,"x":-4.5E+2}}}"#,
            r#"  {"type": "trajectory", "id": "a", "group": "b", "steps": [{"role": "progress", "first_error": false, "invalid_action": true, "selected": null, "id": "n0", "scores": {"a": null, "a": 3}}]}  "#,
            r#"{"type": "trajectory", "id": "a", "group": "b", "steps": null, "outcome": null, "prompt": null, "train_step": -7}"#,
            r#"{}"#,
            r#"{"type": "group", "id": "g", "prompt": "p", "gold": "42"}"#,
            r#"{"type": "trajectory", "id": "a", "group": "b", "steps": [{"env_reward": 12345678901234567, "scores": {"p": 0.1}}]}"#,
            r#"{"outcome": {"reward": 1e-400, "components": {"a": 3.4028236e38, "b": -1.5e-7, "c": 123456789012345678, "d": -9}}}"#,
            r#"{"steps": [{"thought": "", "action": "\\u0041 \/ \b\f\r", "observation": "日本 → é"}]}"#,
        ];
        for line in taken {
            assert!(parse(line, &mut Labels::default()).is_some(), "not taken: {line}");
            assert!(agrees_with_serde(line), "{line}");
        }
        let left = [
            r#"{"vantage": 1}"#,
            r#"{"type": "trajectory", "id": 7, "group": "b", "steps": []}"#,
            r#"{"type": "trajectory", "id": "a", "id": "b"}"#,
            r#"{"type": "trajectory", "unknown": 1}"#,
            r#"{"type": "trajectory", "steps": [{"thought": "lone \ud83d"}]}"#,
            r#"{"type": "trajectory", "steps": [{"thought": "bad \q escape"}]}"#,
            "{\"type\": \"trajectory\", \"steps\": [{\"thought\": \"a raw\ttab\"}]}",
            r#"{"type": "trajectory", "steps": [{"kind": "esc\"aped"}]}"#,
            r#"{"type": "trajectory", "train_step": 1.0}"#,
            r#"{"type": "trajectory", "train_step": -0}"#,
            r#"{"type": "trajectory", "outcome": {"reward": -0}}"#,
            r#"{"type": "trajectory", "outcome": {"reward": 1e400}}"#,
            r#"{"type": "trajectory", "outcome": {"reward": 01}}"#,
            r#"{"type": "trajectory", "outcome": {"reward": 1.}}"#,
            r#"{"type": "trajectory", "outcome": {"reward": "NaN"}}"#,
            r#"{"type": "trajectory", "steps": [{"token_span": [0, 1]}]}"#,
            r#"{"type": "trajectory", "tokens": {"mask": [1]}}"#,
            r#"{"type": "trajectory"} x"#,
            r#"{"type": "trajectory",}"#,
            r#"[{"type": "trajectory"}]"#,
            r#"{"type": "trajectory", "steps": [{"scores": {"a": true}}]}"#,
        ];
        for line in left {
            assert!(parse(line, &mut Labels::default()).is_none(), "taken: {line}");
        }
    }
}
