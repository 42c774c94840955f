//! Converting any log to a vantage Parquet v2 dataset (native, `vantage convert`), whole or while
//! the log grows: the log is read through the one door (`super::path`) or piece by piece
//! (`super::live`), and written with [`super::dataset::DatasetOut`].

use std::path::Path;

use crate::load::formats::vantage_v2::Manifest;
use crate::load::{LoadError, LoadReport};
use crate::model::Run;

use super::dataset::{Dataset, DatasetOut};

/// What a conversion wrote.
pub struct Converted {
    /// The format read.
    pub format: String,
    /// The manifest written.
    pub manifest: Manifest,
    /// How many pieces the log was read in.
    pub pieces: usize,
}

/// Reads `input` (any format, a followed directory, another v2 dataset) and writes it as a v2
/// dataset at `out`, a piece of about `piece` bytes of memory at a time where the format is read
/// as a stream (JSON lines, compressed JSON lines, verl and TRL directories, v2 datasets:
/// partition by partition); other formats are read whole, within the memory budget.
pub fn convert(
    input: &Path,
    out: &Path,
    options: &super::OpenOptions,
    format: Option<&str>,
    piece: usize,
    report: &mut LoadReport,
) -> anyhow::Result<Converted> {
    report.budget = options.memory_budget;
    let mut output = DatasetOut::create(out)?;
    let mut pieces = 0usize;
    let mut format_name = String::new();
    let mut write = |run: Run, report: &mut LoadReport| -> Result<(), LoadError> {
        format_name.clone_from(&run.meta.format);
        pieces += 1;
        output.add(run, &options.outcomes, report)
    };
    let name = input.display().to_string();
    report.file.clone_from(&name);
    if crate::source::listing::is_v2_dataset(input) {
        let dataset = Dataset::open(input)?;
        for partition in &dataset.manifest.partitions {
            let run = dataset.load_partitions(&[partition], report)?;
            write(run, report)?;
        }
    } else {
        let mut scratch = LoadReport::with_budget(&name, report.budget);
        let live = {
            let mut each = |run: Run| write(run, &mut scratch);
            let mut segments = crate::source::live::Segments { bytes: piece, each: &mut each, first_alone: false };
            match open_stream(input, format, report, &mut segments)? {
                Some(mut live) => {
                    live.read_segments(segments_again(&mut segments))?;
                    Some(live)
                }
                None => None,
            }
        };
        // What joining `--outcomes` to the pieces found.
        let joined = scratch.warnings;
        if let Some(live) = live {
            match live.finish(report) {
                Ok(run) => write(run, report)?,
                // The last cut fell at the end of the log: nothing was left for a last piece.
                Err(err) if pieces > 0 && err.is_nothing_loadable() => {}
                Err(err) => return Err(err.into()),
            }
        } else {
            let run = crate::source::path::load_path(input, format, report)?;
            write(run, report)?;
        }
        for warning in joined {
            report.warn(warning);
        }
    }
    let manifest = output.finish().map_err(|e| anyhow::anyhow!("could not write {}: {e}", out.display()))?;
    Ok(Converted { format: format_name, manifest, pieces })
}

/// A second borrow of the same segments for [`crate::source::live::Live::read_segments`].
fn segments_again<'a>(segments: &'a mut crate::source::live::Segments<'_>) -> crate::source::live::Segments<'a> {
    crate::source::live::Segments {
        bytes: segments.bytes,
        each: &mut *segments.each,
        first_alone: segments.first_alone,
    }
}

/// The log as a stream read piece by piece, where its format is read that way (a compressed
/// file is read here, handing its pieces to `segments`).
fn open_stream(
    input: &Path,
    format: Option<&str>,
    report: &LoadReport,
    segments: &mut crate::source::live::Segments<'_>,
) -> Result<Option<crate::source::live::Live>, LoadError> {
    if !crate::source::folders::reads_as_stream(input, format) {
        return Ok(None);
    }
    crate::source::live::Live::open_segmented(input, format, report.clone(), segments)
}

/// How a followed conversion goes.
pub struct Following<'a> {
    /// About how many bytes of the log are read (and written as parts) at a time.
    pub piece: usize,
    /// Stop when nothing arrived for this long (never when `None`).
    pub until_idle: Option<std::time::Duration>,
    /// Called once, when the log as it was at the start is converted (the manifest is replaced
    /// after each piece before then, so a reader sees the first steps at once).
    pub caught_up: &'a mut dyn FnMut(),
}

/// Converts a log that is still being written, as `vantage convert LOG RUN_DIR/ --follow` does:
/// reads what it has (in pieces, each written as new parts under a new manifest at once), then
/// looks every second for what it gained, writes that as new parts and replaces the manifest;
/// stops when nothing arrived for `until_idle` (never when `None`). A log that was truncated or
/// replaced while followed stops it with an error (its rows would be written twice).
pub fn follow(
    input: &Path,
    out: &Path,
    options: &super::OpenOptions,
    format: Option<&str>,
    following: Following<'_>,
    report: &mut LoadReport,
) -> anyhow::Result<Manifest> {
    let Following { piece, until_idle, caught_up } = following;
    report.budget = options.memory_budget;
    let mut output = DatasetOut::create_growing(out)?;
    let name = input.display().to_string();
    report.file.clone_from(&name);
    // What joining `--outcomes` to the pieces read first found.
    let mut scratch = LoadReport::with_budget(&name, report.budget);
    let mut live = {
        let mut each = |run: Run| {
            output.add(run, &options.outcomes, &mut scratch)?;
            output.publish().map(drop).map_err(LoadError::from)
        };
        let mut segments = crate::source::live::Segments { bytes: piece, each: &mut each, first_alone: true };
        let Some(mut live) = open_stream(input, format, report, &mut segments)? else {
            anyhow::bail!("{name}: only a JSON-lines log or a verl or TRL directory can be followed");
        };
        if !live.can_follow() {
            anyhow::bail!("{name}: a compressed log cannot be followed");
        }
        live.follow();
        live.read_segments(segments_again(&mut segments))?;
        live
    };
    for warning in std::mem::take(&mut scratch.warnings) {
        report.warn(warning);
    }
    output.add(live.take_segment(), &options.outcomes, report)?;
    output.publish()?;
    caught_up();
    let mut idle_since = std::time::Instant::now();
    while until_idle.is_none_or(|idle| idle_since.elapsed() < idle) {
        std::thread::sleep(std::time::Duration::from_millis(500));
        let arrived = live.poll()?;
        if !live.notices.is_empty() {
            anyhow::bail!("{}; stopped (what was written stays)", live.notices.join("; "));
        }
        if arrived {
            output.add(live.take_segment(), &options.outcomes, report)?;
            output.publish()?;
            idle_since = std::time::Instant::now();
        }
    }
    // Idle: the log is read to its end, an unterminated last line as its last record.
    match live.finish(report) {
        Ok(run) => output.add(run, &options.outcomes, report)?,
        Err(err) if err.is_nothing_loadable() && output.trajectories > 0 => {}
        Err(err) => return Err(err.into()),
    }
    Ok(output.finish()?)
}
