//! "vantage JSONL v1", the native format: a header record, then group, trajectory and tree
//! records, one JSON object per line. docs/FORMAT.md describes every field.

mod convert;
mod records;
mod tree;
pub mod write;

use crate::load::lenient::{FieldError, parse_located, quote_non_finite};
use crate::load::{LoadError, LoadReport, Loader};
use crate::model::{GroupId, NewGroup, Run, RunBuilder, Warning};

use convert::{TokenColumns, check_spans, new_step, outcome};
use records::{RawRecord, RawStep};

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

/// Splits bytes into (1-based line number, line bytes) without the line terminator.
fn lines(bytes: &[u8]) -> impl Iterator<Item = (u64, &[u8])> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    bytes.split(|&b| b == b'\n').enumerate().map(|(i, line)| {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        (i as u64 + 1, line)
    })
}

/// Reads a native JSONL run.
pub fn load(name: &str, bytes: &[u8], report: &mut LoadReport) -> Result<Run, LoadError> {
    crate::load::pace::block_on(load_paced(name, bytes, report))
}

/// Reads a native JSONL run, giving the event loop back between records (see `load::pace`).
pub async fn load_paced(name: &str, bytes: &[u8], report: &mut LoadReport) -> Result<Run, LoadError> {
    let mut lines = lines(bytes).filter(|(_, l)| !l.iter().all(u8::is_ascii_whitespace));
    let incompatible = |reason: &str| LoadError::Incompatible { format: FORMAT_NAME, reason: reason.to_owned() };
    let Some((header_line, header_bytes)) = lines.next() else {
        return Err(incompatible("the file is empty"));
    };
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
    let start = bytes.as_ptr() as usize;
    for (line, record) in lines {
        if line % 1024 == 0 {
            loader.report.progress.set((record.as_ptr() as usize).saturating_sub(start) as u64);
        }
        loader.line(line, record);
        crate::load::pace::pace().await;
    }
    loader.report.progress.set(bytes.len() as u64);
    let NativeLoader { builder, report, .. } = loader;
    crate::load::records::finish(builder, report, "trajectory")
}

struct NativeLoader<'r> {
    builder: RunBuilder,
    report: &'r mut LoadReport,
    ignored: Vec<String>,
}

impl NativeLoader<'_> {
    fn header(&mut self, line: u64, text: &str) {
        self.report.records_seen += 1;
        match self.parse(line, text) {
            Ok(record) => {
                self.report.records_loaded += 1;
                if let Some(name) = record.name {
                    self.builder.meta_mut().metadata.insert("name".to_owned(), serde_json::Value::String(name));
                }
                if let Some(meta) = record.meta {
                    self.builder.meta_mut().metadata.extend(meta);
                }
            }
            Err(warning) => self.report.warn(warning),
        }
    }

    fn parse(&mut self, line: u64, text: &str) -> Result<RawRecord, Warning> {
        self.ignored.clear();
        let record = parse_located::<RawRecord>(text, &mut self.ignored)
            .map_err(|FieldError { field, reason }| Warning::skipped(line, field, reason))?;
        for field in self.ignored.drain(..) {
            self.report.warn(Warning::kept(line, field, "unknown field, ignored"));
        }
        Ok(record)
    }

    fn line(&mut self, line: u64, bytes: &[u8]) {
        self.report.records_seen += 1;
        let text = match std::str::from_utf8(bytes) {
            Ok(text) => text,
            Err(err) => {
                let reason = format!("invalid UTF-8 at byte {} of the line", err.valid_up_to());
                self.report.warn(Warning::skipped(line, "record", reason));
                return;
            }
        };
        let text = quote_non_finite(text);
        let result = self.parse(line, &text).and_then(|record| self.record(line, &record));
        match result {
            Ok(()) => self.report.records_loaded += 1,
            Err(warning) => self.report.warn(warning),
        }
    }

    fn record(&mut self, line: u64, record: &RawRecord) -> Result<(), Warning> {
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
        (&mut self.builder, self.report)
    }

    fn add_group(&mut self, line: u64, group: &NewGroup<'_>) -> GroupId {
        add_group(&mut self.builder, self.report, line, group)
    }

    fn trajectory(&mut self, line: u64, record: &RawRecord) -> Result<(), Warning> {
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
        let spans = steps.iter().enumerate().map(|(i, s)| (format!("steps[{i}]"), s.token_span));
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

fn new_group<'a>(key: &'a str, record: &'a RawRecord) -> NewGroup<'a> {
    NewGroup {
        key,
        task: record.task.as_ref().map(|t| t.0.as_str()),
        train_step: record.train_step,
        prompt: record.prompt.as_deref(),
        gold: record.gold.as_deref(),
    }
}

fn required_id<'a>(id: Option<&'a crate::load::lenient::Id>, field: &str, line: u64) -> Result<&'a str, Warning> {
    match id {
        None => Err(Warning::skipped(line, field, "missing")),
        Some(id) if id.0.is_empty() => Err(Warning::skipped(line, field, "empty")),
        Some(id) => Ok(&id.0),
    }
}

fn warn_tree_only_fields(step: &RawStep, field: &str, line: u64, warnings: &mut Vec<Warning>) {
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
