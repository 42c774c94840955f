//! "vantage Parquet v1": vantage's own format as one Parquet table, one row per vantage JSONL record,
//! so nothing is lost and polars or `DuckDB` users can filter by record type, group or id without
//! parsing: columns `line` (u32, the record's line in the JSONL form), `record_type` (`header`,
//! `group`, `trajectory`, `tree`), `id`, `group` (null where the record has none) and `json` (the
//! record itself, as docs/FORMAT.md describes it). Native only (polars).

use polars::prelude::{Column, DataFrame, DataType, ParquetReader, ParquetWriter, SerReader as _};

use crate::load::{LoadError, LoadReport, Loader};
use crate::model::Run;

/// The format name.
pub const FORMAT_NAME: &str = "vantage Parquet v1";

/// The vantage Parquet loader.
pub struct VantageParquet;

/// The table of a Parquet file, or "not this format" (no `PAR1` magic, or unreadable), with the
/// columns left unread: those of a nested type with structs (chat messages as lists of structs),
/// which this build of polars does not read (it would panic), each as (name, type). A panic
/// inside the reader on a damaged file is caught and is an error like any other.
pub(super) fn read_frame(format: &'static str, bytes: &[u8]) -> Result<(DataFrame, Vec<Unread>), LoadError> {
    let incompatible = |reason: String| LoadError::Incompatible { format, reason };
    if !bytes.starts_with(b"PAR1") {
        return Err(incompatible("not a Parquet file".to_owned()));
    }
    crate::load::parquet_guard::check(bytes).map_err(|e| incompatible(format!("unreadable Parquet (damaged: {e})")))?;
    let read = || -> polars::prelude::PolarsResult<(DataFrame, Vec<Unread>)> {
        let mut reader = ParquetReader::new(std::io::Cursor::new(bytes));
        let schema = reader.schema()?;
        let (mut keep, mut unread) = (Vec::new(), Vec::new());
        for field in schema.iter_values() {
            if readable(field.dtype()) {
                keep.push(field.name.to_string());
            } else {
                unread.push(Unread { name: field.name.to_string(), kind: type_name(field.dtype()) });
            }
        }
        let reader = if unread.is_empty() { reader } else { reader.with_columns(Some(keep)) };
        Ok((reader.finish()?, unread))
    };
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(read)) {
        Ok(Ok(read)) => Ok(read),
        Ok(Err(e)) => Err(incompatible(format!("unreadable Parquet ({e})"))),
        Err(_) => Err(incompatible("unreadable Parquet (the reader stopped on it: a damaged file?)".to_owned())),
    }
}

/// A column [`read_frame`] leaves unread: its name and its nested type (`list<struct>`, …).
pub(super) struct Unread {
    pub name: String,
    pub kind: String,
}

impl std::fmt::Display for Unread {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "`{}` ({})", self.name, self.kind)
    }
}

/// A nested type's shape for messages: `list<struct>`, `map`, …
fn type_name(dtype: &polars::prelude::ArrowDataType) -> String {
    use polars::prelude::ArrowDataType as T;
    match dtype {
        T::Struct(_) => "struct".to_owned(),
        T::Map(..) => "map".to_owned(),
        T::Union(..) => "union".to_owned(),
        T::List(inner) | T::LargeList(inner) | T::FixedSizeList(inner, _) => {
            format!("list<{}>", type_name(inner.dtype()))
        }
        T::Extension(extension) => type_name(&extension.inner),
        other => format!("{other:?}").to_lowercase(),
    }
}

/// Whether polars, as built here, reads a column of `dtype` (no structs, maps or unions inside).
fn readable(dtype: &polars::prelude::ArrowDataType) -> bool {
    use polars::prelude::ArrowDataType as T;
    match dtype {
        T::Struct(_) | T::Map(..) | T::Union(..) => false,
        T::List(inner) | T::LargeList(inner) | T::FixedSizeList(inner, _) => readable(inner.dtype()),
        T::Extension(extension) => readable(&extension.inner),
        _ => true,
    }
}

/// The run as vantage Parquet bytes.
pub fn to_parquet(run: &Run) -> Result<Vec<u8>, String> {
    let jsonl = crate::load::formats::vantage_jsonl::write::to_jsonl(run);
    let (mut line, mut kind, mut id, mut group, mut json) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for (i, text) in jsonl.lines().enumerate() {
        let value: serde_json::Value =
            serde_json::from_str(&crate::load::lenient::quote_non_finite(text)).unwrap_or_default();
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

impl Loader for VantageParquet {
    fn name(&self) -> &'static str {
        "vantage_parquet"
    }

    fn description(&self) -> &'static str {
        "vantage Parquet v1: one row per vantage JSONL record (line, record_type, id, group, json); native only"
    }

    fn load_bytes(&self, name: &str, bytes: &[u8], report: &mut LoadReport) -> Result<Run, LoadError> {
        let incompatible = |reason: String| LoadError::Incompatible { format: FORMAT_NAME, reason };
        let (frame, unread) = read_frame(FORMAT_NAME, bytes)?;
        let (Ok(json), Ok(_)) = (frame.column("json"), frame.column("record_type")) else {
            let unread: Vec<String> = unread.iter().map(Unread::to_string).collect();
            let unread = if unread.is_empty() { String::new() } else { format!("; unread: {}", unread.join(", ")) };
            return Err(incompatible(format!("no json / record_type columns{unread}")));
        };
        let json = json.cast(&DataType::String).map_err(|e| incompatible(e.to_string()))?;
        let json = json.str().map_err(|e| incompatible(e.to_string()))?;
        let mut text = String::new();
        for record in json.iter() {
            text.push_str(record.unwrap_or(""));
            text.push('\n');
        }
        let mut run = crate::load::formats::vantage_jsonl::load(name, text.as_bytes(), report)?;
        run.meta.format = FORMAT_NAME.to_owned();
        Ok(run)
    }
}
