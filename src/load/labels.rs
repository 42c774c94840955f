//! The labels file (docs/LABELS.md): JSON lines, one [`Entry`] a line, read and written here
//! without the filesystem (`source::labels` finds, locks and appends to the file).
//!
//! ```text
//! {"vantage_label": 1, "name": "hack", "trajectory": "s3-p7-r2", "step": 4, "source": {"kind": "person", "name": "ana"}, "time": "2026-12-07T01:02:03Z"}
//! {"vantage_label": 1, "name": "severity", "value": "high", "trajectory": "s3-p7-r2", "source": {"kind": "agent", "name": "claude-code"}, "note": "reads the test file"}
//! {"vantage_label": 1, "remove": true, "name": "hack", "trajectory": "s3-p7-r2", "step": 4}
//! ```
//!
//! A label's `value` is absent or `true` for a flag, a string for a word, a number for a number;
//! `step` (from 0, along the trajectory's path) is absent for a label on the whole trajectory.

use serde_json::{Map, Value as Json, json};

use crate::model::Warning;
use crate::model::labels::{Entry, Label, Source, SourceKind, Target, Value, bad_name};

/// The version key every line begins with.
pub const KEY: &str = "vantage_label";

/// One entry as its line (with its newline).
pub fn line(entry: &Entry) -> String {
    let mut object = Map::new();
    object.insert(KEY.to_owned(), json!(1));
    let target = |object: &mut Map<String, Json>, target: &Target| {
        object.insert("trajectory".to_owned(), json!(target.trajectory));
        if let Some(step) = target.step {
            object.insert("step".to_owned(), json!(step));
        }
    };
    match entry {
        Entry::Add(label) => {
            object.insert("name".to_owned(), json!(label.name));
            match &label.value {
                Value::Flag => {}
                Value::Word(word) => drop(object.insert("value".to_owned(), json!(word))),
                Value::Number(number) => drop(object.insert("value".to_owned(), json!(number))),
            }
            target(&mut object, &label.target);
            object.insert("source".to_owned(), json!({ "kind": label.source.kind.name(), "name": label.source.name }));
            if let Some(note) = &label.note {
                object.insert("note".to_owned(), json!(note));
            }
            if let Some(time) = &label.time {
                object.insert("time".to_owned(), json!(time));
            }
        }
        Entry::Remove { name, target: on } => {
            object.insert("remove".to_owned(), json!(true));
            object.insert("name".to_owned(), json!(name));
            target(&mut object, on);
        }
    }
    let mut text = Json::Object(object).to_string();
    text.push('\n');
    text
}

/// The entries of a labels file, and a located warning for each line that is not one (the other
/// lines still read). A last line without its newline is one still being written (or cut by a
/// crash), and is left out without a warning.
pub fn read(bytes: &[u8]) -> (Vec<Entry>, Vec<Warning>) {
    let (mut entries, mut warnings) = (Vec::new(), Vec::new());
    let whole = match bytes.iter().rposition(|&b| b == b'\n') {
        Some(end) => &bytes[..=end],
        None => &[][..],
    };
    for (i, raw) in whole.split(|&b| b == b'\n').enumerate() {
        let number = i as u64 + 1;
        let text = String::from_utf8_lossy(raw);
        if text.trim().is_empty() {
            continue;
        }
        match entry(&text) {
            Ok(entry) => entries.push(entry),
            Err((field, reason)) => warnings.push(Warning::skipped(number, field, reason)),
        }
    }
    (entries, warnings)
}

/// One line's entry, or the field that is wrong and why.
fn entry(text: &str) -> Result<Entry, (String, String)> {
    let bad = |field: &str, reason: String| (field.to_owned(), reason);
    let json: Json = serde_json::from_str(text).map_err(|e| bad("record", format!("not JSON: {e}")))?;
    let Some(object) = json.as_object() else { return Err(bad("record", "not a JSON object".to_owned())) };
    match object.get(KEY) {
        Some(version) if version == 1 => {}
        Some(version) => return Err(bad(KEY, format!("version {version}: this vantage reads version 1"))),
        None => return Err(bad(KEY, format!("missing: every line begins with \"{KEY}\": 1"))),
    }
    let text_field = |field: &str| -> Result<Option<String>, (String, String)> {
        match object.get(field) {
            None | Some(Json::Null) => Ok(None),
            Some(Json::String(text)) => Ok(Some(text.clone())),
            Some(other) => Err(bad(field, format!("{other}: not a string"))),
        }
    };
    let name = text_field("name")?.ok_or_else(|| bad("name", "missing".to_owned()))?;
    if let Some(why) = bad_name(&name) {
        return Err(bad("name", why.to_owned()));
    }
    let trajectory = text_field("trajectory")?.ok_or_else(|| bad("trajectory", "missing".to_owned()))?;
    let step = match object.get("step") {
        None | Some(Json::Null) => None,
        Some(step) => Some(
            step.as_u64()
                .and_then(|s| u32::try_from(s).ok())
                .ok_or_else(|| bad("step", format!("{step}: not a step number (0, 1, …)")))?,
        ),
    };
    let target = Target { trajectory, step };
    if object.get("remove").is_some_and(|r| r == true) {
        return Ok(Entry::Remove { name, target });
    }
    let value = match object.get("value") {
        None | Some(Json::Null | Json::Bool(true)) => Value::Flag,
        Some(Json::String(word)) => Value::Word(word.clone()),
        Some(Json::Number(number)) => Value::Number(
            number
                .as_f64()
                .filter(|n| n.is_finite())
                .ok_or_else(|| bad("value", format!("{number}: not a finite number")))?,
        ),
        Some(other) => return Err(bad("value", format!("{other}: a flag (true), a word or a number"))),
    };
    let source = match object.get("source") {
        Some(Json::Object(source)) => {
            let kind = source.get("kind").and_then(Json::as_str).unwrap_or_default();
            let kind = SourceKind::from_name(kind).ok_or_else(|| {
                let kinds: Vec<&str> = SourceKind::ALL.iter().map(|k| k.name()).collect();
                bad("source.kind", format!("{kind:?}: one of {}", kinds.join(", ")))
            })?;
            let name = source.get("name").and_then(Json::as_str).unwrap_or_default().to_owned();
            Source { kind, name }
        }
        None | Some(Json::Null) => Source { kind: SourceKind::Person, name: String::new() },
        Some(other) => return Err(bad("source", format!("{other}: an object with kind and name"))),
    };
    Ok(Entry::Add(Label { name, value, target, source, note: text_field("note")?, time: text_field("time")? }))
}

/// One result of an Inspect Scout scanner (docs/LABELS.md): a row of a scan's `<scanner>.parquet`,
/// as `inspect_scout`'s recorder writes it (`_recorder/file.py`; the columns of its results data
/// frame).
#[derive(Clone, Debug, PartialEq)]
pub struct ScoutResult {
    /// The scanned transcript's task id (the Inspect sample's id).
    pub task_id: String,
    /// Its repeat (the sample's epoch).
    pub repeat: i64,
    /// Where the transcript came from (the Inspect log's path or URI).
    pub source_uri: String,
    /// The scanner's name.
    pub scanner: String,
    /// The result as a label's value: `None` for a result that found nothing (`false`, `null`).
    pub value: Option<Value>,
    /// The scanner's explanation.
    pub explanation: Option<String>,
}

/// The results in a Scout scanner's Parquet file, or why they cannot be read.
pub fn scout_results(bytes: &[u8]) -> Result<Vec<ScoutResult>, String> {
    use crate::load::parquet_file::{Column, ParquetMeta};
    if !bytes.starts_with(b"PAR1") {
        return Err("not Parquet".to_owned());
    }
    let meta = ParquetMeta::of_file(bytes)?;
    let read = |name: &str| -> Result<Option<Column>, String> {
        let Some(leaf) = meta.leaf(name) else { return Ok(None) };
        crate::load::parquet_file::decode_in(&meta, leaf, bytes).map(Some).map_err(|e| format!("{name}: {e}"))
    };
    let need = |name: &str| read(name)?.ok_or_else(|| format!("no {name} column: not a Scout scanner's results"));
    let (task, scanner, value, kind) =
        (need("transcript_task_id")?, need("scanner_name")?, need("value")?, need("value_type")?);
    let (repeat, uri, explanation) =
        (read("transcript_task_repeat")?, read("transcript_source_uri")?, read("explanation")?);
    let rows = task.slots();
    let mut out = Vec::with_capacity(rows);
    for i in 0..rows {
        let text = |c: &Column| c.str(i).map(str::to_owned);
        let (Some(task_id), Some(scanner)) = (text(&task), text(&scanner)) else { continue };
        // `value` is the result as JSON text, `value_type` what it is.
        let json: Option<Json> = value.str(i).and_then(|v| serde_json::from_str(v).ok());
        let value = match (kind.str(i), json) {
            (Some("boolean"), Some(Json::Bool(true))) => Some(Value::Flag),
            (Some("number"), Some(Json::Number(n))) => n.as_f64().filter(|n| n.is_finite()).map(Value::Number),
            (Some("string"), Some(Json::String(word))) if !word.is_empty() => Some(Value::Word(word)),
            _ => None,
        };
        out.push(ScoutResult {
            task_id,
            repeat: repeat.as_ref().and_then(|r| r.int(i)).unwrap_or(1),
            source_uri: uri.as_ref().and_then(text).unwrap_or_default(),
            scanner,
            value,
            explanation: explanation.as_ref().and_then(text).filter(|e| !e.is_empty()),
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_entry_reads_back_from_its_line() {
        let label = Label {
            name: "severity".to_owned(),
            value: Value::Word("high".to_owned()),
            target: Target { trajectory: "s0-p1-r2".to_owned(), step: Some(3) },
            source: Source { kind: SourceKind::Agent, name: "claude-code".to_owned() },
            note: Some("reads the \"test\" file".to_owned()),
            time: Some("2026-12-07T01:02:03Z".to_owned()),
        };
        let entries = vec![
            Entry::Add(label.clone()),
            Entry::Add(Label {
                value: Value::Number(0.25),
                target: Target { step: None, ..label.target.clone() },
                ..label.clone()
            }),
            Entry::Add(Label { value: Value::Flag, note: None, time: None, ..label.clone() }),
            Entry::Remove { name: "severity".to_owned(), target: label.target.clone() },
        ];
        let text: String = entries.iter().map(line).collect();
        let (read_back, warnings) = read(text.as_bytes());
        assert!(warnings.is_empty(), "{warnings:?}");
        assert_eq!(read_back, entries);
    }

    #[test]
    fn a_bad_line_is_a_located_warning_and_a_cut_last_line_is_left_out() {
        let good =
            line(&Entry::Remove { name: "hack".to_owned(), target: Target { trajectory: "t".to_owned(), step: None } });
        let text = format!(
            "{good}{{\"vantage_label\": 1, \"name\": \"hack\", \"trajectory\": \"t\", \"step\": -1}}\nnot json\n{{\"name\": \"x\"}}\n{good}{{\"vantage_label\": 1, \"na"
        );
        let (entries, warnings) = read(text.as_bytes());
        assert_eq!(entries.len(), 2);
        let located: Vec<(u64, &str)> = warnings.iter().map(|w| (w.line, w.field.as_str())).collect();
        assert_eq!(located, [(2, "step"), (3, "record"), (4, KEY)]);
    }
}
