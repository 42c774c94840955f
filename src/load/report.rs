//! The load reporter: loaders record warnings here and keep going.

use crate::model::Warning;

/// Warnings and counts collected while loading one file.
#[derive(Clone, Debug, Default)]
pub struct LoadReport {
    /// The file's display name, used in every located message.
    pub file: String,
    /// Warnings in file order.
    pub warnings: Vec<Warning>,
    /// Records seen (non-blank lines for line formats).
    pub records_seen: u64,
    /// Records that loaded (possibly with warnings).
    pub records_loaded: u64,
}

impl LoadReport {
    /// An empty report for `file`.
    pub fn new(file: &str) -> Self {
        Self { file: file.to_owned(), ..Self::default() }
    }

    /// Records a warning.
    pub fn warn(&mut self, warning: Warning) {
        self.warnings.push(warning);
    }

    /// Number of warnings that skipped something.
    pub fn num_skipped(&self) -> usize {
        self.warnings.iter().filter(|w| w.skipped).count()
    }

    /// Each warning as `FILE:LINE: FIELD: reason`.
    pub fn located(&self) -> impl Iterator<Item = String> + '_ {
        self.warnings.iter().map(|w| w.located(&self.file))
    }
}
