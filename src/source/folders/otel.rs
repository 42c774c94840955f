//! An OpenTelemetry trace file and its rotations (`traces.jsonl`, `traces.1.jsonl`, …), read whole as one log.

use std::path::{Path, PathBuf};

use super::{FolderFormat, Reading};
use crate::source::listing::head;
use crate::source::listing::list_dir;

/// The format.
pub static FORMAT: FolderFormat =
    FolderFormat { name: "otel", list: files, holds: |_, files| files.len() > 1, reading: Reading::Joined };

/// Which files of a directory are one OpenTelemetry trace file and its rotations, as ROLL's
/// `OTLPReceiver` writes them (`traces.jsonl`, then `traces.1.jsonl`, `traces.2.jsonl`, … every 500
/// export lines), in rotation order; none unless the first is an OTLP trace file and every one
/// shares its name.
pub fn files(dir: &Path) -> (Vec<(u64, PathBuf)>, Vec<String>) {
    let mut stem = None::<String>;
    let (mut files, mut others) = list_dir(dir, |path| {
        let name = path.file_name()?.to_str()?.strip_suffix(".jsonl")?;
        let (base, index) = match name.rsplit_once('.') {
            Some((base, n)) if n.bytes().all(|b| b.is_ascii_digit()) => (base, n.parse::<u64>().ok()?),
            _ => (name, 0),
        };
        (stem.get_or_insert_with(|| base.to_owned()) == base).then_some(index)
    });
    let first = files.first().map(|(_, p)| head(p)).unwrap_or_default();
    if files.first().is_none_or(|(n, _)| *n != 0)
        || !crate::load::formats::otel::accepts(&crate::load::lines::head_text(&first))
    {
        others.extend(files.drain(..).filter_map(|(_, p)| Some(p.file_name()?.to_string_lossy().into_owned())));
        others.sort();
    }
    (files, others)
}
