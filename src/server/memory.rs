//! Gives freed memory back to the system after the server held many request bodies.
//!
//! glibc's allocator keeps what a burst of large bodies freed inside its arenas, so the resident
//! size stays at the burst's peak long after the connections are gone. When more than
//! [`TRIM_AFTER_BYTES`] passed through the body budget since the last trim and little is held
//! now, `malloc_trim` returns the free pages.

use std::sync::Arc;
use std::time::Duration;

use crate::api::ByteBudget;

/// How often the budget is looked at.
const CHECK_EVERY: Duration = Duration::from_secs(5);
/// How many body bytes must have passed through since the last trim to trim again.
const TRIM_AFTER_BYTES: u64 = 32 * 1024 * 1024;

/// Watches `budget` until the server stops, trimming the allocator after bursts.
pub async fn trim_after_bursts(budget: Arc<ByteBudget>, mut stop: tokio::sync::watch::Receiver<bool>) {
    let mut trimmed_at = budget.taken_total();
    loop {
        tokio::select! {
            _ = tokio::time::sleep(CHECK_EVERY) => {}
            _ = stop.wait_for(|stop| *stop) => return,
        }
        let taken = budget.taken_total();
        if taken - trimmed_at >= TRIM_AFTER_BYTES && budget.held() <= budget.limit() / 4 {
            trimmed_at = taken;
            // Walking the arenas takes a moment on a large heap: not on a runtime thread.
            let _ = tokio::task::spawn_blocking(trim).await;
        }
    }
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn trim() {
    unsafe extern "C" {
        fn malloc_trim(pad: usize) -> std::ffi::c_int;
    }
    // SAFETY: malloc_trim takes no pointer and is safe to call from any thread at any time.
    let released = unsafe { malloc_trim(0) };
    tracing::debug!(released = released != 0, "gave freed request-body memory back to the system");
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn trim() {}
