//! `bettercompute.compute.v1.Nodes`: a node's view, the daemon's methods (called with a join
//! token or the node's credential, see `api::daemon_call`) and the pool's people's.

use tonic::{Request, Response, Status};

use super::handlers::thin_service;
use super::{daemon_call, timestamp};
use crate::domain::states::PoolNodeState;
use crate::proto::compute::{
    CordonNodeRequest, DeleteNodeRequest, GetNodeRequest, JoinNodeRequest, JoinNodeResponse, LeaveNodeRequest,
    ListNodesRequest, ListNodesResponse, Node, NodeCapacity, NodeCondition, NodeGpus, NodeHeartbeatRequest,
    NodeHeartbeatResponse, NodeTaint, PoolNodeSummary, UncordonNodeRequest, nodes_server,
};
use crate::store::{NodeCapacityRow, NodeRow, NodeSummaryRow};

fn capacity_view(row: NodeCapacityRow) -> NodeCapacity {
    NodeCapacity {
        cpu_millis: row.cpu_millis,
        memory_bytes: row.memory_bytes,
        ephemeral_storage_bytes: row.ephemeral_storage_bytes,
        gpus: row.gpus.into_iter().map(|(model, count)| NodeGpus { model, count }).collect(),
    }
}

/// The pool's nodes as `pools.get` shows them.
pub(super) fn pool_node_summary_view(row: NodeSummaryRow) -> PoolNodeSummary {
    let count = |state| row.states.get(&state).copied().unwrap_or(0) as i32;
    PoolNodeSummary {
        ready: count(PoolNodeState::Ready),
        not_ready: count(PoolNodeState::NotReady),
        left: count(PoolNodeState::Left),
        deleted: count(PoolNodeState::Deleted),
        cordoned: row.cordoned as i32,
        capacity: Some(capacity_view(row.capacity)),
        allocatable: Some(capacity_view(row.allocatable)),
        unhealthy: row.unhealthy as i32,
        remediation_paused: row.remediation_paused,
    }
}

fn interval_seconds(milliseconds: i64) -> i32 {
    (milliseconds / 1000).max(1) as i32
}

fn node_view(row: NodeRow) -> Node {
    Node {
        heartbeat_interval_seconds: interval_seconds(row.heartbeat_interval_ms),
        id: row.id,
        pool_id: row.pool_id,
        machine_id: row.machine_id,
        hostname: row.hostname,
        architecture: row.architecture,
        os: row.os,
        kernel: row.kernel,
        bcd_version: row.bcd_version,
        capacity: Some(capacity_view(row.capacity)),
        allocatable: Some(capacity_view(row.allocatable)),
        conditions: row
            .conditions
            .into_iter()
            .map(|(r#type, status, message)| NodeCondition { r#type, status, message })
            .collect(),
        labels: row.labels.into_iter().collect(),
        taints: row.taints.into_iter().map(|(key, value, effect)| NodeTaint { key, value, effect }).collect(),
        state: row.state.into(),
        cordoned: row.cordoned,
        join_token_id: row.join_token_id,
        address: row.address,
        joined_at: Some(timestamp(row.joined_at)),
        last_heartbeat_at: Some(timestamp(row.last_heartbeat_at)),
        left_at: row.left_at.map(timestamp),
        deleted_at: row.deleted_at.map(timestamp),
        version: row.version,
        remediation: row.remediation,
        remediated_at: row.remediated_at.map(timestamp),
    }
}

thin_service! {
    impl nodes_server::Nodes: Node by node_view;
    get(GetNodeRequest) node_get, cordon(CordonNodeRequest) node_cordon,
    uncordon(UncordonNodeRequest) node_uncordon, delete(DeleteNodeRequest) node_delete;
    list(ListNodesRequest) node_list -> ListNodesResponse { nodes };
    and {
        async fn join(&self, request: Request<JoinNodeRequest>) -> Result<Response<JoinNodeResponse>, Status> {
            let call = daemon_call(&request)?;
            let joined = self.service.node_join(&call, request.into_inner()).await?;
            Ok(Response::new(JoinNodeResponse {
                heartbeat_interval_seconds: interval_seconds(joined.node.heartbeat_interval_ms),
                node_id: joined.node.id,
                pool_id: joined.node.pool_id,
                credential: joined.credential,
            }))
        }

        async fn heartbeat(
            &self,
            request: Request<NodeHeartbeatRequest>,
        ) -> Result<Response<NodeHeartbeatResponse>, Status> {
            let call = daemon_call(&request)?;
            let answer = self.service.node_heartbeat(&call, request.into_inner()).await?;
            let node = answer.node;
            Ok(Response::new(NodeHeartbeatResponse {
                cordoned: node.cordoned,
                heartbeat_interval_seconds: interval_seconds(node.heartbeat_interval_ms),
                state: node.state.into(),
                leave: answer.leave,
            }))
        }

        async fn leave(&self, request: Request<LeaveNodeRequest>) -> Result<Response<Node>, Status> {
            let call = daemon_call(&request)?;
            Ok(Response::new(node_view(self.service.node_leave(&call, request.into_inner()).await?)))
        }
    }
}
