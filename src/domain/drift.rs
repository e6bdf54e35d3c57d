//! Drift: a field the system manages that the provider holds at another value than the one last
//! applied (a node count changed in the provider's console, a rule added by hand). The pool's
//! `policy.drift` says what a pass does about it: `correct` (the default) puts it back,
//! `report` leaves it and keeps reporting it until the desired state changes or the provider
//! changes back. Every converged kind judges drift with the rule here; each reconciler only
//! says which managed fields differ.
//!
//! The rule for "last applied": a difference is drift only when the desired state was applied
//! and has not changed since, which is when the resource is settled at its current version as a
//! pass reads it (`ready`; a deployed machine). Every change of the desired state that asks the
//! provider for something moves a settled resource out of that state (`updating`, a transient
//! provision state) until a pass has applied it, so a difference found then is the change on
//! its way, applied normally, never drift. A field the system does not manage is never
//! compared, so it is never reported nor touched.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::{FieldViolation, Result, Violations};

/// Where the drift policy sits in a pool's policy document.
pub const PATH: &str = "policy.drift";

/// What a pass does about drift.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum DriftPolicy {
    /// Put the provider back to the state last applied (the default).
    #[default]
    Correct,
    /// Leave the provider as it is, and report the drift until it goes away or the desired
    /// state changes.
    Report,
}

/// The drift policy of a pool's policy document: `correct` when absent; `INVALID_INPUT` naming
/// `policy.drift` for anything but `correct` or `report`.
pub fn read(policy: &Value) -> Result<DriftPolicy> {
    match policy.get("drift") {
        None | Some(Value::Null) => Ok(DriftPolicy::Correct),
        Some(Value::String(value)) if value == "correct" => Ok(DriftPolicy::Correct),
        Some(Value::String(value)) if value == "report" => Ok(DriftPolicy::Report),
        Some(other) => {
            let mut faults = Violations::new();
            faults.push(FieldViolation::new(
                PATH,
                format!(
                    "must be \"correct\" (put the provider back) or \"report\" (leave it and report it); got {other}"
                ),
            ));
            Err(faults.into_error())
        }
    }
}

/// What a pass did about a drift.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DriftAction {
    /// The provider was put back.
    Corrected,
    /// The provider was left as it is.
    Reported,
}

impl DriftAction {
    /// Its name in the API and in events.
    pub fn as_str(self) -> &'static str {
        match self {
            DriftAction::Corrected => "corrected",
            DriftAction::Reported => "reported",
        }
    }
}

/// One managed field the provider holds at another value than the one applied.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DriftedField {
    /// Its JSON path in the resource (`nodePools[general].nodeCount`, `forwarding`).
    pub field: String,
    /// The value last applied.
    pub applied: Value,
    /// The value the provider reports.
    pub found: Value,
}

impl DriftedField {
    /// `field` when `applied` and `found` differ.
    pub fn compare(field: impl Into<String>, applied: Value, found: Value) -> Option<DriftedField> {
        (applied != found).then(|| DriftedField { field: field.into(), applied, found })
    }
}

/// A drift as a resource stores and shows it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Drift {
    /// Its JSON path in the resource.
    pub field: String,
    /// The value last applied.
    pub applied: Value,
    /// The value the provider reported.
    pub found: Value,
    /// When a pass first found it (microseconds since the epoch).
    pub since: i64,
    /// What the pass did.
    pub action: DriftAction,
}

/// The drift of a stored column (`[]` when empty or unreadable: it is the pass's to rewrite).
pub fn from_column(text: &str) -> Vec<Drift> {
    serde_json::from_str(text).unwrap_or_default()
}

/// The column of a drift list.
pub fn to_column(drift: &[Drift]) -> String {
    serde_json::to_string(drift).expect("drift serializes")
}

/// What a pass makes of the fields it found differing.
#[derive(Clone, Debug, PartialEq)]
pub struct Judgement {
    /// The drift to store and show now (empty when there is none).
    pub drift: Vec<Drift>,
    /// The data of the `<kind>.drift` event to append, when one is due: when drift is corrected,
    /// and when reported drift first appears or changes (not on every pass that finds it again).
    pub event: Option<Value>,
    /// Whether the pass puts the provider back.
    pub correct: bool,
}

/// Judges `differing` (the managed fields the provider holds at other values than desired)
/// found by a pass at `now`. `settled` says whether the desired state was applied and has not
/// changed since (see the module's rule): when it is not, nothing is drift and the pass
/// applies the desired state as usual. `before` is the drift stored by the previous pass.
pub fn judge(
    settled: bool,
    differing: Vec<DriftedField>,
    before: &[Drift],
    policy: DriftPolicy,
    now: i64,
) -> Judgement {
    if !settled || differing.is_empty() {
        return Judgement { drift: Vec::new(), event: None, correct: false };
    }
    let action = match policy {
        DriftPolicy::Correct => DriftAction::Corrected,
        DriftPolicy::Report => DriftAction::Reported,
    };
    let drift: Vec<Drift> = differing
        .into_iter()
        .map(|found| {
            let known = before.iter().find(|d| d.field == found.field && d.found == found.found && d.action == action);
            Drift {
                since: known.map_or(now, |d| d.since),
                field: found.field,
                applied: found.applied,
                found: found.found,
                action,
            }
        })
        .collect();
    let same_as_before = drift.len() == before.len()
        && drift.iter().zip(before).all(|(now, was)| {
            (&now.field, &now.applied, &now.found, now.action) == (&was.field, &was.applied, &was.found, was.action)
        });
    let event = (action == DriftAction::Corrected || !same_as_before).then(|| event_data(&drift, action));
    Judgement { correct: action == DriftAction::Corrected, drift, event }
}

/// The data of a `<kind>.drift` event: the fields, each applied and found, and the action.
pub fn event_data(drift: &[Drift], action: DriftAction) -> Value {
    let fields: Vec<Value> =
        drift.iter().map(|d| serde_json::json!({"field": d.field, "applied": d.applied, "found": d.found})).collect();
    serde_json::json!({"fields": fields, "action": action.as_str()})
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn count(applied: i64, found: i64) -> Vec<DriftedField> {
        DriftedField::compare("nodePools[general].nodeCount", json!(applied), json!(found)).into_iter().collect()
    }

    #[test]
    fn the_policy_defaults_to_correct_and_names_its_field_when_wrong() {
        assert_eq!(read(&json!({})).unwrap(), DriftPolicy::Correct);
        assert_eq!(read(&json!({"drift": "correct"})).unwrap(), DriftPolicy::Correct);
        assert_eq!(read(&json!({"drift": "report"})).unwrap(), DriftPolicy::Report);
        for wrong in [json!("ignore"), json!(true), json!({"mode": "report"})] {
            let error = read(&json!({ "drift": wrong })).unwrap_err();
            let fields = error.details["fields"].as_array().unwrap();
            assert_eq!(fields[0]["field"], "policy.drift", "{wrong}");
            assert!(fields[0]["description"].as_str().unwrap().contains("\"report\""), "{error:?}");
        }
    }

    #[test]
    fn a_difference_before_the_desired_state_was_applied_is_no_drift() {
        let judged = judge(false, count(3, 5), &[], DriftPolicy::Report, 10);
        assert_eq!(judged, Judgement { drift: Vec::new(), event: None, correct: false });
    }

    #[test]
    fn corrected_drift_is_put_back_and_told_each_time_it_is_found() {
        let judged = judge(true, count(3, 5), &[], DriftPolicy::Correct, 10);
        assert!(judged.correct);
        assert_eq!(judged.drift[0].action, DriftAction::Corrected);
        let event = judged.event.unwrap();
        assert_eq!(event["action"], "corrected");
        assert_eq!(event["fields"][0], json!({"field": "nodePools[general].nodeCount", "applied": 3, "found": 5}));
        let again = judge(true, count(3, 5), &judged.drift, DriftPolicy::Correct, 20);
        assert!(again.correct && again.event.is_some());
    }

    #[test]
    fn reported_drift_is_told_when_it_appears_and_when_it_changes_not_on_every_pass() {
        let first = judge(true, count(3, 5), &[], DriftPolicy::Report, 10);
        assert!(!first.correct);
        assert_eq!(first.event.as_ref().unwrap()["action"], "reported");
        assert_eq!((first.drift[0].since, first.drift[0].action), (10, DriftAction::Reported));
        let again = judge(true, count(3, 5), &first.drift, DriftPolicy::Report, 20);
        assert_eq!(again.event, None);
        assert_eq!(again.drift, first.drift, "kept, with the time it was first found");
        let changed = judge(true, count(3, 6), &again.drift, DriftPolicy::Report, 30);
        assert_eq!(changed.event.unwrap()["fields"][0]["found"], 6);
        assert_eq!(changed.drift[0].since, 30);
    }

    #[test]
    fn drift_that_went_away_empties() {
        let first = judge(true, count(3, 5), &[], DriftPolicy::Report, 10);
        let gone = judge(true, count(3, 3), &first.drift, DriftPolicy::Report, 20);
        assert_eq!(gone, Judgement { drift: Vec::new(), event: None, correct: false });
    }

    #[test]
    fn the_column_reads_back_what_was_written() {
        let drift = judge(true, count(3, 5), &[], DriftPolicy::Report, 10).drift;
        assert_eq!(from_column(&to_column(&drift)), drift);
        assert_eq!(from_column(""), Vec::new());
    }
}
