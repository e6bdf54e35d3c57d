//! Changes someone makes to a node pool in the Google Cloud console, behind the control
//! plane's back (for tests of drift). The console calls GKE's API as any client does, so each
//! change is an operation on the cluster like the API's; it finishes at once (a test has no
//! reason to wait for it) and the inspection shows it as started by the console.

use std::time::{Duration, Instant};

use serde_json::{Map, Value};

use super::state::{ClusterKey, Effect, Initiator, PoolPatch};
use crate::World;
use crate::operations::FakeOperation;

/// Resizes a pool to `count` nodes in each of its zones, as the console's Resize does: nodes
/// are added or removed, the others are kept. False if there is no such pool.
pub fn set_node_count(world: &mut World, base_url: &str, key: &ClusterKey, pool: &str, count: u64) -> bool {
    let effect = Effect::PoolSize(pool.to_owned(), count);
    change(world, base_url, key, pool, "SET_NODE_POOL_SIZE", effect)
}

/// Replaces a pool's node labels, as editing them in the console does: in place, the nodes are
/// kept. False if there is no such pool.
pub fn set_node_labels(
    world: &mut World,
    base_url: &str,
    key: &ClusterKey,
    pool: &str,
    labels: Map<String, Value>,
) -> bool {
    let effect = Effect::PoolConfig(pool.to_owned(), PoolPatch::Labels(labels));
    change(world, base_url, key, pool, "UPDATE_CLUSTER", effect)
}

/// Starts the operation that makes the change and finishes it at once.
fn change(
    world: &mut World,
    base_url: &str,
    key: &ClusterKey,
    pool: &str,
    operation_type: &'static str,
    effect: Effect,
) -> bool {
    let Some(cluster) = world.gke.clusters.get(key) else { return false };
    if !cluster.pools.iter().any(|p| p.name == pool) {
        return false;
    }
    let name = format!("operation-{}-{:08x}", world.next(), rand::random::<u32>());
    let target = format!("{base_url}/v1/projects/{}/locations/{}/clusters/{}/nodePools/{pool}", key.0, key.1, key.2);
    let op = FakeOperation::start(key.clone(), operation_type, target, Duration::ZERO, effect);
    world.gke.operations.insert(name.clone(), op);
    if let Some(cluster) = world.gke.clusters.get_mut(key) {
        cluster.operation_log.push((name, Initiator::Console));
    }
    world.gke.advance(Instant::now());
    true
}
