//! The workflows of the transient provision states, as lists of steps. A step is idempotent or
//! guarded: the reconciler records each one as it is done and resumes at the first one not
//! done; the one destructive step, the erase, is recorded as started before it is asked of the
//! BMC, so a worker killed during it never erases twice for one request.

use crate::domain::states::MachineState;

/// One step of a workflow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// Sign in and read the power (enrolment's check).
    ReadPower,
    /// Read the inventory.
    ReadInventory,
    /// Power off and wait until the machine is off.
    PowerOff,
    /// Clear any boot override, so the machine boots from its disk.
    ClearBoot,
    /// Erase every disk (destructive: at most once per request).
    Erase,
    /// Read the inventory again and check the machine has disks.
    CheckInventory,
    /// Make the deploy's one-use join token and its boot configuration.
    IssueToken,
    /// Insert the deploy image in the virtual CD (Redfish).
    InsertImage,
    /// Insert the boot configuration's URL as removable media (Redfish).
    InsertConfig,
    /// Insert the rescue image in the virtual CD (Redfish).
    InsertRescue,
    /// Boot once from the virtual CD (Redfish) or the network (IPMI).
    BootFromMedia,
    /// Eject the virtual media (Redfish).
    Eject,
    /// Power on and wait until the machine is on.
    PowerOn,
    /// Wait until the machine's bcd joins with the deploy's token.
    AwaitJoin,
}

impl Step {
    /// The step's name, as recorded and as failure messages give it.
    pub fn name(self) -> &'static str {
        match self {
            Step::ReadPower => "readPower",
            Step::ReadInventory => "readInventory",
            Step::PowerOff => "powerOff",
            Step::ClearBoot => "clearBootOverride",
            Step::Erase => "eraseDisks",
            Step::CheckInventory => "checkInventory",
            Step::IssueToken => "token",
            Step::InsertImage => "insertImage",
            Step::InsertConfig => "insertBootConfig",
            Step::InsertRescue => "insertRescueImage",
            Step::BootFromMedia => "bootOnce",
            Step::Eject => "ejectMedia",
            Step::PowerOn => "powerOn",
            Step::AwaitJoin => "awaitJoin",
        }
    }

    /// What the step waits for or does, for a deadline's message.
    pub fn doing(self) -> &'static str {
        match self {
            Step::ReadPower => "reading the power state from the BMC",
            Step::ReadInventory | Step::CheckInventory => "reading the inventory from the BMC",
            Step::PowerOff => "powering the machine off",
            Step::ClearBoot => "clearing the boot override",
            Step::Erase => "erasing the disks",
            Step::IssueToken => "issuing the join token",
            Step::InsertImage | Step::InsertRescue => "inserting the image as virtual media",
            Step::InsertConfig => "inserting the boot configuration as virtual media",
            Step::BootFromMedia => "setting the next boot",
            Step::Eject => "ejecting the virtual media",
            Step::PowerOn => "powering the machine on",
            Step::AwaitJoin => "waiting for the machine's bcd to join",
        }
    }

    /// Whether the step runs on a BMC of this driver: IPMI has no virtual media (its deploys
    /// and rescues boot from the network).
    pub fn runs_on(self, driver: &str) -> bool {
        !(driver == "ipmi" && matches!(self, Step::InsertImage | Step::InsertConfig | Step::InsertRescue | Step::Eject))
    }
}

/// The steps of transient `state`, in order; empty for a state no workflow runs in.
pub fn workflow(state: MachineState) -> &'static [Step] {
    use Step::*;
    match state {
        MachineState::Enrolling => &[ReadPower],
        MachineState::Inspecting => &[ReadInventory],
        MachineState::Commissioning => &[PowerOff, ClearBoot, Erase, CheckInventory],
        MachineState::Deploying => {
            &[IssueToken, PowerOff, InsertImage, InsertConfig, BootFromMedia, PowerOn, AwaitJoin]
        }
        MachineState::Rescuing => &[PowerOff, InsertRescue, BootFromMedia, PowerOn],
        MachineState::ExitingRescue => &[PowerOff, Eject, ClearBoot, PowerOn],
        MachineState::Releasing => &[PowerOff, Erase, Eject, ClearBoot],
        // A machine leaves the control plane's hands powered off.
        MachineState::Retiring | MachineState::Deleting => &[PowerOff],
        _ => &[],
    }
}

/// The name under which a power-off that found the machine on is recorded: a retire or a
/// delete says so in its event.
pub const WAS_ON: &str = "powerOffWasOn";

/// The name under which an erase is recorded as started.
pub const ERASE_STARTED: &str = "eraseDisksStarted";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::metal_states::TRANSITIONS;

    #[test]
    fn every_transient_state_has_a_workflow_and_release_always_erases() {
        for t in TRANSITIONS.iter().filter(|t| t.deadline.is_some()) {
            assert!(!workflow(t.to).is_empty(), "{}", t.to);
        }
        assert!(workflow(MachineState::Releasing).contains(&Step::Erase));
        assert!(workflow(MachineState::Ready).is_empty());
    }

    #[test]
    fn ipmi_skips_virtual_media() {
        assert!(!Step::InsertImage.runs_on("ipmi") && Step::InsertImage.runs_on("redfish"));
        assert!(Step::BootFromMedia.runs_on("ipmi"));
    }
}
