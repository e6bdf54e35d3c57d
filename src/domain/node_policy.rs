//! What a pool's policy says about nodes that stop heartbeating: `policy.remediation`
//! (`unhealthyAfter`: seconds without a heartbeat before a node is unhealthy and remediated;
//! `maxUnhealthy`: how many unhealthy nodes remediation tolerates, a count or a percentage of
//! the pool's live nodes, past which it stops) and `policy.forgetAfter` (seconds without a
//! heartbeat after which a `notReady` node is `deleted` and its credential dies). Read from the
//! policy document with every fault named by its path, checked at the pool's create and update.
//!
//! The steps of a remediation are fixed by how the node came: a bare-metal machine is power
//! cycled through its BMC, then redeployed; a substrate's node is recreated at the provider; a
//! node that joined with a person's token is only marked, for its people to look at.

use std::time::Duration;

use serde_json::Value;

use crate::error::{FieldViolation, Result, Violations};

/// The fields of `policy.remediation`.
const FIELDS: [&str; 2] = ["unhealthyAfter", "maxUnhealthy"];
/// The shortest `unhealthyAfter`: three heartbeats of the default interval, when a node is
/// `notReady` at the earliest.
pub const MIN_UNHEALTHY_AFTER_SECONDS: u64 = 30;
/// The longest `unhealthyAfter` and `forgetAfter`: a year.
pub const MAX_SECONDS: u64 = 365 * 86_400;
/// The shortest `forgetAfter`: a minute.
pub const MIN_FORGET_AFTER_SECONDS: u64 = 60;

/// How many unhealthy nodes remediation tolerates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MaxUnhealthy {
    /// At most this many.
    Count(u64),
    /// At most this percentage of the pool's live nodes (rounded down).
    Percent(u64),
}

impl MaxUnhealthy {
    /// How many unhealthy nodes a pool of `live` nodes tolerates.
    pub fn allowed(self, live: u64) -> u64 {
        match self {
            MaxUnhealthy::Count(count) => count,
            MaxUnhealthy::Percent(percent) => live.saturating_mul(percent) / 100,
        }
    }
}

impl std::fmt::Display for MaxUnhealthy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MaxUnhealthy::Count(count) => write!(f, "{count}"),
            MaxUnhealthy::Percent(percent) => write!(f, "{percent}%"),
        }
    }
}

/// `policy.remediation`, checked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Remediation {
    /// How long a node may go without a heartbeat before it is unhealthy.
    pub unhealthy_after: Duration,
    /// How many unhealthy nodes remediation tolerates; `100%` when the policy says nothing.
    pub max_unhealthy: MaxUnhealthy,
}

/// A pool's node policy, checked.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NodePolicy {
    /// What is done about unhealthy nodes; `None` for nothing.
    pub remediation: Option<Remediation>,
    /// How long a `notReady` node is kept before it is deleted; `None` for ever.
    pub forget_after: Option<Duration>,
}

/// The node policy of a pool's policy document; `INVALID_INPUT` naming each fault.
pub fn read(policy: &Value) -> Result<NodePolicy> {
    let mut faults = Violations::new();
    let mut read = NodePolicy::default();
    let mut fault = |path: &str, why: String| faults.push(FieldViolation::new(path, why));
    match policy.get("forgetAfter") {
        None | Some(Value::Null) => {}
        Some(value) => match seconds(value, MIN_FORGET_AFTER_SECONDS) {
            Some(after) => read.forget_after = Some(after),
            None => fault(
                "policy.forgetAfter",
                format!("must be {MIN_FORGET_AFTER_SECONDS} to {MAX_SECONDS} seconds without a heartbeat; got {value}"),
            ),
        },
    }
    match policy.get("remediation") {
        None | Some(Value::Null) => {}
        Some(Value::Object(remediation)) => {
            for key in remediation.keys().filter(|key| !FIELDS.contains(&key.as_str())) {
                fault(
                    &format!("policy.remediation.{key}"),
                    format!("is not a field of policy.remediation ({})", FIELDS.join(", ")),
                );
            }
            let unhealthy_after = match remediation.get("unhealthyAfter") {
                None | Some(Value::Null) => {
                    fault(
                        "policy.remediation.unhealthyAfter",
                        format!(
                            "is required: the seconds without a heartbeat after which a node is remediated \
                             ({MIN_UNHEALTHY_AFTER_SECONDS} to {MAX_SECONDS})"
                        ),
                    );
                    None
                }
                Some(value) => {
                    let after = seconds(value, MIN_UNHEALTHY_AFTER_SECONDS);
                    if after.is_none() {
                        fault(
                            "policy.remediation.unhealthyAfter",
                            format!(
                                "must be {MIN_UNHEALTHY_AFTER_SECONDS} to {MAX_SECONDS} seconds without a heartbeat; \
                                 got {value}"
                            ),
                        );
                    }
                    after
                }
            };
            let max_unhealthy = match remediation.get("maxUnhealthy") {
                None | Some(Value::Null) => Some(MaxUnhealthy::Percent(100)),
                Some(value) => {
                    let max = max_unhealthy(value);
                    if max.is_none() {
                        fault(
                            "policy.remediation.maxUnhealthy",
                            format!(
                                "must be a count of nodes (0 or more) or a percentage of the pool (\"40%\"); got {value}"
                            ),
                        );
                    }
                    max
                }
            };
            if let (Some(unhealthy_after), Some(max_unhealthy)) = (unhealthy_after, max_unhealthy) {
                read.remediation = Some(Remediation { unhealthy_after, max_unhealthy });
            }
        }
        Some(other) => {
            fault("policy.remediation", format!("must be an object with the fields {}; got {other}", FIELDS.join(", ")))
        }
    }
    if faults.is_empty() { Ok(read) } else { Err(faults.into_error()) }
}

/// Whole seconds from `min` to [`MAX_SECONDS`].
fn seconds(value: &Value, min: u64) -> Option<Duration> {
    value.as_u64().filter(|s| (min..=MAX_SECONDS).contains(s)).map(Duration::from_secs)
}

/// A count (`3`) or a percentage (`"40%"`, 0 to 100); a count may be written as a string too.
fn max_unhealthy(value: &Value) -> Option<MaxUnhealthy> {
    if let Some(count) = value.as_u64() {
        return Some(MaxUnhealthy::Count(count));
    }
    let text = value.as_str()?.trim();
    match text.strip_suffix('%') {
        Some(percent) => percent.trim().parse().ok().filter(|p| *p <= 100).map(MaxUnhealthy::Percent),
        None => text.parse().ok().map(MaxUnhealthy::Count),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn an_empty_policy_remediates_nothing_and_forgets_nothing() {
        assert_eq!(read(&json!({})).unwrap(), NodePolicy::default());
    }

    #[test]
    fn a_policy_sets_remediation_and_forgetting() {
        let policy =
            read(&json!({"remediation": {"unhealthyAfter": 300, "maxUnhealthy": "40%"}, "forgetAfter": 86400}))
                .unwrap();
        let remediation = policy.remediation.unwrap();
        assert_eq!(remediation.unhealthy_after, Duration::from_secs(300));
        assert_eq!(remediation.max_unhealthy, MaxUnhealthy::Percent(40));
        assert_eq!(policy.forget_after, Some(Duration::from_secs(86_400)));
        let counted = read(&json!({"remediation": {"unhealthyAfter": 60, "maxUnhealthy": 2}})).unwrap();
        assert_eq!(counted.remediation.unwrap().max_unhealthy, MaxUnhealthy::Count(2));
        let default = read(&json!({"remediation": {"unhealthyAfter": 60}})).unwrap();
        assert_eq!(default.remediation.unwrap().max_unhealthy, MaxUnhealthy::Percent(100), "as Cluster API's");
    }

    #[test]
    fn a_percentage_is_of_the_live_nodes_rounded_down() {
        assert_eq!(MaxUnhealthy::Percent(40).allowed(5), 2);
        assert_eq!(MaxUnhealthy::Percent(40).allowed(4), 1);
        assert_eq!(MaxUnhealthy::Percent(100).allowed(3), 3);
        assert_eq!(MaxUnhealthy::Count(1).allowed(100), 1);
        assert_eq!(MaxUnhealthy::Percent(40).to_string(), "40%");
    }

    #[test]
    fn every_fault_is_named_by_its_path() {
        let error =
            read(&json!({"forgetAfter": 5, "remediation": {"unhealthyAfter": 10, "maxUnhealthy": "140%", "x": 1}}))
                .unwrap_err();
        let text = format!("{error:?}");
        for path in [
            "policy.forgetAfter",
            "policy.remediation.unhealthyAfter",
            "policy.remediation.maxUnhealthy",
            "policy.remediation.x",
        ] {
            assert!(text.contains(path), "{path} in {text}");
        }
        let missing = format!("{:?}", read(&json!({"remediation": {}})).unwrap_err());
        assert!(missing.contains("policy.remediation.unhealthyAfter") && missing.contains("is required"), "{missing}");
        assert!(read(&json!({"remediation": "on"})).is_err());
        assert!(read(&json!({"remediation": {"unhealthyAfter": 60, "maxUnhealthy": -1}})).is_err());
    }
}
