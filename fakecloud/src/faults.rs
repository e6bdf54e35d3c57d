//! The fake cloud's controls for tests: latency, error rates per route, scripted failures of
//! the next call on a resource, failures of every matching call until cleared (by call or by
//! account), and a rate-limit mode.

use std::time::{Duration, Instant};

use crate::calls::{Call, Family};

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
    /// The call fails as the provider fails it for this class: its status, body and headers
    /// (or, for [`FaultClass::Unreachable`], no answer at all). Applies to every call of every
    /// emulated API, reads, lists and Redfish included, before the emulator sees it.
    Class(FaultClass),
}

/// A class of failure, answered the way the provider the call went to answers it (the exact
/// answers per API are in `fault_answers`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FaultClass {
    /// A server-side failure worth retrying: 503 (Google), 500 (DigitalOcean), 500
    /// `InternalError` (Redfish).
    Retryable,
    /// Too many requests: 429 with `Retry-After` (Google's also carries a `RetryInfo`;
    /// DigitalOcean's `ratelimit-remaining: 0`); a Redfish BMC answers 503
    /// `ServiceTemporarilyUnavailable` with `Retry-After`.
    Throttled { retry_after: Duration },
    /// A quota or limit is reached: Google 429 `RESOURCE_EXHAUSTED` with reason
    /// `QUOTA_EXCEEDED` (Compute Engine 403 `quotaExceeded`), DigitalOcean 422 "will exceed your
    /// droplet limit", Redfish 400 `CreateLimitReachedForResource`.
    Quota,
    /// The credentials are valid but lack the right: 403 (Google `IAM_PERMISSION_DENIED`,
    /// Redfish `InsufficientPrivilege`).
    Permission,
    /// The credentials are refused (revoked, deleted, disabled): 401, and Google's token
    /// endpoint refuses the service account's grant (`invalid_grant`). Class `permission`.
    Unauthenticated,
    /// The request as such is refused: 400 `INVALID_ARGUMENT`, DigitalOcean 422.
    Invalid,
    /// 409: it exists already, or something else is under way on it.
    Conflict,
    /// 404.
    NotFound,
    /// No answer: the connection is closed as soon as the request is read, so the client sees
    /// a transport error. (An untrusted certificate is the other unreachable: see
    /// `FakeCloud::untrusted_https_url`.)
    Unreachable,
    /// Only a person can fix it: Google 403 `BILLING_DISABLED`, DigitalOcean 403 for a locked
    /// account, Redfish 403 `PasswordChangeRequired` (a BMC whose password must be changed
    /// before it lets anyone in).
    NeedsHuman,
}

/// A rule that fails every matching call until it is cleared.
#[derive(Clone, Debug, PartialEq)]
pub struct FaultRule {
    pub id: u64,
    pub scope: FaultScope,
    pub class: FaultClass,
    /// How many calls it failed.
    pub hits: u64,
}

/// Which calls a [`FaultRule`] fails.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FaultScope {
    /// Calls of `kind` with `verb` on the object (or parent) `name`; each may be `*`.
    Calls { kind: String, verb: String, name: String },
    /// Every call made on an account: a Google project or service-account email (its token
    /// requests too), a DigitalOcean token, a Redfish system id.
    Account(String),
}

impl FaultScope {
    fn matches(&self, call: &Call) -> bool {
        let is = |pattern: &str, value: &str| pattern == "*" || pattern == value;
        match self {
            FaultScope::Calls { kind, verb, name } => {
                is(kind, &call.kind) && is(verb, &call.verb) && (name == "*" || call.names.iter().any(|n| n == name))
            }
            FaultScope::Account(account) => call.accounts.iter().any(|a| a == account),
        }
    }
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
    /// Failures of every matching call, until cleared.
    pub rules: Vec<FaultRule>,
    /// The id of the last rule made.
    pub last_rule: u64,
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
    /// Takes the first scripted failure for `verb` on `kind` `name` that its emulator applies
    /// (a refusal or an operation's error, not a [`Failure::Class`]), if any.
    pub fn take_scripted(&mut self, kind: &str, verb: &str, name: &str) -> Option<Failure> {
        let index = self.scripted.iter().position(|s| {
            !matches!(s.failure, Failure::Class(_))
                && s.kind == kind
                && s.verb == verb
                && (s.name == name || s.name == "*")
        })?;
        Some(self.scripted.remove(index).failure)
    }

    /// The class `call` fails with: a scripted [`Failure::Class`] for it (taken), else the first
    /// rule in force that matches it (counted).
    pub fn class_for(&mut self, call: &Call) -> Option<FaultClass> {
        let scripted = self.scripted.iter().position(|s| {
            let scope = FaultScope::Calls { kind: s.kind.clone(), verb: s.verb.clone(), name: s.name.clone() };
            matches!(s.failure, Failure::Class(_)) && scope.matches(call)
        });
        if let Some(index) = scripted {
            let Failure::Class(class) = self.scripted.remove(index).failure else { unreachable!("matched a class") };
            return Some(class);
        }
        // An account's failure reaches its token requests only where Google's token endpoint
        // would fail too: revoked credentials, or an endpoint that does not answer.
        let reaches = |rule: &FaultRule| {
            call.family != Family::OAuth
                || matches!(rule.scope, FaultScope::Calls { .. })
                || matches!(rule.class, FaultClass::Unauthenticated | FaultClass::Unreachable | FaultClass::Retryable)
        };
        let rule = self.rules.iter_mut().find(|rule| rule.scope.matches(call) && reaches(rule))?;
        rule.hits += 1;
        Some(rule.class.clone())
    }

    /// Ends the rule `id`; false if there is none.
    pub fn remove_rule(&mut self, id: u64) -> bool {
        let before = self.rules.len();
        self.rules.retain(|rule| rule.id != id);
        self.rules.len() < before
    }

    /// Ends every rule and drops every scripted failure.
    pub fn clear(&mut self) {
        self.rules.clear();
        self.scripted.clear();
    }

    /// Puts a rule in force; returns its id.
    pub fn add_rule(&mut self, scope: FaultScope, class: FaultClass) -> u64 {
        self.last_rule += 1;
        self.rules.push(FaultRule { id: self.last_rule, scope, class, hits: 0 });
        self.last_rule
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

    fn call(kind: &str, verb: &str, names: &[&str], accounts: &[&str]) -> Call {
        Call {
            family: crate::calls::Family::Gke,
            kind: kind.into(),
            verb: verb.into(),
            names: names.iter().map(|n| n.to_string()).collect(),
            accounts: accounts.iter().map(|a| a.to_string()).collect(),
            resource: String::new(),
        }
    }

    #[test]
    fn a_scripted_class_fails_the_next_matching_call_and_is_not_the_emulators() {
        let mut faults = Faults::default();
        faults.scripted.push(ScriptedFailure {
            kind: "nodePool".into(),
            verb: "*".into(),
            name: "c".into(),
            failure: Failure::Class(FaultClass::Conflict),
        });
        assert_eq!(faults.take_scripted("nodePool", "update", "np"), None);
        assert_eq!(faults.class_for(&call("cluster", "get", &["c"], &[])), None);
        assert_eq!(faults.class_for(&call("nodePool", "get", &["np", "c"], &[])), Some(FaultClass::Conflict));
        assert_eq!(faults.class_for(&call("nodePool", "get", &["np", "c"], &[])), None);
    }

    #[test]
    fn a_rule_fails_every_matching_call_until_it_is_removed() {
        let mut faults = Faults::default();
        let id = faults.add_rule(FaultScope::Account("acct".into()), FaultClass::Unauthenticated);
        let on_account = call("droplet", "list", &["*"], &["acct"]);
        for _ in 0..3 {
            assert_eq!(faults.class_for(&on_account), Some(FaultClass::Unauthenticated));
        }
        assert_eq!(faults.class_for(&call("droplet", "list", &["*"], &["other"])), None);
        assert_eq!(faults.rules[0].hits, 3);
        assert!(faults.remove_rule(id));
        assert!(!faults.remove_rule(id));
        assert_eq!(faults.class_for(&on_account), None);
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
