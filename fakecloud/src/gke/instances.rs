//! The Compute Engine instances behind a node pool, as GKE's managed instance groups keep them
//! (one group per zone): an instance is named `gke-<cluster>-<pool>-<group hash>-<suffix>`; a
//! resize adds or removes instances and keeps the others; a change GKE applies by a surge
//! upgrade (version, machine type, disk, accelerators) replaces every instance. Tests read the
//! names and the generation (bumped by each replacement) to see what GKE did to the nodes.
//! An instance deleted through Compute Engine is made again under its name by its group, as a
//! managed instance group does: a new incarnation, with a fresh disk.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use crate::clock;

/// The part of an instance name made from the cluster's and the pool's names is cut, as GKE
/// cuts it, so that the name stays within Compute Engine's 63 characters.
const NAME_PART_MAX: usize = 20;

/// One instance of a pool.
#[derive(Clone, Debug)]
pub struct FakeInstance {
    pub name: String,
    pub zone: String,
    /// When it was made, as Google writes times.
    pub created: String,
    /// How many times its group made it again after a delete (0: never).
    pub incarnation: u64,
    /// Its system hangs (a test's fault): nothing runs on it until it is made again.
    pub hung: bool,
}

/// A pool's instances, in the order of the pool's zones.
#[derive(Default)]
pub struct PoolInstances {
    /// The hash of each zone's instance group, made when the group is.
    groups: BTreeMap<String, String>,
    /// How many times every instance was replaced (1 once the pool is first made).
    pub generation: u64,
    pub instances: Vec<FakeInstance>,
}

impl PoolInstances {
    /// Makes the instances match `per_zone` in each of `zones`: instances in zones no longer
    /// listed go, missing ones are made, the newest go first when there are too many. With
    /// `replace`, every instance is replaced by a new one first (a surge upgrade's result).
    pub fn sync(&mut self, cluster: &str, pool: &str, zones: &[String], per_zone: u64, replace: bool) {
        if replace {
            self.instances.clear();
            self.generation += 1;
        }
        let mut kept = Vec::new();
        for zone in zones {
            let mut here: Vec<FakeInstance> = self.instances.iter().filter(|i| &i.zone == zone).cloned().collect();
            here.truncate(per_zone as usize);
            while (here.len() as u64) < per_zone {
                let name = self.new_name(cluster, pool, zone, &kept, &here);
                here.push(FakeInstance {
                    name,
                    zone: zone.clone(),
                    created: clock::now(),
                    incarnation: 0,
                    hung: false,
                });
            }
            kept.extend(here);
        }
        self.instances = kept;
    }

    /// A new instance name in `zone`'s group, unlike every other of the pool.
    fn new_name(&mut self, cluster: &str, pool: &str, zone: &str, a: &[FakeInstance], b: &[FakeInstance]) -> String {
        let group = self.groups.entry(zone.to_owned()).or_insert_with(|| format!("{:08x}", rand::random::<u32>()));
        let prefix = format!("gke-{}-{}-{group}", cut(cluster), cut(pool));
        loop {
            let name = format!("{prefix}-{}", suffix());
            if !a.iter().chain(b).chain(&self.instances).any(|i| i.name == name) {
                return name;
            }
        }
    }

    /// Makes instance `name` in `zone` again, as its group does after a delete; false when the
    /// pool has no such instance.
    pub fn recreate(&mut self, zone: &str, name: &str) -> bool {
        let Some(instance) = self.instances.iter_mut().find(|i| i.name == name && i.zone == zone) else {
            return false;
        };
        instance.incarnation += 1;
        instance.created = clock::now();
        instance.hung = false;
        true
    }

    /// Makes the system of instance `name` hang; false when the pool has no such instance.
    pub fn hang(&mut self, name: &str) -> bool {
        self.instances.iter_mut().find(|i| i.name == name).map(|i| i.hung = true).is_some()
    }

    /// What the inspection shows: the instance names and the generation.
    pub fn inspect(&self) -> (Value, u64) {
        (json!(self.instances.iter().map(|i| &i.name).collect::<Vec<_>>()), self.generation)
    }
}

/// A name cut to [`NAME_PART_MAX`], without a trailing dash.
fn cut(name: &str) -> &str {
    name[..name.len().min(NAME_PART_MAX)].trim_end_matches('-')
}

/// Four random lowercase letters and digits, as a managed instance group names its instances.
fn suffix() -> String {
    const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";
    (0..4).map(|_| ALPHABET[rand::random::<u32>() as usize % ALPHABET.len()] as char).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn zones(names: &[&str]) -> Vec<String> {
        names.iter().map(|z| z.to_string()).collect()
    }

    fn names(pool: &PoolInstances) -> Vec<String> {
        pool.instances.iter().map(|i| i.name.clone()).collect()
    }

    #[test]
    fn a_resize_keeps_the_instances_it_does_not_remove() {
        let mut pool = PoolInstances::default();
        pool.sync("c", "p", &zones(&["z-a"]), 2, true);
        let first = names(&pool);
        assert_eq!((first.len(), pool.generation), (2, 1));
        pool.sync("c", "p", &zones(&["z-a"]), 3, false);
        assert_eq!(names(&pool)[..2], first[..], "a grown pool keeps its instances");
        assert_eq!(pool.generation, 1);
        pool.sync("c", "p", &zones(&["z-a"]), 1, false);
        assert_eq!(names(&pool), first[..1]);
    }

    #[test]
    fn a_replacement_renames_every_instance_in_the_same_groups() {
        let mut pool = PoolInstances::default();
        pool.sync("c", "p", &zones(&["z-a", "z-b"]), 2, true);
        let first = names(&pool);
        pool.sync("c", "p", &zones(&["z-a", "z-b"]), 2, true);
        let second = names(&pool);
        assert_eq!((second.len(), pool.generation), (4, 2));
        assert!(second.iter().all(|n| !first.contains(n)), "{first:?} -> {second:?}");
        let group = |name: &String| name.rsplit_once('-').unwrap().0.to_owned();
        assert_eq!(first.iter().map(group).collect::<Vec<_>>(), second.iter().map(group).collect::<Vec<_>>());
        assert_ne!(group(&first[0]), group(&first[2]), "each zone has its own group");
    }

    #[test]
    fn names_stay_within_compute_engines_limit() {
        let mut pool = PoolInstances::default();
        let long = "a".repeat(40);
        pool.sync(&long, &long, &zones(&["z-a"]), 1, true);
        let name = &pool.instances[0].name;
        assert!(name.len() <= 63 && name.starts_with("gke-aaaa"), "{name}");
    }
}
