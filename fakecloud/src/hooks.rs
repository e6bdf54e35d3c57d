//! Test hooks that change provider objects behind the control plane's back, as someone in a
//! provider's console (or at a machine) would, for tests of drift detection. Each applies at
//! once and returns whether the object exists.

use serde_json::{Map, Value};

use crate::{FakeCloud, do_console, gke};

impl FakeCloud {
    /// Someone resized node pool `pool` of GKE cluster `cluster` in the Google Cloud console to
    /// `count` nodes per zone: a `SET_NODE_POOL_SIZE` operation, finished at once, adds or
    /// removes nodes (and their kubelets) and keeps the others. False if there is no such pool.
    pub fn gke_set_node_count(&self, project: &str, location: &str, cluster: &str, pool: &str, count: u64) -> bool {
        let key = (project.to_owned(), location.to_owned(), cluster.to_owned());
        gke::console::set_node_count(&mut self.shared.world(), &self.shared.base_url, &key, pool, count)
    }

    /// Someone edited the Kubernetes labels of node pool `pool` in the Google Cloud console:
    /// they become `labels`, in place (an `UPDATE_CLUSTER` operation, finished at once; the
    /// nodes are kept). False if there is no such pool.
    pub fn gke_set_node_labels(
        &self,
        project: &str,
        location: &str,
        cluster: &str,
        pool: &str,
        labels: Map<String, Value>,
    ) -> bool {
        let key = (project.to_owned(), location.to_owned(), cluster.to_owned());
        gke::console::set_node_labels(&mut self.shared.world(), &self.shared.base_url, &key, pool, labels)
    }

    /// Someone added forwarding rule `rule` (an entry of the API's `forwarding_rules`:
    /// `entry_protocol`, `entry_port`, `target_protocol`, `target_port`, ...) to DigitalOcean
    /// load balancer `load_balancer_id` in the control panel: in place, the load balancer keeps
    /// its id and address, and its count of API updates. False if there is no such load
    /// balancer. Panics if DigitalOcean would refuse the rule.
    pub fn do_add_forwarding_rule(&self, load_balancer_id: &str, rule: Value) -> bool {
        do_console::add_forwarding_rule(&mut self.shared.world().digitalocean, load_balancer_id, rule)
    }

    /// Someone grew DigitalOcean volume `volume_id` to `size_gigabytes` in the control panel: a
    /// `resize_volume` action, completed at once. False if there is no such volume. Panics if
    /// DigitalOcean would refuse it (a volume only grows, to at most 16 TiB, one action at a
    /// time).
    pub fn do_set_volume_size(&self, volume_id: &str, size_gigabytes: i64) -> bool {
        let mut world = self.shared.world();
        let action_id = 200_000_000 + world.next();
        do_console::set_volume_size(&mut world.digitalocean, action_id, volume_id, size_gigabytes)
    }

    /// DigitalOcean accepts the delete of load balancer or droplet `id` and keeps it (`keep`), as a
    /// provider that lost the request after answering would: a test of a delete that must not end
    /// `deleted` over what is left. `keep: false` lets the next delete remove it.
    pub fn do_keep_after_delete(&self, id: &str, keep: bool) {
        let mut world = self.shared.world();
        if keep {
            world.digitalocean.kept_after_delete.insert(id.to_owned());
        } else {
            world.digitalocean.kept_after_delete.remove(id);
        }
    }

    /// Someone pressed the power button of the machine behind Redfish system `system_id`
    /// (`system-N`): its `PowerState` is `On` (it boots) or `Off` at once, whatever power
    /// change was under way. False if there is no such system.
    pub fn bmc_set_power(&self, system_id: &str, on: bool) -> bool {
        let mut world = self.shared.world();
        world.redfish.machine_mut(system_id).map(|machine| machine.press_power(on)).is_some()
    }
}
