//! Nodes: the daemon's credentials (a join token to join, the node's own credential after),
//! the join, heartbeats and leaving, and what the pool's people do to nodes (list, get, cordon,
//! uncordon, delete). A refused join says exactly why the token cannot be used, once its secret
//! matched; an unknown token or a wrong secret learns nothing. A machine id that is already a
//! node of the pool joins that node again only with proof that it is that machine, so that no
//! other holder of a token of the pool can take a live node over; what a node reports of its
//! hardware is held to what hardware has.

use std::time::Duration;

use super::vps::LIST_LIMIT;
use super::{Context, Service};
use crate::bearer::Bearer;
use crate::domain::states::{MachineState, PoolNodeState};
use crate::error::{Code, Error, FieldViolation, Result};
use crate::ids::{JoinTokenId, NodeId};
use crate::proto::compute::{
    CordonNodeRequest, DeleteNodeRequest, GetNodeRequest, JoinNodeRequest, LeaveNodeRequest, ListNodesRequest,
    NodeCapacity, NodeHeartbeatRequest, UncordonNodeRequest,
};
use crate::store::{
    JoinOutcome, JoinOver, JoinTokenRow, JoinTokenState, NodeCapacityRow, NodeRow, NodeSummaryRow, now_micros,
};

/// How often a node heartbeats unless the server is told otherwise.
pub const DEFAULT_HEARTBEAT_INTERVAL: Duration = Duration::from_secs(10);

/// The most CPU a node may report: 1,048,576 CPUs, in thousandths. Each bound is far past any
/// one machine, so a report past it is a bug or a lie; and a pool of a million such nodes sums
/// without nearing the end of an `i64`.
pub const MAX_NODE_CPU_MILLIS: i64 = 1_048_576 * 1_000;
/// The most memory a node may report: 4 PiB.
pub const MAX_NODE_MEMORY_BYTES: i64 = 1 << 52;
/// The most disk for pods a node may report: 1 EiB.
pub const MAX_NODE_EPHEMERAL_STORAGE_BYTES: i64 = 1 << 60;
/// The most GPUs of one model a node may report (as `NodeGpus.count` is validated too).
pub const MAX_NODE_GPUS_PER_MODEL: i32 = 64;

/// The credential kinds of the daemon's methods, as the methods' `credential` option names them.
pub const JOIN_TOKEN_CREDENTIAL: &str = "join-token";
/// See [`JOIN_TOKEN_CREDENTIAL`].
pub const NODE_CREDENTIAL: &str = "node";

/// A daemon's call, its credential checked by [`Service::authenticate_daemon`]: the only way
/// to make one, so a daemon method cannot be served unauthenticated.
#[derive(Clone, Debug)]
pub struct DaemonCall {
    /// What the credential named.
    credential: DaemonCredential,
    /// The address the call came from.
    pub address: String,
}

/// What a daemon's credential named.
#[derive(Clone, Debug)]
enum DaemonCredential {
    /// A join token whose secret matched (usable or not: the join says why not).
    JoinToken(Box<JoinTokenRow>),
    /// A node whose credential matched.
    Node(Box<NodeRow>),
}

/// The answer to a join: the node and its credential, shown this once.
#[derive(Debug)]
pub struct JoinedNode {
    /// The node.
    pub node: NodeRow,
    /// `bcn_<id>.<secret>`.
    pub credential: String,
}

/// The answer to a heartbeat.
#[derive(Debug)]
pub struct HeartbeatAnswer {
    /// The node as recorded.
    pub node: NodeRow,
    /// Whether the daemon is to stop and forget its credential.
    pub leave: bool,
}

/// The provision states a bare-metal machine's daemon heartbeats in: deploying (its first
/// join), deployed, and the rescue states, which keep the deploy. In any other, its machine was
/// released or is being released.
const DEPLOYED: [MachineState; 6] = [
    MachineState::Deploying,
    MachineState::Deployed,
    // A rescue keeps the deploy: the installed system, and its node, come back when it ends.
    MachineState::Rescuing,
    MachineState::Rescue,
    MachineState::ExitingRescue,
    MachineState::RescueFailed,
];

fn invalid_join_token() -> Error {
    Error::unauthenticated("invalid join token")
}

fn invalid_node_credential() -> Error {
    Error::unauthenticated("invalid node credential")
}

/// A time in RFC 3339, as errors say it.
fn rfc3339(micros: i64) -> String {
    prost_types::Timestamp { seconds: micros.div_euclid(1_000_000), nanos: 0 }.to_string()
}

/// Why `token` cannot be used at `now`: `UNAUTHENTICATED` with `details.reason`.
fn unusable(token: &JoinTokenRow, now: i64) -> Error {
    let (reason, why) = match token.state_at(now) {
        JoinTokenState::Revoked => ("revoked", format!("was revoked at {}", rfc3339(token.revoked_at.unwrap_or(now)))),
        JoinTokenState::Exhausted => ("exhausted", format!("is exhausted after {} uses", token.uses)),
        JoinTokenState::Expired | JoinTokenState::Active => {
            ("expired", format!("expired at {}", rfc3339(token.expires_at)))
        }
    };
    Error::unauthenticated(format!("join token {} {why}; ask the pool's admins for a new one", token.id))
        .with_detail("reason", reason)
        .with_detail("joinTokenId", token.id.as_str())
}

/// What a node reported as `field` (`capacity` or `allocatable`): `INVALID_INPUT` naming each
/// quantity past what hardware has (or below zero), with its bound.
fn capacity_row(field: &str, capacity: Option<&NodeCapacity>) -> Result<NodeCapacityRow> {
    let Some(c) = capacity else { return Ok(NodeCapacityRow::default()) };
    let mut violations = Vec::new();
    let mut bounded = |name: &str, value: i64, max: i64, what: &str| {
        if !(0..=max).contains(&value) {
            violations.push(FieldViolation::new(
                format!("{field}.{name}"),
                format!("must be 0 to at most {max} ({what}; no machine has more); got {value}"),
            ));
        }
    };
    bounded("cpuMillis", c.cpu_millis, MAX_NODE_CPU_MILLIS, "1048576 CPUs");
    bounded("memoryBytes", c.memory_bytes, MAX_NODE_MEMORY_BYTES, "4 PiB");
    bounded("ephemeralStorageBytes", c.ephemeral_storage_bytes, MAX_NODE_EPHEMERAL_STORAGE_BYTES, "1 EiB");
    for (i, gpus) in c.gpus.iter().enumerate() {
        if !(1..=MAX_NODE_GPUS_PER_MODEL).contains(&gpus.count) {
            violations.push(FieldViolation::new(
                format!("{field}.gpus[{i}].count"),
                format!("must be 1 to at most {MAX_NODE_GPUS_PER_MODEL}; got {}", gpus.count),
            ));
        }
    }
    if !violations.is_empty() {
        return Err(Error::fields(violations));
    }
    Ok(NodeCapacityRow {
        cpu_millis: c.cpu_millis,
        memory_bytes: c.memory_bytes,
        ephemeral_storage_bytes: c.ephemeral_storage_bytes,
        gpus: c.gpus.iter().map(|g| (g.model.clone(), g.count)).collect(),
    })
}

/// Whether a join proves it is the machine of `node`: with a token made for its machine id
/// (a bare-metal deploy's), or with the node's own credential. A node without a credential
/// (enrolled, or left) is proven only by a token made for its machine id.
fn proves_it_is(node: &NodeRow, token: &JoinTokenRow, presented: &str) -> bool {
    if token.machine_id.as_deref() == Some(node.machine_id.as_str()) {
        return true;
    }
    !node.credential_sha256.is_empty()
        && Bearer::<NodeId>::parse(presented)
            .is_some_and(|credential| credential.id.as_str() == node.id && credential.matches(&node.credential_sha256))
}

/// The refusal of a join whose machine id is already `node` of the pool, without the proof.
fn already_a_node(node: &NodeRow, metal: bool) -> Error {
    let how = if metal {
        format!(
            "it is bare-metal machine {}: only its deploy's join token or the node's credential joins it again \
             (bcctl metal deploy, or bcd from the machine's --state-dir)",
            node.id
        )
    } else {
        format!(
            "only that node's credential joins it again (bcd presents it from its --state-dir, at the endpoint \
             it joined through); to join this machine as a new node, delete node {} first (bcctl nodes delete)",
            node.id
        )
    };
    Error::access_denied(format!(
        "machine id {:?} is already node {} of pool {} ({}): {how}",
        node.machine_id, node.id, node.pool_id, node.state
    ))
    .with_detail("machineId", node.machine_id.as_str())
    .with_detail("nodeId", node.id.as_str())
}

impl Service {
    /// Checks the credential of a daemon's call (`Authorization: Bearer bcjt_...` for
    /// `join-token`, `bcn_...` for `node`): a missing, malformed, unknown or wrong one is
    /// `UNAUTHENTICATED` and says nothing more; a node's that matched but was voided by a delete
    /// or a leave says so.
    pub async fn authenticate_daemon(&self, kind: &str, header: Option<&str>, address: String) -> Result<DaemonCall> {
        let bearer =
            header.and_then(|h| h.strip_prefix("Bearer ").or_else(|| h.strip_prefix("bearer "))).map(str::trim);
        let credential = match kind {
            JOIN_TOKEN_CREDENTIAL => {
                let token = bearer.and_then(Bearer::<JoinTokenId>::parse).ok_or_else(invalid_join_token)?;
                let row = self.store.join_token_fetch(token.id.as_str()).await?.ok_or_else(invalid_join_token)?;
                if !token.matches(&row.secret_sha256) {
                    return Err(invalid_join_token());
                }
                DaemonCredential::JoinToken(Box::new(row))
            }
            NODE_CREDENTIAL => {
                let credential = bearer.and_then(Bearer::<NodeId>::parse).ok_or_else(invalid_node_credential)?;
                let row = self.store.node_fetch(credential.id.as_str()).await?.ok_or_else(invalid_node_credential)?;
                if !credential.matches(&row.credential_sha256) {
                    return Err(invalid_node_credential());
                }
                if let Some(deleted) = row.deleted_at {
                    return Err(Error::unauthenticated(format!(
                        "node {} was deleted at {}: its credential is void; join again with a new token",
                        row.id,
                        rfc3339(deleted)
                    ))
                    .with_detail("reason", "deleted")
                    .with_detail("nodeId", row.id.as_str()));
                }
                DaemonCredential::Node(Box::new(row))
            }
            other => return Err(Error::internal(format!("no daemon credential is called {other:?}"))),
        };
        Ok(DaemonCall { credential, address })
    }

    /// The node a node credential named, which must be the one the request names.
    fn calling_node(call: &DaemonCall, node_id: &str) -> Result<NodeRow> {
        match &call.credential {
            DaemonCredential::Node(node) if node.id == node_id => Ok(node.as_ref().clone()),
            DaemonCredential::Node(node) => Err(Error::access_denied(format!(
                "the credential of node {} speaks for that node only, not {node_id}",
                node.id
            ))),
            DaemonCredential::JoinToken(_) => Err(invalid_node_credential()),
        }
    }

    /// Joins the machine to the token's pool; see `Nodes.Join`.
    pub async fn node_join(&self, call: &DaemonCall, request: JoinNodeRequest) -> Result<JoinedNode> {
        let DaemonCredential::JoinToken(token) = &call.credential else { return Err(invalid_join_token()) };
        self.substrate_check_join(token, &request.machine_id).await?;
        let now = now_micros();
        if token.state_at(now) != JoinTokenState::Active {
            return Err(unusable(token, now));
        }
        if let Some(bound) = token.machine_id.as_deref().filter(|bound| *bound != request.machine_id) {
            return Err(Error::access_denied(format!(
                "join token {} was made for machine id {bound:?} only, not {:?}",
                token.id, request.machine_id
            ))
            .with_detail("machineId", request.machine_id.as_str())
            .with_detail("joinTokenId", token.id.as_str()));
        }
        let capacity = capacity_row("capacity", request.capacity.as_ref())?;
        // A machine that joins again as the node it proves it is keeps that node, so its new
        // credential names it; one that left (no daemon speaks for it) is replaced by a new node.
        let (id, over) = match self.store.node_live(&token.pool_id, &request.machine_id).await? {
            None => (NodeId::random(), JoinOver::Nothing),
            Some(live) if proves_it_is(&live, token, &request.node_credential) => {
                let id = NodeId::parse(&live.id)
                    .ok_or_else(|| Error::internal(format!("stored node id {:?} is malformed", live.id)))?;
                (id, JoinOver::Rejoin { credential_sha256: live.credential_sha256 })
            }
            Some(live) => {
                let metal = self.store.metal_fetch(&live.id).await?.is_some_and(|m| m.deleted_at.is_none());
                if live.state != PoolNodeState::Left || metal {
                    return Err(already_a_node(&live, metal));
                }
                (NodeId::random(), JoinOver::ReplaceLeft { node_id: live.id })
            }
        };
        let credential = Bearer::for_id(id);
        let mut labels = token.labels.clone();
        labels.extend(request.labels);
        let node = NodeRow {
            id: credential.id.to_string(),
            pool_id: token.pool_id.clone(),
            tenant_id: token.tenant_id.clone(),
            machine_id: request.machine_id,
            hostname: request.hostname,
            architecture: request.architecture,
            os: request.os,
            kernel: request.kernel,
            bcd_version: request.bcd_version,
            allocatable: capacity.clone(),
            capacity,
            conditions: Vec::new(),
            labels,
            taints: token.taints.clone(),
            state: PoolNodeState::Ready,
            cordoned: false,
            join_token_id: token.id.clone(),
            credential_sha256: credential.secret_sha256(),
            address: call.address.clone(),
            heartbeat_interval_ms: self.node_heartbeat_interval().as_millis() as i64,
            version: 1,
            joined_at: now,
            last_heartbeat_at: now,
            left_at: None,
            deleted_at: None,
            updated_at: now,
            remediation: String::new(),
            remediated_at: None,
        };
        match self.store.node_join(&node, &token.id, &over, now).await? {
            JoinOutcome::Refused(token) => Err(unusable(&token, now)),
            JoinOutcome::Joined { node, rejoined } => {
                tracing::info!(node = %node.id, pool = %node.pool_id, machine = %node.machine_id, join_token = %token.id,
                    rejoined, "node joined");
                Ok(JoinedNode { node: *node, credential: credential.reveal() })
            }
        }
    }

    /// Records a heartbeat; see `Nodes.Heartbeat`. The answer asks the daemon to leave when its
    /// node is a bare-metal machine that is no longer deployed (released, or on its way there):
    /// what runs there now is not the node the pool knows. A machine in rescue is still
    /// deployed: its installed system runs again as the node once the rescue ends.
    pub async fn node_heartbeat(&self, call: &DaemonCall, request: NodeHeartbeatRequest) -> Result<HeartbeatAnswer> {
        let node = Self::calling_node(call, &request.node_id)?;
        if node.state == PoolNodeState::Left {
            return Err(invalid_node_credential());
        }
        let conditions: Vec<(String, String, String)> =
            request.conditions.into_iter().map(|c| (c.r#type, c.status, c.message)).collect();
        let capacity = capacity_row("capacity", request.capacity.as_ref())?;
        let allocatable = match request.allocatable.as_ref() {
            Some(allocatable) => capacity_row("allocatable", Some(allocatable))?,
            None => capacity.clone(),
        };
        let machine = self.store.metal_fetch(&node.id).await?.filter(|m| m.deleted_at.is_none());
        if let Some(machine) = machine.filter(|m| !DEPLOYED.contains(&m.provision_state)) {
            tracing::info!(node = %node.id, pool = %node.pool_id, state = %machine.provision_state,
                "a released machine's daemon is told to leave");
            return Ok(HeartbeatAnswer { node, leave: true });
        }
        let node = self.store.node_heartbeat(&node.id, &capacity, &allocatable, &conditions, now_micros()).await?;
        Ok(HeartbeatAnswer { node, leave: false })
    }

    /// The node leaves its pool; see `Nodes.Leave`.
    pub async fn node_leave(&self, call: &DaemonCall, request: LeaveNodeRequest) -> Result<NodeRow> {
        let node = Self::calling_node(call, &request.node_id)?;
        let left = self.store.node_leave(&node.id, now_micros()).await?;
        tracing::info!(node = %left.id, pool = %left.pool_id, "node left");
        Ok(left)
    }

    /// The heartbeat interval nodes are told.
    pub fn node_heartbeat_interval(&self) -> Duration {
        self.node_heartbeat_interval
    }

    /// Node `id` of pool `pool_id`; `NOT_FOUND` for one of another pool.
    async fn node_of_pool(&self, pool_id: &str, id: &str) -> Result<NodeRow> {
        match self.store.node_fetch(id).await? {
            Some(node) if node.pool_id == pool_id => Ok(node),
            _ => Err(Error::not_found("node", id)),
        }
    }

    /// The pool's nodes, oldest first.
    pub async fn node_list(&self, _ctx: &Context, request: ListNodesRequest) -> Result<Vec<NodeRow>> {
        let pool = self.store.pool_fetch(&request.pool_id).await?;
        self.store.node_list(&pool.id, LIST_LIMIT).await
    }

    /// The pool's nodes by state, with their summed capacity (for the pool's view; the caller
    /// was allowed to see the pool).
    pub async fn pool_node_summary(&self, pool_id: &str) -> Result<NodeSummaryRow> {
        self.store.node_summary(pool_id).await
    }

    /// One node of the pool.
    pub async fn node_get(&self, _ctx: &Context, request: GetNodeRequest) -> Result<NodeRow> {
        self.node_of_pool(&request.pool_id, &request.node_id).await
    }

    /// Cordons a node of the pool.
    pub async fn node_cordon(&self, ctx: &Context, request: CordonNodeRequest) -> Result<NodeRow> {
        self.node_steer(ctx, &request.pool_id, &request.node_id, Some(true)).await
    }

    /// Uncordons a node of the pool.
    pub async fn node_uncordon(&self, ctx: &Context, request: UncordonNodeRequest) -> Result<NodeRow> {
        self.node_steer(ctx, &request.pool_id, &request.node_id, Some(false)).await
    }

    /// Deletes a node of the pool; a deleted one is returned as it is.
    pub async fn node_delete(&self, ctx: &Context, request: DeleteNodeRequest) -> Result<NodeRow> {
        self.node_steer(ctx, &request.pool_id, &request.node_id, None).await
    }

    /// Cordons or uncordons (`Some`) or deletes (`None`) a node of the pool.
    async fn node_steer(&self, ctx: &Context, pool_id: &str, node_id: &str, cordon: Option<bool>) -> Result<NodeRow> {
        let node = self.node_of_pool(pool_id, node_id).await?;
        if node.deleted_at.is_some() {
            return match cordon {
                None => Ok(node),
                Some(_) => {
                    Err(Error::new(Code::InvalidState, format!("node {node_id} is deleted"))
                        .with_detail("nodeId", node_id))
                }
            };
        }
        let now = now_micros();
        let changed = match cordon {
            Some(cordoned) => self.store.node_set_cordoned(&node.id, cordoned, now).await?,
            None => self.store.node_delete(&node.id, now).await?,
        };
        let what = match cordon {
            Some(true) => "node cordoned",
            Some(false) => "node uncordoned",
            None => "node deleted",
        };
        tracing::info!(node = %changed.id, pool = %changed.pool_id, by = %ctx.caller.principal_id, "{what}");
        Ok(changed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::compute::NodeGpus;

    fn reported(cpu_millis: i64, memory_bytes: i64, ephemeral_storage_bytes: i64, gpus: i32) -> NodeCapacity {
        NodeCapacity {
            cpu_millis,
            memory_bytes,
            ephemeral_storage_bytes,
            gpus: vec![NodeGpus { model: "NVIDIA L4".into(), count: gpus }],
        }
    }

    #[test]
    fn a_report_at_the_bounds_is_taken_and_one_past_them_is_refused_naming_each_field() {
        let most = reported(MAX_NODE_CPU_MILLIS, MAX_NODE_MEMORY_BYTES, MAX_NODE_EPHEMERAL_STORAGE_BYTES, 64);
        assert_eq!(capacity_row("capacity", Some(&most)).unwrap().cpu_millis, MAX_NODE_CPU_MILLIS);
        let past =
            reported(MAX_NODE_CPU_MILLIS + 1, MAX_NODE_MEMORY_BYTES + 1, MAX_NODE_EPHEMERAL_STORAGE_BYTES + 1, 65);
        let error = capacity_row("allocatable", Some(&past)).unwrap_err();
        assert_eq!(error.code, Code::InvalidInput);
        assert!(
            error.message.contains("allocatable.cpuMillis: must be 0 to at most 1048576000 (1048576 CPUs"),
            "{}",
            error.message
        );
        let named: Vec<&str> =
            error.details["fields"].as_array().unwrap().iter().filter_map(|f| f["field"].as_str()).collect();
        assert_eq!(
            named,
            [
                "allocatable.cpuMillis",
                "allocatable.memoryBytes",
                "allocatable.ephemeralStorageBytes",
                "allocatable.gpus[0].count"
            ]
        );
        assert!(capacity_row("capacity", Some(&reported(-1, 0, 0, 1))).is_err(), "below zero");
    }
}
