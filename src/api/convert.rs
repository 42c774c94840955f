//! `vantage convert LOG OUT`: a log in any format written as a vantage Parquet v2 dataset (a
//! stream, in bounded memory), as vantage JSONL or as vantage Parquet v1 (docs/FORMAT.md); also
//! the Python package's `vantage.convert`.

use std::path::{Path, PathBuf};

use super::load_path;
use crate::load::LoadReport;
use crate::model::Run;
use crate::source::OpenOptions;

/// Read a log in any supported format and write it as a vantage Parquet v2 dataset (OUT a new
/// directory: one partition per training step, written as a stream in bounded memory), as
/// vantage JSONL (OUT ends in `.jsonl`) or as vantage Parquet v1 (OUT ends in `.parquet`);
/// docs/FORMAT.md.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The log to read (a file, a verl or TRL directory, a v2 dataset).
    pub file: PathBuf,
    /// Where to write (never the input, nor inside an input directory).
    pub out: PathBuf,
    /// Read as this format instead of detecting it (see `vantage formats`).
    #[arg(long)]
    pub format: Option<String>,
    /// v2: the memory a piece of the log may hold before it is written (`256M`, `64k`).
    #[arg(long, value_name = "SIZE", value_parser = parse_piece)]
    pub piece: Option<usize>,
    /// v2: follow a log that is still being written (a JSONL file, a verl or TRL directory):
    /// what it gains is written as it comes and the manifest replaced, until interrupted.
    #[arg(long)]
    pub follow: bool,
    /// With --follow: stop once nothing arrived for this many seconds.
    #[arg(long, value_name = "SECS", requires = "follow")]
    pub until_idle: Option<f64>,
}

impl Args {
    /// Converts as the arguments say; the line saying what was written.
    pub fn run(&self, options: &OpenOptions) -> anyhow::Result<String> {
        let format = self.format.as_deref();
        if self.follow {
            follow_convert(&self.file, &self.out, options, format, self.piece, self.until_idle)
        } else {
            convert(&self.file, &self.out, options, format, self.piece)
        }
    }
}

/// A piece size of at least 4 kB.
fn parse_piece(text: &str) -> Result<usize, String> {
    match crate::load::budget::parse_size(text) {
        Some(bytes) if bytes >= 4096 => usize::try_from(bytes).map_err(|e| e.to_string()),
        _ => Err(format!("{text:?} is not a size of at least 4k (e.g. 256M)")),
    }
}

/// An error when `out` is the input `file` (through any link) or inside an input directory.
pub fn refuse_input(file: &Path, out: &Path) -> anyhow::Result<()> {
    let target = out.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new(".")).canonicalize();
    let target = target.map(|dir| dir.join(out.file_name().unwrap_or_default()));
    if let (Ok(input), Ok(target)) = (file.canonicalize(), target)
        && (target == input || target.starts_with(&input))
    {
        anyhow::bail!("--out {} is (inside) the input; vantage never writes to an input", out.display());
    }
    Ok(())
}

/// Reads `file` and writes it to `out` as its name says (see `Command::Convert`); one line saying
/// what was written.
pub fn convert(
    file: &Path,
    out: &Path,
    options: &OpenOptions,
    format: Option<&str>,
    piece: Option<usize>,
) -> anyhow::Result<String> {
    refuse_input(file, out)?;
    let extension = out.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase);
    if !matches!(extension.as_deref(), Some("parquet" | "jsonl" | "json")) {
        return convert_to_dataset(file, out, options, format, piece);
    }
    let parquet = extension.as_deref() == Some("parquet");
    let mut report = LoadReport::new(&file.display().to_string());
    let run = load_path(file, options, format, &mut report).map_err(|e| anyhow::anyhow!("{}", e.located()))?;
    for warning in report.located() {
        eprintln!("{warning}");
    }
    let mut run = run;
    // Keep where it came from and how it was read: the header's metadata carries it.
    crate::source::joined::mark_converted(&mut run);
    let bytes = if parquet {
        parquet_bytes(&run)?
    } else {
        crate::load::formats::vantage_jsonl::write::to_jsonl(&run).into_bytes()
    };
    crate::source::disk::write_atomically(out, &bytes)
        .map_err(|e| anyhow::anyhow!("could not write {}: {e}", out.display()))?;
    Ok(format!(
        "{} ({}): {} groups, {} trajectories, {} steps -> {}",
        file.display(),
        run.meta.format,
        run.groups.len(),
        run.trajectories.len(),
        run.num_path_steps(),
        out.display()
    ))
}

/// What a conversion to a v2 dataset gives: its warnings printed, a load error located.
#[cfg(feature = "parquet")]
fn reported<T>(result: anyhow::Result<T>, report: &LoadReport) -> anyhow::Result<T> {
    for warning in report.located() {
        eprintln!("{warning}");
    }
    result.map_err(|e| match e.downcast_ref::<crate::load::LoadError>() {
        Some(load) => anyhow::anyhow!("{}", load.located()),
        None => e,
    })
}

/// `vantage convert LOG RUN_DIR/`: a v2 dataset, written as a stream.
#[cfg(feature = "parquet")]
fn convert_to_dataset(
    file: &Path,
    out: &Path,
    options: &OpenOptions,
    format: Option<&str>,
    piece: Option<usize>,
) -> anyhow::Result<String> {
    let mut report = LoadReport::new(&file.display().to_string());
    let piece = piece.unwrap_or(crate::source::dataset::DEFAULT_PIECE);
    let converted = crate::source::convert::convert(file, out, options, format, piece, &mut report);
    let converted = reported(converted, &report)?;
    let m = &converted.manifest;
    Ok(format!(
        "{} ({}): {} training-step partitions, {} groups, {} trajectories, {} step rows, read in {} piece(s) -> {}/",
        file.display(),
        converted.format,
        m.partitions.len(),
        m.total(|p| p.groups),
        m.total(|p| p.trajectories),
        m.total(|p| p.steps),
        converted.pieces,
        out.display()
    ))
}

/// `vantage convert LOG RUN_DIR/ --follow`.
#[cfg(feature = "parquet")]
fn follow_convert(
    file: &Path,
    out: &Path,
    options: &OpenOptions,
    format: Option<&str>,
    piece: Option<usize>,
    until_idle: Option<f64>,
) -> anyhow::Result<String> {
    refuse_input(file, out)?;
    let mut report = LoadReport::new(&file.display().to_string());
    let idle = until_idle.map(|s| std::time::Duration::from_secs_f64(s.max(0.0)));
    let piece = piece.unwrap_or(crate::source::dataset::DEFAULT_PIECE);
    let following = crate::source::convert::Following { piece, until_idle: idle, caught_up: &mut || {} };
    let manifest = crate::source::convert::follow(file, out, options, format, following, &mut report);
    let m = reported(manifest, &report)?;
    Ok(format!(
        "{}: followed until idle; {} training-step partitions, {} trajectories -> {}/",
        file.display(),
        m.partitions.len(),
        m.total(|p| p.trajectories),
        out.display()
    ))
}

#[cfg(not(feature = "parquet"))]
fn follow_convert(
    _: &Path,
    out: &Path,
    options: &OpenOptions,
    _: Option<&str>,
    _: Option<usize>,
    _: Option<f64>,
) -> anyhow::Result<String> {
    convert_to_dataset(Path::new(""), out, options, None, None)
}

#[cfg(not(feature = "parquet"))]
fn convert_to_dataset(
    _: &Path,
    out: &Path,
    _: &OpenOptions,
    _: Option<&str>,
    _: Option<usize>,
) -> anyhow::Result<String> {
    anyhow::bail!(
        "{}: a vantage Parquet v2 dataset needs the `parquet` feature; name a .jsonl file to write vantage JSONL",
        out.display()
    )
}

/// The run as vantage Parquet (needs the `parquet` feature).
fn parquet_bytes(run: &Run) -> anyhow::Result<Vec<u8>> {
    #[cfg(feature = "parquet")]
    return crate::load::formats::vantage_parquet::to_parquet(run).map_err(|e| anyhow::anyhow!("Parquet: {e}"));
    #[cfg(not(feature = "parquet"))]
    {
        let _: &Run = run;
        anyhow::bail!("this build has no Parquet support (build with the `parquet` feature)")
    }
}
