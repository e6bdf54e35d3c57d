//! `bettercompute.compute.v1.KubernetesClusters` and `KubernetesNodePools`: a cluster's view
//! holds its node pools'. The creates and the node pool update have rules of their own (zones,
//! autoscaling bounds, pools by mode), so their service gets the schema stage's violations
//! (`+ rules`) and names them all at once with its own.

use tonic::{Request, Response, Status};

use super::handlers::thin_service;
use super::plans::plan_view;
use super::views::{meta_view, stamps};
use super::{context, timestamp};
use crate::proto::compute::{
    CreateKubernetesClusterRequest, CreateKubernetesNodePoolRequest, DeleteKubernetesClusterRequest,
    DeleteKubernetesNodePoolRequest, GetKubernetesClusterRequest, GetKubernetesNodePoolRequest, KubernetesAccelerators,
    KubernetesAutoscaling, KubernetesChannelVersions, KubernetesCluster, KubernetesCredentials,
    KubernetesCredentialsRequest, KubernetesNodePool, KubernetesTaint, KubernetesVersions, KubernetesVersionsRequest,
    ListKubernetesClustersRequest, ListKubernetesClustersResponse, ListKubernetesNodePoolsRequest,
    ListKubernetesNodePoolsResponse, Plan, PlanKubernetesClusterRequest, PlanKubernetesNodePoolRequest,
    UpdateKubernetesClusterRequest, UpdateKubernetesNodePoolRequest, kubernetes_clusters_server,
    kubernetes_node_pools_server,
};
use crate::provider::ServerConfig;
use crate::store::{ClusterRow, NodePoolRow};

/// The view of a node pool, alone or inside its cluster's.
fn node_pool_view(row: NodePoolRow) -> KubernetesNodePool {
    let spec = row.spec;
    KubernetesNodePool {
        id: row.id,
        tenant_id: row.tenant_id,
        cluster_id: row.cluster_id,
        name: row.name,
        machine_type: spec.machine_type,
        node_count: spec.node_count,
        autoscaling: spec
            .autoscaling
            .map(|(min, max)| KubernetesAutoscaling { min_nodes: Some(min), max_nodes: Some(max) }),
        disk_gib: spec.disk_gib,
        disk_type: spec.disk_type,
        spot: spec.spot,
        accelerators: spec.accelerators.map(|(r#type, count)| KubernetesAccelerators { r#type, count }),
        zones: spec.zones,
        labels: spec.labels.into_iter().collect(),
        taints: spec.taints.into_iter().map(|(key, value, effect)| KubernetesTaint { key, value, effect }).collect(),
        current_node_count: row.current_node_count as i32,
        state: row.state.into(),
        message: row.message,
        ..stamps(row.version, row.created_at, row.updated_at, row.deleted_at)
    }
}

thin_service! {
    impl kubernetes_node_pools_server::KubernetesNodePools: KubernetesNodePool by node_pool_view;
    create(CreateKubernetesNodePoolRequest) node_pool_create + rules, get(GetKubernetesNodePoolRequest) node_pool_get,
    update(UpdateKubernetesNodePoolRequest) node_pool_update + rules,
    delete(DeleteKubernetesNodePoolRequest) node_pool_delete;
    list(ListKubernetesNodePoolsRequest) node_pool_list -> ListKubernetesNodePoolsResponse { node_pools };
    answers { plan(PlanKubernetesNodePoolRequest) node_pool_plan -> Plan by plan_view };
}

fn cluster_view(row: ClusterRow) -> KubernetesCluster {
    let provider_name = row.provider_name();
    let mut node_pools: Vec<KubernetesNodePool> = row.node_pools.into_iter().map(node_pool_view).collect();
    // A pool's drift is the cluster's drift in its fields (`nodePools[general].nodeCount`).
    for pool in &mut node_pools {
        let prefix = format!("nodePools[{}].", pool.name);
        let own = row.meta.drift.iter().filter_map(|d| {
            let field = d.field.strip_prefix(&prefix)?;
            Some(crate::domain::drift::Drift { field: field.to_owned(), ..d.clone() })
        });
        pool.drift = super::views::drift_view(own.collect());
        // The cluster's passes converge its pools: a pool shows their problem.
        pool.problem = super::views::problem_view(row.meta.problem.clone());
    }
    KubernetesCluster {
        description: row.description,
        mode: row.mode,
        location: row.location,
        release_channel: row.release_channel,
        requested_version: row.requested_version,
        network_id: row.network_id.unwrap_or_default(),
        authorized_networks: row.authorized_networks,
        private_nodes: row.private_nodes,
        node_pools,
        endpoint: row.endpoint,
        kubernetes_version: row.kubernetes_version,
        node_version: row.node_version,
        provider_name,
        ..meta_view(row.meta)
    }
}

thin_service! {
    impl kubernetes_clusters_server::KubernetesClusters: KubernetesCluster by cluster_view;
    create(CreateKubernetesClusterRequest) cluster_create + rules, get(GetKubernetesClusterRequest) cluster_get,
    update(UpdateKubernetesClusterRequest) cluster_update, delete(DeleteKubernetesClusterRequest) cluster_delete;
    page(ListKubernetesClustersRequest) cluster_list -> ListKubernetesClustersResponse { clusters };
    answers {
        versions(KubernetesVersionsRequest) cluster_versions -> KubernetesVersions by versions_view,
        plan(PlanKubernetesClusterRequest) cluster_plan -> Plan by plan_view
    };
    and {
        async fn credentials(
            &self,
            request: Request<KubernetesCredentialsRequest>,
        ) -> Result<Response<KubernetesCredentials>, Status> {
            let ctx = context(&request)?;
            let issued = self.service.cluster_credentials(&ctx, request.into_inner()).await?;
            Ok(Response::new(KubernetesCredentials {
                kubeconfig: issued.kubeconfig,
                expires_at: Some(timestamp(issued.expires_at)),
                role: issued.role,
            }))
        }
    }
}

/// The versions a location offers, the release channels' names in the API's lower case.
fn versions_view(config: ServerConfig) -> KubernetesVersions {
    KubernetesVersions {
        default_version: config.default_version,
        valid_versions: config.valid_master_versions,
        channels: config
            .channels
            .into_iter()
            .map(|c| KubernetesChannelVersions {
                channel: c.channel.to_ascii_lowercase(),
                default_version: c.default_version,
                valid_versions: c.valid_versions,
            })
            .collect(),
    }
}
