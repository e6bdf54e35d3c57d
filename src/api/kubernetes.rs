//! `bettercompute.compute.v1.KubernetesClusters` and `KubernetesNodePools`: decode, call the
//! service, turn rows into views. The creates and the node pool update have rules of their own
//! (zones, autoscaling bounds, pools by mode), so their service gets the schema stage's
//! violations (`context_with_rules`) and names them all at once with its own.

use tonic::{Request, Response, Status};

use super::{context, context_with_rules, timestamp};
use crate::proto::compute::{
    CreateKubernetesClusterRequest, CreateKubernetesNodePoolRequest, DeleteKubernetesClusterRequest,
    DeleteKubernetesNodePoolRequest, GetKubernetesClusterRequest, GetKubernetesNodePoolRequest, KubernetesAccelerators,
    KubernetesAutoscaling, KubernetesChannelVersions, KubernetesCluster, KubernetesCredentials,
    KubernetesCredentialsRequest, KubernetesNodePool, KubernetesTaint, KubernetesVersions, KubernetesVersionsRequest,
    ListKubernetesClustersRequest, ListKubernetesClustersResponse, ListKubernetesNodePoolsRequest,
    ListKubernetesNodePoolsResponse, UpdateKubernetesClusterRequest, UpdateKubernetesNodePoolRequest,
    kubernetes_clusters_server, kubernetes_node_pools_server,
};
use crate::service::Service;
use crate::store::{ClusterRow, NodePoolRow};

/// The gRPC services of clusters and node pools.
#[derive(Debug, Clone)]
pub struct KubernetesApi {
    service: Service,
}

impl KubernetesApi {
    /// Both services over `service`.
    pub fn servers(
        service: Service,
    ) -> (
        kubernetes_clusters_server::KubernetesClustersServer<Self>,
        kubernetes_node_pools_server::KubernetesNodePoolsServer<Self>,
    ) {
        let api = Self { service };
        (
            kubernetes_clusters_server::KubernetesClustersServer::new(api.clone()),
            kubernetes_node_pools_server::KubernetesNodePoolsServer::new(api),
        )
    }
}

fn pool_view(row: NodePoolRow) -> KubernetesNodePool {
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
        state: row.state,
        message: row.message,
        version: row.version,
        created_at: Some(timestamp(row.created_at)),
        updated_at: Some(timestamp(row.updated_at)),
        deleted_at: row.deleted_at.map(timestamp),
    }
}

fn view(row: ClusterRow) -> KubernetesCluster {
    let provider_name = row.provider_name();
    KubernetesCluster {
        id: row.meta.id,
        tenant_id: row.meta.tenant_id,
        project_id: row.meta.project_id.unwrap_or_default(),
        pool_id: row.meta.pool_id,
        name: row.meta.name,
        description: row.description,
        mode: row.mode,
        location: row.location,
        release_channel: row.release_channel,
        requested_version: row.requested_version,
        network_id: row.network_id.unwrap_or_default(),
        authorized_networks: row.authorized_networks,
        private_nodes: row.private_nodes,
        node_pools: row.node_pools.into_iter().map(pool_view).collect(),
        state: row.meta.state,
        message: row.meta.message,
        endpoint: row.endpoint,
        kubernetes_version: row.kubernetes_version,
        node_version: row.node_version,
        provider_name,
        version: row.meta.version,
        created_at: Some(timestamp(row.meta.created_at)),
        updated_at: Some(timestamp(row.meta.updated_at)),
        deleted_at: row.meta.deleted_at.map(timestamp),
    }
}

#[tonic::async_trait]
impl kubernetes_clusters_server::KubernetesClusters for KubernetesApi {
    async fn create(
        &self,
        request: Request<CreateKubernetesClusterRequest>,
    ) -> Result<Response<KubernetesCluster>, Status> {
        let ctx = context_with_rules(&request)?;
        Ok(Response::new(view(self.service.cluster_create(&ctx, request.into_inner()).await?)))
    }

    async fn list(
        &self,
        request: Request<ListKubernetesClustersRequest>,
    ) -> Result<Response<ListKubernetesClustersResponse>, Status> {
        let ctx = context(&request)?;
        let clusters = self.service.cluster_list(&ctx, request.into_inner()).await?;
        Ok(Response::new(ListKubernetesClustersResponse { clusters: clusters.into_iter().map(view).collect() }))
    }

    async fn get(&self, request: Request<GetKubernetesClusterRequest>) -> Result<Response<KubernetesCluster>, Status> {
        let ctx = context(&request)?;
        Ok(Response::new(view(self.service.cluster_get(&ctx, request.into_inner()).await?)))
    }

    async fn update(
        &self,
        request: Request<UpdateKubernetesClusterRequest>,
    ) -> Result<Response<KubernetesCluster>, Status> {
        let ctx = context(&request)?;
        Ok(Response::new(view(self.service.cluster_update(&ctx, request.into_inner()).await?)))
    }

    async fn delete(
        &self,
        request: Request<DeleteKubernetesClusterRequest>,
    ) -> Result<Response<KubernetesCluster>, Status> {
        let ctx = context(&request)?;
        Ok(Response::new(view(self.service.cluster_delete(&ctx, request.into_inner()).await?)))
    }

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

    async fn versions(
        &self,
        request: Request<KubernetesVersionsRequest>,
    ) -> Result<Response<KubernetesVersions>, Status> {
        let ctx = context(&request)?;
        let config = self.service.cluster_versions(&ctx, request.into_inner()).await?;
        Ok(Response::new(KubernetesVersions {
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
        }))
    }
}

#[tonic::async_trait]
impl kubernetes_node_pools_server::KubernetesNodePools for KubernetesApi {
    async fn create(
        &self,
        request: Request<CreateKubernetesNodePoolRequest>,
    ) -> Result<Response<KubernetesNodePool>, Status> {
        let ctx = context_with_rules(&request)?;
        Ok(Response::new(pool_view(self.service.node_pool_create(&ctx, request.into_inner()).await?)))
    }

    async fn list(
        &self,
        request: Request<ListKubernetesNodePoolsRequest>,
    ) -> Result<Response<ListKubernetesNodePoolsResponse>, Status> {
        let ctx = context(&request)?;
        let pools = self.service.node_pool_list(&ctx, request.into_inner()).await?;
        Ok(Response::new(ListKubernetesNodePoolsResponse { node_pools: pools.into_iter().map(pool_view).collect() }))
    }

    async fn get(
        &self,
        request: Request<GetKubernetesNodePoolRequest>,
    ) -> Result<Response<KubernetesNodePool>, Status> {
        let ctx = context(&request)?;
        Ok(Response::new(pool_view(self.service.node_pool_get(&ctx, request.into_inner()).await?)))
    }

    async fn update(
        &self,
        request: Request<UpdateKubernetesNodePoolRequest>,
    ) -> Result<Response<KubernetesNodePool>, Status> {
        let ctx = context_with_rules(&request)?;
        Ok(Response::new(pool_view(self.service.node_pool_update(&ctx, request.into_inner()).await?)))
    }

    async fn delete(
        &self,
        request: Request<DeleteKubernetesNodePoolRequest>,
    ) -> Result<Response<KubernetesNodePool>, Status> {
        let ctx = context(&request)?;
        Ok(Response::new(pool_view(self.service.node_pool_delete(&ctx, request.into_inner()).await?)))
    }
}
