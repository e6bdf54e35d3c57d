//! A pool's bare-metal policy: `policy.maxMachines` (how many machines may be enrolled in the
//! pool, booked at enrolment) and `policy.metal` (`deadlines`: seconds per transient provision
//! state, overriding the table's defaults; `image`: the image a deploy boots when it names
//! none; `rescueImage`: the image a rescue boots, instead of [`RESCUE_IMAGE`];
//! `bmcAllowedNetworks`: the networks, as CIDRs, whose BMC addresses are enrolled and reached
//! although they are on loopback, link-local or the control plane's own hosts, which only an
//! operator says, since only an operator sets a pool's policy). Read from the
//! policy document with every fault named by its path
//! (`policy.metal.deadlines.deploying`), checked at the pool's create and update.

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::Value;

use crate::domain::cidr::Network;
use crate::domain::metal_states;
use crate::domain::states::MachineState;
use crate::domain::urls;
use crate::error::{FieldViolation, Result, Violations};

/// The image a rescue boots when the pool's policy names none.
pub const RESCUE_IMAGE: &str = "https://images.better-compute.dev/rescue/latest.iso";

/// The fields of `policy.metal`.
const FIELDS: [&str; 4] = ["deadlines", "image", "rescueImage", "bmcAllowedNetworks"];

/// The most networks `bmcAllowedNetworks` may list.
const MAX_ALLOWED_NETWORKS: usize = 32;

/// The longest deadline a policy may set: a day.
const MAX_DEADLINE_SECONDS: u64 = 86_400;

/// A pool's metal policy, checked.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MetalPolicy {
    /// How many live machines the pool may hold; `None` for no limit.
    pub max_machines: Option<i64>,
    /// Deadlines of transient states that override the defaults.
    pub deadlines: BTreeMap<MachineState, Duration>,
    /// The image a deploy boots when it names none; empty for none.
    pub image: String,
    /// The image a rescue boots; empty for [`RESCUE_IMAGE`].
    pub rescue_image: String,
    /// Networks whose BMC addresses are allowed although of a kind refused by default.
    pub bmc_allowed_networks: Vec<Network>,
}

impl MetalPolicy {
    /// How long `state` may last: the policy's deadline, else the table's default.
    pub fn deadline(&self, state: MachineState) -> Option<Duration> {
        self.deadlines.get(&state).copied().or_else(|| metal_states::transient(state).and_then(|t| t.deadline))
    }

    /// The image a rescue boots: the policy's, else [`RESCUE_IMAGE`].
    pub fn rescue_image(&self) -> &str {
        if self.rescue_image.is_empty() { RESCUE_IMAGE } else { &self.rescue_image }
    }
}

/// The metal policy of a pool's policy document; `INVALID_INPUT` naming each fault.
pub fn read(policy: &Value) -> Result<MetalPolicy> {
    let mut faults = Violations::new();
    let mut read = MetalPolicy::default();
    let mut fault = |path: String, why: String| faults.push(FieldViolation::new(path, why));
    match policy.get("maxMachines") {
        None | Some(Value::Null) => {}
        Some(value) => match value.as_i64().filter(|n| *n >= 0) {
            Some(n) => read.max_machines = Some(n),
            None => fault("policy.maxMachines".into(), format!("must be a whole number of at least 0; got {value}")),
        },
    }
    if let Some(metal) = policy.get("metal") {
        let Some(metal) = metal.as_object() else {
            fault("policy.metal".into(), format!("must be an object with the fields {}", FIELDS.join(", ")));
            return Err(faults.into_error());
        };
        for key in metal.keys().filter(|key| !FIELDS.contains(&key.as_str())) {
            fault(format!("policy.metal.{key}"), format!("is not a field of policy.metal ({})", FIELDS.join(", ")));
        }
        for (field, read_into) in [("image", &mut read.image), ("rescueImage", &mut read.rescue_image)] {
            match metal.get(field) {
                None => {}
                Some(Value::String(url)) => match urls::problem(url) {
                    None => *read_into = url.clone(),
                    Some(problem) => fault(format!("policy.metal.{field}"), format!("{problem} (the URL of an image)")),
                },
                Some(other) => {
                    fault(format!("policy.metal.{field}"), format!("must be an http(s) URL of an image; got {other}"))
                }
            }
        }
        match metal.get("bmcAllowedNetworks") {
            None | Some(Value::Null) => {}
            Some(Value::Array(networks)) if networks.len() > MAX_ALLOWED_NETWORKS => fault(
                "policy.metal.bmcAllowedNetworks".into(),
                format!("lists {} networks; at most {MAX_ALLOWED_NETWORKS}", networks.len()),
            ),
            Some(Value::Array(networks)) => {
                for (n, network) in networks.iter().enumerate() {
                    let path = format!("policy.metal.bmcAllowedNetworks[{n}]");
                    match network.as_str().map(Network::parse) {
                        Some(Ok(network)) => read.bmc_allowed_networks.push(network),
                        Some(Err(why)) => fault(path, why),
                        None => {
                            fault(path, format!("must be a network as address/length (127.0.0.0/8); got {network}"))
                        }
                    }
                }
            }
            Some(other) => fault(
                "policy.metal.bmcAllowedNetworks".into(),
                format!("must be a list of networks as address/length ([\"127.0.0.0/8\"]); got {other}"),
            ),
        }
        if let Some(deadlines) = metal.get("deadlines") {
            let transient: Vec<&str> =
                metal_states::TRANSITIONS.iter().filter(|t| t.deadline.is_some()).map(|t| t.to.as_str()).collect();
            match deadlines.as_object() {
                None => fault(
                    "policy.metal.deadlines".into(),
                    format!("must be an object of seconds by state ({})", transient.join(", ")),
                ),
                Some(deadlines) => {
                    for (state, seconds) in deadlines {
                        let path = format!("policy.metal.deadlines.{state}");
                        let Some(state) = state.parse().ok().filter(|s| metal_states::transient(*s).is_some()) else {
                            fault(path, format!("is not a transient state; one of {}", transient.join(", ")));
                            continue;
                        };
                        match seconds.as_u64().filter(|s| (1..=MAX_DEADLINE_SECONDS).contains(s)) {
                            Some(s) => {
                                read.deadlines.insert(state, Duration::from_secs(s));
                            }
                            None => fault(path, format!("must be 1 to 86400 seconds; got {seconds}")),
                        }
                    }
                }
            }
        }
    }
    if faults.is_empty() { Ok(read) } else { Err(faults.into_error()) }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn an_empty_policy_keeps_the_tables_deadlines_and_no_limit() {
        let policy = read(&json!({})).unwrap();
        assert_eq!(policy.max_machines, None);
        assert_eq!(policy.deadline(MachineState::Deploying), Some(Duration::from_secs(2400)));
        assert_eq!(policy.deadline(MachineState::Ready), None);
    }

    #[test]
    fn a_policy_overrides_deadlines_and_sets_the_limit() {
        let policy = read(&json!({"maxMachines": 2, "metal": {"deadlines": {"deploying": 60}}})).unwrap();
        assert_eq!(policy.max_machines, Some(2));
        assert_eq!(policy.deadline(MachineState::Deploying), Some(Duration::from_secs(60)));
        assert_eq!(policy.deadline(MachineState::Inspecting), Some(Duration::from_secs(1200)));
    }

    #[test]
    fn a_rescue_boots_the_policys_image_or_the_default() {
        assert_eq!(read(&json!({})).unwrap().rescue_image(), RESCUE_IMAGE);
        let policy = read(&json!({"metal": {"rescueImage": "https://images.example/rescue.iso"}})).unwrap();
        assert_eq!(policy.rescue_image(), "https://images.example/rescue.iso");
        let error = read(&json!({"metal": {"rescueImage": "ftp://x"}})).unwrap_err();
        assert!(format!("{error:?}").contains("policy.metal.rescueImage"), "{error:?}");
    }

    #[test]
    fn bmc_allowed_networks_are_cidrs_and_bounded() {
        let policy = read(&json!({"metal": {"bmcAllowedNetworks": ["127.0.0.0/8", "::1/128"]}})).unwrap();
        assert_eq!(policy.bmc_allowed_networks.len(), 2);
        let error = read(&json!({"metal": {"bmcAllowedNetworks": ["127.0.0.1", 5]}})).unwrap_err();
        let text = format!("{error:?}");
        assert!(text.contains("bmcAllowedNetworks[0]") && text.contains("bmcAllowedNetworks[1]"), "{text}");
        let many: Vec<String> = (0..33).map(|n| format!("10.{n}.0.0/16")).collect();
        assert!(read(&json!({"metal": {"bmcAllowedNetworks": many}})).is_err());
        assert!(read(&json!({"metal": {"bmcAllowedNetworks": "127.0.0.0/8"}})).is_err());
    }

    #[test]
    fn every_fault_is_named_by_its_path() {
        let error = read(&json!({"maxMachines": -1, "metal": {"deadlines": {"ready": 5, "deploying": 0}, "x": 1}}))
            .unwrap_err();
        let text = format!("{error:?}");
        for path in
            ["policy.maxMachines", "policy.metal.deadlines.ready", "policy.metal.deadlines.deploying", "policy.metal.x"]
        {
            assert!(text.contains(path), "{path} in {text}");
        }
    }
}
