//! vantage Parquet v2 datasets on disk (native, `parquet` feature): opening one by its manifest
//! and reading only the partitions asked for, and writing one from any log as a stream, one piece
//! of the log at a time (`vantage convert LOG RUN_DIR/`). The format itself, and everything that
//! does not touch the filesystem, is `crate::load::formats::vantage_v2`.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::load::formats::outcomes::Outcomes;
use crate::load::formats::vantage_v2::read::{DatasetReader, PartBytes};
use crate::load::formats::vantage_v2::write::DatasetWriter;
use crate::load::formats::vantage_v2::{MANIFEST, Manifest, Partition};
use crate::load::{LoadError, LoadReport};
use crate::model::Run;

/// The memory a piece of a converted stream holds before it is written (`--piece`): with the
/// buffers of writing it, a conversion stays within about three times this.
pub const DEFAULT_PIECE: usize = 256 << 20;

pub use crate::load::formats::vantage_v2::manifest::DEFAULT_WINDOW;

/// Opens a dataset as the app and `vantage check` do: the training steps `steps` (`--steps`, the
/// app's "Open steps"), else all of them when their files fit in [`DEFAULT_WINDOW`], else the
/// latest that do (the run's notes say which, and how to choose others).
pub fn open_default(dir: &Path, steps: Option<(i64, i64)>, report: &mut LoadReport) -> Result<Run, LoadError> {
    let dataset = Dataset::open(dir)?;
    let size = |p: &Partition| if p.bytes > 0 { p.bytes } else { dataset.partition_bytes(p) };
    let (range, note) = dataset.manifest.opening_range(steps, size);
    let mut run = dataset.load(range, report)?;
    run.meta.notes.extend(note.map(str::to_owned));
    Ok(run)
}

/// A v2 dataset opened by its manifest; files are read when a partition is asked for, and each
/// read is recorded ([`Dataset::files_read`]).
pub struct Dataset {
    /// The dataset's root.
    pub dir: PathBuf,
    /// Its manifest.
    pub manifest: Manifest,
    reads: std::sync::Arc<Mutex<Vec<String>>>,
}

/// The texts a run read from a dataset left in its files (`DatasetReader::leave_texts`): a
/// text is read when it is asked for, by reading its column of its file (the last few columns
/// read are kept).
#[derive(Debug)]
struct ParquetTexts {
    dir: PathBuf,
    files: std::sync::OnceLock<Vec<String>>,
    /// The columns read last, newest last.
    columns: Mutex<Vec<KeptColumn>>,
    reads: std::sync::Arc<Mutex<Vec<String>>>,
}

/// A column [`ParquetTexts`] keeps: (file, column) and the column.
type KeptColumn = ((usize, usize), std::sync::Arc<crate::load::parquet_file::Column>);

/// How many columns [`ParquetTexts`] keeps.
const KEPT_COLUMNS: usize = 12;

impl ParquetTexts {
    fn column(&self, file: usize, column: usize) -> Option<std::sync::Arc<crate::load::parquet_file::Column>> {
        let mut kept = self.columns.lock().ok()?;
        if let Some(i) = kept.iter().position(|(k, _)| *k == (file, column)) {
            let entry = kept.remove(i);
            let texts = std::sync::Arc::clone(&entry.1);
            kept.push(entry);
            return Some(texts);
        }
        let relative = self.files.get()?.get(file)?;
        let name = crate::load::formats::vantage_v2::read::TEXT_COLUMNS.get(column)?;
        let texts = std::sync::Arc::new(read_text_column(&self.dir.join(relative), name).ok()?);
        if let Ok(mut reads) = self.reads.lock() {
            reads.push(format!("{relative}#{name}"));
        }
        if kept.len() >= KEPT_COLUMNS {
            kept.remove(0);
        }
        kept.push(((file, column), std::sync::Arc::clone(&texts)));
        Some(texts)
    }
}

/// One text column of a Parquet file: its footer and then only that column's chunks are read.
fn read_text_column(path: &Path, name: &str) -> Result<crate::load::parquet_file::Column, String> {
    use std::io::{Read as _, Seek as _};
    let mut file = std::fs::File::open(path).map_err(|e| e.to_string())?;
    let len = file.metadata().map_err(|e| e.to_string())?.len();
    let mut read_at = |start: u64, n: u64| -> Result<(u64, Vec<u8>), String> {
        file.seek(std::io::SeekFrom::Start(start)).map_err(|e| e.to_string())?;
        let mut bytes = Vec::new();
        (&mut file).take(n).read_to_end(&mut bytes).map_err(|e| e.to_string())?;
        Ok((start, bytes))
    };
    let tail = len.saturating_sub(crate::load::formats::vantage_v2::read::TAIL);
    let mut bytes = crate::load::formats::vantage_v2::read::FileBytes { len, pieces: vec![read_at(tail, len - tail)?] };
    let (start, footer) = crate::load::formats::vantage_v2::read::footer_range(&bytes)?;
    if start < tail {
        bytes.pieces.push(read_at(start, footer)?);
    }
    let meta = bytes.meta()?;
    for (start, n) in crate::load::formats::vantage_v2::read::column_ranges(&meta, &[name]) {
        bytes.pieces.push(read_at(start, n)?);
    }
    crate::load::formats::vantage_v2::read::read_column(&meta, &bytes, name)
}

impl crate::model::TextSource for ParquetTexts {
    fn read_at(&self, key: u64, _len: usize) -> Option<std::borrow::Cow<'_, [u8]>> {
        let (file, column, row) = crate::load::formats::vantage_v2::read::split_text_key(key);
        let texts = self.column(file, column)?;
        Some(std::borrow::Cow::Owned(crate::load::formats::vantage_v2::read::json_inside(texts.str(row)?)))
    }
}

impl Dataset {
    /// Reads the manifest of the dataset at `dir`.
    pub fn open(dir: &Path) -> Result<Self, LoadError> {
        let name = dir.display().to_string();
        let path = dir.join(MANIFEST);
        let text =
            std::fs::read_to_string(&path).map_err(|e| LoadError::from(e).with_path(&path.display().to_string()))?;
        let manifest = Manifest::parse(&text)
            .map_err(|reason| LoadError::Incompatible { format: "vantage Parquet v2", reason }.with_path(&name))?;
        Ok(Self { dir: dir.to_owned(), manifest, reads: std::sync::Arc::new(Mutex::new(Vec::new())) })
    }

    /// The bytes on disk of a partition's files.
    pub fn partition_bytes(&self, partition: &Partition) -> u64 {
        let mut bytes = 0;
        for part in 0..partition.parts {
            for table in crate::load::formats::vantage_v2::manifest::TABLES {
                bytes += std::fs::metadata(self.dir.join(partition.file(table, part))).map_or(0, |m| m.len());
            }
        }
        bytes
    }

    /// The latest training steps whose partitions' files hold at most `bytes` (at least the last
    /// partition), or `None` when the whole dataset does: what the app and `vantage check` open
    /// when no `--steps` is given. A partition's size is the manifest's, or what is on disk
    /// when the manifest did not record it.
    pub fn fitting_range(&self, bytes: u64) -> Option<(i64, i64)> {
        self.manifest.fitting_range(bytes, |p| if p.bytes > 0 { p.bytes } else { self.partition_bytes(p) })
    }

    /// The relative paths of the files read so far, in order.
    pub fn files_read(&self) -> Vec<String> {
        self.reads.lock().map(|r| r.clone()).unwrap_or_default()
    }

    fn read(&self, relative: &str) -> Result<Vec<u8>, LoadError> {
        let path = self.dir.join(relative);
        let bytes = std::fs::read(&path).map_err(|e| LoadError::from(e).with_path(&path.display().to_string()))?;
        if let Ok(mut reads) = self.reads.lock() {
            reads.push(relative.to_owned());
        }
        Ok(bytes)
    }

    /// The files of one part of a partition.
    fn part(&self, partition: &Partition, part: u32) -> Result<PartBytes, LoadError> {
        let tokens = partition.file("tokens", part);
        Ok(PartBytes {
            groups: self.read(&partition.file("groups", part))?.into(),
            trajectories: self.read(&partition.file("trajectories", part))?.into(),
            steps: self.read(&partition.file("steps", part))?.into(),
            tokens: if self.dir.join(&tokens).is_file() { Some(self.read(&tokens)?.into()) } else { None },
        })
    }

    /// The run of the partitions whose training step is in `range` (every partition when
    /// `None`), reading only their files.
    pub fn load(&self, range: Option<(i64, i64)>, report: &mut LoadReport) -> Result<Run, LoadError> {
        self.load_texts_left(range, true, report)
    }

    /// [`Self::load`], with the texts of steps and groups left in the files (`lazy`: read when
    /// shown, so the run holds 12 bytes a text) or copied into the run.
    pub fn load_texts_left(
        &self,
        range: Option<(i64, i64)>,
        lazy: bool,
        report: &mut LoadReport,
    ) -> Result<Run, LoadError> {
        let partitions =
            crate::load::formats::vantage_v2::read::select(&self.manifest, range, &self.dir.display().to_string())?;
        let mut run = self.read_partitions(&partitions, lazy, report)?.0;
        if partitions.len() < self.manifest.partitions.len() {
            crate::load::formats::vantage_v2::read::note_window(&mut run, &self.manifest, &partitions);
        }
        Ok(run)
    }

    /// The run of the given partitions.
    pub fn load_partitions(&self, partitions: &[&Partition], report: &mut LoadReport) -> Result<Run, LoadError> {
        Ok(self.load_with_ids(partitions, report)?.0)
    }

    /// [`Self::load_partitions`], with the dataset's id of each node of the run.
    pub fn load_with_ids(
        &self,
        partitions: &[&Partition],
        report: &mut LoadReport,
    ) -> Result<(Run, Vec<u64>), LoadError> {
        self.read_partitions(partitions, false, report)
    }

    fn read_partitions(
        &self,
        partitions: &[&Partition],
        lazy: bool,
        report: &mut LoadReport,
    ) -> Result<(Run, Vec<u64>), LoadError> {
        let name = self.dir.display().to_string();
        report.file.clone_from(&name);
        let mut reader = DatasetReader::new(&name, &self.manifest);
        let texts = lazy.then(|| {
            std::sync::Arc::new(ParquetTexts {
                dir: self.dir.clone(),
                files: std::sync::OnceLock::new(),
                columns: Mutex::new(Vec::new()),
                reads: std::sync::Arc::clone(&self.reads),
            })
        });
        if let Some(texts) = &texts {
            reader.leave_texts(std::sync::Arc::clone(texts) as std::sync::Arc<dyn crate::model::TextSource>);
        }
        for partition in partitions {
            for part in 0..partition.parts {
                let files = self.part(partition, part)?;
                reader.add_part(partition, part, &files, report).map_err(|e| e.with_path(&name))?;
            }
        }
        if let Some(texts) = &texts {
            let _: Result<(), Vec<String>> = texts.files.set(reader.text_files());
        }
        reader.finish_with_ids(report).map_err(|e| e.with_path(&name))
    }
}

/// A dataset being written: into a hidden directory beside `out`, renamed to `out` when the
/// manifest is written, so an interrupted conversion never leaves a dataset that looks finished.
pub struct DatasetOut {
    out: PathBuf,
    /// Where the files go: a hidden directory beside `out`, or `out` itself for a dataset that
    /// grows while its log is followed (its manifest is then replaced after each look).
    temporary: PathBuf,
    growing: bool,
    writer: DatasetWriter,
    /// Trajectories written so far.
    pub trajectories: u64,
}

impl DatasetOut {
    /// Starts writing a dataset at `out`, which must not exist (or be an empty directory).
    pub fn create(out: &Path) -> std::io::Result<Self> {
        if out.exists() && std::fs::read_dir(out).map_or(true, |mut d| d.next().is_some()) {
            return Err(std::io::Error::new(
                std::io::ErrorKind::AlreadyExists,
                format!("{} exists and is not an empty directory; choose a new one", out.display()),
            ));
        }
        let name = out.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "run".to_owned());
        let temporary = out.with_file_name(format!(".{name}.{}.partial", std::process::id()));
        if temporary.exists() {
            std::fs::remove_dir_all(&temporary)?;
        }
        std::fs::create_dir_all(&temporary)?;
        Ok(Self { out: out.to_owned(), temporary, growing: false, writer: DatasetWriter::new(), trajectories: 0 })
    }

    /// Starts a dataset at `out` that grows in place: readers see it once its first manifest is
    /// written, and each [`Self::publish`] replaces the manifest after the files it lists.
    pub fn create_growing(out: &Path) -> std::io::Result<Self> {
        let mut output = Self::create(out)?;
        std::fs::remove_dir_all(&output.temporary)?;
        std::fs::create_dir_all(out)?;
        output.temporary = out.to_owned();
        output.growing = true;
        Ok(output)
    }

    /// Writes the manifest of what is written so far (atomically: readers see the old one or the
    /// new one, and every file either lists is complete).
    pub fn publish(&self) -> std::io::Result<Manifest> {
        let manifest = self.writer.manifest();
        crate::source::disk::write_atomically(&self.temporary.join(MANIFEST), manifest.to_json().as_bytes())?;
        Ok(manifest)
    }

    /// Writes one piece of a converted run: `outcomes` (`--outcomes`) joined to it (what did not
    /// match is a warning in `report`), where it came from kept in its header.
    pub fn add(&mut self, mut run: Run, outcomes: &[Outcomes], report: &mut LoadReport) -> Result<(), LoadError> {
        crate::source::joined::join_outcomes(&mut run, outcomes, report);
        crate::source::joined::mark_converted(&mut run);
        self.write(&run).map_err(|e| LoadError::from(e).with_path(&self.out.display().to_string()))
    }

    /// Writes one piece of the run.
    pub fn write(&mut self, run: &Run) -> std::io::Result<()> {
        let temporary = &self.temporary;
        let mut sink = |file: crate::load::formats::vantage_v2::write::DatasetFile| -> Result<(), String> {
            let path = temporary.join(&file.path);
            if let Some(dir) = path.parent() {
                std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
            }
            std::fs::write(&path, &file.bytes).map_err(|e| format!("{}: {e}", path.display()))
        };
        self.writer.write(run, &mut sink).map_err(std::io::Error::other)?;
        self.trajectories += run.trajectories.len() as u64;
        Ok(())
    }

    /// Writes the manifest and moves the dataset into place.
    pub fn finish(self) -> std::io::Result<Manifest> {
        if self.growing {
            return self.publish();
        }
        let manifest = self.writer.manifest();
        std::fs::write(self.temporary.join(MANIFEST), manifest.to_json())?;
        if self.out.is_dir() {
            std::fs::remove_dir(&self.out)?;
        }
        std::fs::rename(&self.temporary, &self.out)?;
        Ok(manifest)
    }
}

impl Drop for DatasetOut {
    fn drop(&mut self) {
        // Only an unfinished one is still there (finish renamed it away); a growing one stays.
        if !self.growing && self.temporary.is_dir() {
            let _: std::io::Result<()> = std::fs::remove_dir_all(&self.temporary);
        }
    }
}
