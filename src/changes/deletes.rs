//! Each kind's delete as a list of provider objects, read by a forced delete (which records
//! them as orphans) and by a normal delete (which confirms each gone before the resource ends
//! `deleted`): the same plan a `plan` call shows, so the three cannot name different objects.

use super::{Plan, ProviderObject, kubernetes, load_balancers, vps};
use crate::store::{CertificateRow, ClusterRow, InstanceRow, LoadBalancerRow, NetworkRow, VolumeRow};

/// Where one provider object of a delete lives, beside its name.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Placement {
    /// The location or region the provider's API needs to find it (a GKE cluster's location, a
    /// subnetwork's or a volume's region); empty where it needs none.
    pub location: String,
    /// Its id at the provider where the resource recorded one; empty otherwise.
    pub provider_id: String,
}

/// A kind whose delete removes provider objects.
pub trait Deletable {
    /// The plan of its delete: its provider objects, in the order the delete removes them.
    fn delete_plan(&self) -> Plan;

    /// Where `object`, one of its plan's, lives.
    fn placement(&self, object: &ProviderObject) -> Placement;

    /// The plan's objects with their placements, objects inside another one left out (a GKE
    /// cluster's node pools, `cluster/pool`, go with their cluster).
    fn provider_objects(&self) -> Vec<(ProviderObject, Placement)> {
        let objects = self.delete_plan().provider_objects;
        let inside = |object: &ProviderObject| {
            objects
                .iter()
                .any(|outer| outer.provider == object.provider && object.name.starts_with(&format!("{}/", outer.name)))
        };
        objects.iter().filter(|o| !inside(o)).map(|o| (o.clone(), self.placement(o))).collect()
    }
}

impl Deletable for ClusterRow {
    fn delete_plan(&self) -> Plan {
        kubernetes::cluster_delete(self)
    }

    fn placement(&self, _object: &ProviderObject) -> Placement {
        Placement { location: self.location.clone(), provider_id: String::new() }
    }
}

impl Deletable for NetworkRow {
    fn delete_plan(&self) -> Plan {
        vps::network_delete(self)
    }

    fn placement(&self, object: &ProviderObject) -> Placement {
        match self.subnets.iter().find(|s| vps::subnet_name(&s.id) == object.name) {
            Some(subnet) => Placement { location: subnet.region.clone(), provider_id: subnet.provider_id.clone() },
            None => Placement { location: String::new(), provider_id: self.provider_id.clone() },
        }
    }
}

impl Deletable for InstanceRow {
    fn delete_plan(&self) -> Plan {
        vps::instance_delete(self)
    }

    fn placement(&self, _object: &ProviderObject) -> Placement {
        Placement { location: self.region.clone(), provider_id: self.machine_id.clone().unwrap_or_default() }
    }
}

impl Deletable for CertificateRow {
    fn delete_plan(&self) -> Plan {
        vps::certificate_delete(self)
    }

    fn placement(&self, _object: &ProviderObject) -> Placement {
        Placement { location: String::new(), provider_id: self.provider_id.clone() }
    }
}

impl Deletable for VolumeRow {
    fn delete_plan(&self) -> Plan {
        vps::volume_delete(self)
    }

    fn placement(&self, _object: &ProviderObject) -> Placement {
        Placement { location: self.region.clone(), provider_id: self.provider_id.clone() }
    }
}

impl Deletable for LoadBalancerRow {
    fn delete_plan(&self) -> Plan {
        load_balancers::load_balancer_delete(self)
    }

    fn placement(&self, _object: &ProviderObject) -> Placement {
        Placement { location: self.region.clone(), provider_id: self.provider_id.clone() }
    }
}
