//! Waiting for what a reconciler records: it happens some time after the call that caused it,
//! so a test polls for it, with a limit and a message saying what it last saw. A test that
//! shows that nothing happened waits here for what proves the time went by (passes recorded),
//! never for a fixed time.

use std::future::Future;
use std::path::Path;
use std::time::{Duration, Instant};

use better_compute::store::{Store, now_micros};
use sqlx::Connection;

/// How long a test waits between two looks.
const INTERVAL: Duration = Duration::from_millis(25);

/// Polls `check` until it returns `Ok`, and panics after `limit` with `what` and the last
/// `Err` (what was seen instead).
pub async fn poll<T, F, Fut>(limit: Duration, what: &str, check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, String>>,
{
    poll_explained(limit, what, check, async || String::new()).await
}

/// [`poll`], and on failure also what `explain` finds then (the work items, the sessions of
/// the database): for a wait whose failure the last look alone does not explain.
pub async fn poll_explained<T, F, Fut>(
    limit: Duration,
    what: &str,
    mut check: F,
    explain: impl AsyncFnOnce() -> String,
) -> T
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
        if started.elapsed() >= limit {
            panic!("{what}: not so after {limit:?}: {seen}\n{}", explain().await);
        }
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

/// Waits until the worker has recorded `more` passes of `object_id` after this call (its
/// `last_pass_at` moved on that many times; a look may miss one, so it is at least that many):
/// what a test waits for before asserting that passes changed nothing.
pub async fn passes_recorded(database_url: &str, object_id: &str, more: usize) {
    sqlx::any::install_default_drivers();
    let mut conn = sqlx::AnyConnection::connect(database_url).await.unwrap();
    let mut last: Option<Option<i64>> = None;
    let mut seen = 0;
    let started = Instant::now();
    let limit = Duration::from_secs(30);
    loop {
        let at: Option<i64> = sqlx::query_scalar("SELECT last_pass_at FROM work_items WHERE object_id = $1")
            .bind(object_id)
            .fetch_optional(&mut conn)
            .await
            .unwrap()
            .flatten();
        if last.is_some_and(|last| last != at) {
            seen += 1;
        }
        if seen >= more {
            return;
        }
        last = Some(at);
        assert!(started.elapsed() < limit, "{more} passes of {object_id}: {seen} after {limit:?}");
        tokio::time::sleep(INTERVAL).await;
    }
}

/// Waits until the worker of `store` has made its first passes and has nothing due nor
/// leased (the `metering` pass, which every worker runs, is recorded and settled).
pub async fn worker_idle(store: &Store) {
    eventually(Duration::from_secs(20), "the worker to go idle", || async {
        let status = store.work_status(now_micros()).await.unwrap();
        status.iter().any(|k| k.kind == "metering" && k.leased == 0 && k.queue_depth == 0).then_some(())
    })
    .await;
}

/// Waits until a server process started by hand answers `/readyz` at `endpoint`; on failure
/// shows its log file.
pub async fn serving(endpoint: &str, log: &Path) {
    let http = reqwest::Client::builder().timeout(Duration::from_secs(5)).build().unwrap();
    let readyz = format!("{endpoint}/readyz");
    poll(Duration::from_secs(20), "the server to come up", || async {
        match http.get(&readyz).send().await {
            Ok(answer) if answer.status() == 200 => Ok(()),
            answered => Err(format!("{answered:?}; its log: {}", std::fs::read_to_string(log).unwrap_or_default())),
        }
    })
    .await;
}

/// [`poll`] for a test that runs outside a runtime (a plain `#[test]` driving `bcctl dev`): the
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
