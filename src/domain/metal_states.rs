//! The provision state machine of bare-metal machines, as data: one row per verb with the
//! states it is allowed from, the transient state it records, where that state ends on success
//! and on failure or deadline, and its default deadline. The verbs read it to check a move; the
//! metal reconciler reads it to end a transient state; `INVALID_STATE` answers list from it the
//! verbs a state allows. `retire` and `delete` of a machine whose BMC is reached pass through
//! `retiring` and `deleting`, which power it off first.

use std::time::Duration;

use crate::domain::states::MachineState::{self, *};

/// One verb's row of the table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Transition {
    /// The verb, as `details.allowed` names it (`exitRescue` is `rescue` with `exit: true`).
    pub verb: &'static str,
    /// The states it is allowed from.
    pub from: &'static [MachineState],
    /// The state it records: transient, but `retired` for `retire`.
    pub to: MachineState,
    /// Where `to` ends when its workflow succeeds; `None` when `to` is stable, and for
    /// `exitingRescue`, which returns to the state the machine was rescued from.
    pub success: Option<MachineState>,
    /// Where `to` ends when its workflow fails or its deadline passes; `None` for `retiring`,
    /// which returns to the state it came from, and for `deleting`, which never fails (it
    /// keeps trying, its problem saying why, and is reported stuck past its deadline).
    pub failure: Option<MachineState>,
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
        to: Enrolling,
        success: Some(Manageable),
        failure: Some(EnrollFailed),
        deadline: minutes(5),
    },
    Transition {
        verb: "inspect",
        from: &[Manageable, InspectFailed],
        to: Inspecting,
        success: Some(Manageable),
        failure: Some(InspectFailed),
        deadline: minutes(20),
    },
    Transition {
        verb: "commission",
        from: &[Manageable, CommissionFailed],
        to: Commissioning,
        success: Some(Ready),
        failure: Some(CommissionFailed),
        deadline: minutes(60),
    },
    Transition {
        verb: "deploy",
        from: &[Ready, DeployFailed],
        to: Deploying,
        success: Some(Deployed),
        failure: Some(DeployFailed),
        deadline: minutes(40),
    },
    Transition {
        verb: "rescue",
        from: &[Deployed, DeployFailed, Ready],
        to: Rescuing,
        success: Some(Rescue),
        failure: Some(RescueFailed),
        deadline: minutes(20),
    },
    Transition {
        verb: "exitRescue",
        from: &[Rescue],
        to: ExitingRescue,
        success: None,
        failure: Some(RescueFailed),
        deadline: minutes(20),
    },
    Transition {
        verb: "release",
        from: &[Deployed, DeployFailed, Rescue, RescueFailed, ReleaseFailed],
        to: Releasing,
        success: Some(Ready),
        failure: Some(ReleaseFailed),
        deadline: minutes(60),
    },
    Transition {
        verb: "retire",
        from: &[Manageable, Ready, EnrollFailed, InspectFailed, CommissionFailed],
        to: Retiring,
        success: Some(Retired),
        failure: None,
        deadline: minutes(10),
    },
];

/// The states `delete` is allowed from.
pub const DELETABLE: &[MachineState] = &[Manageable, EnrollFailed, Retired];

/// The states whose BMC was never reached (`enrollFailed`) or whose credentials are wiped
/// (`retired`): `retire` and `delete` end at once there, with nothing to power off.
pub const WITHOUT_BMC: &[MachineState] = &[EnrollFailed, Retired];

/// `delete` of a machine whose BMC is reached: `deleting` powers it off first, then the machine
/// is deleted; it never fails, and is reported stuck past its deadline.
pub const DELETING: Transition = Transition {
    verb: "delete",
    from: &[Manageable],
    to: Deleting,
    success: None,
    failure: None,
    deadline: minutes(10),
};

/// The states `update` is allowed from: every state no workflow runs in, but `retired`.
pub const IDLE: &[MachineState] = &[
    Manageable,
    Ready,
    Deployed,
    Rescue,
    EnrollFailed,
    InspectFailed,
    CommissionFailed,
    DeployFailed,
    RescueFailed,
    ReleaseFailed,
];

/// The row of `verb`.
pub fn transition(verb: &str) -> &'static Transition {
    TRANSITIONS.iter().find(|t| t.verb == verb).unwrap_or_else(|| panic!("no verb {verb:?} in the table"))
}

/// The transient states, each with its row.
pub fn transient(state: MachineState) -> Option<&'static Transition> {
    if state == Deleting {
        return Some(&DELETING);
    }
    TRANSITIONS.iter().find(|t| t.to == state && t.deadline.is_some())
}

/// The verbs allowed from `state`: the table's, then `update` and `delete` where they are.
pub fn allowed_from(state: MachineState) -> Vec<&'static str> {
    let mut verbs: Vec<&'static str> = TRANSITIONS.iter().filter(|t| t.from.contains(&state)).map(|t| t.verb).collect();
    if IDLE.contains(&state) {
        verbs.push("update");
    }
    if DELETABLE.contains(&state) {
        verbs.push("delete");
    }
    verbs
}

/// The verbs allowed from `state` for a machine that was inspected or not: `commission`
/// starts from an inspected machine only.
pub fn allowed_for(state: MachineState, inspected: bool) -> Vec<&'static str> {
    let mut verbs = allowed_from(state);
    if !inspected {
        verbs.retain(|verb| *verb != "commission");
    }
    verbs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_transient_state_has_its_outcomes_and_a_deadline() {
        for t in TRANSITIONS.iter().chain([&DELETING]) {
            assert!(t.deadline.is_some(), "{t:?}");
            assert!(t.failure.is_some() || matches!(t.to, Retiring | Deleting), "{t:?}");
            assert!(t.success.is_some() || matches!(t.to, ExitingRescue | Deleting), "{t:?}");
        }
        assert_eq!(transient(Retired), None, "retired is terminal");
        assert_eq!(transient(Deleting).map(|t| t.verb), Some("delete"));
        assert_eq!(transient(Deploying).map(|t| t.failure), Some(Some(DeployFailed)));
    }

    #[test]
    fn a_state_allows_the_verbs_of_the_table() {
        assert_eq!(allowed_from(Manageable), ["inspect", "commission", "retire", "update", "delete"]);
        assert_eq!(allowed_from(Rescue), ["exitRescue", "release", "update"]);
        assert_eq!(allowed_from(Deploying), Vec::<&str>::new(), "nothing while a workflow runs");
        assert_eq!(allowed_from(Retired), ["delete"]);
        assert_eq!(allowed_for(Manageable, false), ["inspect", "retire", "update", "delete"]);
        assert_eq!(allowed_for(Manageable, true), allowed_from(Manageable));
    }

    #[test]
    fn every_state_is_reached_by_the_table() {
        let reached: Vec<MachineState> = TRANSITIONS
            .iter()
            .chain([&DELETING])
            .flat_map(|t| t.success.into_iter().chain(t.failure).chain([t.to]))
            .chain(IDLE.iter().copied())
            .collect();
        for state in MachineState::ALL {
            assert!(reached.contains(state), "{state} is in no row of the table");
        }
    }
}
