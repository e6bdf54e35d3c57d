//! The closed-loop load: `concurrency` tasks each make one call after another for the warm-up
//! and then the measured window; calls that finish inside the window count, with their latency.

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::calls::Call;
use crate::common::stats::Sample;

/// Runs `call` from `concurrency` tasks: `warmup` unmeasured, then `window` measured.
pub async fn run(call: Arc<dyn Call>, concurrency: usize, warmup: Duration, window: Duration) -> Sample {
    let start = Instant::now();
    let measure_from = start + warmup;
    let end = measure_from + window;
    let mut tasks = Vec::new();
    for task in 0..concurrency {
        let call = call.clone();
        tasks.push(tokio::spawn(async move {
            let mut sample = Sample::default();
            let mut n = 0u64;
            loop {
                let began = Instant::now();
                if began >= end {
                    break;
                }
                let result = call.call(task, n).await;
                n += 1;
                let done = Instant::now();
                if began < measure_from || done > end {
                    continue;
                }
                match result {
                    Ok(()) => sample.latencies_us.push((done - began).as_micros() as u64),
                    Err(code) => *sample.failures.entry(code).or_default() += 1,
                }
            }
            sample
        }));
    }
    let mut total = Sample { elapsed: window, ..Sample::default() };
    for task in tasks {
        if let Ok(sample) = task.await {
            total.merge(sample);
        }
    }
    total
}
