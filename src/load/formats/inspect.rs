//! Inspect logs: `.eval` (a ZIP: `header.json`, `summaries.json`, `samples/{id}_epoch_{n}.json`
//! or the chunked `samples/{id}_epoch_{n}/…` shape; deflate or zstd entries) and `.json` (one
//! `EvalLog` with `samples` inline; `NaN` / `Infinity` tolerated). Each sample is a trajectory;
//! the epochs of one sample form a group; the main scorer's value is the outcome (C / I / P / N
//! as 1 / 0 / 0.5 / 0) and every scorer a component. Steps come from the model events (the
//! assistant output, its reasoning as the thought, tool calls as the action) with the following
//! tool events as observations, or from the final messages when there are no events; an
//! intermediate `score` event becomes the `judge` score of the step before it; `attachment://`
//! references are resolved from the sample's attachments.
//!
//! An `.eval` is read lazily through [`EvalFile`]: opening reads the central directory, the header
//! and the sample summaries (`summaries.json`, or `_journal/summaries/*.json` while the eval is
//! still running), which is enough for the run grid: every sample with its scores and outcome.
//! Each sample entry is decompressed and parsed only when asked for ([`EvalFile::read_sample`]);
//! [`EvalFile::run`] builds the run from what has been read so far, a sample not yet read being
//! one `summary` step that says what the summary knows of it. The app shows the summary at once
//! and reads the samples across frames, the selected one first; the CLI reads them all.

use std::collections::BTreeMap;

use crate::load::records::{finish, text_of, text_step};
use crate::load::zip::{Archive, Entry, read_entry};
use crate::load::{LoadError, LoadReport, Loader};
use crate::model::{NewGroup, NewStep, NewTokens, Outcome, Run, RunBuilder, Warning};

/// The format name.
const FORMAT: &str = "Inspect log";

/// The step kind of a sample whose entry has not been read yet.
pub const UNREAD_KIND: &str = "summary";

/// The Inspect loader.
pub struct Inspect;

impl Loader for Inspect {
    fn name(&self) -> &'static str {
        "inspect"
    }

    fn description(&self) -> &'static str {
        "Inspect .eval (ZIP with header.json, summaries and samples/*; deflate or zstd) and .json EvalLog"
    }

    fn load_bytes(&self, name: &str, bytes: &[u8], report: &mut LoadReport) -> Result<Run, LoadError> {
        if bytes.starts_with(b"PK\x03\x04") {
            let mut file = EvalFile::from_bytes(name, bytes, report)?;
            let all: Vec<usize> = (0..file.len()).collect();
            file.read_samples(&all, report);
            let run = file.run(report)?;
            report.warnings.clone_from(&run.meta.warnings);
            return Ok(run);
        }
        let text = text_of(FORMAT, bytes)?;
        let head = text.trim_start();
        if !(head.starts_with('{') && head.contains("\"eval\"") && head.contains("\"samples\"")) {
            return Err(incompatible("neither an .eval ZIP nor a JSON EvalLog with eval and samples".to_owned()));
        }
        let log: serde_json::Value =
            serde_json::from_str(&text).map_err(|e| incompatible(crate::load::lenient::describe_json_error(&e)))?;
        let mut header = Header::default();
        header.describe(&log);
        let mut slots = Vec::new();
        for (i, sample) in log.get("samples").and_then(serde_json::Value::as_array).into_iter().flatten().enumerate() {
            report.records_seen += 1;
            report.records_loaded += 1;
            let line = i as u64 + 1;
            let (id, epoch) = sample_id(sample, line);
            let mut slot = Slot::new(id, epoch, Source::Inline, line);
            slot.read = Some(ReadSample::of(sample));
            slots.push(slot);
        }
        let run = build(name, &header, &slots, report)?;
        report.warnings.clone_from(&run.meta.warnings);
        Ok(run)
    }
}

fn incompatible(reason: String) -> LoadError {
    LoadError::Incompatible { format: FORMAT, reason }
}

/// What the header says of the run: metadata and the main scorer, whose value is the outcome.
#[derive(Clone, Debug, Default)]
struct Header {
    metadata: BTreeMap<String, serde_json::Value>,
    primary: Option<String>,
}

impl Header {
    /// Run metadata from an `EvalLog` header or `_journal/start.json` (task, model, status).
    fn describe(&mut self, header: &serde_json::Value) {
        for (key, pointer) in
            [("task", "/eval/task"), ("model", "/eval/model"), ("status", "/status"), ("created", "/eval/created")]
        {
            if let Some(v) = header.pointer(pointer) {
                self.metadata.insert(key.to_owned(), v.clone());
            }
        }
        // The first scorer of the results, else of the spec (a journal's start has no results).
        let first = ["/results/scores/0/name", "/eval/scorers/0/name"]
            .iter()
            .find_map(|p| header.pointer(p).and_then(serde_json::Value::as_str));
        if let Some(name) = first {
            self.primary = Some(name.to_owned());
        }
    }
}

/// Where a sample's content lives.
#[derive(Clone, Debug)]
enum Source {
    /// One `samples/{id}_epoch_{n}.json` entry (index into the directory).
    Monolith(usize),
    /// A chunked `samples/{id}_epoch_{n}/` directory (its prefix, with the trailing slash).
    Chunked(String),
    /// Inline in a `.json` log.
    Inline,
    /// Summarised, but no entry holds it (an eval still running, or a damaged archive).
    Missing,
}

/// A sample as read from its entry.
#[derive(Clone, Debug, Default)]
struct ReadSample {
    input: String,
    target: Option<String>,
    steps: Vec<Step>,
    scores: Vec<(String, f32)>,
    stop: Option<String>,
}

impl ReadSample {
    fn of(sample: &serde_json::Value) -> Self {
        let events = sample.get("events").and_then(serde_json::Value::as_array).map(Vec::as_slice).unwrap_or(&[]);
        let mut steps = steps_from_events(events);
        if steps.is_empty() {
            let messages =
                sample.get("messages").and_then(serde_json::Value::as_array).map(Vec::as_slice).unwrap_or(&[]);
            steps = steps_from_messages(messages);
        }
        Self {
            input: input_text(sample.get("input")),
            target: target_text(sample.get("target")),
            steps,
            scores: scores_of(sample.get("scores")),
            stop: sample
                .pointer("/output/choices/0/stop_reason")
                .and_then(serde_json::Value::as_str)
                .map(str::to_owned),
        }
    }
}

/// One sample: what its summary says, and once read, the sample itself.
#[derive(Clone, Debug)]
struct Slot {
    id: String,
    epoch: i64,
    /// Its record number, for located warnings (position in the summaries, or entry order).
    line: u64,
    source: Source,
    /// From the summary: input (thinned), target, scores, and what it says of the transcript.
    input: String,
    target: Option<String>,
    scores: Vec<(String, f32)>,
    about: String,
    /// Whether a summary lists it (else it was found as an entry only).
    summarised: bool,
    /// The sample, once read.
    read: Option<ReadSample>,
    /// Reading it failed (a warning says why); it keeps its summary.
    failed: bool,
}

impl Slot {
    fn new(id: String, epoch: i64, source: Source, line: u64) -> Self {
        Self {
            id,
            epoch,
            line,
            source,
            input: String::new(),
            target: None,
            scores: Vec::new(),
            about: String::new(),
            summarised: false,
            read: None,
            failed: false,
        }
    }

    fn key(&self) -> String {
        format!("{}/epoch{}", self.id, self.epoch)
    }

    /// Whether `key` is this sample's [`Self::key`] (without building it: the app asks every frame).
    fn has_key(&self, key: &str) -> bool {
        key.strip_prefix(self.id.as_str())
            .and_then(|rest| rest.strip_prefix("/epoch"))
            .is_some_and(|epoch| epoch == self.epoch.to_string())
    }

    fn is_pending(&self) -> bool {
        self.read.is_none() && !self.failed && !matches!(self.source, Source::Missing)
    }
}

/// An Inspect `.eval` opened lazily over its bytes (borrowed by the CLI, shared `Arc<[u8]>` in the
/// app): the directory, header and summaries are read at open, each sample when asked for.
pub struct EvalFile<B: AsRef<[u8]>> {
    name: String,
    bytes: B,
    entries: Vec<Entry>,
    header: Header,
    slots: Vec<Slot>,
    bytes_read: u64,
    revision: u64,
    /// The most bytes one entry may inflate to (the load's memory budget).
    budget: u64,
}

impl<B: AsRef<[u8]>> std::fmt::Debug for EvalFile<B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EvalFile")
            .field("name", &self.name)
            .field("samples", &self.slots.len())
            .field("unread", &self.num_unread())
            .finish_non_exhaustive()
    }
}

impl<B: AsRef<[u8]>> EvalFile<B> {
    /// Reads the central directory, the header and the sample summaries; [`LoadError::Incompatible`]
    /// when the bytes are not an Inspect `.eval`.
    pub fn from_bytes(name: &str, bytes: B, report: &mut LoadReport) -> Result<Self, LoadError> {
        let entries = {
            let archive = Archive::open(bytes.as_ref(), report.budget)
                .map_err(|e| incompatible(format!("unreadable ZIP: {e}")))?;
            if archive.entry("header.json").is_none() && archive.entry("_journal/start.json").is_none() {
                return Err(incompatible("a ZIP without header.json or _journal/start.json".to_owned()));
            }
            archive.entries
        };
        let mut file = Self {
            name: name.to_owned(),
            bytes,
            entries,
            header: Header::default(),
            slots: Vec::new(),
            bytes_read: 0,
            revision: 0,
            budget: report.budget,
        };
        for header in ["_journal/start.json", "header.json"] {
            if let Some(value) = file.json_entry(header, report) {
                file.header.describe(&value);
            }
        }
        file.read_summaries(report);
        file.attach_entries();
        file.slots.sort_by(|a, b| id_order(&a.id, &b.id).then(a.epoch.cmp(&b.epoch)));
        Ok(file)
    }

    /// The entry named `name` parsed as JSON; a damaged one is a warning.
    fn json_entry(&self, name: &str, report: &mut LoadReport) -> Option<serde_json::Value> {
        let entry = self.entries.iter().find(|e| e.name == name)?;
        match parse_entry(self.bytes.as_ref(), entry, self.budget) {
            Ok(value) => Some(value),
            Err(err) => {
                report.warn(Warning::kept(0, name, err));
                None
            }
        }
    }

    /// Slots from `summaries.json`, else from the journal's summary lists in order.
    fn read_summaries(&mut self, report: &mut LoadReport) {
        let mut lists: Vec<String> = Vec::new();
        if self.entries.iter().any(|e| e.name == "summaries.json") {
            lists.push("summaries.json".to_owned());
        } else {
            let mut journal: Vec<(u64, String)> = self
                .entries
                .iter()
                .filter_map(|e| {
                    let n = e.name.strip_prefix("_journal/summaries/")?.strip_suffix(".json")?.parse().ok()?;
                    Some((n, e.name.clone()))
                })
                .collect();
            journal.sort();
            lists.extend(journal.into_iter().map(|(_, name)| name));
        }
        for list in lists {
            let Some(value) = self.json_entry(&list, report) else { continue };
            for summary in value.as_array().into_iter().flatten() {
                let line = self.slots.len() as u64 + 1;
                let (id, epoch) = sample_id(summary, line);
                if self.slots.iter().any(|s| s.id == id && s.epoch == epoch) {
                    continue;
                }
                let mut slot = Slot::new(id, epoch, Source::Missing, line);
                slot.input = input_text(summary.get("input"));
                slot.target = target_text(summary.get("target"));
                slot.scores = scores_of(summary.get("scores"));
                slot.about = about(summary);
                slot.summarised = true;
                self.slots.push(slot);
            }
        }
    }

    /// Points each slot at its entry; an entry no summary mentions becomes a slot of its own.
    fn attach_entries(&mut self) {
        let mut seen_dirs: Vec<String> = Vec::new();
        for (index, entry) in self.entries.iter().enumerate() {
            let Some(rest) = entry.name.strip_prefix("samples/") else { continue };
            let (stem, source) = match rest.split_once('/') {
                None => match rest.strip_suffix(".json") {
                    Some(stem) => (stem.to_owned(), Source::Monolith(index)),
                    None => continue,
                },
                Some((dir, _)) => {
                    if seen_dirs.iter().any(|d| d == dir) {
                        continue;
                    }
                    seen_dirs.push(dir.to_owned());
                    (dir.to_owned(), Source::Chunked(format!("samples/{dir}/")))
                }
            };
            let (id, epoch) = match stem.rsplit_once("_epoch_") {
                Some((id, epoch)) => (id.to_owned(), epoch.parse().unwrap_or(1)),
                None => (stem.clone(), 1),
            };
            match self.slots.iter_mut().find(|s| s.id == id && s.epoch == epoch) {
                Some(slot) if matches!(slot.source, Source::Missing) => slot.source = source,
                Some(_) => {}
                None => {
                    let line = self.slots.len() as u64 + 1;
                    let mut slot = Slot::new(id, epoch, source, line);
                    slot.about = format!("entry {}", entry.name);
                    self.slots.push(slot);
                }
            }
        }
    }

    /// The display name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Samples (summarised or found in the archive).
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    /// Whether the archive holds no sample.
    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// Samples with an entry in the archive (read or not).
    pub fn num_with_entry(&self) -> usize {
        self.slots.iter().filter(|s| matches!(s.source, Source::Monolith(_) | Source::Chunked(_))).count()
    }

    /// Samples whose entry is still to be read.
    pub fn num_unread(&self) -> usize {
        self.slots.iter().filter(|s| s.is_pending()).count()
    }

    /// Compressed bytes of the sample entries read so far.
    pub fn bytes_read(&self) -> u64 {
        self.bytes_read
    }

    /// Compressed bytes of every sample entry.
    pub fn sample_bytes(&self) -> u64 {
        self.entries.iter().filter(|e| e.name.starts_with("samples/")).map(|e| u64::from(e.compressed_size)).sum()
    }

    /// The sample whose trajectory key (`{id}/epoch{n}`) is `key`.
    pub fn index_of(&self, key: &str) -> Option<usize> {
        self.slots.iter().position(|s| s.has_key(key))
    }

    /// Whether sample `i` still waits to be read.
    pub fn is_unread(&self, i: usize) -> bool {
        self.slots.get(i).is_some_and(Slot::is_pending)
    }

    /// The first sample still to be read.
    pub fn next_unread(&self) -> Option<usize> {
        self.slots.iter().position(Slot::is_pending)
    }

    /// Reads sample `i` (nothing when it is read already); a damaged entry is a located warning
    /// and the sample keeps what its summary says.
    pub fn read_sample(&mut self, i: usize, report: &mut LoadReport) {
        self.read_samples(&[i], report);
    }

    /// Reads the samples `indices` that are not read yet: their entries are decompressed and
    /// parsed on every core (`crate::par::pipeline`) and applied in order, each as
    /// [`Self::read_sample`] would.
    pub fn read_samples(&mut self, indices: &[usize], report: &mut LoadReport) {
        let tasks: Vec<(usize, Source)> = indices
            .iter()
            .filter_map(|&i| self.slots.get(i).filter(|s| s.is_pending()).map(|s| (i, s.source.clone())))
            .collect();
        let Self { bytes, entries, slots, bytes_read, revision, budget, .. } = self;
        let budget = *budget;
        let (bytes, entries) = (bytes.as_ref(), &*entries);
        // A few samples to a part, so that a part is worth a thread and the order costs nothing.
        let parts: Vec<&[(usize, Source)]> = tasks.chunks(8).collect();
        crate::par::pipeline(
            parts,
            |part| part.iter().map(|(i, source)| (*i, read_source(bytes, entries, source, budget))).collect::<Vec<_>>(),
            |done| {
                for (i, read) in done {
                    let Some((parsed, field, size)) = read else { continue };
                    report.records_seen += 1;
                    *bytes_read += size;
                    *revision += 1;
                    let slot = &mut slots[i];
                    match parsed {
                        Ok(sample) => {
                            slot.read = Some(sample);
                            report.records_loaded += 1;
                        }
                        Err(err) if slot.summarised => {
                            slot.failed = true;
                            report.warn(Warning::kept(
                                slot.line,
                                field,
                                format!("{err}; the sample keeps its summary"),
                            ));
                        }
                        Err(err) => {
                            slot.failed = true;
                            report.warn(Warning::skipped(slot.line, field, err));
                        }
                    }
                    report.progress.set(*bytes_read);
                }
            },
        );
    }

    /// The run as read so far: read samples with their steps, the others from their summaries.
    /// Its warnings are `report`'s (what reading found) and those of building it.
    pub fn run(&self, report: &LoadReport) -> Result<Run, LoadError> {
        let mut run = build(&self.name, &self.header, &self.slots, report)?;
        run.meta.revision = self.revision;
        let unread = self.slots.iter().filter(|s| s.read.is_none()).count();
        if unread > 0 {
            run.meta.notes.push(format!(
                "read lazily: {unread} of {} samples are shown from their summaries (a `{UNREAD_KIND}` step) until their entries are read",
                self.slots.len()
            ));
        }
        Ok(run)
    }
}

/// A sample read from where it lives (on any thread): the sample or why not, the entry's name
/// and its compressed size; `None` when no entry holds it.
fn read_source(
    bytes: &[u8],
    entries: &[Entry],
    source: &Source,
    budget: u64,
) -> Option<(Result<ReadSample, String>, String, u64)> {
    let (parsed, field, size) = match source {
        Source::Monolith(index) => {
            let entry = entries.get(*index)?;
            (parse_entry(bytes, entry, budget), entry.name.clone(), u64::from(entry.compressed_size))
        }
        Source::Chunked(prefix) => {
            let size = entries
                .iter()
                .filter(|e| e.name.starts_with(prefix.as_str()))
                .map(|e| u64::from(e.compressed_size))
                .sum();
            (assemble_chunked(bytes, entries, prefix, budget), prefix.clone(), size)
        }
        Source::Inline | Source::Missing => return None,
    };
    let sample = parsed.map(|mut sample| {
        resolve_attachments(&mut sample);
        ReadSample::of(&sample)
    });
    Some((sample, field, size))
}

/// Sample ids in natural order: numbers by value, before any other text.
fn id_order(a: &str, b: &str) -> std::cmp::Ordering {
    match (a.parse::<f64>(), b.parse::<f64>()) {
        (Ok(x), Ok(y)) => x.total_cmp(&y),
        (Ok(_), Err(_)) => std::cmp::Ordering::Less,
        (Err(_), Ok(_)) => std::cmp::Ordering::Greater,
        (Err(_), Err(_)) => a.cmp(b),
    }
}

/// A sample's (or summary's) id as text and its epoch.
fn sample_id(sample: &serde_json::Value, line: u64) -> (String, i64) {
    let id = match sample.get("id") {
        Some(serde_json::Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
        None => format!("sample{line}"),
    };
    (id, sample.get("epoch").and_then(serde_json::Value::as_i64).unwrap_or(1))
}

/// An entry decompressed and parsed as JSON (`NaN` / `Infinity` tolerated).
fn parse_entry(bytes: &[u8], entry: &Entry, budget: u64) -> Result<serde_json::Value, String> {
    let raw = read_entry(bytes, entry, budget)?;
    let text = text_of(FORMAT, &raw).map_err(|e| e.to_string())?;
    serde_json::from_str(&text).map_err(|e| crate::load::lenient::describe_json_error(&e))
}

/// A chunked sample: `sample.json` with its `events/`, `messages/` and `attachments/` chunks (each
/// named by its first index) put back in place.
fn assemble_chunked(bytes: &[u8], entries: &[Entry], prefix: &str, budget: u64) -> Result<serde_json::Value, String> {
    let shell_name = format!("{prefix}sample.json");
    let shell = entries.iter().find(|e| e.name == shell_name).ok_or_else(|| "no sample.json".to_owned())?;
    let mut sample = parse_entry(bytes, shell, budget)?;
    let Some(object) = sample.as_object_mut() else { return Err("sample.json is not an object".to_owned()) };
    for part in ["events", "messages", "attachments"] {
        let dir = format!("{prefix}{part}/");
        let mut chunks: Vec<(u64, &Entry)> = entries
            .iter()
            .filter_map(|e| Some((e.name.strip_prefix(dir.as_str())?.strip_suffix(".json")?.parse().ok()?, e)))
            .collect();
        if chunks.is_empty() {
            continue;
        }
        chunks.sort_by_key(|c| c.0);
        let mut items = Vec::new();
        let mut map = serde_json::Map::new();
        for (_, entry) in chunks {
            match parse_entry(bytes, entry, budget)? {
                serde_json::Value::Array(list) => items.extend(list),
                serde_json::Value::Object(more) => map.extend(more),
                _ => return Err(format!("{}: neither a list nor an object", entry.name)),
            }
        }
        let value = if map.is_empty() { serde_json::Value::Array(items) } else { serde_json::Value::Object(map) };
        object.insert(part.to_owned(), value);
    }
    Ok(sample)
}

/// Replaces `attachment://HASH` strings by the sample's attachment texts.
fn resolve_attachments(sample: &mut serde_json::Value) {
    let Some(serde_json::Value::Object(attachments)) = sample.get_mut("attachments").map(serde_json::Value::take)
    else {
        return;
    };
    fn walk(value: &mut serde_json::Value, attachments: &serde_json::Map<String, serde_json::Value>) {
        match value {
            serde_json::Value::String(s) => {
                if let Some(hash) = s.strip_prefix("attachment://")
                    && let Some(serde_json::Value::String(text)) = attachments.get(hash)
                {
                    s.clone_from(text);
                }
            }
            serde_json::Value::Array(items) => items.iter_mut().for_each(|v| walk(v, attachments)),
            serde_json::Value::Object(map) => map.values_mut().for_each(|v| walk(v, attachments)),
            _ => {}
        }
    }
    walk(sample, &attachments);
}

/// What a summary says of the transcript, for a sample not read yet.
fn about(summary: &serde_json::Value) -> String {
    let mut parts = Vec::new();
    for (field, what) in [("message_count", "messages"), ("turn_count", "turns")] {
        if let Some(n) = summary.get(field).and_then(serde_json::Value::as_u64) {
            parts.push(format!("{n} {what}"));
        }
    }
    if let Some(t) = summary.get("total_time").and_then(serde_json::Value::as_f64) {
        parts.push(format!("{t:.1} s"));
    }
    if let Some(limit) = summary.get("limit").filter(|l| !l.is_null()) {
        let kind =
            limit.get("type").and_then(serde_json::Value::as_str).map_or_else(|| limit.to_string(), str::to_owned);
        parts.push(format!("stopped by the {kind} limit"));
    }
    if let Some(error) = summary.get("error").and_then(serde_json::Value::as_str).filter(|e| !e.is_empty()) {
        parts.push(format!("error: {error}"));
    }
    parts.join(", ")
}

fn input_text(input: Option<&serde_json::Value>) -> String {
    match input {
        Some(serde_json::Value::String(s)) => s.clone(),
        Some(serde_json::Value::Array(messages)) => {
            messages.iter().map(|m| text_of_content(m.get("content")).0).collect::<Vec<_>>().join("\n")
        }
        _ => String::new(),
    }
}

fn target_text(target: Option<&serde_json::Value>) -> Option<String> {
    match target {
        Some(serde_json::Value::String(s)) => Some(s.clone()),
        Some(serde_json::Value::Array(t)) => {
            Some(t.iter().filter_map(serde_json::Value::as_str).collect::<Vec<_>>().join(" | "))
        }
        _ => None,
    }
}

/// Every scorer's value, by name.
fn scores_of(scores: Option<&serde_json::Value>) -> Vec<(String, f32)> {
    scores
        .and_then(serde_json::Value::as_object)
        .map(|s| {
            s.iter()
                .filter_map(|(name, score)| score.get("value").and_then(score_number).map(|v| (name.clone(), v)))
                .collect()
        })
        .unwrap_or_default()
}

/// The run from the samples: read ones with their steps, others as one `summary` step.
fn build(name: &str, header: &Header, slots: &[Slot], report: &LoadReport) -> Result<Run, LoadError> {
    let mut b = RunBuilder::new(name, FORMAT);
    b.meta_mut().metadata.extend(header.metadata.iter().map(|(k, v)| (k.clone(), v.clone())));
    let mut warnings = Vec::new();
    for slot in slots.iter().filter(|s| !s.failed || s.summarised) {
        let (input, target, scores) = match &slot.read {
            Some(read) => (&read.input, &read.target, &read.scores),
            None => (&slot.input, &slot.target, &slot.scores),
        };
        let group = if let Some(g) = b.group(&slot.id) {
            g
        } else {
            let new = NewGroup { key: &slot.id, prompt: Some(input), gold: target.as_deref(), ..NewGroup::default() };
            b.add_group(&new).0
        };
        let unread_text;
        let new_steps: Vec<NewStep<'_>> = if let Some(read) = &slot.read {
            read.steps
                .iter()
                .map(|(kind, thought, action, observation, judge)| NewStep {
                    scores: judge.map(|j| vec![("judge", j)]).unwrap_or_default(),
                    ..text_step(kind, thought, action, observation)
                })
                .collect()
        } else {
            {
                let state = if slot.failed {
                    "could not be read"
                } else if matches!(slot.source, Source::Missing) {
                    "has no entry in the archive"
                } else {
                    "not read yet"
                };
                unread_text = if slot.about.is_empty() {
                    format!("sample {state}")
                } else {
                    format!("sample {state} (summary: {})", slot.about)
                };
                vec![text_step(UNREAD_KIND, "", &unread_text, "")]
            }
        };
        let key = slot.key();
        // A sample with no model turn still stands, with one step that says so.
        let new_steps = if new_steps.is_empty() {
            warnings.push(Warning::kept(slot.line, "events", format!("sample {key}: no model turn")));
            vec![text_step("empty", "", "the sample has no model turn", "")]
        } else {
            new_steps
        };
        // The main scorer's value (the header names it), else the first scorer's.
        let reward =
            header.primary.as_deref().and_then(|p| scores.iter().find(|s| s.0 == p)).or(scores.first()).map(|s| s.1);
        let components: Vec<(&str, f32)> = scores.iter().map(|(n, v)| (n.as_str(), *v)).collect();
        let stop = slot.read.as_ref().and_then(|r| r.stop.as_deref());
        let outcome = Outcome { reward, success: reward.map(|r| r >= 1.0), components, finish: stop };
        if b.has_trajectory(&key) {
            warnings.push(Warning::skipped(slot.line, "id", format!("duplicate sample {key:?}")));
            continue;
        }
        b.add_chain_trajectory(&key, group, &new_steps, &outcome, &NewTokens::default());
    }
    let mut report = report.clone();
    for warning in warnings {
        report.warn(warning);
    }
    if slots.is_empty() {
        // A cancelled (or just started) eval: an empty run, said.
        let status = header.metadata.get("status").and_then(serde_json::Value::as_str).unwrap_or("unknown");
        let warning = Warning::kept(1, "samples", format!("no samples in the log (status {status})"));
        let mut run = b.finish();
        run.meta.warnings.clone_from(&report.warnings);
        run.meta.warnings.push(warning);
        run.meta.notes.push(format!("the eval has no samples (status {status})"));
        return Ok(run);
    }
    let mut run = finish(b, &report, "sample")?;
    if run.trajectories.reward.iter().all(|r| r.is_nan()) {
        run.meta.notes.push("the samples carry no scores: outcomes are missing".to_owned());
    }
    Ok(run)
}

/// A score value as a number: numbers as they are, booleans 1 / 0, C / I / P / N as 1 / 0 / 0.5 / 0.
fn score_number(value: &serde_json::Value) -> Option<f32> {
    match value {
        serde_json::Value::Number(n) => n.as_f64().map(|x| x as f32),
        serde_json::Value::Bool(flag) => Some(if *flag { 1.0 } else { 0.0 }),
        serde_json::Value::String(s) => match s.as_str() {
            "C" => Some(1.0),
            "I" | "N" => Some(0.0),
            "P" => Some(0.5),
            other => other.parse().ok(),
        },
        _ => None,
    }
}

fn text_of_content(content: Option<&serde_json::Value>) -> (String, String) {
    // (text, reasoning)
    match content {
        Some(serde_json::Value::String(s)) => (s.clone(), String::new()),
        Some(serde_json::Value::Array(parts)) => {
            let mut text = Vec::new();
            let mut reasoning = Vec::new();
            for p in parts {
                match p.get("type").and_then(serde_json::Value::as_str) {
                    Some("reasoning") => reasoning.extend(p.get("reasoning").and_then(serde_json::Value::as_str)),
                    _ => text.extend(p.get("text").and_then(serde_json::Value::as_str)),
                }
            }
            (text.join("\n"), reasoning.join("\n"))
        }
        _ => (String::new(), String::new()),
    }
}

fn tool_calls_text(calls: Option<&serde_json::Value>) -> String {
    calls
        .and_then(serde_json::Value::as_array)
        .map(|calls| {
            calls
                .iter()
                .map(|c| {
                    let f = c.get("function").and_then(serde_json::Value::as_str).unwrap_or("tool");
                    let args = c.get("arguments").map(ToString::to_string).unwrap_or_default();
                    format!("{f}({args})")
                })
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default()
}

/// (kind, thought, action, observation, judge score)
type Step = (String, String, String, String, Option<f32>);

/// Steps from the model / tool / score events.
fn steps_from_events(events: &[serde_json::Value]) -> Vec<Step> {
    let mut steps: Vec<Step> = Vec::new();
    for e in events {
        match e.get("event").and_then(serde_json::Value::as_str) {
            Some("model") => {
                let message = e.pointer("/output/choices/0/message");
                let (text, reasoning) = text_of_content(message.and_then(|m| m.get("content")));
                let calls = tool_calls_text(message.and_then(|m| m.get("tool_calls")));
                let kind = if calls.is_empty() { "generate" } else { "tool_call" };
                let action = if calls.is_empty() { text.clone() } else { calls };
                let thought =
                    if calls_present(message) { [reasoning, text].join("\n").trim().to_owned() } else { reasoning };
                steps.push((kind.to_owned(), thought, action, String::new(), None));
            }
            Some("tool") => {
                if let Some(last) = steps.last_mut() {
                    let result = match e.get("result") {
                        Some(serde_json::Value::String(s)) => s.clone(),
                        Some(other) => other.to_string(),
                        None => String::new(),
                    };
                    if !last.3.is_empty() {
                        last.3.push('\n');
                    }
                    last.3.push_str(&result);
                }
            }
            Some("score") if e.get("intermediate").and_then(serde_json::Value::as_bool) == Some(true) => {
                if let (Some(last), Some(v)) = (steps.last_mut(), e.pointer("/score/value").and_then(score_number)) {
                    last.4 = Some(v);
                }
            }
            _ => {}
        }
    }
    steps
}

fn calls_present(message: Option<&serde_json::Value>) -> bool {
    message.and_then(|m| m.get("tool_calls")).and_then(serde_json::Value::as_array).is_some_and(|c| !c.is_empty())
}

/// Steps from the final conversation: assistant turns, tool results as observations.
fn steps_from_messages(messages: &[serde_json::Value]) -> Vec<Step> {
    let mut steps: Vec<Step> = Vec::new();
    for m in messages {
        let (text, reasoning) = text_of_content(m.get("content"));
        match m.get("role").and_then(serde_json::Value::as_str) {
            Some("assistant") => {
                let calls = tool_calls_text(m.get("tool_calls"));
                let (kind, thought, action) = if calls.is_empty() {
                    ("generate", reasoning, text)
                } else {
                    ("tool_call", [reasoning, text].join("\n").trim().to_owned(), calls)
                };
                steps.push((kind.to_owned(), thought, action, String::new(), None));
            }
            Some("tool") => {
                if let Some(last) = steps.last_mut() {
                    if !last.3.is_empty() {
                        last.3.push('\n');
                    }
                    last.3.push_str(&text);
                }
            }
            _ => {}
        }
    }
    steps
}
