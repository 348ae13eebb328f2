//! A run's writes when another process holds the database locked past SQLite's wait (a sqlite3
//! shell inside a transaction, a backup, a second tool): the write is tried again a bounded
//! number of times, each try waiting the store's busy timeout, so a lock of a few minutes
//! delays the run instead of failing it. Only a lock error is tried again; anything else is
//! returned at once. A raised cancel flag stops the tries.

use crate::store::{Store, StoreError};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// How many times a locked write waits the store's busy timeout: with the default 30 s, about
/// five minutes before the run stops and keeps what it finished (see `kept_items`).
const WRITE_ATTEMPTS: u32 = 10;

/// A pause between two tries, so a lock released and taken again at once is not raced.
const BETWEEN_ATTEMPTS: Duration = Duration::from_millis(50);

/// A write given up on: the last lock error, how many tries, how long they waited.
pub(super) struct LockedOut {
    pub error: StoreError,
    pub attempts: u32,
    pub waited: Duration,
}

pub(super) enum WriteFailure {
    Locked(LockedOut),
    Other(StoreError),
}

impl From<WriteFailure> for super::RunError {
    fn from(failure: WriteFailure) -> Self {
        match failure {
            WriteFailure::Locked(out) => super::RunError::Store(out.error),
            WriteFailure::Other(error) => super::RunError::Store(error),
        }
    }
}

/// Run `write` on `store`, trying again while the database stays locked (bounded).
pub(super) fn retried<T>(
    store: &mut Store,
    cancel: &AtomicBool,
    mut write: impl FnMut(&mut Store) -> Result<T, StoreError>,
) -> Result<T, WriteFailure> {
    let started = Instant::now();
    let mut attempts = 0;
    loop {
        attempts += 1;
        match write(store) {
            Ok(value) => return Ok(value),
            Err(error) if error.is_locked() => {
                if attempts >= WRITE_ATTEMPTS || cancel.load(Ordering::Relaxed) {
                    return Err(WriteFailure::Locked(LockedOut { error, attempts, waited: started.elapsed() }));
                }
                std::thread::sleep(BETWEEN_ATTEMPTS);
            }
            Err(error) => return Err(WriteFailure::Other(error)),
        }
    }
}
