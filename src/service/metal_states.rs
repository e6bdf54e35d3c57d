//! The provision state machine of bare-metal machines, as data: one row per verb with the
//! states it is allowed from, the transient state it records, where that state ends on success
//! and on failure or deadline, and its default deadline. The verbs read it to check a move; the
//! metal reconciler reads it to end a transient state; `INVALID_STATE` answers list from it the
//! verbs a state allows.

use std::time::Duration;

/// One verb's row of the table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Transition {
    /// The verb, as `details.allowed` names it (`exitRescue` is `rescue` with `exit: true`).
    pub verb: &'static str,
    /// The states it is allowed from.
    pub from: &'static [&'static str],
    /// The state it records: transient, but `retired` for `retire`.
    pub to: &'static str,
    /// Where `to` ends when its workflow succeeds; `None` when `to` is stable, and for
    /// `exitingRescue`, which returns to the state the machine was rescued from.
    pub success: Option<&'static str>,
    /// Where `to` ends when its workflow fails or its deadline passes.
    pub failure: Option<&'static str>,
    /// How long `to` may last unless the pool's policy says otherwise; `None` when stable.
    pub deadline: Option<Duration>,
}

const fn minutes(n: u64) -> Option<Duration> {
    Some(Duration::from_secs(n * 60))
}

/// The provision state table.
pub const TRANSITIONS: &[Transition] = &[
    Transition {
        verb: "enroll",
        from: &[],
        to: "enrolling",
        success: Some("manageable"),
        failure: Some("enrollFailed"),
        deadline: minutes(5),
    },
    Transition {
        verb: "inspect",
        from: &["manageable", "inspectFailed"],
        to: "inspecting",
        success: Some("manageable"),
        failure: Some("inspectFailed"),
        deadline: minutes(20),
    },
    Transition {
        verb: "commission",
        from: &["manageable", "commissionFailed"],
        to: "commissioning",
        success: Some("ready"),
        failure: Some("commissionFailed"),
        deadline: minutes(60),
    },
    Transition {
        verb: "deploy",
        from: &["ready", "deployFailed"],
        to: "deploying",
        success: Some("deployed"),
        failure: Some("deployFailed"),
        deadline: minutes(40),
    },
    Transition {
        verb: "rescue",
        from: &["deployed", "deployFailed", "ready"],
        to: "rescuing",
        success: Some("rescue"),
        failure: Some("rescueFailed"),
        deadline: minutes(20),
    },
    Transition {
        verb: "exitRescue",
        from: &["rescue"],
        to: "exitingRescue",
        success: None,
        failure: Some("rescueFailed"),
        deadline: minutes(20),
    },
    Transition {
        verb: "release",
        from: &["deployed", "deployFailed", "rescue", "rescueFailed", "releaseFailed"],
        to: "releasing",
        success: Some("ready"),
        failure: Some("releaseFailed"),
        deadline: minutes(60),
    },
    Transition {
        verb: "retire",
        from: &["manageable", "ready", "enrollFailed", "inspectFailed", "commissionFailed"],
        to: "retired",
        success: None,
        failure: None,
        deadline: None,
    },
];

/// The states `delete` is allowed from.
pub const DELETABLE: &[&str] = &["manageable", "enrollFailed", "retired"];

/// The states `update` is allowed from: every state no workflow runs in, but `retired`.
pub const IDLE: &[&str] = &[
    "manageable",
    "ready",
    "deployed",
    "rescue",
    "enrollFailed",
    "inspectFailed",
    "commissionFailed",
    "deployFailed",
    "rescueFailed",
    "releaseFailed",
];

/// Every provision state, transient ones included.
pub fn all_states() -> Vec<&'static str> {
    let mut states: Vec<&'static str> = IDLE.to_vec();
    states.extend(TRANSITIONS.iter().map(|t| t.to));
    states.sort_unstable();
    states.dedup();
    states
}

/// The row of `verb`.
pub fn transition(verb: &str) -> &'static Transition {
    TRANSITIONS.iter().find(|t| t.verb == verb).unwrap_or_else(|| panic!("no verb {verb:?} in the table"))
}

/// The transient states, each with its row.
pub fn transient(state: &str) -> Option<&'static Transition> {
    TRANSITIONS.iter().find(|t| t.to == state && t.deadline.is_some())
}

/// The verbs allowed from `state`: the table's, then `update` and `delete` where they are.
pub fn allowed_from(state: &str) -> Vec<&'static str> {
    let mut verbs: Vec<&'static str> = TRANSITIONS.iter().filter(|t| t.from.contains(&state)).map(|t| t.verb).collect();
    if IDLE.contains(&state) {
        verbs.push("update");
    }
    if DELETABLE.contains(&state) {
        verbs.push("delete");
    }
    verbs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_transient_state_has_its_outcomes_and_a_deadline() {
        for t in TRANSITIONS.iter().filter(|t| t.verb != "retire") {
            assert!(t.deadline.is_some() && t.failure.is_some(), "{t:?}");
            assert!(t.success.is_some() || t.to == "exitingRescue", "{t:?}");
        }
        assert_eq!(transient("retired"), None, "retired is terminal");
        assert_eq!(transient("deploying").map(|t| t.failure), Some(Some("deployFailed")));
    }

    #[test]
    fn a_state_allows_the_verbs_of_the_table() {
        assert_eq!(allowed_from("manageable"), ["inspect", "commission", "retire", "update", "delete"]);
        assert_eq!(allowed_from("rescue"), ["exitRescue", "release", "update"]);
        assert_eq!(allowed_from("deploying"), Vec::<&str>::new(), "nothing while a workflow runs");
        assert_eq!(allowed_from("retired"), ["delete"]);
    }

    #[test]
    fn every_state_the_table_names_is_a_state() {
        let states = all_states();
        for t in TRANSITIONS {
            for s in t.from.iter().chain(t.success.iter()).chain(t.failure.iter()) {
                assert!(states.contains(s), "{s}");
            }
        }
        assert_eq!(states.len(), 18);
    }
}
