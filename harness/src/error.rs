//! Infrastructure errors of the harness itself (a tool's refusal is an outcome, not an error).

/// A fault of snapconf's own machinery, with what it was doing.
#[derive(Debug, thiserror::Error)]
pub enum HarnessError {
    /// A filesystem or process call failed.
    #[error("{context}: {source}")]
    Io {
        /// What was being done, lower case, naming the path or step (see [`IoContext`]).
        context: String,
        /// The failed call's error.
        #[source]
        source: std::io::Error,
    },
    /// A spec could not be made into real files (see
    /// [`crate::workspace::materialise::MaterialiseError`]).
    #[error("cannot materialise {what}: {message}")]
    Materialise {
        /// Which tree: the case's spec, its prior, a fault step's prior.
        what: String,
        /// The materialiser's error, rendered.
        message: String,
    },
    /// Running an external tool failed (it could not start, or its output could not be
    /// read): not the tool's own refusal, which is an outcome.
    #[error(transparent)]
    Tool(#[from] snapconf_producers::ToolError),
    /// Any other fault, with its whole message.
    #[error("{0}")]
    Other(String),
    /// An input was not run because it could not be run safely here (an archive that
    /// could reach past the jail where no filesystem view is available): not a fault of
    /// snapconf, and nothing ran (`snapconf` exits 3, not 4).
    #[error("{0}")]
    NotRun(String),
    /// Shrinking a finding stopped because running a candidate case failed (a fault of
    /// ours, not "the candidate does not reproduce").
    #[error("shrinking {finding} stopped: {source}")]
    Shrink {
        /// The finding being shrunk (its check id and case).
        finding: String,
        /// What failed while running the candidate.
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
