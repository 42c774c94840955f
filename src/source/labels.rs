//! Where a run's labels live, and how they are read and appended (docs/LABELS.md). Never in the
//! log: beside the run, in `.vantage/labels/NAME.labels.jsonl` of the run's folder (`NAME` the log's
//! or run folder's name), or, when that folder cannot be written, in vantage's own data folder
//! under a name made from the run's whole path. Both are read; new labels go to the first that can
//! be written.
//!
//! A write appends whole lines under an exclusive lock on the file (`File::lock`, advisory, which
//! every vantage process takes), so two windows, the app and an agent, or two processes labelling
//! one run at once lose nothing and never interleave. A writer killed mid-write leaves a last line
//! without its newline: readers leave it out, and the next writer cuts it off (under the lock)
//! before it appends, so no partial label is ever read.

use std::io::{Read as _, Seek as _, SeekFrom, Write as _};
use std::path::{Path, PathBuf};

use crate::load::labels as file;
use crate::model::Warning;
use crate::model::labels::Entry;

/// The folder beside a run its labels go in.
const BESIDE: &str = "labels";

/// The file name of the labels of the run at `run`: its name with `.labels.jsonl`.
fn file_name(run: &Path) -> String {
    let name = run.file_name().map_or_else(|| "run".to_owned(), |n| n.to_string_lossy().into_owned());
    format!("{name}.labels.jsonl")
}

/// The labels file beside the run at `run` (`.vantage/labels/` in its folder).
pub fn beside(run: &Path) -> PathBuf {
    let folder = run.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    folder.join(super::folder::CONVERTED_DIR).join(BESIDE).join(file_name(run))
}

/// vantage's data folder: `$VANTAGE_DATA`, else `vantage` in `$XDG_DATA_HOME`, `~/.local/share`,
/// or `%APPDATA%`.
pub fn data_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("VANTAGE_DATA") {
        return Some(PathBuf::from(dir));
    }
    let data = std::env::var_os("XDG_DATA_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local").join("share")))
        .or_else(|| std::env::var_os("APPDATA").map(PathBuf::from))?;
    Some(data.join("vantage"))
}

/// The labels file of the run at `run` in vantage's data folder, keyed by the run's whole path.
pub fn in_data_dir(run: &Path) -> Option<PathBuf> {
    let whole = std::fs::canonicalize(run).unwrap_or_else(|_| run.to_owned());
    let key = crate::load::stable_hash(&whole.to_string_lossy());
    Some(data_dir()?.join(BESIDE).join(format!("{key:016x}-{}", file_name(run))))
}

/// Where the run's labels may be: beside it, then in the data folder.
pub fn places(run: &Path) -> Vec<PathBuf> {
    std::iter::once(beside(run)).chain(in_data_dir(run)).collect()
}

/// What was read of a run's labels.
#[derive(Debug, Default)]
pub struct Read {
    /// The entries, the file beside the run's first.
    pub entries: Vec<Entry>,
    /// A located warning for each line that is not an entry: the file, and the warning.
    pub warnings: Vec<(PathBuf, Warning)>,
    /// The files read.
    pub files: Vec<PathBuf>,
}

/// The labels entries of the run at `run`, from every place they may be.
pub fn read(run: &Path) -> Read {
    let mut out = Read::default();
    for place in places(run) {
        let Ok(bytes) = std::fs::read(&place) else { continue };
        let (entries, warnings) = file::read(&bytes);
        out.entries.extend(entries);
        out.warnings.extend(warnings.into_iter().map(|w| (place.clone(), w)));
        out.files.push(place);
    }
    out
}

/// The labels of the run at `path` put on `run` (those its log carries, then those beside it), and
/// what a person should know of them: each
/// line of a labels file that is not an entry (located), labels of another run, refused ones.
pub fn resolved(path: &Path, run: &crate::model::Run) -> (crate::model::labels::RunLabels, Vec<String>) {
    let mut read = read(path);
    // The labels the log carries come first: a labels file beside the run can take them off.
    let imported = run.meta.imported_labels.iter().cloned().map(Entry::Add);
    read.entries = imported.chain(read.entries).collect();
    let mut notes: Vec<String> = read.warnings.iter().map(|(file, w)| w.located(&file.display().to_string())).collect();
    let labels = crate::model::labels::RunLabels::resolve(run, crate::model::labels::labels_of(read.entries));
    notes.extend(labels.notes());
    (labels, notes)
}

/// The labels Inspect Scout's scans give the Inspect log at `path` (docs/LABELS.md): each scanner's
/// results in a `scans/scan_id=…/<scanner>.parquet` beside the log whose transcripts came from
/// it, as `scout.<scanner>` on the sample's rollout (`<id>/epoch<n>`): a `true` result a flag, a
/// number or a word that value, the explanation its note; a result that found nothing (`false`)
/// is no label. A scan file that cannot be read is a note.
pub fn scout(path: &Path, run: &crate::model::Run) -> (Vec<crate::model::labels::Label>, Vec<String>) {
    use crate::model::labels::{Label, Source, SourceKind, Target};
    let (mut labels, mut notes) = (Vec::new(), Vec::new());
    let Some(log) = path.file_name().map(|n| n.to_string_lossy().into_owned()) else { return (labels, notes) };
    let is_inspect = run.meta.format.to_ascii_lowercase().contains("inspect");
    let scans = path.parent().unwrap_or(Path::new(".")).join("scans");
    if !is_inspect || !scans.is_dir() {
        return (labels, notes);
    }
    let mut files: Vec<PathBuf> = std::fs::read_dir(&scans)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|dir| dir.file_name().is_some_and(|n| n.to_string_lossy().starts_with("scan_id=")))
        .flat_map(|dir| std::fs::read_dir(dir).into_iter().flatten().flatten().map(|e| e.path()))
        .filter(|f| f.extension().is_some_and(|e| e == "parquet"))
        .collect();
    files.sort();
    for file in files {
        let scan =
            file.parent().and_then(|d| d.file_name()).map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let results = match std::fs::read(&file).map_err(|e| e.to_string()).and_then(|b| file::scout_results(&b)) {
            Ok(results) => results,
            Err(why) => {
                notes.push(format!("{}: {why}", file.display()));
                continue;
            }
        };
        for result in results {
            // A scan of several logs: only this log's transcripts.
            let from_here = result.source_uri.is_empty() || result.source_uri.ends_with(&log);
            let key = format!("{}/epoch{}", result.task_id, result.repeat);
            let Some(value) = result.value.filter(|_| from_here && run.trajectory_by_key(&key).is_some()) else {
                continue;
            };
            labels.push(Label {
                name: format!("scout.{}", result.scanner),
                value,
                target: Target { trajectory: key, step: None },
                source: Source { kind: SourceKind::File, name: format!("Inspect Scout {scan}") },
                note: result.explanation,
                time: None,
            });
        }
    }
    (labels, notes)
}

/// Appends `entries` to the labels of the run at `run`, beside it when its folder can be written,
/// else in the data folder; the file written.
pub fn append(run: &Path, entries: &[Entry]) -> std::io::Result<PathBuf> {
    let text: String = entries.iter().map(file::line).collect();
    let mut last = None;
    for place in places(run) {
        match append_to(&place, text.as_bytes()) {
            Ok(()) => return Ok(place),
            Err(err) => last = Some(std::io::Error::new(err.kind(), format!("{}: {err}", place.display()))),
        }
    }
    Err(last.unwrap_or_else(|| std::io::Error::other("no folder to write labels in (set VANTAGE_DATA)")))
}

/// Appends whole lines to `path` under its lock, first cutting off a last line a killed writer
/// left without its newline.
pub fn append_to(path: &Path, lines: &[u8]) -> std::io::Result<()> {
    if let Some(folder) = path.parent() {
        std::fs::create_dir_all(folder)?;
    }
    let mut handle = std::fs::OpenOptions::new().read(true).write(true).create(true).truncate(false).open(path)?;
    handle.lock()?;
    let length = handle.metadata()?.len();
    let whole = whole_length(&mut handle, length)?;
    if whole < length {
        handle.set_len(whole)?;
    }
    handle.seek(SeekFrom::Start(whole))?;
    let (first, rest) = lines.split_at(lines.len() / 2);
    handle.write_all(first)?;
    hold_mid_write(path, &mut handle)?;
    handle.write_all(rest)?;
    handle.sync_data()?;
    handle.unlock()
}

/// Under `VANTAGE_TEST_HOLD_WRITE=1` (set by `tests/it/labels.rs`'s kill test, nowhere else): half
/// the lines written, marks itself with `PATH.held` and waits a minute, so that the test kills the
/// process mid-write for certain.
fn hold_mid_write(path: &Path, handle: &mut std::fs::File) -> std::io::Result<()> {
    if std::env::var_os("VANTAGE_TEST_HOLD_WRITE").is_some_and(|v| v == "1") {
        handle.flush()?;
        let mut marker = path.as_os_str().to_owned();
        marker.push(".held");
        if std::fs::write(&marker, b"").is_ok() {
            std::thread::sleep(std::time::Duration::from_secs(60));
        }
    }
    Ok(())
}

/// The length of `handle`'s whole lines: up to and with its last newline (0 when it has none).
fn whole_length(handle: &mut std::fs::File, length: u64) -> std::io::Result<u64> {
    let mut end = length;
    let mut chunk = vec![0u8; 64 * 1024];
    while end > 0 {
        let start = end.saturating_sub(chunk.len() as u64);
        let piece = &mut chunk[..(end - start) as usize];
        handle.seek(SeekFrom::Start(start))?;
        handle.read_exact(piece)?;
        if let Some(at) = piece.iter().rposition(|&b| b == b'\n') {
            return Ok(start + at as u64 + 1);
        }
        end = start;
    }
    Ok(0)
}

/// Now, as a label's time (RFC 3339, UTC, to the second).
pub fn now() -> String {
    humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::labels::{Label, Source, SourceKind, Target, Value};

    fn entry(i: usize) -> Entry {
        Entry::Add(Label {
            name: format!("l{i}"),
            value: Value::Number(i as f64),
            target: Target { trajectory: "t".to_owned(), step: None },
            source: Source { kind: SourceKind::Person, name: "test".to_owned() },
            note: None,
            time: None,
        })
    }

    #[test]
    fn a_cut_last_line_is_cut_off_before_the_next_append() {
        let dir = std::env::temp_dir().join(format!("vantage-labels-{}", std::process::id()));
        let path = dir.join("a.labels.jsonl");
        append_to(&path, file::line(&entry(0)).as_bytes()).unwrap();
        // A writer killed mid-line.
        let mut cut = file::line(&entry(1));
        cut.truncate(cut.len() / 2);
        std::fs::OpenOptions::new().append(true).open(&path).unwrap().write_all(cut.as_bytes()).unwrap();
        assert_eq!(file::read(&std::fs::read(&path).unwrap()).0, [entry(0)]);
        append_to(&path, file::line(&entry(2)).as_bytes()).unwrap();
        let (entries, warnings) = file::read(&std::fs::read(&path).unwrap());
        assert!(warnings.is_empty(), "{warnings:?}");
        assert_eq!(entries, [entry(0), entry(2)]);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn writers_on_threads_lose_nothing() {
        let dir = std::env::temp_dir().join(format!("vantage-labels-threads-{}", std::process::id()));
        let path = dir.join("b.labels.jsonl");
        std::thread::scope(|scope| {
            for writer in 0..4 {
                let path = &path;
                scope.spawn(move || {
                    for i in 0..50 {
                        append_to(path, file::line(&entry(writer * 1000 + i)).as_bytes()).unwrap();
                    }
                });
            }
        });
        let (entries, warnings) = file::read(&std::fs::read(&path).unwrap());
        assert!(warnings.is_empty());
        assert_eq!(entries.len(), 200);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
