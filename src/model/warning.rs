//! Load warnings: what was wrong with a record, where, and whether the record was skipped.

/// One problem found while loading, located by line and field.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Warning {
    /// 1-based line (or record number for non-line formats); 0 when it concerns the whole file.
    pub line: u64,
    /// The field path inside the record, e.g. `steps[2].scores.prm`, or `record` for the whole record.
    pub field: String,
    /// What is wrong, in one sentence without a trailing period.
    pub reason: String,
    /// Whether the record (or node) was left out because of it.
    pub skipped: bool,
}

impl Warning {
    /// A warning about a record that was skipped.
    pub fn skipped(line: u64, field: impl Into<String>, reason: impl Into<String>) -> Self {
        Self { line, field: field.into(), reason: reason.into(), skipped: true }
    }

    /// A warning about a record that still loaded.
    pub fn kept(line: u64, field: impl Into<String>, reason: impl Into<String>) -> Self {
        Self { line, field: field.into(), reason: reason.into(), skipped: false }
    }

    /// `FILE:LINE: FIELD: reason`, the one format every surface prints.
    pub fn located(&self, file: &str) -> String {
        let skipped = if self.skipped { " (skipped)" } else { "" };
        format!("{file}:{}: {}: {}{skipped}", self.line, self.field, self.reason)
    }
}
