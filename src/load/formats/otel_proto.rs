//! OTLP protobuf files, read by the [`super::Otel`] reader: the export requests (`TracesData`,
//! the same message as `ExportTraceServiceRequest`) one after another, each preceded by its
//! length, as the OpenTelemetry Collector's file exporter writes them with `format: proto` (four
//! bytes big-endian: opentelemetry-collector-contrib `exporter/fileexporter`,
//! `exportMessageAsBuffer`), or as the OTLP file exporter specification asks (a varint: protobuf's
//! delimited writing); a file of one request without a length (an OTLP/HTTP body saved) reads too.
//!
//! Each request becomes the OTLP JSON value its spans would be written as (ids in hex), so the
//! JSON reader's tree, `rl.*` and `GenAI` readings apply unchanged; a request's number in the file
//! stands for the line in warnings. A file of log records or metrics says so.

use prost::Message as _;
use serde_json::{Value, json};

/// `TracesData` / `ExportTraceServiceRequest`, with the fields vantage reads.
#[derive(Clone, PartialEq, prost::Message)]
struct TracesData {
    #[prost(message, repeated, tag = "1")]
    resource_spans: Vec<ResourceSpans>,
}

#[derive(Clone, PartialEq, prost::Message)]
struct ResourceSpans {
    #[prost(message, optional, tag = "1")]
    resource: Option<Resource>,
    #[prost(message, repeated, tag = "2")]
    scope_spans: Vec<ScopeSpans>,
}

#[derive(Clone, PartialEq, prost::Message)]
struct Resource {
    #[prost(message, repeated, tag = "1")]
    attributes: Vec<KeyValue>,
}

#[derive(Clone, PartialEq, prost::Message)]
struct ScopeSpans {
    #[prost(message, repeated, tag = "2")]
    spans: Vec<Span>,
}

#[derive(Clone, PartialEq, prost::Message)]
struct Span {
    #[prost(bytes = "vec", tag = "1")]
    trace_id: Vec<u8>,
    #[prost(bytes = "vec", tag = "2")]
    span_id: Vec<u8>,
    #[prost(bytes = "vec", tag = "4")]
    parent_span_id: Vec<u8>,
    #[prost(string, tag = "5")]
    name: String,
    #[prost(fixed64, tag = "7")]
    start_time_unix_nano: u64,
    #[prost(message, repeated, tag = "9")]
    attributes: Vec<KeyValue>,
    #[prost(message, optional, tag = "15")]
    status: Option<Status>,
}

#[derive(Clone, PartialEq, prost::Message)]
struct Status {
    #[prost(string, tag = "2")]
    message: String,
    #[prost(int32, tag = "3")]
    code: i32,
}

#[derive(Clone, PartialEq, prost::Message)]
struct KeyValue {
    #[prost(string, tag = "1")]
    key: String,
    #[prost(message, optional, tag = "2")]
    value: Option<AnyValue>,
}

#[derive(Clone, PartialEq, prost::Message)]
struct AnyValue {
    #[prost(oneof = "Any", tags = "1, 2, 3, 4, 5, 6, 7")]
    value: Option<Any>,
}

#[derive(Clone, PartialEq, prost::Oneof)]
enum Any {
    #[prost(string, tag = "1")]
    String(String),
    #[prost(bool, tag = "2")]
    Bool(bool),
    #[prost(int64, tag = "3")]
    Int(i64),
    #[prost(double, tag = "4")]
    Double(f64),
    #[prost(message, tag = "5")]
    Array(ArrayValue),
    #[prost(message, tag = "6")]
    KvList(KeyValueList),
    #[prost(bytes = "vec", tag = "7")]
    Bytes(Vec<u8>),
}

#[derive(Clone, PartialEq, prost::Message)]
struct ArrayValue {
    #[prost(message, repeated, tag = "1")]
    values: Vec<AnyValue>,
}

#[derive(Clone, PartialEq, prost::Message)]
struct KeyValueList {
    #[prost(message, repeated, tag = "1")]
    values: Vec<KeyValue>,
}

/// `LogsData`: only counted, to say what a file without spans holds.
#[derive(Clone, PartialEq, prost::Message)]
struct LogsData {
    #[prost(message, repeated, tag = "1")]
    resource_logs: Vec<ResourceLogs>,
}

#[derive(Clone, PartialEq, prost::Message)]
struct ResourceLogs {
    #[prost(message, repeated, tag = "2")]
    scope_logs: Vec<ScopeLogs>,
}

#[derive(Clone, PartialEq, prost::Message)]
struct ScopeLogs {
    #[prost(message, repeated, tag = "2")]
    log_records: Vec<LogRecord>,
}

#[derive(Clone, PartialEq, prost::Message)]
struct LogRecord {
    #[prost(fixed64, tag = "1")]
    time_unix_nano: u64,
}

/// `MetricsData`: only the metrics' names, to say what a file without spans holds.
#[derive(Clone, PartialEq, prost::Message)]
struct MetricsData {
    #[prost(message, repeated, tag = "1")]
    resource_metrics: Vec<ResourceMetrics>,
}

#[derive(Clone, PartialEq, prost::Message)]
struct ResourceMetrics {
    #[prost(message, repeated, tag = "2")]
    scope_metrics: Vec<ScopeMetrics>,
}

#[derive(Clone, PartialEq, prost::Message)]
struct ScopeMetrics {
    #[prost(message, repeated, tag = "2")]
    metrics: Vec<Metric>,
}

#[derive(Clone, PartialEq, prost::Message)]
struct Metric {
    #[prost(string, tag = "1")]
    name: String,
}

/// The first byte of a non-empty request: field 1 (its resources), length-delimited.
const FIRST: u8 = 0x0a;

/// The messages of a protobuf file, and whether its last one was cut short (a file still being
/// written); `None` when `bytes` are not length-prefixed OTLP messages.
pub fn frames(bytes: &[u8]) -> Option<(Vec<&[u8]>, bool)> {
    if bytes.is_empty() {
        return None;
    }
    if let Some(found) = split(bytes, Prefix::Fixed).or_else(|| split(bytes, Prefix::Varint)) {
        return Some(found);
    }
    // One request with no length before it.
    (bytes[0] == FIRST && TracesData::decode(bytes).is_ok()).then(|| (vec![bytes], false))
}

/// How a message's length is written before it.
#[derive(Clone, Copy)]
enum Prefix {
    /// Four bytes big-endian (the Collector's file exporter).
    Fixed,
    /// A varint (protobuf's delimited writing).
    Varint,
}

impl Prefix {
    /// The width of the length at the start of `at` and the length.
    fn read(self, at: &[u8]) -> Option<(usize, usize)> {
        match self {
            Self::Fixed => {
                let head: [u8; 4] = at.get(..4)?.try_into().ok()?;
                Some((4, u32::from_be_bytes(head) as usize))
            }
            Self::Varint => {
                let mut value = 0usize;
                for (i, &b) in at.iter().take(5).enumerate() {
                    value |= usize::from(b & 0x7f) << (7 * i);
                    if b & 0x80 == 0 {
                        return Some((i + 1, value));
                    }
                }
                None
            }
        }
    }
}

/// `bytes` cut into messages by their lengths, when every message starts as a request does and
/// the last ends at the end (or is cut short).
fn split(bytes: &[u8], prefix: Prefix) -> Option<(Vec<&[u8]>, bool)> {
    let mut out = Vec::new();
    let mut at = 0usize;
    while at < bytes.len() {
        let Some((width, len)) = prefix.read(&bytes[at..]) else {
            return (!out.is_empty()).then_some((out, true));
        };
        let start = at + width;
        if len > 0 && bytes.get(start) != Some(&FIRST) {
            return None;
        }
        let end = start.checked_add(len)?;
        if end > bytes.len() {
            // Cut short: a message the writer has not finished.
            return (!out.is_empty()).then_some((out, true));
        }
        out.push(&bytes[start..end]);
        at = end;
    }
    (!out.is_empty()).then_some((out, false))
}

/// Whether the first bytes of a file (maybe only its head) start an OTLP protobuf file.
pub fn starts(head: &[u8]) -> bool {
    let Some(first) = head.get(..4).map(|h| u32::from_be_bytes([h[0], h[1], h[2], h[3]]) as usize) else {
        return false;
    };
    // The four-byte length and a request after it (the Collector's writing), read where whole.
    first > 0
        && head.get(4) == Some(&FIRST)
        && head.get(4..4 + first).is_none_or(|m| TracesData::decode(m).is_ok_and(|t| spans(&t) > 0))
}

/// The spans of a request that are spans (ids of 16 and 8 bytes: a file of another signal decoded
/// as traces has none).
fn spans(data: &TracesData) -> usize {
    data.resource_spans
        .iter()
        .flat_map(|r| &r.scope_spans)
        .flat_map(|s| &s.spans)
        .filter(|s| s.trace_id.len() == 16 && s.span_id.len() == 8)
        .count()
}

/// The records of a protobuf file as OTLP JSON values (`{"resourceSpans": …}`), numbered from 1;
/// a message that does not decode is a located warning. `None`, with nothing reported, when the
/// file holds no spans.
pub fn records(messages: &[&[u8]], cut: bool, report: &mut crate::load::LoadReport) -> Option<Vec<(u64, Value)>> {
    let decoded: Vec<Result<TracesData, prost::DecodeError>> =
        messages.iter().map(|m| TracesData::decode(*m)).collect();
    if !decoded.iter().flatten().any(|data| spans(data) > 0) {
        return None;
    }
    let mut out = Vec::new();
    for (n, data) in decoded.into_iter().enumerate() {
        let line = n as u64 + 1;
        report.records_seen += 1;
        match data {
            Ok(data) => out.push((line, request_json(&data))),
            Err(err) => report.warn(crate::model::Warning::skipped(
                line,
                "resourceSpans",
                format!("request {line} is not an OTLP trace message: {err}"),
            )),
        }
    }
    if cut {
        let line = messages.len() as u64 + 1;
        report.warn(crate::model::Warning::skipped(
            line,
            "record",
            "the last request is cut short (still being written?)",
        ));
    }
    Some(out)
}

/// What a protobuf file of the other signals holds, as OTLP JSON values for
/// [`super::signals_held`]: log records or metrics, when every message decodes as one of them.
pub fn other_signals(messages: &[&[u8]]) -> Option<Vec<Value>> {
    let logs: Option<Vec<Value>> = messages
        .iter()
        .map(|m| {
            let data = LogsData::decode(*m).ok()?;
            let records: Vec<Value> = data
                .resource_logs
                .iter()
                .flat_map(|r| &r.scope_logs)
                .flat_map(|s| &s.log_records)
                .map(|r| json!({ "timeUnixNano": r.time_unix_nano.to_string() }))
                .collect();
            Some(json!({ "resourceLogs": [{ "scopeLogs": [{ "logRecords": records }] }] }))
        })
        .collect();
    let metrics: Option<Vec<Value>> = messages
        .iter()
        .map(|m| {
            let data = MetricsData::decode(*m).ok()?;
            let names: Vec<&String> = data
                .resource_metrics
                .iter()
                .flat_map(|r| &r.scope_metrics)
                .flat_map(|s| &s.metrics)
                .map(|m| &m.name)
                .collect();
            // A log record's first field is a time, never a name: such a "metric" is not one.
            names.iter().all(|n| !n.is_empty() && n.chars().all(|c| !c.is_control())).then(|| {
                let metrics: Vec<Value> = names.iter().map(|n| json!({ "name": n })).collect();
                json!({ "resourceMetrics": [{ "scopeMetrics": [{ "metrics": metrics }] }] })
            })
        })
        .collect();
    let count =
        |values: &Option<Vec<Value>>, key: &str| values.as_ref().map_or(0, |v| super::signal_items(v, key).len());
    match (count(&logs, "logs"), count(&metrics, "metrics")) {
        (l, m) if l >= m && l > 0 => logs,
        (_, m) if m > 0 => metrics,
        _ => None,
    }
}

/// A request as OTLP JSON (ids in hex, 64-bit integers as strings, status codes as numbers).
fn request_json(data: &TracesData) -> Value {
    let resource_spans: Vec<Value> = data
        .resource_spans
        .iter()
        .map(|r| {
            let attributes = r.resource.as_ref().map(|r| attributes_json(&r.attributes)).unwrap_or_default();
            let scope_spans: Vec<Value> = r
                .scope_spans
                .iter()
                .map(|s| json!({ "spans": s.spans.iter().map(span_json).collect::<Vec<_>>() }))
                .collect();
            json!({ "resource": { "attributes": attributes }, "scopeSpans": scope_spans })
        })
        .collect();
    json!({ "resourceSpans": resource_spans })
}

fn span_json(span: &Span) -> Value {
    let mut value = json!({
        "traceId": hex(&span.trace_id),
        "spanId": hex(&span.span_id),
        "parentSpanId": hex(&span.parent_span_id),
        "name": span.name,
        "startTimeUnixNano": span.start_time_unix_nano.to_string(),
        "attributes": attributes_json(&span.attributes),
    });
    if let Some(status) = &span.status {
        value["status"] = json!({ "code": status.code, "message": status.message });
    }
    value
}

fn attributes_json(attributes: &[KeyValue]) -> Vec<Value> {
    attributes
        .iter()
        .map(|kv| json!({ "key": kv.key, "value": kv.value.as_ref().map_or(Value::Null, any_json) }))
        .collect()
}

fn any_json(value: &AnyValue) -> Value {
    match &value.value {
        Some(Any::String(s)) => json!({ "stringValue": s }),
        Some(Any::Bool(b)) => json!({ "boolValue": b }),
        Some(Any::Int(i)) => json!({ "intValue": i.to_string() }),
        Some(Any::Double(d)) => json!({ "doubleValue": d }),
        Some(Any::Array(a)) => json!({ "arrayValue": { "values": a.values.iter().map(any_json).collect::<Vec<_>>() } }),
        Some(Any::KvList(l)) => json!({ "kvlistValue": { "values": attributes_json(&l.values) } }),
        Some(Any::Bytes(b)) => json!({ "bytesValue": hex(b) }),
        None => json!({}),
    }
}

/// Bytes in lower-case hex, as OTLP JSON writes ids.
pub fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    bytes.iter().fold(String::with_capacity(bytes.len() * 2), |mut s, b| {
        let _written: std::fmt::Result = write!(s, "{b:02x}");
        s
    })
}
