//! Errors that stop a whole file from loading (record-level problems are [`crate::model::Warning`]s).

/// Why a file could not be loaded at all.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The bytes are not in this loader's format ("not mine"); another loader may accept them.
    #[error("not a {format} file: {reason}")]
    Incompatible {
        /// The format that declined.
        format: &'static str,
        /// Why it declined.
        reason: String,
    },

    /// No loader recognised the bytes.
    #[error("not a recognised log format ({tried})")]
    Unrecognised {
        /// The formats that were tried, each with why it declined.
        tried: String,
    },

    /// The file is in a known format but of a version this build cannot read.
    #[error("line {line}: {field}: {reason}")]
    Unsupported {
        /// Line of the offending record.
        line: u64,
        /// The field that says which version.
        field: String,
        /// What is not supported.
        reason: String,
    },

    /// The file was read but not a single record was valid.
    #[error("nothing loadable: {reason}")]
    NothingLoadable {
        /// Summary of why (the first warning, and how many records were skipped).
        reason: String,
    },

    /// The run would not fit in the memory this load may use (see `load::budget`).
    #[error(
        "the run needs about {needed} of memory, more than the {budget} this load may use ({read}); \
         convert it with `vantage convert` to Parquet and open a range of training steps, open fewer \
         training steps (one file of the directory), or raise the budget with VANTAGE_MEMORY_BUDGET"
    )]
    TooLarge {
        /// What the whole run would need, as a size ("3.2 GB").
        needed: String,
        /// The budget, as a size.
        budget: String,
        /// How far reading came before it stopped ("stopped after 12 % of the file").
        read: String,
    },

    /// Reading the file failed (native only).
    #[error("{source}")]
    Io {
        /// The I/O error.
        #[from]
        source: std::io::Error,
    },

    /// Any of the above, with the file it concerns.
    #[error("{source:#}: {path}")]
    File {
        /// The file.
        path: String,
        /// The error.
        source: Box<Self>,
    },
}

impl LoadError {
    /// Attaches the file name, once.
    #[must_use]
    pub fn with_path(self, path: &str) -> Self {
        match self {
            Self::File { .. } => self,
            other => Self::File { path: path.to_owned(), source: Box::new(other) },
        }
    }

    /// The error as `FILE:LINE: FIELD: reason` where it has a location, else `FILE: reason`.
    pub fn located(&self) -> String {
        let Self::File { path, source } = self else {
            return format!("{self:#}");
        };
        match &**source {
            Self::Unsupported { line, field, reason } => format!("{path}:{line}: {field}: {reason}"),
            Self::Incompatible { .. } | Self::Unrecognised { .. } => {
                format!("{path}:1: record: {source:#}")
            }
            other => format!("{path}: {other:#}"),
        }
    }

    /// Whether no loader recognised the file (with or without the file around it).
    pub fn is_unrecognised(&self) -> bool {
        match self {
            Self::Unrecognised { .. } => true,
            Self::File { source, .. } => source.is_unrecognised(),
            _ => false,
        }
    }

    /// Whether the file was read but held nothing loadable (with or without the file around it).
    pub fn is_nothing_loadable(&self) -> bool {
        match self {
            Self::NothingLoadable { .. } => true,
            Self::File { source, .. } => source.is_nothing_loadable(),
            _ => false,
        }
    }

    /// Whether this means "not this loader's format".
    pub fn is_incompatible(&self) -> bool {
        match self {
            Self::Incompatible { .. } => true,
            Self::File { source, .. } => source.is_incompatible(),
            _ => false,
        }
    }
}
