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
    /// No search threads could be had: queue full or waited too long (RESOURCE_EXHAUSTED),
    /// the client's deadline ended the wait (DEADLINE_EXCEEDED), or shutdown (UNAVAILABLE).
    #[error(transparent)]
    Busy(#[from] AdmissionError),
    /// The client's deadline leaves no time to search. Answered at once, so that the client
    /// hears it from the server before its own timer fires.
    #[error("the deadline leaves {remaining_ms} ms, too little to search and answer")]
    DeadlineTooShort {
        /// Time left when the search would have started.
        remaining_ms: u64,
    },
    /// The server is shutting down.
    #[error("server is shutting down")]
    ShuttingDown,
    /// StopSearch: no live search has this id (it ended, or never existed). The id was
    /// checked ([`crate::stop::SearchId`]), so it is quoted as it is.
    #[error("search_id: no live search has the id {0:?}")]
    UnknownSearch(String),
    /// The client's own search id is already used by a live search.
    #[error("options.search_id: {0:?} is already used by a running or waiting search")]
    SearchIdInUse(String),
    /// The bearer token is missing or wrong ([`crate::auth`]).
    #[error("{0}")]
    Unauthenticated(&'static str),
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
            ServiceError::Busy(AdmissionError::OutOfTime { .. })
            | ServiceError::DeadlineTooShort { .. } => Code::DeadlineExceeded,
            ServiceError::Busy(
                AdmissionError::QueueFull { .. } | AdmissionError::WaitedTooLong { .. },
            ) => Code::ResourceExhausted,
            ServiceError::UnknownSearch(_) => Code::NotFound,
            ServiceError::SearchIdInUse(_) => Code::AlreadyExists,
            ServiceError::Unauthenticated(_) => Code::Unauthenticated,
            ServiceError::Internal(_) => Code::Internal,
        }
    }
}

/// Longest error message sent to a client, in characters. Echoed input is already cut to 40
/// characters where it is quoted (`emergo_rules::EXCERPT_CHARS`); this is the safety net for any
/// message that would still grow with the input, since gRPC clients cap the metadata that
/// carries it (8–16 KiB) and would report that instead of the error.
pub const MAX_MESSAGE_CHARS: usize = 300;

/// `message` cut to [`MAX_MESSAGE_CHARS`] characters, with `…` where it was cut.
pub fn bounded_message(message: &str) -> String {
    match message.char_indices().nth(MAX_MESSAGE_CHARS) {
        None => message.to_owned(),
        Some((cut, _)) => format!("{}…", &message[..cut]),
    }
}

impl From<ServiceError> for Status {
    fn from(e: ServiceError) -> Status {
        Status::new(e.code(), bounded_message(&e.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_are_bounded() {
        assert_eq!(bounded_message("short"), "short");
        let long = "x".repeat(50_000);
        let status: Status = ServiceError::invalid("position.fen", &long).into();
        assert_eq!(status.message().chars().count(), MAX_MESSAGE_CHARS + 1);
        assert!(status.message().starts_with("position.fen: xxx"));
        assert!(status.message().ends_with('…'));
    }

    /// Running out of the client's time is DEADLINE_EXCEEDED, with a message, whether it
    /// happens before the search or while waiting for threads.
    #[test]
    fn deadline_errors_are_deadline_exceeded() {
        for e in [
            ServiceError::DeadlineTooShort { remaining_ms: 3 },
            ServiceError::Busy(AdmissionError::OutOfTime { waited_ms: 20 }),
        ] {
            let status = Status::from(e);
            assert_eq!(status.code(), Code::DeadlineExceeded);
            assert!(
                status.message().contains("deadline"),
                "{}",
                status.message()
            );
        }
        let busy = ServiceError::Busy(AdmissionError::WaitedTooLong { waited_ms: 20 });
        assert_eq!(busy.code(), Code::ResourceExhausted);
        assert_eq!(
            ServiceError::Busy(AdmissionError::Closed).code(),
            Code::Unavailable
        );
    }
}
