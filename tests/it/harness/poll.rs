//! Waiting for what a reconciler records: it happens some time after the call that caused it,
//! so a test polls for it, with a limit and a message saying what it last saw.

use std::future::Future;
use std::time::{Duration, Instant};

/// How long a test waits between two looks.
const INTERVAL: Duration = Duration::from_millis(25);

/// Polls `check` until it returns `Ok`, and panics after `limit` with `what` and the last
/// `Err` (what was seen instead).
pub async fn poll<T, F, Fut>(limit: Duration, what: &str, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, String>>,
{
    let started = Instant::now();
    loop {
        let seen = match check().await {
            Ok(value) => return value,
            Err(seen) => seen,
        };
        assert!(started.elapsed() < limit, "{what}: not so after {limit:?}: {seen}");
        tokio::time::sleep(INTERVAL).await;
    }
}

/// Polls `check` until it returns `Some`, failing after `limit`.
pub async fn eventually<T, F, Fut>(limit: Duration, what: &str, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    poll(limit, what, || {
        let looked = check();
        async move { looked.await.ok_or_else(|| "not yet".to_owned()) }
    })
    .await
}

/// [`poll`] for a test that runs outside a runtime (a plain `#[test]` driving `bc dev`): the
/// thread waits between two looks.
pub fn poll_blocking<T>(limit: Duration, what: &str, mut check: impl FnMut() -> Result<T, String>) -> T {
    let started = Instant::now();
    loop {
        let seen = match check() {
            Ok(value) => return value,
            Err(seen) => seen,
        };
        assert!(started.elapsed() < limit, "{what}: not so after {limit:?}: {seen}");
        std::thread::sleep(INTERVAL);
    }
}
