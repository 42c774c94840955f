//! A folder picked or dropped on the page (web) that is not a vantage Parquet v2 dataset, opened
//! by the folder rule (`super::folder`) as the native opener does: each log in it a run, its
//! results files joined to them, what it skipped named in one note on the first run.

use crate::load::formats::outcomes::{self, Outcomes};
use crate::load::{LoadError, LoadReport, Progress};
use crate::model::Run;

use super::folder::{Folder, is_log_name, sidecar_dir, sidecar_name};

/// One run of the folder (its file's name), or why it did not open, with its warnings.
pub type Opened = (String, Result<Run, LoadError>, LoadReport);

/// Whether the files of a picked folder (`webkitRelativePath`s, the folder's name first) are a v2
/// dataset: a `manifest.json` at its top.
pub fn is_v2_dataset(files: &[(String, web_sys::File)]) -> bool {
    files.iter().any(|(path, _)| path.split_once('/').is_some_and(|(_, rest)| rest == "manifest.json"))
}

/// Opens the folder `name` from its `files`: each log read and loaded whole (by content, as a
/// dropped file is), the results files among them joined to every run, the others named in a note
/// on the first run. When no log loads, one error naming what the folder holds.
pub async fn open(name: &str, files: Vec<(String, web_sys::File)>, progress: &Progress) -> Vec<Opened> {
    let mut folder = Folder::default();
    let mut logs = Vec::new();
    for (path, file) in files {
        let inner = path.split_once('/').map_or(path.as_str(), |(_, rest)| rest).to_owned();
        let lower = inner.to_lowercase();
        let mut parts: Vec<&str> = lower.split('/').collect();
        let file_name = parts.pop().unwrap_or_default();
        // A file below a sidecar directory (a checkpoint, `.git/`) is named once, as the directory.
        if let Some((depth, kind)) = parts.iter().enumerate().find_map(|(i, d)| sidecar_dir(d).map(|k| (i, k))) {
            let dir: Vec<&str> = inner.split('/').take(depth + 1).collect();
            let dir = format!("{}/", dir.join("/"));
            if !folder.skipped.iter().any(|(d, _)| *d == dir) {
                folder.skipped.push((dir, kind));
            }
        } else if let Some(kind) = sidecar_name(file_name) {
            folder.skipped.push((inner, kind));
        } else if is_log_name(file_name) {
            logs.push((inner, file));
        } else {
            folder.skipped.push((inner, "not a log"));
        }
    }
    let (mut runs, mut results, mut failed): (Vec<Opened>, Vec<Outcomes>, Vec<(String, String)>) =
        (Vec::new(), Vec::new(), Vec::new());
    for (inner, file) in logs {
        let bytes = match super::web_dataset::blob_bytes(&file).await {
            Ok(bytes) => bytes,
            Err(err) => {
                let why = match err {
                    crate::load::formats::vantage_v2::remote::PieceError::Missing => "missing".to_owned(),
                    crate::load::formats::vantage_v2::remote::PieceError::Failed(why) => why,
                };
                failed.push((inner.clone(), why));
                continue;
            }
        };
        if inner.ends_with(".json")
            && let Some(found) = outcomes::parse(&inner, &bytes)
        {
            results.push(found);
            continue;
        }
        let shown = format!("{name}/{inner}");
        let mut report = LoadReport::new(&shown);
        report.progress = progress.clone();
        let result = crate::load::load_shared_paced(&shown, bytes.into(), &mut report).await;
        match &result {
            Err(err) if err.is_unrecognised() => failed.push((inner.clone(), "no loader recognises it".to_owned())),
            _ => runs.push((shown, result, report)),
        }
    }
    let note = folder.note(name, &failed);
    if runs.is_empty() {
        let reason = match note {
            Some(note) => format!("a folder in which no log loads ({note})"),
            None => "an empty folder: no log in it".to_owned(),
        };
        let err = LoadError::NothingLoadable { reason }.with_path(name);
        return vec![(name.to_owned(), Err(err), LoadReport::new(name))];
    }
    let refs: Vec<&Outcomes> = results.iter().collect();
    for (_, result, report) in &mut runs {
        if let Ok(run) = result
            && !refs.is_empty()
        {
            let all = (0..refs.len()).collect::<Vec<_>>();
            outcomes::join_and_report(run, &refs, |_| all.clone(), report);
        }
    }
    if let (Some(note), Some(run)) = (note, runs.iter_mut().find_map(|(_, result, _)| result.as_mut().ok())) {
        run.meta.notes.push(note);
    }
    runs
}
