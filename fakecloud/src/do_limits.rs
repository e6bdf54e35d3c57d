//! The DigitalOcean team the fake emulates: the API tokens it accepts (every one sees the same
//! objects), each token's request budget (`rate_windows`) with the `ratelimit-*` headers and
//! 429 DigitalOcean answers, and what each token was answered, for tests.

use std::collections::{BTreeMap, BTreeSet};
use std::ops::Add;
use std::time::Instant;

use axum::response::Response;
use http::HeaderValue;

use crate::rate_windows::{Budgets, RateWindow, Verdict};

/// How many requests an account was answered, by outcome.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CallCounts {
    /// Answered otherwise than below (a success or any other error).
    pub answered: u64,
    /// Answered `429`: past a rate limit (or failed so by a fault).
    pub throttled: u64,
    /// Answered `401`: an unknown or revoked credential.
    pub refused: u64,
}

impl CallCounts {
    /// Counts one answer of `status`.
    pub fn record(&mut self, status: u16) {
        match status {
            401 => self.refused += 1,
            429 => self.throttled += 1,
            _ => self.answered += 1,
        }
    }
}

impl Add for CallCounts {
    type Output = CallCounts;

    fn add(self, other: CallCounts) -> CallCounts {
        CallCounts {
            answered: self.answered + other.answered,
            throttled: self.throttled + other.throttled,
            refused: self.refused + other.refused,
        }
    }
}

/// The tokens, their budgets and their counts.
#[derive(Debug, Default)]
pub struct DoTokens {
    accepted: BTreeSet<String>,
    pub budgets: Budgets,
    counts: BTreeMap<String, CallCounts>,
}

impl DoTokens {
    pub fn new(token: &str, windows: &[RateWindow]) -> DoTokens {
        DoTokens { accepted: BTreeSet::from([token.to_owned()]), budgets: Budgets::new(windows), ..Default::default() }
    }

    pub fn accept(&mut self, token: &str) {
        self.accepted.insert(token.to_owned());
    }

    pub fn accepts(&self, token: Option<&str>) -> bool {
        token.is_some_and(|token| self.accepted.contains(token))
    }

    /// Counts the request of an accepted token against its budget; the verdict, `None` if the
    /// token is not accepted or no limit is in force.
    pub fn admit(&mut self, token: Option<&str>, now: Instant) -> Option<Verdict> {
        let token = token.filter(|token| self.accepted.contains(*token))?;
        self.budgets.admit(token, now)
    }

    /// The budget of `token` as a request would see it, counting nothing.
    pub fn peek(&self, token: Option<&str>, now: Instant) -> Option<Verdict> {
        self.budgets.peek(token.unwrap_or_default(), now)
    }

    /// Counts one answer of `status` to `token` (none: under the empty token).
    pub fn record(&mut self, token: Option<&str>, status: u16) {
        self.counts.entry(token.unwrap_or_default().to_owned()).or_default().record(status);
    }

    /// What `token` was answered; every token's together for `None`.
    pub fn counts(&self, token: Option<&str>) -> CallCounts {
        match token {
            Some(token) => self.counts.get(token).copied().unwrap_or_default(),
            None => self.counts.values().copied().fold(CallCounts::default(), Add::add),
        }
    }
}

/// DigitalOcean's answer past a limit: 429 `too_many_requests`, `retry-after` in seconds.
pub fn too_many_requests(verdict: &Verdict, now: Instant, request_id: &str) -> Response {
    let mut response = crate::digitalocean::error(429, "API Rate limit exceeded.", request_id);
    let seconds = crate::fault_answers::seconds(verdict.retry_after);
    response.headers_mut().insert("retry-after", HeaderValue::from(seconds));
    with_rate_headers(response, verdict, now)
}

/// Sets the `ratelimit-*` headers of `verdict` (DigitalOcean's hourly window).
pub fn with_rate_headers(mut response: Response, verdict: &Verdict, now: Instant) -> Response {
    let headers = response.headers_mut();
    headers.insert("ratelimit-limit", HeaderValue::from(verdict.limit));
    headers.insert("ratelimit-remaining", HeaderValue::from(verdict.remaining));
    headers.insert("ratelimit-reset", HeaderValue::from(verdict.reset_unix(now)));
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_accepted_tokens_spend_a_budget_and_counts_add_up() {
        let mut tokens = DoTokens::new("a", &RateWindow::digitalocean());
        let now = Instant::now();
        assert_eq!(tokens.admit(Some("b"), now), None, "an unknown token is refused, not counted");
        tokens.accept("b");
        assert_eq!(tokens.admit(Some("b"), now).unwrap().remaining, 4999);
        assert_eq!(tokens.peek(Some("a"), now).unwrap().remaining, 5000);
        for status in [200, 429, 401, 404] {
            tokens.record(Some("a"), status);
        }
        tokens.record(Some("b"), 200);
        assert_eq!(tokens.counts(Some("a")), CallCounts { answered: 2, throttled: 1, refused: 1 });
        assert_eq!(tokens.counts(None), CallCounts { answered: 3, throttled: 1, refused: 1 });
    }
}
