//! `bettercompute.compute.v1.Networks`, `Instances` and `Certificates`: decode, call the
//! service, turn rows into views. A certificate's view has no field for its private key.

use tonic::{Request, Response, Status};

use super::{context, timestamp};
use crate::proto::compute::{
    Certificate, CreateCertificateRequest, CreateInstanceRequest, CreateNetworkRequest, DeleteCertificateRequest,
    DeleteInstanceRequest, DeleteNetworkRequest, GetCertificateRequest, GetInstanceRequest, GetNetworkRequest,
    Instance, ListCertificatesRequest, ListCertificatesResponse, ListInstancesRequest, ListInstancesResponse,
    ListNetworksRequest, ListNetworksResponse, Network, Subnet, UpdateNetworkRequest, certificates_server,
    instances_server, networks_server,
};
use crate::service::Service;
use crate::store::{CertificateRow, InstanceRow, NetworkRow, SubnetRow};

/// The gRPC services of the `vps` module's tenant resources.
#[derive(Debug, Clone)]
pub struct VpsApi {
    service: Service,
}

impl VpsApi {
    /// The three services over `service`.
    pub fn servers(
        service: Service,
    ) -> (
        networks_server::NetworksServer<Self>,
        instances_server::InstancesServer<Self>,
        certificates_server::CertificatesServer<Self>,
    ) {
        let api = Self { service };
        (
            networks_server::NetworksServer::new(api.clone()),
            instances_server::InstancesServer::new(api.clone()),
            certificates_server::CertificatesServer::new(api),
        )
    }
}

fn subnet_view(row: SubnetRow) -> Subnet {
    Subnet {
        id: row.id,
        network_id: row.network_id,
        name: row.name,
        region: row.region,
        ip_range: row.ip_range,
        state: row.state,
        message: row.message,
    }
}

fn network_view(row: NetworkRow) -> Network {
    Network {
        id: row.meta.id,
        tenant_id: row.meta.tenant_id,
        project_id: row.meta.project_id.unwrap_or_default(),
        pool_id: row.meta.pool_id,
        name: row.meta.name,
        description: row.description,
        subnets: row.subnets.into_iter().map(subnet_view).collect(),
        state: row.meta.state,
        message: row.meta.message,
        version: row.meta.version,
        created_at: Some(timestamp(row.meta.created_at)),
        updated_at: Some(timestamp(row.meta.updated_at)),
        deleted_at: row.meta.deleted_at.map(timestamp),
    }
}

fn instance_view(row: InstanceRow) -> Instance {
    Instance {
        id: row.meta.id,
        tenant_id: row.meta.tenant_id,
        project_id: row.meta.project_id.unwrap_or_default(),
        pool_id: row.meta.pool_id,
        name: row.meta.name,
        region: row.region,
        size: row.size,
        image: row.image,
        subnet_id: row.subnet_id.unwrap_or_default(),
        network_id: row.network_id.unwrap_or_default(),
        machine_id: row.machine_id.unwrap_or_default(),
        public_ipv4: row.public_ipv4,
        private_ipv4: row.private_ipv4,
        state: row.meta.state,
        message: row.meta.message,
        version: row.meta.version,
        created_at: Some(timestamp(row.meta.created_at)),
        updated_at: Some(timestamp(row.meta.updated_at)),
        deleted_at: row.meta.deleted_at.map(timestamp),
    }
}

fn certificate_view(row: CertificateRow) -> Certificate {
    Certificate {
        id: row.meta.id,
        tenant_id: row.meta.tenant_id,
        project_id: row.meta.project_id.unwrap_or_default(),
        pool_id: row.meta.pool_id,
        name: row.meta.name,
        r#type: row.kind,
        dns_names: row.dns_names,
        not_after: row.not_after.map(timestamp),
        sha256_fingerprint: row.sha256_fingerprint,
        state: row.meta.state,
        message: row.meta.message,
        version: row.meta.version,
        created_at: Some(timestamp(row.meta.created_at)),
        updated_at: Some(timestamp(row.meta.updated_at)),
        deleted_at: row.meta.deleted_at.map(timestamp),
    }
}

#[tonic::async_trait]
impl networks_server::Networks for VpsApi {
    async fn create(&self, request: Request<CreateNetworkRequest>) -> Result<Response<Network>, Status> {
        let ctx = context(&request)?;
        Ok(Response::new(network_view(self.service.network_create(&ctx, request.into_inner()).await?)))
    }

    async fn list(&self, request: Request<ListNetworksRequest>) -> Result<Response<ListNetworksResponse>, Status> {
        let ctx = context(&request)?;
        let networks = self.service.network_list(&ctx, request.into_inner()).await?;
        Ok(Response::new(ListNetworksResponse { networks: networks.into_iter().map(network_view).collect() }))
    }

    async fn get(&self, request: Request<GetNetworkRequest>) -> Result<Response<Network>, Status> {
        let ctx = context(&request)?;
        Ok(Response::new(network_view(self.service.network_get(&ctx, request.into_inner()).await?)))
    }

    async fn update(&self, request: Request<UpdateNetworkRequest>) -> Result<Response<Network>, Status> {
        let ctx = context(&request)?;
        Ok(Response::new(network_view(self.service.network_update(&ctx, request.into_inner()).await?)))
    }

    async fn delete(&self, request: Request<DeleteNetworkRequest>) -> Result<Response<Network>, Status> {
        let ctx = context(&request)?;
        Ok(Response::new(network_view(self.service.network_delete(&ctx, request.into_inner()).await?)))
    }
}

#[tonic::async_trait]
impl instances_server::Instances for VpsApi {
    async fn create(&self, request: Request<CreateInstanceRequest>) -> Result<Response<Instance>, Status> {
        let ctx = context(&request)?;
        Ok(Response::new(instance_view(self.service.instance_create(&ctx, request.into_inner()).await?)))
    }

    async fn list(&self, request: Request<ListInstancesRequest>) -> Result<Response<ListInstancesResponse>, Status> {
        let ctx = context(&request)?;
        let instances = self.service.instance_list(&ctx, request.into_inner()).await?;
        Ok(Response::new(ListInstancesResponse { instances: instances.into_iter().map(instance_view).collect() }))
    }

    async fn get(&self, request: Request<GetInstanceRequest>) -> Result<Response<Instance>, Status> {
        let ctx = context(&request)?;
        Ok(Response::new(instance_view(self.service.instance_get(&ctx, request.into_inner()).await?)))
    }

    async fn delete(&self, request: Request<DeleteInstanceRequest>) -> Result<Response<Instance>, Status> {
        let ctx = context(&request)?;
        Ok(Response::new(instance_view(self.service.instance_delete(&ctx, request.into_inner()).await?)))
    }
}

#[tonic::async_trait]
impl certificates_server::Certificates for VpsApi {
    async fn create(&self, request: Request<CreateCertificateRequest>) -> Result<Response<Certificate>, Status> {
        let ctx = context(&request)?;
        Ok(Response::new(certificate_view(self.service.certificate_create(&ctx, request.into_inner()).await?)))
    }

    async fn list(
        &self,
        request: Request<ListCertificatesRequest>,
    ) -> Result<Response<ListCertificatesResponse>, Status> {
        let ctx = context(&request)?;
        let certificates = self.service.certificate_list(&ctx, request.into_inner()).await?;
        Ok(Response::new(ListCertificatesResponse {
            certificates: certificates.into_iter().map(certificate_view).collect(),
        }))
    }

    async fn get(&self, request: Request<GetCertificateRequest>) -> Result<Response<Certificate>, Status> {
        let ctx = context(&request)?;
        Ok(Response::new(certificate_view(self.service.certificate_get(&ctx, request.into_inner()).await?)))
    }

    async fn delete(&self, request: Request<DeleteCertificateRequest>) -> Result<Response<Certificate>, Status> {
        let ctx = context(&request)?;
        Ok(Response::new(certificate_view(self.service.certificate_delete(&ctx, request.into_inner()).await?)))
    }
}
