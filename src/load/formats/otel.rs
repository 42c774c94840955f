//! OpenTelemetry trace files (OTLP JSON lines) whose spans carry the proposed reinforcement-learning
//! conventions (open-telemetry/semantic-conventions-genai#88, alibaba/loongsuite-semantic-conventions-genai#27):
//! each line one export request, `{"resourceSpans": [{resource, scopeSpans: [{scope, spans}]}]}`,
//! as the OpenTelemetry Collector's file exporter and ROLL's `OTLPReceiver` write
//! `traces/traces.jsonl` (`roll/utils/otel_receiver.py`, alibaba/ROLL 8eb27cc2: `MessageToJson`, ids
//! in hex, span kinds as numbers; rotated to `traces.1.jsonl`, … every 500 lines).
//!
//! The span tree becomes the rollout tree. A span named `rl.sample` is one trajectory; the samples
//! of one task (`rl.sample.task.id`) within one `rl.loop` span (a training iteration; the loops are
//! numbered by start time) are a group. Its `rl.reward` child is the outcome: `rl.reward.score` the
//! reward, `rl.reward.verify.code` `success` / `failure` the success, `rl.reward.run.code` the finish.
//! The spans below a sample, by start time, are its steps, read as OpenTelemetry's `GenAI`
//! conventions write them: a model call (`gen_ai.operation.name` `chat`, or a span named
//! `chat …`) is a step whose thought is the text of `gen_ai.output.messages` and whose action is its
//! tool calls (the text when it calls none); a tool call (`execute_tool`) is the observation of
//! the step before it (`gen_ai.tool.call.result`), or a step of its own after another tool call.
//! The prompt is the last user message of the first model call's `gen_ai.input.messages`. Spans
//! outside any sample (a trainer's own timing spans: ROLL's `pipeline_step`, `generate`, …) are
//! counted in the run's notes and left out. A batch's children are often exported before their
//! parents, so the file is read whole before the tree is built; a folder of a file and its
//! rotations is read as one log (`source::folders`, its `otel` entry).

use std::collections::HashMap;

#[path = "otel_genai.rs"]
mod genai;
#[path = "otel_proto.rs"]
mod proto;

use serde_json::Value;

use crate::load::lenient::FieldError;
use crate::load::lines::parse_json;
use crate::load::records::{line_records, text_step};
use crate::load::{LoadError, LoadReport, Loader};
use crate::model::{NewGroup, NewStep, NewTokens, Outcome, Run, RunBuilder, Warning};

/// The format name.
const FORMAT: &str = "OpenTelemetry trace (rl.* spans)";

/// The OTLP trace loader.
pub struct Otel;

impl Loader for Otel {
    fn name(&self) -> &'static str {
        "otel"
    }

    fn description(&self) -> &'static str {
        "OpenTelemetry OTLP JSON-lines traces (otelcol file exporter, ROLL traces/traces.jsonl) with rl.loop / rl.sample / rl.reward spans"
    }

    fn load_bytes(&self, name: &str, bytes: &[u8], report: &mut LoadReport) -> Result<Run, LoadError> {
        // OTLP protobuf: length-prefixed export requests.
        if !bytes.starts_with(b"{")
            && let Some((messages, cut)) = proto::frames(bytes)
        {
            if let Some(records) = proto::records(&messages, cut, report) {
                let spans = read_spans(records, report);
                return build(name, &spans, report);
            }
            if let Some(values) = proto::other_signals(&messages) {
                return Err(no_spans(&signals_held(&values)));
            }
        }
        let text = String::from_utf8_lossy(bytes);
        if !accepts(&text) {
            // OTLP export requests of the other signals: say what the file holds, not "not a log".
            if let Some(held) = other_signals(&text) {
                return Err(no_spans(&held));
            }
            return Err(LoadError::Incompatible {
                format: FORMAT,
                reason:
                    "the first lines are not OTLP export requests (resourceSpans), and the file is not OTLP protobuf"
                        .to_owned(),
            });
        }
        let records = records(&text, report);
        let spans = read_spans(records, report);
        build(name, &spans, report)
    }
}

/// What a file of OTLP export requests of the other signals holds ("4 log records", "2 metrics
/// (`gen_ai.client.token.usage`, …)"), when its first lines are such requests and no line holds
/// spans; `None` otherwise.
pub fn other_signals(text: &str) -> Option<String> {
    let keys = ["resourceLogs", "resourceMetrics", "resourceProfiles"];
    let head = crate::load::records::head_matches(text, |r| {
        serde_json::from_str::<serde_json::Map<String, Value>>(r.text)
            .is_ok_and(|m| keys.iter().any(|k| m.get(*k).is_some_and(Value::is_array)))
    });
    if !head {
        return None;
    }
    let mut values = Vec::new();
    for line in text.lines() {
        let Ok(value) = serde_json::from_str::<Value>(line.trim()) else { continue };
        if value.get("resourceSpans").and_then(Value::as_array).is_some_and(|a| !a.is_empty()) {
            return None;
        }
        values.push(value);
    }
    Some(signals_held(&values))
}

/// The items of one signal (`logs`, `metrics`, `profiles`) in OTLP export requests.
fn signal_items(values: &[Value], signal: &str) -> Vec<Value> {
    let (outer, inner) = match signal {
        "logs" => ("resourceLogs", "logRecords"),
        "metrics" => ("resourceMetrics", "metrics"),
        _ => ("resourceProfiles", "profiles"),
    };
    values
        .iter()
        .filter_map(|v| v.get(outer).and_then(Value::as_array))
        .flatten()
        .flat_map(|r| r.as_object().into_iter().flat_map(|o| o.values()).filter_map(Value::as_array).flatten())
        .flat_map(|scope| scope.get(inner).and_then(Value::as_array).cloned().unwrap_or_default())
        .collect()
}

/// What export requests of the other signals hold, in words.
fn signals_held(values: &[Value]) -> String {
    let logs = signal_items(values, "logs").len();
    let mut metrics = Vec::<String>::new();
    for metric in signal_items(values, "metrics") {
        if let Some(name) = metric.get("name").and_then(Value::as_str)
            && !metrics.iter().any(|m| m == name)
        {
            metrics.push(name.to_owned());
        }
    }
    let profiles = signal_items(values, "profiles").len();
    let mut held = Vec::new();
    if logs > 0 {
        held.push(crate::model::count(logs, "log record"));
    }
    if !metrics.is_empty() {
        let named: Vec<&str> = metrics.iter().take(3).map(String::as_str).collect();
        let more = if metrics.len() > 3 { ", …" } else { "" };
        held.push(format!("{} ({}{more})", crate::model::count(metrics.len(), "metric"), named.join(", ")));
    }
    if profiles > 0 {
        held.push(crate::model::count(profiles, "profile"));
    }
    if held.is_empty() {
        held.push("empty export requests".to_owned());
    }
    held.join(" and ")
}

/// The error for a file of the other signals.
fn no_spans(held: &str) -> LoadError {
    LoadError::NothingLoadable {
        reason: format!(
            "an OpenTelemetry file of {held} and no spans: vantage reads traces (OTLP `resourceSpans`); \
             export the agent's traces too"
        ),
    }
}

/// Whether `text` holds OTLP trace export requests: one of its first lines (JSON lines), or its
/// first JSON value (export requests pretty-printed one after another), or spans as the SDK's
/// console exporter writes them (`ReadableSpan.to_json()`: `name`, `context.trace_id`).
pub fn accepts(text: &str) -> bool {
    let line = crate::load::records::head_matches(text, |r| {
        serde_json::from_str::<serde_json::Map<String, Value>>(r.text)
            .is_ok_and(|m| m.get("resourceSpans").is_some_and(Value::is_array))
    });
    line || first_value(text).is_some_and(|v| is_request(&v) || is_console_span(&v))
}

/// Whether the first bytes of a file start an OTLP trace file: protobuf (`proto::starts`) or
/// JSON ([`accepts`]).
pub fn accepts_head(head: &[u8]) -> bool {
    proto::starts(head) || accepts(&crate::load::lines::head_text(head))
}

/// The first JSON value of `text` when it starts with an object (read up to its end only).
fn first_value(text: &str) -> Option<Value> {
    let body = text.trim_start_matches('\u{feff}').trim_start();
    if !body.starts_with('{') {
        return None;
    }
    serde_json::Deserializer::from_str(body).into_iter::<Value>().next()?.ok()
}

fn is_request(value: &Value) -> bool {
    value.get("resourceSpans").is_some_and(Value::is_array)
}

/// A span as `ReadableSpan.to_json()` writes it.
fn is_console_span(value: &Value) -> bool {
    value.get("name").is_some_and(Value::is_string)
        && value.get("context").and_then(|c| c.get("trace_id")).is_some_and(Value::is_string)
}

/// The records of `text`: one per line when its lines are JSON values (OTLP JSON lines), else each
/// JSON value in turn (pretty-printed export requests or console spans one after another), with
/// the line each starts on. A value that does not parse ends the reading with a located warning.
fn records(text: &str, report: &mut LoadReport) -> Vec<(u64, Value)> {
    let per_line = crate::load::records::head_matches(text, |r| serde_json::from_str::<Value>(r.text).is_ok());
    if per_line {
        let mut out = Vec::new();
        for record in line_records(text) {
            report.records_seen += 1;
            match parse_json::<Value>(record.text) {
                Ok(value) => out.push((record.line, value)),
                Err(FieldError { field, reason }) => report.warn(Warning::skipped(record.line, field, reason)),
            }
        }
        return out;
    }
    let mut out = Vec::new();
    let mut stream = serde_json::Deserializer::from_str(text).into_iter::<Value>();
    let mut line = 1u64;
    let mut at = 0usize;
    loop {
        // The line the next value starts on: past the whitespace after the last one.
        let start = at + text[at..].len() - text[at..].trim_start().len();
        line += text[at..start].matches('\n').count() as u64;
        at = start;
        let Some(next) = stream.next() else { break };
        report.records_seen += 1;
        match next {
            Ok(value) => out.push((line, value)),
            Err(err) => {
                // Located at the line the broken record starts on; the message says where it broke.
                report.warn(Warning::skipped(line, "record", err.to_string()));
                break;
            }
        }
        let end = stream.byte_offset();
        line += text[at..end].matches('\n').count() as u64;
        at = end;
    }
    out
}

#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct Request {
    #[serde(default)]
    resource_spans: Vec<ResourceSpans>,
}

#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct ResourceSpans {
    #[serde(default)]
    resource: Option<Attributes>,
    #[serde(default)]
    scope_spans: Vec<ScopeSpans>,
}

#[derive(serde::Deserialize, Default)]
struct Attributes {
    #[serde(default)]
    attributes: Vec<KeyValue>,
}

#[derive(serde::Deserialize)]
struct ScopeSpans {
    #[serde(default)]
    spans: Vec<SpanJson>,
}

#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct SpanJson {
    #[serde(default)]
    trace_id: String,
    /// Absent: that span is a located warning, the others of its line load.
    #[serde(default)]
    span_id: String,
    #[serde(default)]
    parent_span_id: String,
    #[serde(default)]
    name: String,
    #[serde(default)]
    start_time_unix_nano: Option<Value>,
    #[serde(default)]
    attributes: Vec<KeyValue>,
    #[serde(default)]
    status: Option<Value>,
}

#[derive(serde::Deserialize, PartialEq)]
struct KeyValue {
    key: String,
    #[serde(default)]
    value: Value,
}

/// One span as read: where it is in the tree, its attributes, the line it came on.
struct Span {
    trace: String,
    id: String,
    parent: String,
    name: String,
    start: u64,
    attributes: Vec<KeyValue>,
    line: u64,
    /// The span's error, when its status is an error: its message (or "error").
    error: Option<String>,
}

impl Span {
    fn attribute(&self, key: &str) -> Option<&Value> {
        self.attributes.iter().rev().find(|kv| kv.key == key).map(|kv| &kv.value)
    }

    fn text(&self, key: &str) -> Option<String> {
        any_text(self.attribute(key)?)
    }

    fn number(&self, key: &str) -> Option<f64> {
        any_number(self.attribute(key)?)
    }

    /// The `GenAI` operation: `gen_ai.operation.name`, else the first word of the span's name.
    fn operation(&self) -> String {
        self.text("gen_ai.operation.name")
            .unwrap_or_else(|| self.name.split_whitespace().next().unwrap_or_default().to_owned())
    }
}

/// An OTLP `AnyValue` as text: a string as it is, a number or flag written out, a list or map as
/// JSON.
fn any_text(value: &Value) -> Option<String> {
    let object = value.as_object()?;
    let (kind, inner) = object.iter().next()?;
    Some(match (kind.as_str(), inner) {
        ("stringValue" | "intValue" | "doubleValue", Value::String(s)) => s.clone(),
        (_, other) => other.to_string(),
    })
}

/// An OTLP `AnyValue` as a number (ints are strings in OTLP JSON).
fn any_number(value: &Value) -> Option<f64> {
    let object = value.as_object()?;
    match (object.get("doubleValue"), object.get("intValue")) {
        (Some(Value::Number(n)), _) | (_, Some(Value::Number(n))) => n.as_f64(),
        (Some(Value::String(s)), _) | (_, Some(Value::String(s))) => s.trim().parse().ok(),
        _ => None,
    }
}

/// The spans of every record (an export request, or a console exporter's span), in file order; a
/// record that is neither, or a span without an id, is a located warning, and a span seen before
/// (the same trace and span id) is left out.
fn read_spans(records: Vec<(u64, Value)>, report: &mut LoadReport) -> (Vec<Span>, Vec<Vec<KeyValue>>) {
    let mut spans = Vec::new();
    let mut resources: Vec<Vec<KeyValue>> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let mut keep = |span: Span, report: &mut LoadReport, spans: &mut Vec<Span>| {
        if span.id.is_empty() {
            report.warn(Warning::skipped(span.line, "spanId", "a span without an id"));
        } else if !seen.insert((span.trace.clone(), span.id.clone())) {
            let reason = format!("span {} of trace {} seen before", span.id, span.trace);
            report.warn(Warning::skipped(span.line, "spanId", reason));
        } else {
            spans.push(span);
        }
    };
    for (line, value) in records {
        if is_console_span(&value) {
            report.records_loaded += 1;
            let (span, resource) = console_span(&value, line);
            if !resource.is_empty() && !resources.contains(&resource) {
                resources.push(resource);
            }
            keep(span, report, &mut spans);
            continue;
        }
        let request: Request = match serde_json::from_value(value) {
            Ok(request) => request,
            Err(err) => {
                report.warn(Warning::skipped(line, "resourceSpans", err.to_string()));
                continue;
            }
        };
        report.records_loaded += 1;
        for resource in request.resource_spans {
            let attributes = resource.resource.unwrap_or_default().attributes;
            if !attributes.is_empty() && !resources.contains(&attributes) {
                resources.push(attributes);
            }
            for span in resource.scope_spans.into_iter().flat_map(|s| s.spans) {
                let start = span.start_time_unix_nano.as_ref().and_then(|v| match v {
                    Value::String(s) => s.parse().ok(),
                    other => other.as_u64(),
                });
                let error = span.status.as_ref().and_then(otlp_error);
                let span = Span {
                    trace: hex_id(span.trace_id),
                    id: hex_id(span.span_id),
                    parent: hex_id(span.parent_span_id),
                    name: span.name,
                    start: start.unwrap_or(0),
                    attributes: span.attributes,
                    line,
                    error,
                };
                keep(span, report, &mut spans);
            }
        }
    }
    (spans, resources)
}

/// A trace or span id in hex, as OTLP JSON writes it: one that protobuf's JSON printer wrote in
/// base64 (16 or 8 bytes: `MessageToJson` of an export request) is turned to hex, so both
/// writings of one span read the same.
fn hex_id(id: String) -> String {
    use base64::Engine as _;
    if id.is_empty() || id.bytes().all(|b| b.is_ascii_hexdigit()) {
        return id;
    }
    match base64::engine::general_purpose::STANDARD.decode(&id) {
        Ok(bytes) if bytes.len() == 8 || bytes.len() == 16 => proto::hex(&bytes),
        _ => id,
    }
}

/// The error of an OTLP JSON span status (`{code: 2 | "STATUS_CODE_ERROR", message}`).
fn otlp_error(status: &Value) -> Option<String> {
    let code = status.get("code")?;
    let error = code.as_u64() == Some(2) || code.as_str() == Some("STATUS_CODE_ERROR");
    error.then(|| status.get("message").and_then(Value::as_str).filter(|m| !m.is_empty()).unwrap_or("error").to_owned())
}

/// A span as the SDK's console exporter writes it (`ReadableSpan.to_json()`: ids `0x…` in
/// `context`, `parent_id`, ISO times, attributes as a plain object), and its resource's attributes.
fn console_span(value: &Value, line: u64) -> (Span, Vec<KeyValue>) {
    let text = |v: Option<&Value>| v.and_then(Value::as_str).map(|s| s.trim_start_matches("0x").to_owned());
    let context = value.get("context");
    let attributes = |v: Option<&Value>| -> Vec<KeyValue> {
        v.and_then(Value::as_object)
            .into_iter()
            .flatten()
            .map(|(key, value)| KeyValue { key: key.clone(), value: any_value(value) })
            .collect()
    };
    let status = value.get("status");
    let error = (status.and_then(|s| s.get("status_code")).and_then(Value::as_str) == Some("ERROR"))
        .then(|| status.and_then(|s| s.get("description")).and_then(Value::as_str).unwrap_or("error").to_owned());
    let span = Span {
        trace: text(context.and_then(|c| c.get("trace_id"))).unwrap_or_default(),
        id: text(context.and_then(|c| c.get("span_id"))).unwrap_or_default(),
        parent: text(value.get("parent_id")).unwrap_or_default(),
        name: value.get("name").and_then(Value::as_str).unwrap_or_default().to_owned(),
        start: value.get("start_time").and_then(Value::as_str).and_then(iso_nanos).unwrap_or(0),
        attributes: attributes(value.get("attributes")),
        line,
        error,
    };
    (span, attributes(value.get("resource").and_then(|r| r.get("attributes"))))
}

/// A plain JSON value as an OTLP `AnyValue` (what [`any_text`] and [`any_number`] read).
fn any_value(value: &Value) -> Value {
    let kind = match value {
        Value::String(_) => "stringValue",
        Value::Bool(_) => "boolValue",
        Value::Number(n) if n.is_f64() => "doubleValue",
        Value::Number(_) => "intValue",
        Value::Array(_) => "arrayValue",
        _ => "kvlistValue",
    };
    serde_json::json!({ kind: value })
}

/// Nanoseconds since 1970 of an ISO 8601 UTC time (`2026-12-07T05:34:53.633252Z`, the console
/// exporter's); `None` when it is not one.
fn iso_nanos(text: &str) -> Option<u64> {
    let (date, time) = text.trim_end_matches('Z').split_once('T')?;
    let mut d = date.split('-').map(str::parse::<i64>);
    let (y, m, day) = (d.next()?.ok()?, d.next()?.ok()?, d.next()?.ok()?);
    let (hms, fraction) = time.split_once('.').unwrap_or((time, "0"));
    let mut t = hms.split(':').map(str::parse::<i64>);
    let (h, min, sec) = (t.next()?.ok()?, t.next()?.ok()?, t.next()?.ok()?);
    // A field out of its range is no time (and would overflow below).
    let ranges = [(y, 0, 9_999), (m, 1, 12), (day, 1, 31), (h, 0, 24), (min, 0, 59), (sec, 0, 60)];
    if ranges.iter().any(|&(v, lo, hi)| !(lo..=hi).contains(&v)) {
        return None;
    }
    // Days from the civil date (Howard Hinnant's algorithm).
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    let digits: String = fraction.chars().take(9).collect();
    let nanos = format!("{digits:0<9}").parse::<i64>().ok()?;
    // In i128: nanoseconds past the year 2262 do not fit an i64 (and are no u64 either).
    let seconds = i128::from(days * 86_400 + h * 3_600 + min * 60 + sec);
    u64::try_from(seconds * 1_000_000_000 + i128::from(nanos)).ok()
}

/// The run from the spans read.
fn build(
    name: &str,
    (spans, resources): &(Vec<Span>, Vec<Vec<KeyValue>>),
    report: &mut LoadReport,
) -> Result<Run, LoadError> {
    let index: HashMap<(&str, &str), usize> =
        spans.iter().enumerate().map(|(i, s)| ((s.trace.as_str(), s.id.as_str()), i)).collect();
    let parent = |i: usize| {
        let s = &spans[i];
        (!s.parent.is_empty()).then(|| index.get(&(s.trace.as_str(), s.parent.as_str())).copied()).flatten()
    };
    let sample_of = nearest_named(spans, &parent, "rl.sample");
    let loop_of = nearest_named(spans, &parent, "rl.loop");
    let mut loops: Vec<usize> = (0..spans.len()).filter(|&i| spans[i].name == "rl.loop").collect();
    loops.sort_by_key(|&i| (spans[i].start, i));
    let iteration: HashMap<usize, i64> = loops.iter().enumerate().map(|(n, &i)| (i, n as i64)).collect();
    let mut samples: Vec<usize> = (0..spans.len()).filter(|&i| spans[i].name == "rl.sample").collect();
    let step_of = |i: usize| loop_of[i].and_then(|l| iteration.get(&l).copied());
    samples.sort_by_key(|&i| (step_of(i), spans[i].start, i));
    // Each span below a sample, by sample, in start order.
    let mut below: std::collections::BTreeMap<usize, Vec<usize>> = std::collections::BTreeMap::new();
    let mut outside: Vec<&str> = Vec::new();
    for i in 0..spans.len() {
        match spans[i].name.as_str() {
            "rl.sample" | "rl.loop" => {}
            _ => match sample_of[i] {
                Some(sample) => below.entry(sample).or_default().push(i),
                None => outside.push(&spans[i].name),
            },
        }
    }
    for list in below.values_mut() {
        list.sort_by_key(|&i| (spans[i].start, i));
    }
    let mut builder = RunBuilder::new(name, FORMAT);
    builder.meta_mut().notes.extend(notes(resources, &outside));
    // No `rl.*` spans: an agent's traces under the GenAI conventions, as agents write them.
    if samples.is_empty() && spans.iter().any(genai::is_genai) {
        return genai::build(name, spans, resources, &parent, report);
    }
    if samples.is_empty() {
        let mut names: Vec<&str> = spans.iter().map(|s| s.name.as_str()).collect();
        names.sort_unstable();
        names.dedup();
        names.truncate(12);
        return Err(LoadError::NothingLoadable {
            reason: format!(
                "{} span(s) and none named rl.sample (the proposed RL conventions: rl.loop, rl.sample, rl.reward); the spans are named {}",
                spans.len(),
                names.join(", ")
            ),
        });
    }
    for &sample in &samples {
        let s = &spans[sample];
        let step = step_of(sample);
        let task = s.text("rl.sample.task.id").or_else(|| s.text("rl.sample.task.name"));
        let group_key = match (&step, &task) {
            (Some(n), Some(task)) => format!("iteration-{n}/{task}"),
            (None, Some(task)) => task.clone(),
            (_, None) => format!("sample-{}", s.id),
        };
        let children = below.get(&sample).map(Vec::as_slice).unwrap_or_default();
        let (steps, reward) = steps_of(spans, children);
        if steps.is_empty() && reward.is_none() {
            report.warn(Warning::skipped(
                s.line,
                "rl.sample",
                format!("sample {} has no steps and no rl.reward", s.id),
            ));
            continue;
        }
        let group = if let Some(g) = builder.group(&group_key) {
            g
        } else {
            let prompt = children.iter().find_map(|&c| prompt_of(&spans[c]));
            let task_name = s.text("rl.sample.task.name");
            let new = NewGroup {
                key: &group_key,
                train_step: step,
                task: task_name.as_deref(),
                prompt: prompt.as_deref(),
                ..NewGroup::default()
            };
            builder.add_group(&new).0
        };
        let key = format!("{group_key}/{}", s.id);
        let outcome_span = reward.map(|r| &spans[r]);
        let finish = outcome_span.and_then(|r| r.text("rl.reward.run.code"));
        let outcome = Outcome {
            reward: outcome_span.and_then(|r| r.number("rl.reward.score")).map(|x| x as f32).filter(|x| x.is_finite()),
            success: outcome_span.and_then(|r| match r.text("rl.reward.verify.code")?.as_str() {
                "success" => Some(true),
                "failure" => Some(false),
                _ => None,
            }),
            components: Vec::new(),
            finish: finish.as_deref(),
        };
        let new_steps: Vec<NewStep<'_>> = steps.iter().map(|(kind, t, a, o)| text_step(kind, t, a, o)).collect();
        builder.add_chain_trajectory(&key, group, &new_steps, &outcome, &NewTokens::default());
    }
    crate::load::records::finish(builder, report, "sample")
}

/// The run's notes: the resources' `rl.*` attributes, and the spans left out, by name.
fn notes(resources: &[Vec<KeyValue>], outside: &[&str]) -> Vec<String> {
    let mut notes = Vec::new();
    for attributes in resources {
        let said: Vec<String> = attributes
            .iter()
            .filter(|kv| kv.key.starts_with("rl."))
            .filter_map(|kv| Some(format!("{} = {}", kv.key, any_text(&kv.value)?)))
            .collect();
        if !said.is_empty() {
            notes.push(format!("resource: {}", said.join(", ")));
        }
    }
    if !outside.is_empty() {
        let mut counts: Vec<(&str, usize)> = Vec::new();
        for name in outside {
            match counts.iter_mut().find(|(n, _)| n == name) {
                Some((_, count)) => *count += 1,
                None => counts.push((name, 1)),
            }
        }
        let listed: Vec<String> = counts.iter().map(|(n, c)| format!("{n} ×{c}")).collect();
        notes.push(format!("{} span(s) outside any rl.sample span left out ({})", outside.len(), listed.join(", ")));
    }
    notes
}

/// For each span, the nearest span named `wanted` at or above it; each span is walked over once
/// (what is found is kept for every span on the way), and a parent cycle ends a walk.
fn nearest_named(spans: &[Span], parent: &dyn Fn(usize) -> Option<usize>, wanted: &str) -> Vec<Option<usize>> {
    nearest_where(spans, parent, &|s: &Span| s.name == wanted)
}

/// For each span, the nearest span at or above it for which `wanted` holds (as [`nearest_named`]).
fn nearest_where(
    spans: &[Span],
    parent: &dyn Fn(usize) -> Option<usize>,
    wanted: &dyn Fn(&Span) -> bool,
) -> Vec<Option<usize>> {
    let mut found: Vec<Option<Option<usize>>> = vec![None; spans.len()];
    for i in 0..spans.len() {
        let mut path = Vec::new();
        let mut at = Some(i);
        let mut nearest = None;
        while let Some(here) = at {
            if let Some(known) = found[here] {
                nearest = known;
                break;
            }
            if wanted(&spans[here]) {
                nearest = Some(here);
                break;
            }
            path.push(here);
            if path.len() > spans.len() {
                break;
            }
            at = parent(here);
        }
        for p in path {
            found[p] = Some(nearest);
        }
        if let Some(n) = nearest {
            found[n] = Some(Some(n));
        }
    }
    found.into_iter().map(Option::flatten).collect()
}

/// A step as read: kind, thought, action, observation.
type Step = (&'static str, String, String, String);

/// A sample's steps (kind, thought, action, observation) from the spans below it, and its
/// `rl.reward` span (the last one when there are several).
fn steps_of(spans: &[Span], children: &[usize]) -> (Vec<Step>, Option<usize>) {
    let mut steps: Vec<Step> = Vec::new();
    let mut reward = None;
    for &c in children {
        let span = &spans[c];
        if span.name == "rl.reward" {
            reward = Some(c);
            continue;
        }
        match span.operation().as_str() {
            "chat" | "text_completion" | "generate_content" => steps.push(chat_step(span)),
            "execute_tool" => {
                let result = span.text("gen_ai.tool.call.result").unwrap_or_default();
                match steps.last_mut() {
                    Some(last) if last.0 == "chat" && last.3.is_empty() => last.3 = result,
                    _ => {
                        let call = format!(
                            "{}({})",
                            span.text("gen_ai.tool.name").unwrap_or_default(),
                            span.text("gen_ai.tool.call.arguments").unwrap_or_default()
                        );
                        steps.push(("tool", String::new(), call, result));
                    }
                }
            }
            _ => {}
        }
    }
    (steps, reward)
}

/// A model call's step: its text the thought and its tool calls the action, or its text the action
/// when it calls none.
fn chat_step(span: &Span) -> Step {
    let (text, calls) = output_of(span);
    if calls.is_empty() {
        ("chat", String::new(), text, String::new())
    } else {
        ("chat", text, calls.join("\n"), String::new())
    }
}

/// The text and the tool calls (`name(arguments)`) of a model call's `gen_ai.output.messages`.
fn output_of(span: &Span) -> (String, Vec<String>) {
    let mut texts = Vec::new();
    let mut calls = Vec::new();
    let messages = span.text("gen_ai.output.messages").and_then(|m| serde_json::from_str::<Value>(&m).ok());
    for message in messages.as_ref().and_then(Value::as_array).into_iter().flatten() {
        for part in message.get("parts").and_then(Value::as_array).into_iter().flatten() {
            match part.get("type").and_then(Value::as_str) {
                Some("text" | "reasoning") => {
                    if let Some(content) = part.get("content").and_then(Value::as_str) {
                        texts.push(content.to_owned());
                    }
                }
                Some("tool_call") => {
                    let name = part.get("name").and_then(Value::as_str).unwrap_or_default();
                    let arguments = match part.get("arguments") {
                        Some(Value::String(s)) => s.clone(),
                        Some(other) => other.to_string(),
                        None => String::new(),
                    };
                    calls.push(format!("{name}({arguments})"));
                }
                _ => {}
            }
        }
    }
    (texts.join("\n"), calls)
}

/// The last user message's text in a model call's `gen_ai.input.messages`.
fn prompt_of(span: &Span) -> Option<String> {
    let messages: Value = serde_json::from_str(&span.text("gen_ai.input.messages")?).ok()?;
    let user = messages.as_array()?.iter().rev().find(|m| m.get("role").and_then(Value::as_str) == Some("user"))?;
    let texts: Vec<&str> = user
        .get("parts")?
        .as_array()?
        .iter()
        .filter(|p| p.get("type").and_then(Value::as_str) == Some("text"))
        .filter_map(|p| p.get("content").and_then(Value::as_str))
        .collect();
    (!texts.is_empty()).then(|| texts.join("\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn span(id: usize, parent: Option<usize>, name: &str, attributes: &str) -> String {
        let parent = parent.map(|p| format!(r#","parentSpanId":"{p:x}""#)).unwrap_or_default();
        format!(
            r#"{{"traceId":"t","spanId":"{id:x}"{parent},"name":"{name}","startTimeUnixNano":"{id}","attributes":[{attributes}]}}"#
        )
    }

    fn request(spans: &[String]) -> String {
        format!(r#"{{"resourceSpans":[{{"scopeSpans":[{{"spans":[{}]}}]}}]}}"#, spans.join(","))
    }

    #[test]
    fn times_out_of_range_are_none_not_an_overflow() {
        assert_eq!(iso_nanos("1970-01-01T00:00:01.5Z"), Some(1_500_000_000));
        assert_eq!(iso_nanos("2026-12-07T05:34:53.633252Z").map(|n| n / 1_000_000_000), Some(1_796_621_693));
        for text in [
            "6155-12-07T05:34:53.6Z",
            "9223372036854775807-01-01T00:00:00Z",
            "2026-99-07T05:34:53Z",
            "1969-12-31T23:59:59Z",
        ] {
            assert_eq!(iso_nanos(text), None, "{text}");
        }
    }

    #[test]
    fn a_deep_chain_is_walked_once_and_a_parent_cycle_ends() {
        let chat = r#"{"key":"gen_ai.operation.name","value":{"stringValue":"chat"}}"#;
        let mut spans = vec![span(1, None, "rl.sample", "")];
        spans.extend((2..20_000).map(|i| span(i, Some(i - 1), "chat", chat)));
        // Two spans each the other's parent, and one below them.
        spans.extend([
            span(30_001, Some(30_002), "a", ""),
            span(30_002, Some(30_001), "b", ""),
            span(30_003, Some(30_001), "c", ""),
        ]);
        let text = request(&spans);
        let mut report = LoadReport::default();
        let run = Otel.load_bytes("deep.jsonl", text.as_bytes(), &mut report).unwrap();
        assert_eq!((run.trajectories.len(), run.num_path_steps()), (1, 19_998));
        assert!(run.meta.notes.iter().any(|n| n.starts_with("3 span(s) outside")), "{:?}", run.meta.notes);
    }
}
