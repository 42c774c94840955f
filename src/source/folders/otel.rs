//! An OpenTelemetry trace file and its rotations, read whole as one log: ROLL's `traces.jsonl`,
//! `traces.1.jsonl`, …, and the Collector's file exporter's `traces.json` with the backups its
//! rotation keeps (`traces-2026-12-07T07-03-01.000.json`), in JSON or protobuf.

use std::path::{Path, PathBuf};

use super::{FolderFormat, Reading};
use crate::source::listing::head;
use crate::source::listing::list_dir;

/// The format.
pub static FORMAT: FolderFormat =
    FolderFormat { name: "otel", list: files, holds: |_, files| files.len() > 1, reading: Reading::Joined };

/// The endings of trace files: JSON lines, JSON, protobuf.
const ENDINGS: [&str; 5] = ["jsonl", "json", "pb", "binpb", "proto"];

/// Which files of a directory are one OpenTelemetry trace file and its rotations, oldest first;
/// none unless the current file is an OTLP trace file and every one shares its name.
/// - ROLL's `OTLPReceiver` writes `traces.jsonl`, then `traces.1.jsonl`, `traces.2.jsonl`, … every
///   500 export lines (the current file first);
/// - the Collector's file exporter (`rotation`, through lumberjack) renames the current file to
///   `<name>-<UTC time>.<ending>` (`traces-2026-12-07T07-03-01.000.json`) and starts it anew.
pub fn files(dir: &Path) -> (Vec<(u64, PathBuf)>, Vec<String>) {
    let mut stem = None::<(String, String)>;
    let (mut files, mut others) = list_dir(dir, |path| {
        let (name, ending) = path.file_name()?.to_str()?.rsplit_once('.')?;
        if !ENDINGS.contains(&ending) {
            return None;
        }
        let (base, order) = rotation(name);
        (*stem.get_or_insert_with(|| (base.to_owned(), ending.to_owned())) == (base.to_owned(), ending.to_owned()))
            .then_some(order)
    });
    // The Collector's backups are older than the current file.
    if files.iter().any(|(n, _)| *n >= BACKUP) {
        for (n, _) in &mut files {
            if *n == 0 {
                *n = u64::MAX;
            }
        }
        files.sort();
    }
    let current = files.iter().find(|(n, _)| *n == 0 || *n == u64::MAX).map(|(_, p)| head(p));
    if !current.is_some_and(|h| crate::load::formats::otel::accepts_head(&h)) {
        others.extend(files.drain(..).filter_map(|(_, p)| Some(p.file_name()?.to_string_lossy().into_owned())));
        others.sort();
    }
    (files, others)
}

/// Orders at or above this are the Collector's backups (their times as `YYYYMMDDhhmmssmmm`).
const BACKUP: u64 = 10_000_000_000_000_000;

/// A file name's base and its order among the rotations: 0 for the current file, `N` for ROLL's
/// `<base>.N`, the time for the Collector's `<base>-YYYY-MM-DDThh-mm-ss.mmm`.
fn rotation(name: &str) -> (&str, u64) {
    if let Some((base, n)) = name.rsplit_once('.')
        && let Ok(n) = n.parse::<u64>()
        && n < BACKUP
        && !base.ends_with(|c: char| c.is_ascii_digit())
    {
        return (base, n);
    }
    // `-2026-12-07T07-03-01.000`: 24 characters after the base.
    if name.len() > 24
        && let Some((base, time)) = name.split_at_checked(name.len() - 24)
        && let Some(time) = time.strip_prefix('-')
        && time.as_bytes().get(10) == Some(&b'T')
    {
        let digits: String = time.chars().filter(char::is_ascii_digit).collect();
        if digits.len() == 17
            && let Ok(order) = digits.parse::<u64>()
        {
            return (base, order.max(BACKUP));
        }
    }
    (name, 0)
}

#[cfg(test)]
mod tests {
    use super::rotation;

    #[test]
    fn rotations_are_ordered_by_their_names() {
        assert_eq!(rotation("traces"), ("traces", 0));
        assert_eq!(rotation("traces.3"), ("traces", 3));
        assert_eq!(rotation("traces-2026-12-07T07-03-01.000"), ("traces", 20_261_207_070_301_000));
        assert_eq!(rotation("traces-2026-12-07"), ("traces-2026-12-07", 0));
        assert_eq!(rotation("v1.2"), ("v1.2", 0));
    }
}
