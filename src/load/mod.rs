//! Loading: bytes in, [`Run`] out. One file per format; detection by content.
//!
//! Loaders never touch the filesystem: [`load_bytes`] takes the bytes and a display name; the
//! native-only `source::path::load_path` reads a file and calls it. A malformed record is skipped and
//! reported in the [`LoadReport`] as `FILE:LINE: FIELD: reason`; everything valid still loads.

/// Implements a [`Loader`]'s `load_bytes` and `load` with the `async fn(name, bytes, report)`
/// that reads the format, awaiting [`pace::pace`] between records.
macro_rules! paced {
    ($read:ident) => {
        fn load_bytes(
            &self,
            name: &str,
            bytes: &[u8],
            report: &mut $crate::load::LoadReport,
        ) -> Result<$crate::model::Run, $crate::load::LoadError> {
            $crate::load::pace::block_on($read(name, bytes, report))
        }

        fn load<'a>(
            &'a self,
            name: &'a str,
            bytes: &'a [u8],
            report: &'a mut $crate::load::LoadReport,
        ) -> $crate::load::pace::LoadFuture<'a, Result<$crate::model::Run, $crate::load::LoadError>> {
            Box::pin($read(name, bytes, report))
        }
    };
}

pub mod budget;
pub mod compressed;
mod error;
pub mod formats;
pub mod labels;
mod lenient;
pub mod lines;
pub mod pace;
pub mod parquet_file;
#[cfg(all(not(target_arch = "wasm32"), feature = "parquet"))]
mod parquet_guard;
mod records;
mod report;
pub(crate) mod sessions;
pub mod thrift;
pub mod tokenizer;
pub mod torch_pickle;
pub mod zip;

pub use error::LoadError;
pub use records::stable_hash;
pub use report::{LoadReport, MAX_WARNINGS, Progress};

use crate::model::Run;

/// A log format that can be read from bytes.
pub trait Loader: Sync {
    /// Short name used by `--format`.
    fn name(&self) -> &'static str;

    /// One line about the format, for help texts.
    fn description(&self) -> &'static str;

    /// Reads a run; [`LoadError::Incompatible`] means "not this format".
    fn load_bytes(&self, name: &str, bytes: &[u8], report: &mut LoadReport) -> Result<Run, LoadError>;

    /// The same as a future that awaits [`pace::pace`] between records, so a long load on the web
    /// gives the page its frames. Loaders of formats that get large override it (and implement
    /// `load_bytes` as `pace::block_on(self.load(…))`); the others read in one go.
    fn load<'a>(
        &'a self,
        name: &'a str,
        bytes: &'a [u8],
        report: &'a mut LoadReport,
    ) -> pace::LoadFuture<'a, Result<Run, LoadError>> {
        Box::pin(std::future::ready(self.load_bytes(name, bytes, report)))
    }

    /// A stream that reads the log piece by piece (`source::live` feeds it from the file), when
    /// `head` (the log's first lines, see [`lines::head_text`]) is of this format and the format
    /// is JSON lines; `None` otherwise (the file is read whole).
    fn lines(&self, _name: &str, _head: &str, _report: LoadReport) -> Option<Box<dyn lines::LineFeed>> {
        None
    }
}

/// The name of the first loader, in detection order, that reads a log of `head`'s format as JSON
/// lines (what [`line_feed`] would stream it with), `None` when none does.
pub fn lines_format(name: &str, head: &[u8]) -> Option<&'static str> {
    let text = lines::head_text(head);
    LOADERS.iter().find_map(|candidate| {
        let reads = if candidate.name() == formats::vantage_jsonl::VantageJsonl.name() {
            formats::vantage_jsonl::VantageStream::start(name, head, LoadReport::default()).is_ok()
        } else {
            candidate.lines(name, &text, LoadReport::default()).is_some()
        };
        reads.then(|| candidate.name())
    })
}

/// The stream of the first loader, in detection order, that reads a log of `head`'s format
/// piece by piece (or of `format`'s, when given); `None` when the log is read whole. An error
/// when the log is of such a format but cannot be read (a vantage header of another version).
pub fn line_feed(
    name: &str,
    head: &[u8],
    format: Option<&str>,
    report: &LoadReport,
) -> Result<Option<Box<dyn lines::LineFeed>>, LoadError> {
    let text = lines::head_text(head);
    let candidates: Vec<&dyn Loader> = match format {
        Some(format) => loader(format).into_iter().collect(),
        None => LOADERS.to_vec(),
    };
    for candidate in candidates {
        if candidate.name() == formats::vantage_jsonl::VantageJsonl.name() {
            match formats::vantage_jsonl::VantageStream::start(name, head, report.clone()) {
                Ok(stream) => return Ok(Some(Box::new(stream))),
                Err(err) if err.is_incompatible() => continue,
                Err(err) => return Err(err),
            }
        }
        if let Some(stream) = candidate.lines(name, &text, report.clone()) {
            return Ok(Some(stream));
        }
    }
    Ok(None)
}

pub use formats::LOADERS;

/// The loaders of Parquet files.
const PARQUET_LOADERS: [&str; 3] = ["vantage_parquet", "trl", "art"];

/// A run read file by file from a directory of whole files (TRL's `completions/`, an ART split
/// folder): each file added as it appears, the run so far shown between them.
pub trait FileRun: Send {
    /// Adds the rows of one file; `file` is its name without extension (a step number, for the
    /// formats that name files by step). [`LoadError::Incompatible`] when the bytes are not the
    /// format's (a file still being written).
    fn add_file(&mut self, bytes: &[u8], file: Option<&str>, report: &mut LoadReport) -> Result<(), LoadError>;
    /// The run so far.
    fn snapshot(&self, report: &LoadReport) -> crate::model::Run;
    /// The finished run; an error when nothing loaded.
    fn finish(self: Box<Self>, report: &LoadReport) -> Result<crate::model::Run, LoadError>;
    /// Approximate heap bytes of the run so far.
    fn heap_bytes(&self) -> usize;
    /// Hands on the run read since the last cut.
    fn take_segment(&mut self) -> crate::model::Run;
}

/// The loader named `name`.
pub fn loader(name: &str) -> Option<&'static dyn Loader> {
    LOADERS.iter().copied().find(|l| l.name() == name)
}

/// Reads a run from bytes, trying each loader until one accepts the content.
pub fn load_bytes(name: &str, bytes: &[u8], report: &mut LoadReport) -> Result<Run, LoadError> {
    pace::block_on(load_bytes_paced(name, bytes, report))
}

/// [`load_bytes`] as a future that gives the event loop back between records (see [`pace`]).
/// Gzip and zstd streams are decompressed first.
pub async fn load_bytes_paced(name: &str, bytes: &[u8], report: &mut LoadReport) -> Result<Run, LoadError> {
    if report.file.is_empty() {
        report.file = name.to_owned();
    }
    if let Some(kind) = compressed::Compression::of(bytes) {
        let inflated = compressed::inflate_all(kind, bytes, report.budget).map_err(|e| e.with_path(name))?;
        return Box::pin(load_bytes_paced(name, &inflated, report)).await;
    }
    // A Git LFS pointer stands where the file was not fetched: say so rather than list every format.
    if bytes.starts_with(b"version https://git-lfs.github.com/spec/") {
        return Err(LoadError::NothingLoadable {
            reason: "a Git LFS pointer, not the file's content (fetch it with `git lfs pull`)".to_owned(),
        }
        .with_path(name));
    }
    let mut declined = Vec::new();
    // A Parquet file: only the Parquet readers' reasons are worth reading.
    let parquet = bytes.starts_with(b"PAR1");
    for loader in LOADERS {
        match loader.load(name, bytes, report).await {
            Err(LoadError::Incompatible { reason, .. }) => {
                if !parquet || PARQUET_LOADERS.contains(&loader.name()) {
                    declined.push(format!("{}: {reason}", loader.name()));
                }
            }
            other => return other.map_err(|e| e.with_path(name)),
        }
    }
    let tried = match (parquet, declined.is_empty()) {
        (true, true) => "a Parquet file, and this build reads no Parquet (built without the `parquet` feature; \
                         the web build never reads it: convert it with `vantage convert`)"
            .to_owned(),
        (true, false) => {
            format!("a Parquet file no reader takes: damaged, or of another schema ({})", declined.join("; "))
        }
        (false, _) => declined.join("; "),
    };
    Err(LoadError::Unrecognised { tried }.with_path(name))
}

/// [`load_bytes_paced`] for bytes the run may keep: a vantage JSONL log leaves its texts in
/// `bytes` instead of copying them (see `model::TextArena`); other formats read as usual.
pub async fn load_shared_paced(
    name: &str,
    bytes: std::sync::Arc<[u8]>,
    report: &mut LoadReport,
) -> Result<Run, LoadError> {
    if report.file.is_empty() {
        report.file = name.to_owned();
    }
    if compressed::Compression::of(&bytes).is_none() {
        let head = &bytes[..formats::vantage_jsonl::next_cut(&bytes, 0, 1 << 16)];
        if formats::vantage_jsonl::VantageStream::start(name, head, LoadReport::default()).is_ok() {
            return formats::vantage_jsonl::load_shared_paced(name, bytes, report).await.map_err(|e| e.with_path(name));
        }
    }
    load_bytes_paced(name, &bytes, report).await
}

/// Finishes a run built by a reader outside `load` (a directory of files read natively): the
/// report's warnings on it, an error naming the first problem when nothing loaded.
pub fn finish_run(builder: crate::model::RunBuilder, report: &LoadReport, what: &str) -> Result<Run, LoadError> {
    records::finish(builder, report, what)
}

/// Reads a run from bytes with an explicit format.
pub fn load_bytes_as(format: &str, name: &str, bytes: &[u8], report: &mut LoadReport) -> Result<Run, LoadError> {
    if report.file.is_empty() {
        report.file = name.to_owned();
    }
    let Some(loader) = loader(format) else {
        let known = LOADERS.iter().map(|l| l.name()).collect::<Vec<_>>().join(", ");
        return Err(LoadError::Unrecognised { tried: format!("unknown format {format:?}; known: {known}") });
    };
    loader.load_bytes(name, bytes, report).map_err(|e| e.with_path(name))
}
