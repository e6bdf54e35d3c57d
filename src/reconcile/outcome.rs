//! What a pass returns, and how that becomes the object's next due time.

use std::time::Duration;

use crate::domain::states::LifecycleState;
use rand::Rng;

/// When to run the next pass.
#[derive(Clone, Debug, PartialEq)]
pub enum Next {
    /// Still converging: again after the converging interval.
    Converging,
    /// Converged: again after the settled interval (or at the next change).
    Settled,
    /// Again after this long.
    After(Duration),
    /// The object is gone: forget it.
    Remove,
    /// A failure worth retrying soon: the kind's backoff.
    Transient(String),
    /// A failure retried on its own backoff (the spec's delete backoff, say).
    Retry {
        /// The failure's message.
        error: String,
        /// Delays by attempt.
        backoff: Backoff,
    },
    /// A failure that retrying will not fix: recorded, retried on the settled interval or at the
    /// next change.
    Permanent(String),
}

/// A pass's result: what next, and the object's state if the pass changed it.
#[derive(Clone, Debug, PartialEq)]
pub struct Outcome {
    /// When to come back.
    pub next: Next,
    /// The object's new state (for stuck detection), if it changed.
    pub state: Option<String>,
}

impl From<Next> for Outcome {
    fn from(next: Next) -> Self {
        Outcome { next, state: None }
    }
}

impl Outcome {
    /// Converged.
    pub fn settled() -> Self {
        Next::Settled.into()
    }

    /// Still converging.
    pub fn converging() -> Self {
        Next::Converging.into()
    }

    /// The object is gone: forget it.
    pub fn remove() -> Self {
        Next::Remove.into()
    }

    /// Again after `delay`.
    pub fn after(delay: Duration) -> Self {
        Next::After(delay).into()
    }

    /// A transient failure.
    pub fn transient(error: impl Into<String>) -> Self {
        Next::Transient(error.into()).into()
    }

    /// The outcome of one run of a periodic sweep: `report` is told what the sweep did and the
    /// next run comes after `interval`; a sweep the store failed is retried as transient.
    pub fn sweep<T>(swept: crate::error::Result<T>, interval: Duration, report: impl FnOnce(T)) -> Self {
        match swept {
            Ok(done) => {
                report(done);
                Self::after(interval)
            }
            Err(error) => Self::transient(error.to_string()),
        }
    }

    /// A permanent failure.
    pub fn permanent(error: impl Into<String>) -> Self {
        Next::Permanent(error.into()).into()
    }

    /// A failure retried on its own backoff (a refused delete on the spec's delete backoff).
    pub fn retry(error: impl Into<String>, backoff: Backoff) -> Self {
        Next::Retry { error: error.into(), backoff }.into()
    }

    /// The same, with the object now in `state`.
    pub fn in_state(mut self, state: impl Into<String>) -> Self {
        self.state = Some(state.into());
        self
    }

    /// The error this outcome records, if it is a failure.
    pub fn error(&self) -> Option<&str> {
        match &self.next {
            Next::Transient(error) | Next::Permanent(error) | Next::Retry { error, .. } => Some(error),
            _ => None,
        }
    }
}

/// Exponential backoff: `base`, twice that, ... at most `cap`, each shortened by up to `jitter`
/// of itself at random so that objects that failed together do not retry together.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Backoff {
    /// The first delay.
    pub base: Duration,
    /// The longest delay.
    pub cap: Duration,
    /// The fraction (0 to 1) a delay may be shortened by.
    pub jitter: f64,
}

impl Backoff {
    /// Transient failures: 5 s, 10 s, ... at most 5 minutes, with jitter.
    pub const TRANSIENT: Backoff = Backoff { base: Duration::from_secs(5), cap: Duration::from_secs(300), jitter: 0.2 };

    /// The spec's delete retries: 5, 10, 20 minutes ... at most 6 hours.
    pub const DELETE: Backoff =
        Backoff { base: Duration::from_secs(300), cap: Duration::from_secs(6 * 3600), jitter: 0.0 };

    /// A provider quota used up (a quota is not a rate: retrying at once only burns calls):
    /// 1, 2, 4 minutes ... at most an hour, with jitter; a change wakes it sooner.
    pub const QUOTA: Backoff = Backoff { base: Duration::from_secs(60), cap: Duration::from_secs(3600), jitter: 0.2 };

    /// Failures a person must fix (refused credentials, a refused request, a suspended
    /// account): 10, 20, 40 minutes ... at most 6 hours; a change to the resource or its account
    /// wakes it sooner.
    pub const PERSON: Backoff =
        Backoff { base: Duration::from_secs(600), cap: Duration::from_secs(6 * 3600), jitter: 0.0 };

    /// The delay before retry number `attempt` (1 for the first failure).
    pub fn delay(&self, attempt: i64) -> Duration {
        let exponent = attempt.clamp(1, 40) as u32 - 1;
        let delay = self.base.saturating_mul(2u32.saturating_pow(exponent.min(31))).min(self.cap);
        if self.jitter <= 0.0 {
            return delay;
        }
        let cut = rand::rng().random_range(0.0..self.jitter.min(1.0));
        delay.mul_f64(1.0 - cut)
    }
}

/// The delays of a reconciler that calls a provider: after transient failures, after the
/// provider refused a delete, and how long an object may stay in a transient state before it
/// counts as stuck.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Timings {
    /// Delays after transient failures.
    pub backoff: Backoff,
    /// Delays after the provider refused a delete.
    pub delete_backoff: Backoff,
    /// How long an object may stay in a transient state before it is reported stuck.
    pub state_deadline: Duration,
}

impl Timings {
    /// The spec's: [`Backoff::TRANSIENT`], [`Backoff::DELETE`], stuck after an hour.
    pub const SPEC: Timings = Timings {
        backoff: Backoff::TRANSIENT,
        delete_backoff: Backoff::DELETE,
        state_deadline: Duration::from_secs(3600),
    };

    /// The stuck deadline of an object of a kind whose states are `S`, in `state`: only where
    /// the reconciler is still working (an unknown state has none).
    pub fn deadline_in<S: LifecycleState>(&self, state: &str) -> Option<Duration> {
        state.parse::<S>().is_ok_and(S::is_transient).then_some(self.state_deadline)
    }
}

/// A kind's intervals.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Schedule {
    /// Between passes while converging.
    pub converging: Duration,
    /// Between passes once settled.
    pub settled: Duration,
    /// Delays after transient failures.
    pub backoff: Backoff,
}

impl Schedule {
    /// The spec's intervals, with `backoff` after transient failures.
    pub fn with_backoff(backoff: Backoff) -> Self {
        Schedule { backoff, ..Schedule::default() }
    }
}

impl Default for Schedule {
    fn default() -> Self {
        Schedule { converging: Duration::from_secs(30), settled: Duration::from_secs(300), backoff: Backoff::TRANSIENT }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::states::{ClusterState, LoadBalancerState};

    #[test]
    fn only_a_state_the_reconciler_works_in_has_a_stuck_deadline() {
        let hour = Some(Duration::from_secs(3600));
        assert_eq!(Timings::SPEC.deadline_in::<ClusterState>("provisioning"), hour);
        assert_eq!(Timings::SPEC.deadline_in::<ClusterState>("ready"), None);
        assert_eq!(Timings::SPEC.deadline_in::<LoadBalancerState>("provisioning"), None, "not a load balancer's");
        assert_eq!(Timings::SPEC.deadline_in::<LoadBalancerState>("updating"), hour);
    }

    #[test]
    fn delete_backoff_doubles_from_five_minutes_up_to_six_hours() {
        let minutes: Vec<u64> = (1..=9).map(|a| Backoff::DELETE.delay(a).as_secs() / 60).collect();
        assert_eq!(minutes, vec![5, 10, 20, 40, 80, 160, 320, 360, 360]);
    }

    #[test]
    fn jitter_only_shortens_and_stays_within_its_fraction() {
        for attempt in 1..10 {
            let plain = Backoff { jitter: 0.0, ..Backoff::TRANSIENT }.delay(attempt);
            let jittered = Backoff::TRANSIENT.delay(attempt);
            assert!(jittered <= plain && jittered >= plain.mul_f64(0.8), "{attempt}: {jittered:?} vs {plain:?}");
        }
    }
}
