//! What the liveness sweep does, pool by pool, about nodes that stay silent, as the pool's node
//! policy says ([`crate::domain::node_policy`]): a `notReady` node silent past `forgetAfter` is
//! forgotten (`deleted`, its credential dead); one silent past `unhealthyAfter` is remediated one
//! step at a time, each step an event with its reason: a bare-metal machine's power cycle is
//! requested, then, silent for another `unhealthyAfter`, its redeploy; a substrate's node is
//! marked for its machine to be recreated and the substrate reconciler woken; a node that
//! joined with a person's token is only marked. Each step is recorded on the node (with its
//! event) and the reconciler that acts on the node is woken: the metal reconciler power cycles
//! or redeploys the machine ([`crate::reconcile::metal`]). When more nodes are unhealthy than
//! `maxUnhealthy` allows, no step is taken (a cause that takes down many nodes at once is not
//! mended by rebooting them): the pool's view and an event say so and why, until it is back
//! within the bound.

use std::time::Duration;

use crate::domain::node_policy::{self, Remediation};
use crate::domain::states::PoolNodeState;
use crate::error::Result;
use crate::store::{METAL_KIND, NodeRow, SUBSTRATE_KIND, Store};

/// What a sweep did over all pools.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Remediated {
    /// Remediation steps taken.
    pub steps: usize,
    /// Nodes forgotten.
    pub forgotten: usize,
}

/// The steps a node is remediated with, by how it came to the pool.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Origin {
    /// A bare-metal machine's node: power cycle, then redeploy.
    Metal,
    /// A node of a pool substrate's cluster: its machine recreated at the provider.
    Substrate,
    /// A node that joined with a person's token: marked.
    Token,
}

/// The remediation steps, as a node records them.
pub const MARKED: &str = "marked";
/// See [`MARKED`].
pub const POWER_CYCLE: &str = "powerCycle";
/// See [`MARKED`].
pub const REDEPLOY: &str = "redeploy";
/// See [`MARKED`].
pub const RECREATE: &str = "recreate";

/// The step after `done` (empty: none yet) for a node of `origin`, and what it does; `None`
/// when every step was taken.
fn next_step(origin: Origin, done: &str) -> Option<(&'static str, &'static str)> {
    match (origin, done) {
        (Origin::Metal, "") => Some((POWER_CYCLE, "its power cycle through its BMC is requested")),
        (Origin::Metal, POWER_CYCLE) => {
            Some((REDEPLOY, "the power cycle did not bring it back: its redeploy is requested"))
        }
        (Origin::Substrate, "") => {
            Some((RECREATE, "its machine's recreation at the provider is asked of the substrate"))
        }
        (Origin::Token, "") => Some((
            MARKED,
            "it is marked unhealthy: it joined with a token, so the control plane has no machine to act on",
        )),
        _ => None,
    }
}

/// Whole seconds, as events say them.
fn secs(duration: Duration) -> u64 {
    duration.as_secs()
}

/// Runs the policies of every pool with a silent node at `now`.
pub async fn sweep(store: &Store, now: i64) -> Result<Remediated> {
    let mut done = Remediated::default();
    for pool_id in store.node_pools_with_silent_nodes().await? {
        let pool = store.pool_fetch(&pool_id).await?;
        let policy = match node_policy::read(&pool.policy) {
            Ok(policy) => policy,
            Err(error) => {
                // Checked at every write of the policy; one stored before the check is left alone.
                tracing::warn!(pool = %pool_id, %error, "the pool's node policy is not valid; its nodes are left as they are");
                continue;
            }
        };
        let nodes: Vec<NodeRow> = store
            .node_list(&pool_id, i64::MAX)
            .await?
            .into_iter()
            .filter(|n| n.deleted_at.is_none() && matches!(n.state, PoolNodeState::Ready | PoolNodeState::NotReady))
            .collect();
        let tenant = nodes.first().and_then(|n| n.tenant_id.clone()).or(pool.tenant_id.clone());
        let forgotten = match policy.forget_after {
            Some(after) => forget(store, &nodes, after, now).await?,
            None => Vec::new(),
        };
        done.forgotten += forgotten.len();
        match policy.remediation {
            Some(remediation) => {
                let live: Vec<NodeRow> = nodes.into_iter().filter(|n| !forgotten.contains(&n.id)).collect();
                done.steps += remediate(store, &pool_id, tenant.as_deref(), &live, remediation, now).await?;
            }
            None => {
                let reason = "the pool's policy has no remediation any more";
                store.pool_remediation_resume(&pool_id, tenant.as_deref(), reason, now).await?;
            }
        }
    }
    Ok(done)
}

/// Forgets the `notReady` nodes silent for longer than `after`; their ids.
async fn forget(store: &Store, nodes: &[NodeRow], after: Duration, now: i64) -> Result<Vec<String>> {
    let cutoff = now - after.as_micros() as i64;
    let mut forgotten = Vec::new();
    for node in nodes.iter().filter(|n| n.state == PoolNodeState::NotReady && n.last_heartbeat_at < cutoff) {
        let reason = format!(
            "notReady with no heartbeat for more than the pool's forgetAfter ({} s): deleted, its credential void",
            secs(after)
        );
        if let Some(gone) = store.node_forget(&node.id, &reason, cutoff, now).await? {
            tracing::info!(node = %gone.id, pool = %gone.pool_id, "silent node forgotten");
            forgotten.push(gone.id);
        }
    }
    Ok(forgotten)
}

/// Takes the next step on each unhealthy node of the pool, unless more are unhealthy than the
/// policy tolerates; how many steps were taken.
async fn remediate(
    store: &Store,
    pool_id: &str,
    tenant: Option<&str>,
    live: &[NodeRow],
    remediation: Remediation,
    now: i64,
) -> Result<usize> {
    let cutoff = now - remediation.unhealthy_after.as_micros() as i64;
    let unhealthy: Vec<&NodeRow> =
        live.iter().filter(|n| n.state == PoolNodeState::NotReady && n.last_heartbeat_at < cutoff).collect();
    let allowed = remediation.max_unhealthy.allowed(live.len() as u64);
    if unhealthy.len() as u64 > allowed {
        let reason = format!(
            "remediation stopped: {} of the pool's {} live nodes are unhealthy (no heartbeat for {} s), more than \
             maxUnhealthy {} allows ({allowed}); it resumes when no more than {allowed} are",
            unhealthy.len(),
            live.len(),
            secs(remediation.unhealthy_after),
            remediation.max_unhealthy,
        );
        if store.pool_remediation_pause(pool_id, tenant, &reason, now).await? {
            tracing::warn!(pool = %pool_id, "{reason}");
        }
        return Ok(0);
    }
    let reason = format!(
        "{} unhealthy node(s) of {}, within maxUnhealthy {} ({allowed})",
        unhealthy.len(),
        live.len(),
        remediation.max_unhealthy
    );
    store.pool_remediation_resume(pool_id, tenant, &reason, now).await?;
    let mut steps = 0;
    for node in unhealthy {
        // A step is taken once the node has been silent for `unhealthyAfter` since the last one.
        if node.remediated_at.is_some_and(|at| at > cutoff) {
            continue;
        }
        let origin = origin(store, node).await?;
        let Some((step, does)) = next_step(origin, &node.remediation) else { continue };
        let reason =
            format!("no heartbeat for more than unhealthyAfter ({} s): {does}", secs(remediation.unhealthy_after));
        if store.node_remediation_step(&node.id, &node.remediation, step, &reason, cutoff, now).await?.is_some() {
            tracing::info!(node = %node.id, pool = %pool_id, step, "node remediation step");
            // The reconciler that carries the step out looks at it now, not at its next interval.
            match origin {
                Origin::Substrate => drop(store.work_wake(SUBSTRATE_KIND, pool_id, now).await?),
                Origin::Metal => drop(store.work_wake(METAL_KIND, &node.id, now).await?),
                Origin::Token => {}
            }
            steps += 1;
        }
    }
    Ok(steps)
}

/// How `node` came to its pool: a live bare-metal machine's, a substrate's (it joined with
/// the substrate's hosted token), or a person's token.
async fn origin(store: &Store, node: &NodeRow) -> Result<Origin> {
    if store.metal_fetch(&node.id).await?.is_some_and(|m| m.deleted_at.is_none()) {
        return Ok(Origin::Metal);
    }
    let hosted = format!("reconciler:{SUBSTRATE_KIND}");
    let token = store.join_token_fetch(&node.join_token_id).await?;
    Ok(if token.is_some_and(|t| t.created_by == hosted) { Origin::Substrate } else { Origin::Token })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_origin_has_its_steps_in_order() {
        assert_eq!(next_step(Origin::Metal, "").map(|s| s.0), Some(POWER_CYCLE));
        assert_eq!(next_step(Origin::Metal, POWER_CYCLE).map(|s| s.0), Some(REDEPLOY));
        assert_eq!(next_step(Origin::Metal, REDEPLOY), None, "then nothing more");
        assert_eq!(next_step(Origin::Substrate, "").map(|s| s.0), Some(RECREATE));
        assert_eq!(next_step(Origin::Substrate, RECREATE), None);
        assert_eq!(next_step(Origin::Token, "").map(|s| s.0), Some(MARKED));
        assert_eq!(next_step(Origin::Token, MARKED), None);
    }
}
