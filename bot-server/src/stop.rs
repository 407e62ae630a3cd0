//! Stop with answer: search ids, and the registry that maps each live search's id to its stop
//! switch, so that `StopSearch` (gRPC) or `POST /v1/StopSearch` (HTTP) can end a search early
//! while its own call still receives the final update (stop reason `STOPPED`).
//!
//! A search is registered from the moment it is admitted for checking (before it waits for
//! threads) until its call ends, so a client that chose its own id can stop a request that is
//! still queued: it then answers as soon as it gets threads, after next to no search. Ids are
//! either the client's (`SearchOptions.search_id`, checked here) or 128 random bits in hex:
//! knowing a server-picked id is what entitles a client to stop the search, so it must not be
//! guessable from others (the auth token, where set, guards the RPC as every other).
//!
//! Also the stop switch itself ([`StopControl`], with its [`StopCause`]), which every search,
//! ponder and game review holds: the search threads read its flag, async code awaits it.

use std::collections::HashMap;
use std::collections::hash_map::{Entry, RandomState};
use std::fmt;
use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use crate::error::ServiceError;

/// Why a search was stopped from outside.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum StopCause {
    /// Not stopped from outside.
    None = 0,
    /// The client cancelled or disconnected.
    Cancelled = 1,
    /// The server is shutting down.
    Shutdown = 2,
    /// A StopSearch call ended it early; its call still gets the final update.
    Stopped = 3,
    /// The time manager ended it: a game clock's budget was used, or the best move settled
    /// ([`crate::budget`]).
    Budget = 4,
    /// A ponder whose threads a waiting request needs ([`crate::ponder`]).
    Preempted = 5,
    /// A ponder whose game's next request arrived.
    Superseded = 6,
}

/// The stop switch of one running search (or of a game review's searches, [`crate::review`]).
#[derive(Debug)]
pub struct StopControl {
    flag: Arc<AtomicBool>,
    cause: AtomicU8,
    /// Wakes the tasks waiting in [`StopControl::stopped`].
    notify: tokio::sync::Notify,
}

impl StopControl {
    /// A switch that is not raised (the same as `default()`).
    pub fn new() -> StopControl {
        StopControl {
            flag: Arc::new(AtomicBool::new(false)),
            cause: AtomicU8::new(StopCause::None as u8),
            notify: tokio::sync::Notify::new(),
        }
    }

    /// Stops the search, remembering the first cause given. True if this call was the first.
    pub fn stop(&self, cause: StopCause) -> bool {
        let first = self
            .cause
            .compare_exchange(
                StopCause::None as u8,
                cause as u8,
                Ordering::SeqCst,
                Ordering::SeqCst,
            )
            .is_ok();
        self.flag.store(true, Ordering::SeqCst);
        self.notify.notify_waiters();
        first
    }

    /// Resolves once the switch is raised (at once if it already is): for async code that
    /// waits on something else meanwhile, such as threads for the next search.
    pub async fn stopped(&self) {
        let notified = self.notify.notified();
        let mut notified = std::pin::pin!(notified);
        // Registered before the flag is read: a `stop` after this line wakes it.
        notified.as_mut().enable();
        if !self.is_stopped() {
            notified.await;
        }
    }

    /// True once stopped, whatever the cause.
    pub fn is_stopped(&self) -> bool {
        self.flag.load(Ordering::SeqCst)
    }

    /// The flag the search threads read, for [`Search::set_stop_flag`](emergo_mcts::Search::set_stop_flag).
    pub fn flag(&self) -> Arc<AtomicBool> {
        self.flag.clone()
    }

    /// The first cause given, `None` while not stopped.
    pub fn cause(&self) -> StopCause {
        match self.cause.load(Ordering::SeqCst) {
            1 => StopCause::Cancelled,
            2 => StopCause::Shutdown,
            3 => StopCause::Stopped,
            4 => StopCause::Budget,
            5 => StopCause::Preempted,
            6 => StopCause::Superseded,
            _ => StopCause::None,
        }
    }
}

impl Default for StopControl {
    fn default() -> StopControl {
        StopControl::new()
    }
}

/// Stops the search when the request's future is dropped before it finished (the client went
/// away: tonic drops the handler of a cancelled call).
pub(crate) struct CancelOnDrop {
    pub(crate) ctl: Arc<StopControl>,
    pub(crate) armed: bool,
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        if self.armed {
            self.ctl.stop(StopCause::Cancelled);
        }
    }
}

/// Longest search id a client may choose.
pub const MAX_SEARCH_ID_LEN: usize = 64;

/// The id of one search: 1..=64 characters of `A-Z a-z 0-9 _ -`, so it can be echoed in error
/// messages and logs as it is.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SearchId(String);

impl SearchId {
    /// Checks a client's id; `field` names it in the error.
    pub fn parse(text: &str, field: &str) -> Result<SearchId, ServiceError> {
        if text.is_empty() {
            return Err(ServiceError::invalid(field, "required"));
        }
        if text.len() > MAX_SEARCH_ID_LEN {
            return Err(ServiceError::invalid(
                field,
                format!("{} bytes, at most {MAX_SEARCH_ID_LEN}", text.len()),
            ));
        }
        if let Some(c) = text
            .chars()
            .find(|c| !(c.is_ascii_alphanumeric() || *c == '_' || *c == '-'))
        {
            return Err(ServiceError::invalid(
                field,
                format!("{c:?} is not allowed: use A-Z, a-z, 0-9, '_' and '-'"),
            ));
        }
        Ok(SearchId(text.to_owned()))
    }

    /// A fresh id of 128 random bits (32 hex digits) from the operating system's random source
    /// (`getrandom`): knowing an id is what lets a client stop a search, so ids must not be
    /// predictable from others. Should the system source ever fail, SipHash under the standard
    /// library's per-process random keys, over a counter and the clock, stands in.
    pub fn random() -> SearchId {
        let mut bytes = [0u8; 16];
        if getrandom::fill(&mut bytes).is_err() {
            static COUNTER: AtomicU64 = AtomicU64::new(0);
            for half in bytes.chunks_mut(8) {
                let mut h = RandomState::new().build_hasher();
                h.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
                h.write_u128(
                    std::time::SystemTime::now()
                        .duration_since(std::time::UNIX_EPOCH)
                        .map_or(0, |d| d.as_nanos()),
                );
                half.copy_from_slice(&h.finish().to_le_bytes());
            }
        }
        SearchId(bytes.iter().map(|b| format!("{b:02x}")).collect())
    }

    /// The id as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for SearchId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The stop switches of the live searches, by id.
#[derive(Debug, Default)]
pub struct SearchRegistry {
    map: Mutex<HashMap<SearchId, Arc<StopControl>>>,
}

/// A search's entry in the registry, removed when this is dropped (however the search ends).
#[derive(Debug)]
pub struct Registration {
    registry: Arc<SearchRegistry>,
    id: SearchId,
}

impl Registration {
    /// The registered id.
    pub fn id(&self) -> &SearchId {
        &self.id
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        self.registry.lock().remove(&self.id);
    }
}

impl SearchRegistry {
    fn lock(&self) -> MutexGuard<'_, HashMap<SearchId, Arc<StopControl>>> {
        self.map.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Registers a search's stop switch under `id`; `ALREADY_EXISTS` if a live search has it.
    pub fn register(
        self: &Arc<Self>,
        id: SearchId,
        ctl: Arc<StopControl>,
    ) -> Result<Registration, ServiceError> {
        match self.lock().entry(id.clone()) {
            Entry::Occupied(_) => return Err(ServiceError::SearchIdInUse(id.0)),
            Entry::Vacant(v) => {
                v.insert(ctl);
            }
        }
        Ok(Registration {
            registry: self.clone(),
            id,
        })
    }

    /// Stops the search `id` with its answer. True if this call stopped it, false if it was
    /// already stopping; `NOT_FOUND` if no live search has the id.
    pub fn stop(&self, id: &SearchId) -> Result<bool, ServiceError> {
        let ctl = self
            .lock()
            .get(id)
            .cloned()
            .ok_or_else(|| ServiceError::UnknownSearch(id.0.clone()))?;
        Ok(ctl.stop(StopCause::Stopped))
    }

    /// Live searches.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// True when no search is registered.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_checked() {
        assert_eq!(
            SearchId::parse("game-7_move_12", "f").unwrap().as_str(),
            "game-7_move_12"
        );
        assert_eq!(
            SearchId::parse("", "search_id").unwrap_err().to_string(),
            "search_id: required"
        );
        let e = SearchId::parse(&"x".repeat(65), "options.search_id").unwrap_err();
        assert_eq!(e.to_string(), "options.search_id: 65 bytes, at most 64");
        assert!(SearchId::parse(&"x".repeat(64), "f").is_ok());
        for bad in ["a b", "a\nb", "é", "a/b", "a.b"] {
            let e = SearchId::parse(bad, "search_id").unwrap_err();
            assert_eq!(e.code(), tonic::Code::InvalidArgument, "{bad:?}");
            assert!(e.to_string().contains("is not allowed"), "{e}");
        }
    }

    #[test]
    fn random_ids_are_distinct_hex() {
        let ids: std::collections::HashSet<String> =
            (0..1000).map(|_| SearchId::random().0).collect();
        assert_eq!(ids.len(), 1000);
        for id in ids.iter().take(10) {
            assert_eq!(id.len(), 32);
            assert!(SearchId::parse(id, "f").is_ok());
            assert!(id.chars().all(|c| c.is_ascii_hexdigit()));
        }
    }

    #[test]
    fn register_stop_and_unregister() {
        let registry = Arc::new(SearchRegistry::default());
        let id = SearchId::parse("s1", "f").unwrap();
        let ctl = Arc::new(StopControl::new());
        let reg = registry.register(id.clone(), ctl.clone()).unwrap();
        let dup = registry
            .register(id.clone(), Arc::new(StopControl::new()))
            .unwrap_err();
        assert_eq!(dup.code(), tonic::Code::AlreadyExists);
        assert_eq!(registry.stop(&id), Ok(true));
        assert_eq!(registry.stop(&id), Ok(false));
        assert!(ctl.is_stopped());
        drop(reg);
        assert!(registry.is_empty());
        let e = registry.stop(&id).unwrap_err();
        assert_eq!(e.code(), tonic::Code::NotFound);
        assert_eq!(e.to_string(), "search_id: no live search has the id \"s1\"");
    }
}
