//! Folder formats: a run that is a folder of files in a trainer's layout. Each is a file here
//! and one line in [`FOLDERS`], and owns how it lists its files, how it tells its folder, and how
//! it is read: numbered JSON-lines files read piece by piece and followed as they grow, whole files
//! read as each is complete, or files joined into one log read whole. The openers
//! (`source::path`, `source::live`), the folder rule (`source::folder`), `vantage convert` and
//! `vantage serve` all read this table. (A v2 dataset and a slime dump are folders too, opened by
//! `source::dataset` and `source::slime`.)

use std::path::{Path, PathBuf};

use crate::load::LoadReport;
use crate::load::lines::LineFeed;

mod art;
mod claude_code;
mod codex;
mod nemo_rl;
mod open_instruct;
mod otel;
mod roll;
mod skyrl;
mod tinker;
mod trl;
mod verifiers;
mod verl;

/// Every folder format, in the order a directory is tried against them: the first that holds it
/// names it. A new one is a file here, its `mod` line and one line in this list.
pub static FOLDERS: &[&FolderFormat] = &[
    &verl::FORMAT,
    &nemo_rl::FORMAT,
    &verifiers::FORMAT,
    &tinker::FORMAT,
    &skyrl::FORMAT,
    &roll::FORMAT,
    &open_instruct::FORMAT,
    &art::FORMAT,
    &otel::FORMAT,
    &claude_code::FORMAT,
    &codex::FORMAT,
    &trl::FORMAT,
];

/// A directory's files of one format, by step, and the names of its other entries.
pub type FileLister = fn(&Path) -> (Vec<(u64, PathBuf)>, Vec<String>);

/// How a folder format is read.
pub enum Reading {
    /// Numbered JSON-lines files, read piece by piece by `stream` and followed as they grow; when
    /// the first file's head is not what `first_file` accepts, the files are one log of another
    /// format, read whole.
    Lines {
        /// The reader of the files' lines, named by the run.
        stream: fn(&str, LoadReport) -> Box<dyn LineFeed>,
        /// Whether the first file's head (as text) is this format.
        first_file: fn(&str) -> bool,
    },
    /// Whole files, each read as it is complete (none in a build without their reader).
    Files(fn(&str) -> Option<Box<dyn crate::load::FileRun>>),
    /// Files joined in order into one log, read whole.
    Joined,
}

/// One folder format.
pub struct FolderFormat {
    /// Its name (`--format`, and what `vantage serve` calls such a run).
    pub name: &'static str,
    /// Its files in a directory.
    pub list: FileLister,
    /// Whether a directory whose files [`Self::list`] found is of this format.
    pub holds: fn(&Path, &[(u64, PathBuf)]) -> bool,
    /// How it is read.
    pub reading: Reading,
}

impl FolderFormat {
    /// Whether a run of this format is read piece by piece (and can be followed).
    pub fn streams(&self) -> bool {
        !matches!(self.reading, Reading::Joined)
    }
}

/// A directory's folder format, with the listing that told it.
pub struct Found {
    /// The format.
    pub format: &'static FolderFormat,
    /// Its files, by step.
    pub files: Vec<(u64, PathBuf)>,
    /// The directory's other entries.
    pub others: Vec<String>,
}

/// The folder format `dir` holds, if any, with its files (listed once, here).
pub fn of_dir(dir: &Path) -> Option<Found> {
    if !dir.is_dir() {
        return None;
    }
    FOLDERS.iter().copied().find_map(|format| {
        let (files, others) = (format.list)(dir);
        (format.holds)(dir, &files).then_some(Found { format, files, others })
    })
}

/// `holds` of a format whose lister names only its own files: any file at all.
fn any_files(_: &Path, files: &[(u64, PathBuf)]) -> bool {
    !files.is_empty()
}

/// `first_file` of a format whose files need no look inside.
fn any_head(_: &str) -> bool {
    true
}

/// The folder format named `name`.
pub fn named(name: &str) -> Option<&'static FolderFormat> {
    FOLDERS.iter().copied().find(|format| format.name == name)
}

/// Whether `path` is read piece by piece through [`super::live::Live`] when read as `format`
/// (detected when `None`): a JSON-lines log, or a directory of a folder format that streams; any
/// other format given is read whole.
pub fn reads_as_stream(path: &Path, format: Option<&str>) -> bool {
    format.is_none_or(|f| f == "vantage" || (named(f).is_some_and(FolderFormat::streams) && path.is_dir()))
}

/// Whether the head of `file` is what `accepts` takes, as text.
fn accepts(file: &Path, accepts: fn(&str) -> bool) -> bool {
    accepts(&crate::load::lines::head_text(&super::listing::head(file)))
}
