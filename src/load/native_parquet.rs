//! "vantage Parquet v1": the native format as one Parquet table, one row per vantage JSONL record,
//! so nothing is lost and polars or `DuckDB` users can filter by record type, group or id without
//! parsing: columns `line` (u32, the record's line in the JSONL form), `record_type` (`header`,
//! `group`, `trajectory`, `tree`), `id`, `group` (null where the record has none) and `json` (the
//! record itself, as docs/FORMAT.md describes it). Native only (polars).

use polars::prelude::{Column, DataFrame, DataType, ParquetReader, ParquetWriter, SerReader as _};

use super::{LoadError, LoadReport, Loader};
use crate::model::Run;

/// The format name.
pub const FORMAT_NAME: &str = "vantage Parquet v1";

/// The native Parquet loader.
pub struct NativeParquet;

/// The table of a Parquet file, or "not this format" (no `PAR1` magic, or unreadable).
pub(super) fn read_frame(format: &'static str, bytes: &[u8]) -> Result<DataFrame, LoadError> {
    let incompatible = |reason: String| LoadError::Incompatible { format, reason };
    if !bytes.starts_with(b"PAR1") {
        return Err(incompatible("not a Parquet file".to_owned()));
    }
    ParquetReader::new(std::io::Cursor::new(bytes))
        .finish()
        .map_err(|e| incompatible(format!("unreadable Parquet ({e})")))
}

/// The run as vantage Parquet bytes.
pub fn to_parquet(run: &Run) -> Result<Vec<u8>, String> {
    let jsonl = super::native::write::to_jsonl(run);
    let (mut line, mut kind, mut id, mut group, mut json) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for (i, text) in jsonl.lines().enumerate() {
        let value: serde_json::Value =
            serde_json::from_str(&super::lenient::quote_non_finite(text)).unwrap_or_default();
        let field = |name: &str| value.get(name).and_then(serde_json::Value::as_str).map(str::to_owned);
        line.push(i as u32 + 1);
        kind.push(if i == 0 { Some("header".to_owned()) } else { field("type") });
        id.push(field("id"));
        group.push(field("group"));
        json.push(text.to_owned());
    }
    let mut frame = DataFrame::new_infer_height(vec![
        Column::new("line".into(), line),
        Column::new("record_type".into(), kind),
        Column::new("id".into(), id),
        Column::new("group".into(), group),
        Column::new("json".into(), json),
    ])
    .map_err(|e| e.to_string())?;
    let mut bytes = Vec::new();
    ParquetWriter::new(&mut bytes).finish(&mut frame).map_err(|e| e.to_string())?;
    Ok(bytes)
}

impl Loader for NativeParquet {
    fn name(&self) -> &'static str {
        "vantage_parquet"
    }

    fn description(&self) -> &'static str {
        "vantage Parquet v1: one row per vantage JSONL record (line, record_type, id, group, json); native only"
    }

    fn load_bytes(&self, name: &str, bytes: &[u8], report: &mut LoadReport) -> Result<Run, LoadError> {
        let incompatible = |reason: String| LoadError::Incompatible { format: FORMAT_NAME, reason };
        let frame = read_frame(FORMAT_NAME, bytes)?;
        let (Ok(json), Ok(_)) = (frame.column("json"), frame.column("record_type")) else {
            return Err(incompatible("no json / record_type columns".to_owned()));
        };
        let json = json.cast(&DataType::String).map_err(|e| incompatible(e.to_string()))?;
        let json = json.str().map_err(|e| incompatible(e.to_string()))?;
        let mut text = String::new();
        for record in json.iter() {
            text.push_str(record.unwrap_or(""));
            text.push('\n');
        }
        let mut run = super::native::load(name, text.as_bytes(), report)?;
        run.meta.format = FORMAT_NAME.to_owned();
        Ok(run)
    }
}
