//! The closed-loop load: `concurrency` tasks each make one call after another, for the warm-up
//! and then the measured window. The window lasts the given time, and longer when calls are so
//! slow that fewer than three per task finished in it (at most a minute more), so that a slow
//! method still gets a figure. Calls that started in the window and finished by its end count.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use super::calls::Call;
use crate::common::stats::Sample;

/// Calls per task the window waits for, at least.
const CALLS_PER_TASK: u64 = 3;
/// The most a window is extended.
const MOST_EXTRA: Duration = Duration::from_secs(60);

/// Runs `call` from `concurrency` tasks: `warmup` unmeasured, then a window of `window` (or
/// more, see above).
pub async fn run(call: Arc<dyn Call>, concurrency: usize, warmup: Duration, window: Duration) -> Sample {
    let start = Instant::now();
    let measure_from = start + warmup;
    let least_end = measure_from + window;
    let hard_end = least_end + MOST_EXTRA;
    let wanted = CALLS_PER_TASK * concurrency as u64;
    // Completions inside the window so far, and when the window closed (µs after `start`; 0 while
    // it is open).
    let completed = Arc::new(AtomicU64::new(0));
    let closed_at = Arc::new(AtomicU64::new(0));
    let close = {
        let (completed, closed_at) = (completed.clone(), closed_at.clone());
        move |now: Instant| -> bool {
            let closed = closed_at.load(Ordering::Acquire);
            if closed != 0 {
                return true;
            }
            if now >= hard_end || (now >= least_end && completed.load(Ordering::Acquire) >= wanted) {
                let at = (now - start).as_micros().max(1) as u64;
                let _ = closed_at.compare_exchange(0, at, Ordering::AcqRel, Ordering::Acquire);
                return true;
            }
            false
        }
    };
    let mut tasks = Vec::new();
    for task in 0..concurrency {
        let (call, completed, close) = (call.clone(), completed.clone(), close.clone());
        tasks.push(tokio::spawn(async move {
            // (start µs, end µs, result) of the calls that started in the window.
            let mut calls = Vec::new();
            let mut n = 0u64;
            while !close(Instant::now()) {
                let began = Instant::now();
                let result = call.call(task, n).await;
                n += 1;
                let done = Instant::now();
                if began >= measure_from {
                    completed.fetch_add(1, Ordering::AcqRel);
                    calls.push(((done - start).as_micros() as u64, (done - began).as_micros() as u64, result));
                }
            }
            calls
        }));
    }
    let mut finished = Vec::new();
    for task in tasks {
        if let Ok(calls) = task.await {
            finished.extend(calls);
        }
    }
    let end = closed_at.load(Ordering::Acquire);
    let mut sample =
        Sample { elapsed: Duration::from_micros(end).saturating_sub(measure_from - start), ..Sample::default() };
    for (done, latency, result) in finished {
        if done > end {
            continue;
        }
        match result {
            Ok(()) => sample.latencies_us.push(latency),
            Err(code) => *sample.failures.entry(code).or_default() += 1,
        }
    }
    sample
}
