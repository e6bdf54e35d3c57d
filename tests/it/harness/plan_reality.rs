//! What a provider did, read from the fake cloud's inspection, in a plan's terms: the effect
//! of a change (`none`, `inPlace`, `rolling`, `replace`, `delete`) and the objects it touched.
//! The plan-versus-reality tests compare a plan made before a change with this, read after the
//! reconciler made it: the fake's record of what it did is the reality, never the plan's code.

use std::collections::BTreeSet;

use serde_json::Value;

/// The effects, weakest first, as plans name them.
const EFFECTS: [&str; 5] = ["none", "inPlace", "rolling", "replace", "delete"];

/// What a provider did for one change.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Reality {
    /// The strongest effect seen.
    pub effect: &'static str,
    /// The objects touched: (action, kind, name).
    pub objects: BTreeSet<(String, String, String)>,
}

impl Reality {
    fn new() -> Reality {
        Reality { effect: "none", objects: BTreeSet::new() }
    }

    fn saw(&mut self, effect: &'static str, action: &str, kind: &str, name: &str) {
        let rank = |e: &str| EFFECTS.iter().position(|x| *x == e).unwrap();
        if rank(effect) > rank(self.effect) {
            self.effect = effect;
        }
        self.objects.insert((action.to_owned(), kind.to_owned(), name.to_owned()));
    }

    /// What GKE did to cluster `name` between two inspections of it (`after` is `None` once it
    /// is gone): the operations the API started, and whether each pool's nodes were replaced
    /// (its `nodeGeneration` moved) or kept.
    pub fn gke(name: &str, before: &Value, after: Option<&Value>) -> Reality {
        let mut seen = Reality::new();
        let pools = |cluster: &Value| cluster["nodePools"].as_array().cloned().unwrap_or_default();
        let Some(after) = after else {
            seen.saw("delete", "delete", "cluster", name);
            for pool in pools(before) {
                seen.saw("delete", "delete", "node pool", &format!("{name}/{}", pool["name"].as_str().unwrap()));
            }
            return seen;
        };
        let generation = |cluster: &Value, pool: &str| {
            pools(cluster).iter().find(|p| p["name"] == pool).and_then(|p| p["nodeGeneration"].as_u64())
        };
        let done = before["operations"].as_array().map_or(0, Vec::len);
        let operations = after["operations"].as_array().cloned().unwrap_or_default();
        let started: Vec<&Value> = operations.iter().skip(done).filter(|op| op["initiatedBy"] == "api").collect();
        let deleted_pools: BTreeSet<&str> = started
            .iter()
            .filter(|op| op["operationType"] == "DELETE_NODE_POOL")
            .filter_map(|op| op["nodePool"].as_str())
            .collect();
        for op in &started {
            let kind = op["operationType"].as_str().unwrap();
            match op["nodePool"].as_str() {
                None => seen.saw("inPlace", "update", "cluster", name),
                Some(pool) => {
                    let object = format!("{name}/{pool}");
                    match kind {
                        "DELETE_NODE_POOL" => seen.saw("delete", "delete", "node pool", &object),
                        "CREATE_NODE_POOL" if deleted_pools.contains(pool) => {
                            seen.saw("replace", "recreate", "node pool", &object)
                        }
                        "CREATE_NODE_POOL" => seen.saw("inPlace", "create", "node pool", &object),
                        _ => {
                            let replaced = generation(after, pool) > generation(before, pool);
                            seen.saw(if replaced { "rolling" } else { "inPlace" }, "update", "node pool", &object);
                        }
                    }
                }
            }
        }
        // A pool deleted and made again is one recreate, not a delete and a create.
        let recreated: Vec<(String, String, String)> =
            seen.objects.iter().filter(|(action, _, _)| action == "recreate").cloned().collect();
        for (_, kind, object) in recreated {
            seen.objects.remove(&("delete".into(), kind.clone(), object.clone()));
            if seen.effect == "delete" {
                seen.effect = "replace";
            }
        }
        seen
    }

    /// What DigitalOcean did to one object between two inspections of it (`after` is `None`
    /// once it is gone): kept with the same id and `changed` (its in-place updates or actions
    /// moved on), replaced (a new id), or deleted.
    pub fn digitalocean(kind: &str, name: &str, before: &Value, after: Option<&Value>, changed: bool) -> Reality {
        let mut seen = Reality::new();
        match after {
            None => seen.saw("delete", "delete", kind, name),
            Some(after) if after["id"] != before["id"] => seen.saw("replace", "recreate", kind, name),
            Some(_) if changed => seen.saw("inPlace", "update", kind, name),
            Some(_) => {}
        }
        seen
    }

    /// What a BMC did to machine `system` between two looks at it (`deleted`: the pool no
    /// longer manages it): powered or booted it (an update of the machine where it stands), or
    /// nothing; a machine the pool forgot stays as it is at its BMC, so its delete touches no
    /// provider object.
    pub fn bmc(system: &str, before: &Value, after: &Value, deleted: bool) -> Reality {
        let mut seen = Reality::new();
        let boots = |machine: &Value| machine["boots"].as_array().map_or(0, Vec::len);
        if before["powerState"] != after["powerState"] || boots(after) > boots(before) {
            seen.saw("inPlace", "update", "machine", system);
        }
        if deleted {
            seen.effect = "delete";
        }
        seen
    }

    /// What a plan said, in the same terms.
    pub fn of_plan(plan: &Value) -> Reality {
        let effect = EFFECTS.iter().find(|e| plan["effect"] == **e).copied().unwrap_or_else(|| panic!("{plan}"));
        let objects = plan["providerObjects"]
            .as_array()
            .cloned()
            .unwrap_or_default()
            .iter()
            .map(|o| {
                let text = |key: &str| o[key].as_str().unwrap().to_owned();
                (text("action"), text("kind"), text("name"))
            })
            .collect();
        Reality { effect, objects }
    }
}

/// Asserts that `plan`, made before the change `what`, said what the provider then did.
pub fn assert_plan_was_reality(what: &str, plan: &Value, reality: &Reality) {
    let said = Reality::of_plan(plan);
    assert_eq!(&said, reality, "{what}: the plan said {said:?}, the provider did {reality:?}; plan: {plan}");
}
