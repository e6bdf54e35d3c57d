//! The fake cloud's controls for tests: latency, error rates per route, scripted failures of
//! the next call on a resource, and a rate-limit mode.

use std::time::{Duration, Instant};

/// A failure scripted for the next matching call.
#[derive(Clone, Debug, PartialEq)]
pub struct ScriptedFailure {
    /// The kind of resource: `cluster`, `nodePool`, `loadBalancer`, `droplet`, `vpc`, `certificate`.
    pub kind: String,
    /// The verb: `create`, `get`, `update`, `delete`.
    pub verb: String,
    /// The resource's name (or id), `*` for any.
    pub name: String,
    /// How it fails.
    pub failure: Failure,
}

/// How a scripted call fails.
#[derive(Clone, Debug, PartialEq)]
pub enum Failure {
    /// The call is refused with this HTTP status and message.
    Refuse { status: u16, message: String },
    /// (GKE) The call is accepted; its operation ends `DONE` with this error, and the cluster or
    /// pool goes to `ERROR`.
    OperationError { message: String },
}

/// An error rate on requests whose path contains `route`.
#[derive(Clone, Debug, PartialEq)]
pub struct ErrorRate {
    /// A substring of the path (`/v1/`, `/v2/load_balancers`).
    pub route: String,
    /// The share of matching requests that fail, 0.0 to 1.0.
    pub rate: f64,
    /// The status they fail with.
    pub status: u16,
}

/// A rate limit on the provider APIs (every route but the controls and the token endpoint).
#[derive(Clone, Debug, PartialEq)]
pub struct RateLimitMode {
    /// Requests allowed per window.
    pub limit: u32,
    /// The window.
    pub window: Duration,
}

/// The faults in force.
#[derive(Debug, Default)]
pub struct Faults {
    /// Added to every provider request.
    pub latency: Duration,
    /// Random failures by route.
    pub error_rates: Vec<ErrorRate>,
    /// Failures of specific next calls, each used once.
    pub scripted: Vec<ScriptedFailure>,
    /// The rate limit, if on.
    pub rate_limit: Option<RateLimitMode>,
    /// The current rate-limit window: when it started and how many requests it has seen.
    pub window: Option<(Instant, u32)>,
}

/// What the rate limiter says of one request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RateDecision {
    /// Whether the request may go on.
    pub allowed: bool,
    /// Requests allowed per window.
    pub limit: u32,
    /// Requests left.
    pub remaining: u32,
    /// Seconds until the window resets (at least 1).
    pub reset_in: u64,
}

impl Faults {
    /// Takes the first scripted failure for `verb` on `kind` `name`, if any.
    pub fn take_scripted(&mut self, kind: &str, verb: &str, name: &str) -> Option<Failure> {
        let index =
            self.scripted.iter().position(|s| s.kind == kind && s.verb == verb && (s.name == name || s.name == "*"))?;
        Some(self.scripted.remove(index).failure)
    }

    /// The status a random failure gives `path`, if it draws one.
    pub fn random_failure(&self, path: &str) -> Option<u16> {
        let rule = self.error_rates.iter().find(|r| path.contains(&r.route))?;
        (rand::random::<f64>() < rule.rate).then_some(rule.status)
    }

    /// Counts one request against the rate limit.
    pub fn rate(&mut self, now: Instant) -> Option<RateDecision> {
        let mode = self.rate_limit.clone()?;
        let (started, count) = match self.window {
            Some((started, count)) if now.duration_since(started) < mode.window => (started, count),
            _ => (now, 0),
        };
        let allowed = count < mode.limit;
        let count = if allowed { count + 1 } else { count };
        self.window = Some((started, count));
        let reset_in = mode.window.saturating_sub(now.duration_since(started)).as_secs_f64().ceil().max(1.0) as u64;
        Some(RateDecision { allowed, limit: mode.limit, remaining: mode.limit - count, reset_in })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scripted_failures_fire_once_on_their_resource_only() {
        let mut faults = Faults::default();
        let failure = Failure::Refuse { status: 500, message: "boom".into() };
        faults.scripted.push(ScriptedFailure {
            kind: "cluster".into(),
            verb: "create".into(),
            name: "a".into(),
            failure: failure.clone(),
        });
        assert_eq!(faults.take_scripted("cluster", "create", "b"), None);
        assert_eq!(faults.take_scripted("cluster", "create", "a"), Some(failure));
        assert_eq!(faults.take_scripted("cluster", "create", "a"), None);
    }

    #[test]
    fn the_rate_limit_refuses_past_the_limit_until_the_window_ends() {
        let mut faults = Faults {
            rate_limit: Some(RateLimitMode { limit: 2, window: Duration::from_secs(10) }),
            ..Default::default()
        };
        let start = Instant::now();
        assert!(faults.rate(start).unwrap().allowed);
        assert_eq!(faults.rate(start).unwrap().remaining, 0);
        let refused = faults.rate(start + Duration::from_secs(3)).unwrap();
        assert!(!refused.allowed);
        assert_eq!(refused.reset_in, 7);
        assert!(faults.rate(start + Duration::from_secs(11)).unwrap().allowed);
    }
}
