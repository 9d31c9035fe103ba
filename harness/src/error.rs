//! Infrastructure errors of the harness itself (a tool's refusal is an outcome, not an error).

/// A fault of snapconf's own machinery, with what it was doing.
#[derive(Debug, thiserror::Error)]
pub enum HarnessError {
    #[error("{context}: {source}")]
    Io {
        context: String,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot materialise {what}: {message}")]
    Materialise { what: String, message: String },
    #[error(transparent)]
    Tool(#[from] snapconf_producers::ToolError),
    #[error("{0}")]
    Other(String),
    /// Shrinking a finding stopped because running a candidate case failed (a fault of
    /// ours, not "the candidate does not reproduce").
    #[error("shrinking {finding} stopped: {source}")]
    Shrink {
        finding: String,
        #[source]
        source: Box<HarnessError>,
    },
}

/// Attach context to an `io::Result`.
pub trait IoContext<T> {
    /// Wrap the error with a lower-case context naming the path or step.
    fn ctx(self, context: impl FnOnce() -> String) -> Result<T, HarnessError>;
}

impl<T> IoContext<T> for std::io::Result<T> {
    fn ctx(self, context: impl FnOnce() -> String) -> Result<T, HarnessError> {
        self.map_err(|source| HarnessError::Io {
            context: context(),
            source,
        })
    }
}
