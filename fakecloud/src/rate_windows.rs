//! Request budgets per account over sliding windows, as DigitalOcean documents its own: every
//! request holds a place in each window for the window's length after it was made, so a window
//! frees one place at a time rather than all at once. Refused requests hold no place, so the
//! wait a refusal announces is exact.

use std::collections::{BTreeMap, VecDeque};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// At most `requests` requests within any `window`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RateWindow {
    pub requests: u32,
    pub window: Duration,
}

impl RateWindow {
    /// DigitalOcean's limits per API token: 250 requests a minute and 5,000 an hour.
    pub fn digitalocean() -> Vec<RateWindow> {
        vec![
            RateWindow { requests: 250, window: Duration::from_secs(60) },
            RateWindow { requests: 5000, window: Duration::from_secs(3600) },
        ]
    }
}

/// What the budget of an account says of a request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Verdict {
    /// Whether the request may go on (it then holds a place in every window).
    pub allowed: bool,
    /// The requests the longest window allows (DigitalOcean reports its hourly window).
    pub limit: u32,
    /// Places left in the longest window; 0 while any window is full (the next request would
    /// be refused), as DigitalOcean reports a full burst window.
    pub remaining: u32,
    /// When the oldest request held in the longest window leaves it (now if none is held).
    pub reset_at: Instant,
    /// For a refused request: until every full window frees a place.
    pub retry_after: Duration,
}

impl Verdict {
    /// [`Verdict::reset_at`] in Unix seconds, rounded up.
    pub fn reset_unix(&self, now: Instant) -> u64 {
        let wait = self.reset_at.saturating_duration_since(now);
        let at = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default() + wait;
        at.as_secs() + u64::from(at.subsec_nanos() > 0)
    }
}

/// The budgets of every account under the same windows.
#[derive(Debug, Default)]
pub struct Budgets {
    windows: Vec<RateWindow>,
    /// When each account's admitted requests were made, oldest first, as far back as the
    /// longest window reaches.
    admitted: BTreeMap<String, VecDeque<Instant>>,
}

impl Budgets {
    pub fn new(windows: &[RateWindow]) -> Budgets {
        Budgets { windows: windows.to_vec(), admitted: BTreeMap::new() }
    }

    /// The windows in force; none: no limit.
    pub fn windows(&self) -> &[RateWindow] {
        &self.windows
    }

    /// Puts `windows` in force; the requests already made keep their places in the new ones.
    pub fn set_windows(&mut self, windows: &[RateWindow]) {
        self.windows = windows.to_vec();
    }

    /// Decides on a request of `account` at `now` and, if it is allowed, counts it. `None`
    /// when no window is in force.
    pub fn admit(&mut self, account: &str, now: Instant) -> Option<Verdict> {
        let held = self.admitted.entry(account.to_owned()).or_default();
        let longest = self.windows.iter().map(|w| w.window).max()?;
        while held.front().is_some_and(|made| now.duration_since(*made) >= longest) {
            held.pop_front();
        }
        let refused = verdict(&self.windows, held, now);
        if !refused.allowed {
            return Some(refused);
        }
        held.push_back(now);
        Some(Verdict { allowed: true, ..verdict(&self.windows, held, now) })
    }

    /// What a request of `account` at `now` would be told, without counting it. `None` when no
    /// window is in force.
    pub fn peek(&self, account: &str, now: Instant) -> Option<Verdict> {
        self.windows.iter().map(|w| w.window).max()?;
        let empty = VecDeque::new();
        Some(verdict(&self.windows, self.admitted.get(account).unwrap_or(&empty), now))
    }
}

/// The verdict on the next request given the requests `held`; `windows` is not empty.
fn verdict(windows: &[RateWindow], held: &VecDeque<Instant>, now: Instant) -> Verdict {
    let mut allowed = true;
    let mut retry_after = Duration::ZERO;
    for window in windows {
        let inside: Vec<Instant> =
            held.iter().copied().filter(|made| now.duration_since(*made) < window.window).collect();
        let used = inside.len();
        let places = window.requests as usize;
        if used < places {
            continue;
        }
        allowed = false;
        // The window has room again once all but `places - 1` of the requests in it left it.
        let frees_at = match places {
            0 => now + window.window,
            _ => inside[used - places] + window.window,
        };
        retry_after = retry_after.max(frees_at.saturating_duration_since(now));
    }
    let reported = windows.iter().max_by_key(|w| w.window).expect("windows are not empty");
    let inside = held.iter().filter(|made| now.duration_since(**made) < reported.window);
    let oldest = inside.clone().next().copied();
    let remaining = if allowed { reported.requests.saturating_sub(inside.count() as u32) } else { 0 };
    Verdict {
        allowed,
        limit: reported.requests,
        remaining,
        reset_at: oldest.map_or(now, |made| made + reported.window),
        retry_after,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn budgets() -> Budgets {
        Budgets::new(&[
            RateWindow { requests: 3, window: Duration::from_secs(10) },
            RateWindow { requests: 5, window: Duration::from_secs(100) },
        ])
    }

    #[test]
    fn the_request_past_a_window_is_refused_until_its_oldest_request_leaves_it() {
        let mut budgets = budgets();
        let start = Instant::now();
        for second in 0..3 {
            let verdict = budgets.admit("t", start + Duration::from_secs(second)).unwrap();
            assert!(verdict.allowed);
            // Once the short window is full, nothing remains, whatever the long one holds.
            let remaining = if second == 2 { 0 } else { 4 - second as u32 };
            assert_eq!((verdict.limit, verdict.remaining), (5, remaining));
            assert_eq!(verdict.reset_at, start + Duration::from_secs(100), "the oldest request's expiry");
        }
        let refused = budgets.admit("t", start + Duration::from_secs(4)).unwrap();
        assert!(!refused.allowed);
        assert_eq!((refused.remaining, refused.retry_after), (0, Duration::from_secs(6)));
        // The first request leaves the short window at 10 s: one place, not three.
        assert!(budgets.admit("t", start + Duration::from_secs(10)).unwrap().allowed);
        assert!(!budgets.admit("t", start + Duration::from_secs(10)).unwrap().allowed);
    }

    #[test]
    fn the_long_window_refuses_once_full_and_announces_the_longest_wait() {
        let mut budgets = budgets();
        let start = Instant::now();
        for at in [0, 20, 40, 60, 80] {
            assert!(budgets.admit("t", start + Duration::from_secs(at)).unwrap().allowed);
        }
        let refused = budgets.admit("t", start + Duration::from_secs(90)).unwrap();
        assert!(!refused.allowed);
        assert_eq!(refused.retry_after, Duration::from_secs(10));
        assert!(budgets.admit("t", start + Duration::from_secs(100)).unwrap().allowed);
    }

    #[test]
    fn accounts_have_budgets_of_their_own_and_no_window_is_no_limit() {
        let mut budgets = Budgets::new(&[RateWindow { requests: 1, window: Duration::from_secs(10) }]);
        let now = Instant::now();
        assert!(budgets.admit("a", now).unwrap().allowed);
        assert!(!budgets.admit("a", now).unwrap().allowed);
        assert!(budgets.admit("b", now).unwrap().allowed);
        assert_eq!(budgets.peek("c", now).unwrap().remaining, 1);
        budgets.set_windows(&[]);
        assert_eq!(budgets.admit("a", now), None);
    }
}
