//! The service's error type, mapped once to gRPC status codes.

use tonic::{Code, Status};

use crate::admission::AdmissionError;

/// Everything a request can fail with. Messages name the field and say what to fix.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ServiceError {
    /// A field is missing or malformed (bad FEN, illegal move, zero budget…).
    #[error("{field}: {message}")]
    InvalidArgument {
        /// The request field, e.g. `position.moves[3]`.
        field: String,
        /// What is wrong with it.
        message: String,
    },
    /// A number is beyond what this server allows.
    #[error("{field}: {message}")]
    OutOfRange {
        /// The request field.
        field: String,
        /// What is wrong with it.
        message: String,
    },
    /// No search threads could be had (queue full or waited too long).
    #[error(transparent)]
    Busy(#[from] AdmissionError),
    /// The client's deadline leaves no time to search.
    #[error("the deadline leaves {remaining_ms} ms, too little to search and answer")]
    DeadlineTooShort {
        /// Time left when the search would have started.
        remaining_ms: u64,
    },
    /// The server is shutting down.
    #[error("server is shutting down")]
    ShuttingDown,
    /// A bug: the search thread went away.
    #[error("internal error: {0}")]
    Internal(String),
}

impl ServiceError {
    /// An [`ServiceError::InvalidArgument`] for `field`.
    pub fn invalid(field: impl Into<String>, message: impl std::fmt::Display) -> ServiceError {
        ServiceError::InvalidArgument {
            field: field.into(),
            message: message.to_string(),
        }
    }

    /// An [`ServiceError::OutOfRange`] for `field`.
    pub fn out_of_range(field: impl Into<String>, message: impl std::fmt::Display) -> ServiceError {
        ServiceError::OutOfRange {
            field: field.into(),
            message: message.to_string(),
        }
    }

    /// The gRPC code.
    pub fn code(&self) -> Code {
        match self {
            ServiceError::InvalidArgument { .. } => Code::InvalidArgument,
            ServiceError::OutOfRange { .. } => Code::OutOfRange,
            ServiceError::Busy(AdmissionError::Closed) | ServiceError::ShuttingDown => {
                Code::Unavailable
            }
            ServiceError::Busy(_) => Code::ResourceExhausted,
            ServiceError::DeadlineTooShort { .. } => Code::DeadlineExceeded,
            ServiceError::Internal(_) => Code::Internal,
        }
    }
}

impl From<ServiceError> for Status {
    fn from(e: ServiceError) -> Status {
        Status::new(e.code(), e.to_string())
    }
}
