//! The call budget of a provider account: its rate windows (the provider's published limits
//! unless the account sets its own) and the token-bucket arithmetic every worker applies to the
//! budget the store holds, so that the buckets mean the same thing in every process.
//!
//! A bucket holds a burst of a tenth of its window's calls and refills with the other nine
//! tenths evenly over the window, so no window of that length, wherever it starts, sees more
//! calls than the limit: a provider counting in fixed or in sliding windows never answers 429.

use serde::{Deserialize, Serialize};

/// At most `requests` calls in any `per_seconds`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RateWindow {
    /// Calls allowed per window.
    pub requests: i64,
    /// The window, in seconds.
    pub per_seconds: i64,
}

/// DigitalOcean's published limits per API token: 250 a minute and 5,000 an hour.
pub const DIGITALOCEAN: &[RateWindow] =
    &[RateWindow { requests: 250, per_seconds: 60 }, RateWindow { requests: 5_000, per_seconds: 3_600 }];

/// The Kubernetes Engine API's default quota per project: 3,000 requests a minute.
pub const GKE: &[RateWindow] = &[RateWindow { requests: 3_000, per_seconds: 60 }];

/// How long after a refused probe the breaker of an account lets one call through again.
pub const PROBE_EVERY_MICROS: i64 = 2 * 60 * 1_000_000;

/// The windows in force for an account of `provider` whose own setting is `configured` (the
/// stored JSON; empty for the provider's).
pub fn windows_of(provider: &str, configured: &str) -> Vec<RateWindow> {
    if !configured.trim().is_empty()
        && let Ok(windows) = serde_json::from_str::<Vec<RateWindow>>(configured)
        && !windows.is_empty()
    {
        return windows;
    }
    published(provider).to_vec()
}

/// The provider's published limits.
pub fn published(provider: &str) -> &'static [RateWindow] {
    match provider {
        "digitalocean" => DIGITALOCEAN,
        _ => GKE,
    }
}

/// What is wrong with `windows` given by a person, as (index, what): a window must allow at
/// least one call in at least one second, and at most a day.
pub fn problems(windows: &[RateWindow]) -> Vec<(usize, &'static str)> {
    let mut found = Vec::new();
    for (index, window) in windows.iter().enumerate() {
        if window.requests < 1 {
            found.push((index, "requests must be at least 1"));
        }
        if !(1..=86_400).contains(&window.per_seconds) {
            found.push((index, "perSeconds must be from 1 to 86400 (a day)"));
        }
    }
    if windows.len() > 4 {
        found.push((4, "at most 4 windows"));
    }
    found
}

/// One window's bucket as stored: `tokens` left as of `refilled_at` (µs).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Bucket {
    /// The window it paces.
    #[serde(flatten)]
    pub window: RateWindow,
    /// Calls left.
    pub tokens: f64,
    /// As of when (µs).
    pub refilled_at: i64,
}

impl RateWindow {
    /// The calls a full bucket lets out at once: a tenth of the window's, at least one.
    pub fn burst(&self) -> f64 {
        (self.requests / 10).max(1) as f64
    }

    /// The calls it gains per microsecond: the rest of the window's, spread over the window.
    fn refill_per_micro(&self) -> f64 {
        let spread = (self.requests as f64 - self.burst()).max(1.0);
        spread / (self.per_seconds as f64 * 1e6)
    }
}

impl Bucket {
    /// A full bucket for `window` at `now`.
    pub fn full(window: RateWindow, now: i64) -> Bucket {
        Bucket { window, tokens: window.burst(), refilled_at: now }
    }

    /// The bucket at `now`: refilled evenly over its window, never above its burst.
    pub fn at(self, now: i64) -> Bucket {
        let elapsed = (now - self.refilled_at).max(0) as f64;
        let tokens = (self.tokens + elapsed * self.window.refill_per_micro()).min(self.window.burst());
        Bucket { tokens, refilled_at: now, ..self }
    }

    /// How long until it holds one call (zero when it does).
    pub fn wait_micros(&self) -> i64 {
        if self.tokens >= 1.0 {
            return 0;
        }
        ((1.0 - self.tokens) / self.window.refill_per_micro()).ceil() as i64
    }
}

/// The buckets stored as JSON (none for anything unreadable: they start full).
pub fn buckets_from_json(stored: &str) -> Vec<Bucket> {
    serde_json::from_str(stored).unwrap_or_default()
}

/// The buckets as stored.
pub fn buckets_to_json(buckets: &[Bucket]) -> String {
    serde_json::to_string(buckets).unwrap_or_default()
}

/// Spends up to `wanted` calls from every bucket at `now`, as many as each holds (at least
/// one); otherwise the wait until they all hold one. Buckets of windows no longer configured are
/// dropped; new windows start full.
pub fn take_many(stored: &[Bucket], windows: &[RateWindow], now: i64, wanted: u32) -> Result<(Vec<Bucket>, u32), i64> {
    let current: Vec<Bucket> = windows
        .iter()
        .map(|window| {
            stored
                .iter()
                .find(|bucket| bucket.window == *window)
                .map_or_else(|| Bucket::full(*window, now), |bucket| bucket.at(now))
        })
        .collect();
    let wait = current.iter().map(Bucket::wait_micros).max().unwrap_or(0);
    if wait > 0 {
        return Err(wait);
    }
    let held = current.iter().map(|bucket| bucket.tokens.floor() as u64).min().unwrap_or(u64::MAX);
    let granted = u32::try_from(held.min(u64::from(wanted.max(1)))).unwrap_or(1);
    let spent = current.into_iter().map(|bucket| Bucket { tokens: bucket.tokens - f64::from(granted), ..bucket });
    Ok((spent.collect(), granted))
}

/// Spends one call, as [`take_many`] does.
pub fn take(stored: &[Bucket], windows: &[RateWindow], now: i64) -> Result<Vec<Bucket>, i64> {
    take_many(stored, windows, now, 1).map(|(buckets, _)| buckets)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECOND: i64 = 1_000_000;

    /// The times a caller that calls whenever it may gets its calls, over `span` µs.
    fn greedy(windows: &[RateWindow], span: i64) -> Vec<i64> {
        let (mut buckets, mut now, mut granted) = (Vec::new(), 0, Vec::new());
        while now < span {
            match take(&buckets, windows, now) {
                Ok(spent) => {
                    buckets = spent;
                    granted.push(now);
                }
                Err(wait) => now += wait,
            }
        }
        granted
    }

    /// The most calls in any `window` µs of `times`.
    fn busiest(times: &[i64], window: i64) -> usize {
        times.iter().map(|start| times.iter().filter(|t| (*start..*start + window).contains(*t)).count()).max().unwrap()
    }

    #[test]
    fn no_window_of_the_limit_ever_sees_more_calls_than_it_allows() {
        for requests in [1, 5, 60, 250] {
            let windows = [RateWindow { requests, per_seconds: 60 }];
            let times = greedy(&windows, 300 * SECOND);
            let most = busiest(&times, 60 * SECOND);
            assert!(most <= requests as usize, "{requests}/min let {most} calls into one minute");
            assert!(most + 1 >= requests as usize, "{requests}/min used only {most} of a minute's calls");
        }
    }

    #[test]
    fn a_burst_of_a_tenth_goes_at_once_then_calls_are_spaced() {
        let windows = [RateWindow { requests: 60, per_seconds: 60 }];
        let times = greedy(&windows, 5 * SECOND);
        assert_eq!(&times[..6], &[0; 6], "a tenth of the window at once");
        let spacing = times[7] - times[6];
        assert!((SECOND..SECOND * 12 / 10).contains(&spacing), "then one every 60/54 s: {spacing}");
    }

    #[test]
    fn several_calls_are_granted_at_once_up_to_what_every_bucket_holds() {
        let windows = [RateWindow { requests: 100, per_seconds: 60 }, RateWindow { requests: 40, per_seconds: 3_600 }];
        let (buckets, granted) = take_many(&[], &windows, 0, 16).unwrap();
        assert_eq!(granted, 4, "the smallest burst decides");
        assert!(take_many(&buckets, &windows, 0, 16).is_err());
        assert_eq!(take_many(&[], &windows, 0, 0).unwrap().1, 1, "asking for none still takes one");
    }

    #[test]
    fn every_window_must_allow_the_call() {
        let windows = [RateWindow { requests: 250, per_seconds: 60 }, RateWindow { requests: 2, per_seconds: 3_600 }];
        let times = greedy(&windows, 3_600 * SECOND);
        assert!(busiest(&times, 3_600 * SECOND) <= 2, "the hourly window decides: {times:?}");
    }

    #[test]
    fn changed_windows_start_full_and_dropped_ones_are_forgotten() {
        let old = take(&[], &[RateWindow { requests: 10, per_seconds: 60 }], 0).unwrap();
        let new = take(&old, &[RateWindow { requests: 50, per_seconds: 60 }], 0).unwrap();
        assert_eq!(new.len(), 1);
        assert_eq!(new[0].tokens, 4.0, "the new window's burst of 5, less the call");
    }

    #[test]
    fn accounts_without_their_own_windows_use_the_published_ones() {
        assert_eq!(windows_of("digitalocean", ""), DIGITALOCEAN);
        assert_eq!(windows_of("gke", "[]"), GKE);
        assert_eq!(
            windows_of("digitalocean", r#"[{"requests":60,"perSeconds":5}]"#),
            vec![RateWindow { requests: 60, per_seconds: 5 }]
        );
        assert_eq!(problems(&[RateWindow { requests: 0, per_seconds: 0 }]).len(), 2);
    }
}
