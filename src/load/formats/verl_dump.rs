//! verl rollout dumps (`trainer.rollout_data_dir`): `<global_step>.jsonl`, one line per response
//! with `input`, `output`, `score`, `step`, `gts` and the reward function's extra keys. verl writes
//! no group id, so groups are rebuilt from identical `input` within a training step (the run's notes
//! say so). `output` is split into steps at `<think>`, `<tool_call>` / `<search>`, `<answer>` tags,
//! with `<tool_response>` / `<information>` / `<result>` text as the observation of the step before.

use std::borrow::Cow;
use std::collections::BTreeMap;

use serde_json::value::RawValue;

use crate::load::lenient::FieldError;
use crate::load::lines::{JsonLines, LineFeed, LineStream, head_text, parse_json, read_all};
use crate::load::records::{Record, head_matches, object_has, text_step};
use crate::load::{LoadError, LoadReport, Loader};
use crate::model::{NewGroup, NewStep, NewTokens, Outcome, Run, RunBuilder, decode_raw};

/// The format name.
const FORMAT: &str = "verl rollout dump";

/// The verl dump loader.
pub struct VerlDump;

/// A line as verl writes it, its two long texts as `T`: decoded (`String`, the located way to
/// read a line, and what a line the fast way refuses is read with) or left as they are in the
/// log (`&RawValue`).
#[derive(serde::Deserialize)]
struct Line<T> {
    input: T,
    output: T,
    #[serde(default)]
    score: Option<crate::load::lenient::Num>,
    #[serde(default)]
    step: Option<i64>,
    #[serde(default)]
    gts: Option<serde_json::Value>,
    #[serde(flatten)]
    extra: BTreeMap<String, serde_json::Value>,
}

impl Loader for VerlDump {
    fn name(&self) -> &'static str {
        "verl"
    }

    fn description(&self) -> &'static str {
        "verl rollout_data_dir dump: <step>.jsonl lines of {input, output, score, step, gts, extra reward keys}"
    }

    paced!(read);

    fn lines(&self, name: &str, head: &str, report: LoadReport) -> Option<Box<dyn LineFeed>> {
        accepts(head).then(|| Box::new(stream(name, report)) as Box<dyn LineFeed>)
    }
}

/// Whether `head` (the first lines of a file) looks like a verl dump.
pub fn accepts(head: &str) -> bool {
    head_matches(head, |r| object_has(r.text, &["input", "output", "score"]))
}

/// An empty dump named `name`, read piece by piece (a `rollout_data_dir` that gains
/// `<step>.jsonl` files while the run trains, or one file).
pub fn stream(name: &str, report: LoadReport) -> LineStream<Verl> {
    let mut builder = RunBuilder::new(name, FORMAT);
    builder.meta_mut().notes.push(
        "groups rebuilt from identical `input` within a training step (verl dumps no uid); two prompts with the same text share a group".to_owned(),
    );
    LineStream::new(Verl::default(), builder, report)
}

/// Reads the format, giving the event loop back between slices (see `load::pace`).
async fn read(name: &str, bytes: &[u8], report: &mut LoadReport) -> Result<Run, LoadError> {
    if !accepts(&head_text(bytes)) {
        return Err(LoadError::Incompatible {
            format: FORMAT,
            reason: "the first line lacks input / output / score".to_owned(),
        });
    }
    read_all(Box::new(stream(name, std::mem::take(report))), bytes, report).await
}

/// A text of a line: a byte range of the line's raw JSON (a whole string literal, or a piece of
/// one's inside), or a copy (a line read the located way).
#[derive(Debug)]
enum Text {
    Raw(usize, usize),
    Owned(String),
}

impl Text {
    /// The text for the builder: the raw JSON itself when `raw` (the line is in the builder's raw
    /// window), else decoded.
    fn get<'a>(&'a self, line: &'a str, raw: bool) -> Cow<'a, str> {
        match self {
            Self::Owned(text) => Cow::Borrowed(text),
            Self::Raw(from, to) => {
                let json = line.get(*from..*to).unwrap_or_default();
                if raw {
                    return Cow::Borrowed(json);
                }
                let inside = json.strip_prefix('"').and_then(|j| j.strip_suffix('"')).unwrap_or(json);
                decode_raw(inside.as_bytes()).unwrap_or_default()
            }
        }
    }
}

/// A verl line as parsed on a parse thread.
pub struct Item {
    step: i64,
    group_key: String,
    prompt: Text,
    gold: Option<String>,
    components: Vec<(String, f32)>,
    score: Option<f32>,
    success: Option<bool>,
    steps: Vec<(&'static str, Text, Text, Text)>,
}

/// The verl format's state: how many responses each rebuilt group has so far.
#[derive(Default)]
pub struct Verl {
    per_group: BTreeMap<String, usize>,
}

impl JsonLines for Verl {
    type Item = Item;
    fn what(&self) -> &'static str {
        "response"
    }

    fn parse(text: &str) -> Result<Item, FieldError> {
        if let Ok(line) = serde_json::from_str::<Line<&RawValue>>(text)
            && let Some(item) = raw_item(text, line)
        {
            return Ok(item);
        }
        let line: Line<String> = parse_json(text)?;
        let steps = split_output(&line.output)
            .into_iter()
            .map(|(kind, t, a, o)| (kind, Text::Owned(t), Text::Owned(a), Text::Owned(o)))
            .collect();
        let group_key = group_key(line.step, &line.input);
        Ok(common(line.step, group_key, Text::Owned(line.input), line.gts, &line.extra, line.score, steps))
    }

    fn add(&mut self, b: &mut RunBuilder, record: Record<'_>, _: usize, item: Item, _: &mut LoadReport) {
        let raw = b.in_raw_window(record.text);
        let group = if let Some(g) = b.group(&item.group_key) {
            g
        } else {
            let prompt = item.prompt.get(record.text, raw);
            let new = NewGroup {
                key: &item.group_key,
                train_step: Some(item.step),
                prompt: Some(&prompt),
                gold: item.gold.as_deref(),
                ..NewGroup::default()
            };
            b.add_group(&new).0
        };
        let index = self.per_group.entry(item.group_key.clone()).or_default();
        let key = format!("{}/r{index}", item.group_key);
        *index += 1;
        let texts: Vec<[Cow<'_, str>; 3]> = item
            .steps
            .iter()
            .map(|(_, t, a, o)| [t.get(record.text, raw), a.get(record.text, raw), o.get(record.text, raw)])
            .collect();
        let new_steps: Vec<NewStep<'_>> =
            item.steps.iter().zip(&texts).map(|((kind, ..), [t, a, o])| text_step(kind, t, a, o)).collect();
        let components: Vec<(&str, f32)> = item.components.iter().map(|(k, v)| (k.as_str(), *v)).collect();
        let outcome = Outcome { reward: item.score, success: item.success, components, finish: None };
        b.add_chain_trajectory(&key, group, &new_steps, &outcome, &NewTokens::default());
    }
}

/// The group of a response: its training step and its prompt's hash.
fn group_key(step: Option<i64>, input: &str) -> String {
    format!("step{}/{:016x}", step.unwrap_or(0), crate::load::records::stable_hash(input))
}

/// What both ways of reading a line share: the group, the gold answer, the reward and its parts.
fn common(
    step: Option<i64>,
    group_key: String,
    prompt: Text,
    gts: Option<serde_json::Value>,
    extra: &BTreeMap<String, serde_json::Value>,
    score: Option<crate::load::lenient::Num>,
    steps: Vec<(&'static str, Text, Text, Text)>,
) -> Item {
    let gold = gts.map(|g| match g {
        serde_json::Value::String(s) => s,
        other => other.to_string(),
    });
    let components = extra
        .iter()
        .filter_map(|(k, v)| match v {
            serde_json::Value::Number(n) => n.as_f64().map(|x| (k.clone(), x as f32)),
            serde_json::Value::Bool(flag) => Some((k.clone(), if *flag { 1.0 } else { 0.0 })),
            _ => None,
        })
        .collect();
    let score = score.map(|s| s.0).filter(|s| !s.is_nan());
    let success = match extra.get("acc") {
        Some(serde_json::Value::Bool(flag)) => Some(*flag),
        Some(serde_json::Value::Number(n)) => n.as_f64().map(|x| x > 0.5),
        _ => score.map(|s| s > 0.5),
    };
    Item { step: step.unwrap_or(0), group_key, prompt, gold, components, score, success, steps }
}

/// A line read with its texts left in it: the output split at its tags on the decoded text, each
/// piece mapped back to the bytes of the literal it came from. `None` when `input` or `output` is
/// not a string (the located way then says what is wrong).
fn raw_item(text: &str, line: Line<&RawValue>) -> Option<Item> {
    let base = text.as_ptr() as usize;
    let at = |raw: &RawValue| raw.get().as_ptr() as usize - base;
    let (input, output) = (line.input.get(), line.output.get());
    let input_inside = input.strip_prefix('"')?.strip_suffix('"')?;
    let output_inside = output.strip_prefix('"')?.strip_suffix('"')?;
    let prompt = decode_raw(input_inside.as_bytes())?;
    let output_at = at(line.output) + 1;
    let piece_at = |p: Piece| match p {
        Piece::Range(from, to) => Text::Raw(output_at + from, output_at + to),
        Piece::Joined(text) => Text::Owned(text),
    };
    let has = |escape: &[u8]| memchr::memmem::find(output_inside.as_bytes(), escape).is_some();
    let steps = if has(b"\\u") || has(b"\\/") {
        mapped_steps(output_inside, output_at)?
    } else {
        // The tags are the same bytes in the literal: split it as it is, nothing decoded.
        split_pieces(output_inside, true)
            .into_iter()
            .map(|(k, t, a, o)| (k, piece_at(t), piece_at(a), piece_at(o)))
            .collect()
    };
    let group_key = group_key(line.step, &prompt);
    let prompt = Text::Raw(at(line.input), at(line.input) + input.len());
    Some(common(line.step, group_key, prompt, line.gts, &line.extra, line.score, steps))
}

/// The steps of `output_inside` (at byte `output_at` of its line) split on its decoded text, each
/// piece mapped back to the bytes of the literal it came from.
fn mapped_steps(output_inside: &str, output_at: usize) -> Option<Vec<(&'static str, Text, Text, Text)>> {
    let (decoded, map) = decode_mapped(output_inside)?;
    let raw_of = |d: usize| {
        let i = map.partition_point(|&(dd, _)| dd <= d);
        output_at + if i == 0 { d } else { map[i - 1].1 + (d - map[i - 1].0) }
    };
    let piece = |p: Piece| match p {
        Piece::Range(from, to) => Text::Raw(raw_of(from), raw_of(to)),
        Piece::Joined(text) => Text::Owned(text),
    };
    Some(
        split_pieces(&decoded, false).into_iter().map(|(kind, t, a, o)| (kind, piece(t), piece(a), piece(o))).collect(),
    )
}

/// A decoded text, and where each escape of its raw JSON ends (see [`decode_mapped`]).
type Decoded<'a> = (Cow<'a, str>, Vec<(usize, usize)>);

/// The decoded inside of a JSON string literal, and where each escape ends: (byte in the decoded
/// text, byte in `raw`) after each one. `None` when `raw` is not valid string content.
fn decode_mapped(raw: &str) -> Option<Decoded<'_>> {
    if !raw.contains('\\') {
        return Some((Cow::Borrowed(raw), Vec::new()));
    }
    let bytes = raw.as_bytes();
    let mut out = String::with_capacity(raw.len());
    let mut map = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let Some(next) = bytes[i..].iter().position(|&b| b == b'\\') else {
            out.push_str(&raw[i..]);
            break;
        };
        out.push_str(&raw[i..i + next]);
        i += next;
        let (ch, len) = crate::model::decode_escape(bytes, i)?;
        out.push(ch);
        i += len;
        map.push((out.len(), i));
    }
    Some((Cow::Owned(out), map))
}

/// Tags that open a step, with the step kind and whether the text is the action (else the thought).
const STEP_TAGS: [(&str, &str, bool); 4] = [
    ("think", "think", false),
    ("tool_call", "tool_call", true),
    ("search", "search", true),
    ("answer", "answer", true),
];
/// Tags whose text is what the environment returned to the step before.
const OBSERVATION_TAGS: [&str; 3] = ["tool_response", "information", "result"];

/// The tags a response is split at: [`STEP_TAGS`], then [`OBSERVATION_TAGS`].
fn all_tags() -> impl Iterator<Item = &'static str> {
    STEP_TAGS.iter().map(|(tag, _, _)| *tag).chain(OBSERVATION_TAGS)
}

/// The searchers for the closing tags of [`all_tags`], in their order, built once: a response has
/// hundreds of tags, and a searcher (and the tag's text) made for each was a tenth of the load.
fn closing_finders() -> &'static [memchr::memmem::Finder<'static>] {
    static FINDERS: std::sync::LazyLock<Vec<memchr::memmem::Finder<'static>>> = std::sync::LazyLock::new(|| {
        all_tags().map(|tag| memchr::memmem::Finder::new(format!("</{tag}>").as_bytes()).into_owned()).collect()
    });
    &FINDERS
}

/// A step's text: a byte range of the response, or texts joined (observations of several tags).
#[derive(Clone, Debug, PartialEq, Eq)]
enum Piece {
    Range(usize, usize),
    Joined(String),
}

/// Splits a response into (kind, thought, action, observation) steps at its tags; untagged text is
/// a `response` step. A response without tags is one step.
pub fn split_output(output: &str) -> Vec<(&'static str, String, String, String)> {
    let text = |p: Piece| match p {
        Piece::Range(from, to) => output[from..to].to_owned(),
        Piece::Joined(text) => text,
    };
    split_pieces(output, false).into_iter().map(|(kind, t, a, o)| (kind, text(t), text(a), text(o))).collect()
}

/// The bytes to take off the start and the end of `part`, the inside of a JSON string literal,
/// for its text to be trimmed: white space, and the escapes `\n`, `\t`, `\r`, `\f`. (`part` has
/// no `\u` escapes, and starts outside an escape.)
fn raw_trim(part: &str) -> (usize, usize) {
    let whitespace_escape = |b: &[u8]| matches!(b, [b'\\', b'n' | b't' | b'r' | b'f']);
    let mut s = part.trim_start();
    while s.len() >= 2 && whitespace_escape(&s.as_bytes()[..2]) {
        s = s[2..].trim_start();
    }
    let start = part.len() - s.len();
    let mut s = s.trim_end();
    while s.len() >= 2 && whitespace_escape(&s.as_bytes()[s.len() - 2..]) {
        // The backslash starts an escape when the backslashes before it are even in number.
        let before = s.as_bytes()[..s.len() - 2].iter().rev().take_while(|&&b| b == b'\\').count();
        if before % 2 == 1 {
            break;
        }
        s = s[..s.len() - 2].trim_end();
    }
    (start, part.len() - start - s.len())
}

/// [`split_output`] as byte ranges of `output`: of the text itself, or when `raw`, of the inside
/// of its JSON string literal, escapes as written (then without `\u` or `\/` escapes, so that
/// the tags and their slashes are the same bytes in both).
fn split_pieces(output: &str, raw: bool) -> Vec<(&'static str, Piece, Piece, Piece)> {
    const NONE: Piece = Piece::Range(0, 0);
    let mut steps: Vec<(&'static str, Piece, Piece, Piece)> = Vec::new();
    // The trimmed range of `output[from..to]`.
    let trimmed = |from: usize, to: usize| {
        let part = &output[from..to];
        let (lead, trail) = if raw {
            raw_trim(part)
        } else {
            (part.len() - part.trim_start().len(), part.len() - part.trim_end().len())
        };
        let (start, end) = (from + lead, to - trail);
        if start >= end { NONE } else { Piece::Range(start, end) }
    };
    let push_text = |steps: &mut Vec<(&'static str, Piece, Piece, Piece)>, from: usize, to: usize| {
        let text = trimmed(from, to);
        if text != NONE {
            steps.push(("response", NONE, text, NONE));
        }
    };
    let mut at_now = 0;
    while at_now < output.len() {
        let rest = &output[at_now..];
        // The earliest known opening tag: one pass over the `<`s (a search for each tag would
        // go over the rest of a long response once per step).
        let next = memchr::memchr_iter(b'<', rest.as_bytes()).find_map(|at| {
            let after = &rest[at + 1..];
            all_tags()
                .enumerate()
                .find(|(_, tag)| after.strip_prefix(tag).is_some_and(|t| t.starts_with('>')))
                .map(|(i, tag)| (at, i, tag))
        });
        let Some((at, tag_index, tag)) = next else {
            push_text(&mut steps, at_now, output.len());
            break;
        };
        push_text(&mut steps, at_now, at_now + at);
        let close = &closing_finders()[tag_index];
        let body_start = at_now + at + tag.len() + 2;
        let (body_end, after) = match close.find(&output.as_bytes()[body_start..]) {
            Some(end) => (body_start + end, body_start + end + close.needle().len()),
            None => (output.len(), output.len()),
        };
        let body = trimmed(body_start, body_end);
        if OBSERVATION_TAGS.contains(&tag) {
            match steps.last_mut() {
                Some(last) => {
                    last.3 = match (&last.3, &body) {
                        (old, new) if *old == NONE => new.clone(),
                        (_, new) if *new == NONE => last.3.clone(),
                        (old, new) => {
                            let text = |p: &Piece| match p {
                                Piece::Range(from, to) if raw => {
                                    decode_raw(&output.as_bytes()[*from..*to]).unwrap_or_default().into_owned()
                                }
                                Piece::Range(from, to) => output[*from..*to].to_owned(),
                                Piece::Joined(text) => text.clone(),
                            };
                            Piece::Joined(format!("{}\n{}", text(old), text(new)))
                        }
                    };
                }
                None => steps.push(("observation", NONE, NONE, body)),
            }
        } else if let Some((_, kind, is_action)) = STEP_TAGS.iter().find(|(t, _, _)| *t == tag) {
            let (thought, action) = if *is_action { (NONE, body) } else { (body, NONE) };
            steps.push((kind, thought, action, NONE));
        }
        at_now = after;
    }
    if steps.is_empty() {
        steps.push(("response", NONE, Piece::Range(0, output.len()), NONE));
    }
    steps
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_splits_at_tags() {
        let steps = split_output(
            "<think>need the capital</think>\n<search>capital of Norway</search><information>Oslo is …</information><answer>Oslo</answer>",
        );
        let kinds: Vec<&str> = steps.iter().map(|s| s.0).collect();
        assert_eq!(kinds, ["think", "search", "answer"]);
        assert_eq!(steps[0].1, "need the capital");
        assert_eq!(steps[1].2, "capital of Norway");
        assert_eq!(steps[1].3, "Oslo is …");
        assert_eq!(steps[2].2, "Oslo");
        assert_eq!(split_output("just 5").len(), 1);
    }

    #[test]
    fn a_line_without_unicode_escapes_keeps_its_texts_as_ranges_of_itself() {
        let text = r#"{"input": "a\nb", "output": "<think> x\t</think>said", "score": 1.0, "step": 3, "acc": true}"#;
        let item = Verl::parse(text).unwrap_or_else(|e| panic!("{e:?}"));
        let Text::Raw(from, to) = item.prompt else { panic!("the prompt was copied") };
        assert_eq!(&text[from..to], r#""a\nb""#);
        let ranges: Vec<&str> = item
            .steps
            .iter()
            .flat_map(|(_, t, a, _)| [t, a])
            .filter_map(|t| match t {
                Text::Raw(from, to) if from < to => Some(&text[*from..*to]),
                _ => None,
            })
            .collect();
        assert_eq!(ranges, ["x", "said"]);
        assert_eq!(item.success, Some(true));
    }
}
