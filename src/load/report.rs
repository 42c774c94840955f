//! The load reporter: loaders record warnings here and keep going.

use crate::model::Warning;

/// Warnings and counts collected while loading one file.
#[derive(Clone, Debug)]
pub struct LoadReport {
    /// The file's display name, used in every located message.
    pub file: String,
    /// Warnings in file order: the first [`MAX_WARNINGS`] (the others are only counted).
    pub warnings: Vec<Warning>,
    /// Warnings past [`MAX_WARNINGS`], counted, and how many of them skipped something.
    pub dropped: u64,
    /// Of `dropped`, those that skipped something.
    pub dropped_skipped: u64,
    /// Records seen (non-blank lines for line formats).
    pub records_seen: u64,
    /// Records that loaded (possibly with warnings).
    pub records_loaded: u64,
    /// Bytes read so far, shared with whoever shows a progress bar.
    pub progress: Progress,
    /// The bytes this load may hold ([`super::budget`]): set by whoever opens the file (natively
    /// from the machine's available memory, `source::OpenOptions`), read by every loader.
    pub budget: u64,
    /// Warnings folded into an earlier one of the same field and reason ([`Self::warn_grouped`]):
    /// counted in [`Self::num_warnings`], listed once.
    pub folded: u64,
    /// Of `folded`, those that skipped something.
    pub folded_skipped: u64,
    /// For each grouped warning: its index in `warnings`, its reason as first given, how many
    /// records it stands for and the first lines of them.
    pub(crate) groups: Vec<(usize, String, u64, Vec<u64>)>,
    /// The run's tokenizer, for formats that save token ids and no text: where to look for a
    /// `tokenizer.json` beside the file (given by whoever opens it, `source::path`), looked at only
    /// when such a format asks.
    pub vocab: Option<std::sync::Arc<super::tokenizer::LazyVocab>>,
}

impl Default for LoadReport {
    fn default() -> Self {
        Self {
            file: String::new(),
            warnings: Vec::new(),
            dropped: 0,
            dropped_skipped: 0,
            records_seen: 0,
            records_loaded: 0,
            progress: Progress::default(),
            budget: super::budget::DEFAULT_BUDGET,
            folded: 0,
            folded_skipped: 0,
            groups: Vec::new(),
            vocab: None,
        }
    }
}

/// Lines a grouped warning names ([`LoadReport::warn_grouped`]); past them it counts.
pub const GROUPED_LINES: usize = 20;

/// Warnings a report keeps; past this a log of millions of broken records would need gigabytes
/// for its messages alone, so the rest are counted, not kept.
pub const MAX_WARNINGS: usize = 10_000;

/// Bytes a loader (or a download) has consumed, and how many there are when that is known only
/// as they arrive (an HTTP `Content-Length`), readable from another thread while it works.
#[derive(Clone, Debug, Default)]
pub struct Progress(std::sync::Arc<[std::sync::atomic::AtomicU64; 2]>);

impl Progress {
    /// Records that the first `bytes` bytes are done.
    pub fn set(&self, bytes: u64) {
        self.0[0].store(bytes, std::sync::atomic::Ordering::Relaxed);
    }

    /// Bytes done.
    pub fn get(&self) -> u64 {
        self.0[0].load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Records the total size, once known.
    pub fn set_total(&self, bytes: u64) {
        self.0[1].store(bytes, std::sync::atomic::Ordering::Relaxed);
    }

    /// The total size (0 when unknown).
    pub fn total(&self) -> u64 {
        self.0[1].load(std::sync::atomic::Ordering::Relaxed)
    }
}

impl LoadReport {
    /// An empty report for `file`.
    pub fn new(file: &str) -> Self {
        Self { file: file.to_owned(), ..Self::default() }
    }

    /// An empty report for `file` of a load that may hold at most `budget` bytes.
    pub fn with_budget(file: &str, budget: u64) -> Self {
        Self { budget, ..Self::new(file) }
    }

    /// Records a warning.
    pub fn warn(&mut self, warning: Warning) {
        if self.warnings.len() < MAX_WARNINGS {
            self.warnings.push(warning);
        } else {
            self.dropped += 1;
            self.dropped_skipped += u64::from(warning.skipped);
        }
    }

    /// Records a warning that many records may share (an aborted save's empty rows): the first
    /// one of its field and reason is listed, and names how many records it stands for and the
    /// lines of the first 20; the others are counted in it.
    pub fn warn_grouped(&mut self, warning: Warning) {
        let found = self.groups.iter().position(|(i, reason, ..)| {
            self.warnings.get(*i).is_some_and(|w| w.field == warning.field) && *reason == warning.reason
        });
        let Some(g) = found else {
            if self.warnings.len() < MAX_WARNINGS {
                self.groups.push((self.warnings.len(), warning.reason.clone(), 1, vec![warning.line]));
            }
            self.warn(warning);
            return;
        };
        self.folded += 1;
        self.folded_skipped += u64::from(warning.skipped);
        let (index, reason, count, lines) = &mut self.groups[g];
        *count += 1;
        if lines.len() < GROUPED_LINES {
            lines.push(warning.line);
        }
        let mut listed: Vec<String> = lines.iter().map(u64::to_string).collect();
        if *count > lines.len() as u64 {
            listed.push(format!("… {} more", *count - lines.len() as u64));
        }
        self.warnings[*index].reason = format!("{reason} ({count} records: lines {})", listed.join(", "));
    }

    /// Number of warnings, kept, folded into a grouped one, or only counted.
    pub fn num_warnings(&self) -> usize {
        self.warnings.len() + self.dropped as usize + self.folded as usize
    }

    /// Number of warnings that skipped something.
    pub fn num_skipped(&self) -> usize {
        self.warnings.iter().filter(|w| w.skipped).count()
            + self.dropped_skipped as usize
            + self.folded_skipped as usize
    }

    /// Each warning as `FILE:LINE: FIELD: reason`, then a line for those only counted.
    pub fn located(&self) -> impl Iterator<Item = String> + '_ {
        let more = (self.dropped > 0).then(|| {
            format!(
                "{}: {} more warning(s), {} of them skipping a record, not listed (the first {MAX_WARNINGS} are)",
                self.file, self.dropped, self.dropped_skipped
            )
        });
        self.warnings.iter().map(|w| w.located(&self.file)).chain(more)
    }
}

#[cfg(test)]
mod grouped_tests {
    use super::*;

    #[test]
    fn a_reason_many_records_share_is_one_warning_with_its_count_and_lines() {
        let mut report = LoadReport::new("r.jsonl");
        for line in 1..=25 {
            report.warn_grouped(Warning::kept(line, "completion", "empty"));
        }
        report.warn_grouped(Warning::kept(30, "reward", "empty"));
        assert_eq!((report.warnings.len(), report.num_warnings(), report.num_skipped()), (2, 26, 0));
        let first = &report.warnings[0];
        assert_eq!(first.line, 1);
        assert!(first.reason.starts_with("empty (25 records: lines 1, 2, 3,"), "{}", first.reason);
        assert!(first.reason.ends_with("19, 20, … 5 more)"), "{}", first.reason);
        assert_eq!(report.warnings[1].reason, "empty", "another field is its own warning");
    }
}
