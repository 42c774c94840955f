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
        }
    }
}

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

    /// Number of warnings, kept or only counted.
    pub fn num_warnings(&self) -> usize {
        self.warnings.len() + self.dropped as usize
    }

    /// Number of warnings that skipped something.
    pub fn num_skipped(&self) -> usize {
        self.warnings.iter().filter(|w| w.skipped).count() + self.dropped_skipped as usize
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
