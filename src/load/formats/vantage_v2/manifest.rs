//! The manifest of a vantage Parquet v2 dataset (`manifest.json` at its root): the header, the
//! schema version, the distinct labels and names, and each partition with its counts. It is plain
//! JSON, written last (a dataset without one is unfinished), and is all a reader needs to list the
//! training steps of a run and their sizes before reading any Parquet.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The manifest's file name at the dataset's root.
pub const MANIFEST: &str = "manifest.json";
/// The `format` field of every manifest.
pub const FORMAT: &str = "vantage Parquet";
/// The schema version this build writes and reads.
pub const VERSION: u32 = 2;
/// The directory of the partition of groups without a training step (Hive's name for a null
/// partition value, which polars, pyarrow and Spark read as null).
pub const NULL_PARTITION: &str = "__HIVE_DEFAULT_PARTITION__";
/// The tables of a partition, each a file `<table>-<part>.parquet` in its directory.
pub const TABLES: [&str; 4] = ["groups", "trajectories", "steps", "tokens"];

/// What `manifest.json` holds.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    /// Always [`FORMAT`].
    pub format: String,
    /// The schema version ([`VERSION`]).
    pub version: u32,
    /// The run's header as vantage JSONL writes it (`vantage`, `name`, `meta`).
    pub header: serde_json::Value,
    /// Names of the step score columns (`score_<name>` in `steps`), sorted.
    pub scores: Vec<String>,
    /// Names of the outcome component columns (`component_<name>` in `trajectories`), sorted.
    pub components: Vec<String>,
    /// Token columns present in `tokens` (besides `trajectory`), sorted.
    pub token_columns: Vec<String>,
    /// Distinct labels by column (`kind`, `role`, `finish`), sorted.
    pub labels: BTreeMap<String, Vec<String>>,
    /// The partitions, by training step ascending, the null partition last.
    pub partitions: Vec<Partition>,
}

/// One partition: the groups of one training step.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Partition {
    /// The training step (`None`: groups that logged none).
    pub train_step: Option<i64>,
    /// Its directory under the dataset's root (`train_step=17`).
    pub dir: String,
    /// Number of parts: each table has files `<table>-00000.parquet` … (a converter writing a
    /// stream writes one part per piece of the stream that had rows of this partition).
    pub parts: u32,
    /// Rows of each table.
    pub groups: u64,
    /// Trajectories.
    pub trajectories: u64,
    /// Step rows (nodes: a tree's shared prefix is one row).
    pub steps: u64,
    /// Tokens (the summed length of the token arrays).
    pub tokens: u64,
    /// Trajectories with a logged outcome reward, and the sum of those rewards.
    pub rewarded: u64,
    /// Sum of the logged outcome rewards.
    pub reward_sum: f64,
    /// Trajectories with a success flag, and how many of them succeeded.
    pub with_success: u64,
    /// Successful trajectories.
    pub successes: u64,
    /// Bytes of its files (what opening it reads at most); 0 in a manifest that did not record
    /// them.
    #[serde(default)]
    pub bytes: u64,
}

impl Partition {
    /// The directory name of a training step's partition.
    pub fn dir_of(train_step: Option<i64>) -> String {
        match train_step {
            Some(step) => format!("train_step={step}"),
            None => format!("train_step={NULL_PARTITION}"),
        }
    }

    /// The relative path of one table's file of one part.
    pub fn file(&self, table: &str, part: u32) -> String {
        format!("{}/{table}-{part:05}.parquet", self.dir)
    }

    /// Mean logged outcome reward (`None` when none was logged).
    pub fn reward_mean(&self) -> Option<f64> {
        (self.rewarded > 0).then(|| self.reward_sum / self.rewarded as f64)
    }

    /// Share of successes among the trajectories with a success flag (`None` when none has one).
    pub fn success_rate(&self) -> Option<f64> {
        (self.with_success > 0).then(|| self.successes as f64 / self.with_success as f64)
    }
}

/// The first and last training step of `partitions` (`None` when none has one).
pub fn step_span<'a>(partitions: impl IntoIterator<Item = &'a Partition>) -> Option<(i64, i64)> {
    partitions.into_iter().filter_map(|p| p.train_step).fold(None, |span, step| match span {
        None => Some((step, step)),
        Some((lo, hi)) => Some((lo.min(step), hi.max(step))),
    })
}

/// The bytes of Parquet the training steps opened by default may have on disk (the latest steps
/// that fit; `--steps`, the summary's "Open steps" or a range in the web build choose others),
/// natively and on the web: reading and decoding them takes about a second on the development
/// machine, and with their texts left in the files the run holds about half as many bytes
/// (docs/PERFORMANCE.md).
pub const DEFAULT_WINDOW: u64 = 80 << 20;

/// The note of a run opened with its latest training steps because the whole did not fit.
pub const WINDOW_NOTE: &str = "the whole run is larger than what opens at once: the latest training steps are open; choose others with --steps A..B";

impl Manifest {
    /// Parses `manifest.json`, checking the format and the version.
    pub fn parse(text: &str) -> Result<Self, String> {
        let manifest: Self = serde_json::from_str(text).map_err(|e| format!("{MANIFEST}: {e}"))?;
        if manifest.format != FORMAT {
            return Err(format!("{MANIFEST}: format is {:?}, not {FORMAT:?}", manifest.format));
        }
        if manifest.version != VERSION {
            return Err(format!(
                "{MANIFEST}: schema version {} (this build reads version {VERSION}; a newer vantage may read it)",
                manifest.version
            ));
        }
        for partition in &manifest.partitions {
            let expected = Partition::dir_of(partition.train_step);
            if partition.dir != expected {
                return Err(format!("{MANIFEST}: partition {:?} should be in {expected:?}", partition.dir));
            }
        }
        Ok(manifest)
    }

    /// The manifest as pretty JSON.
    pub fn to_json(&self) -> String {
        let mut json = serde_json::to_string_pretty(self).unwrap_or_default();
        json.push('\n');
        json
    }

    /// The partitions whose training step lies in `range` (all when `None`; the null partition
    /// only then).
    pub fn select(&self, range: Option<(i64, i64)>) -> Vec<&Partition> {
        self.partitions
            .iter()
            .filter(|p| match (range, p.train_step) {
                (None, _) => true,
                (Some((lo, hi)), Some(step)) => lo <= step && step <= hi,
                (Some(_), None) => false,
            })
            .collect()
    }

    /// The latest training steps whose partitions hold at most `bytes` by `size` (at least the
    /// last partition), or `None` when the whole dataset does: what opens when no steps are
    /// chosen. Partitions are measured only until the answer is known.
    pub fn fitting_range(&self, bytes: u64, size: impl Fn(&Partition) -> u64) -> Option<(i64, i64)> {
        let mut whole = 0u64;
        let fits = self.partitions.iter().all(|p| {
            whole += size(p);
            whole <= bytes
        });
        if fits {
            return None;
        }
        let (mut total, mut first, mut last) = (0u64, None, None);
        for partition in self.partitions.iter().rev().filter(|p| p.train_step.is_some()) {
            let size = size(partition);
            if last.is_some() && total + size > bytes {
                break;
            }
            total += size;
            last = last.or(partition.train_step);
            first = partition.train_step;
        }
        Some((first?, last?))
    }

    /// The training steps a dataset opens with, natively and on the web alike: `steps` when
    /// chosen (`--steps`, "Open steps"), else [`Self::fitting_range`] of [`DEFAULT_WINDOW`]; and
    /// the note a run opened with fewer steps than it has gets when none were chosen.
    pub fn opening_range(
        &self,
        steps: Option<(i64, i64)>,
        size: impl Fn(&Partition) -> u64,
    ) -> (Option<(i64, i64)>, Option<&'static str>) {
        if steps.is_some() {
            return (steps, None);
        }
        match self.fitting_range(DEFAULT_WINDOW, size) {
            Some(range) => (Some(range), Some(WINDOW_NOTE)),
            None => (None, None),
        }
    }

    /// Total rows of a table over all partitions.
    pub fn total(&self, count: impl Fn(&Partition) -> u64) -> u64 {
        self.partitions.iter().map(count).sum()
    }
}

/// Parses a `--partition` or `--steps` selection: `train_step=K`, `K`, `A..B` or `A..=B`
/// (inclusive), `A..` (from A on) or `..B` (up to B), as (low, high).
pub fn parse_range(text: &str) -> Result<(i64, i64), String> {
    let body = text.trim().strip_prefix("train_step=").unwrap_or(text.trim());
    let number = |s: &str| s.trim().parse::<i64>().map_err(|e| format!("{text:?}: {s:?} is not a training step ({e})"));
    let (lo, hi) = if let Some((lo, hi)) = body.split_once("..") {
        let hi = hi.strip_prefix('=').unwrap_or(hi);
        let lo = if lo.trim().is_empty() { i64::MIN } else { number(lo)? };
        (lo, if hi.trim().is_empty() { i64::MAX } else { number(hi)? })
    } else {
        let step = number(body)?;
        (step, step)
    };
    if lo > hi {
        return Err(format!("{text:?}: the range is empty ({lo} > {hi})"));
    }
    Ok((lo, hi))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_and_directories() {
        assert_eq!(parse_range("train_step=17"), Ok((17, 17)));
        assert_eq!(parse_range("3..9"), Ok((3, 9)));
        assert_eq!(parse_range("3..=9"), Ok((3, 9)));
        assert_eq!(parse_range("3.."), Ok((3, i64::MAX)));
        assert_eq!(parse_range("..9"), Ok((i64::MIN, 9)));
        assert!(parse_range("9..3").is_err());
        assert!(parse_range("x").is_err());
        assert_eq!(Partition::dir_of(Some(-2)), "train_step=-2");
        assert_eq!(Partition::dir_of(None), "train_step=__HIVE_DEFAULT_PARTITION__");
        let p = Partition { dir: Partition::dir_of(Some(4)), train_step: Some(4), ..Partition::default() };
        assert_eq!(p.file("steps", 3), "train_step=4/steps-00003.parquet");
        let bad = Manifest { format: FORMAT.into(), version: 3, ..Manifest::default() };
        assert!(Manifest::parse(&bad.to_json()).unwrap_err().contains("version 3"));
    }
}
