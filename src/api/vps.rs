//! `bettercompute.compute.v1.Networks`, `Instances`, `Certificates` and `Volumes`: the `vps`
//! module's tenant resources, one table each. A certificate's view has no field for its private
//! key.

use super::handlers::thin_service;
use super::plans::plan_view;
use super::timestamp;
use super::views::meta_view;
use crate::proto::compute::{
    AttachVolumeRequest, CreateVolumeRequest, DeleteVolumeRequest, DetachVolumeRequest, GetVolumeRequest,
    ListVolumesRequest, ListVolumesResponse, Plan, PlanVolumeRequest, UpdateVolumeRequest, Volume, volumes_server,
};
use crate::proto::compute::{
    Certificate, CreateCertificateRequest, CreateInstanceRequest, CreateNetworkRequest, DeleteCertificateRequest,
    DeleteInstanceRequest, DeleteNetworkRequest, GetCertificateRequest, GetInstanceRequest, GetNetworkRequest,
    Instance, ListCertificatesRequest, ListCertificatesResponse, ListInstancesRequest, ListInstancesResponse,
    ListNetworksRequest, ListNetworksResponse, Network, PlanCertificateRequest, PlanInstanceRequest,
    PlanNetworkRequest, Subnet, UpdateNetworkRequest, certificates_server, instances_server, networks_server,
};
use crate::store::{CertificateRow, InstanceRow, NetworkRow, SubnetRow, VolumeRow};

fn subnet_view(row: SubnetRow) -> Subnet {
    Subnet {
        id: row.id,
        network_id: row.network_id,
        name: row.name,
        region: row.region,
        ip_range: row.ip_range,
        state: row.state.into(),
        message: row.message,
    }
}

fn network_view(row: NetworkRow) -> Network {
    Network {
        description: row.description,
        subnets: row.subnets.into_iter().map(subnet_view).collect(),
        ..meta_view(row.meta)
    }
}

thin_service! {
    impl networks_server::Networks: Network by network_view;
    create(CreateNetworkRequest) network_create, get(GetNetworkRequest) network_get,
    update(UpdateNetworkRequest) network_update, delete(DeleteNetworkRequest) network_delete;
    list(ListNetworksRequest) network_list -> ListNetworksResponse { networks };
    answers { plan(PlanNetworkRequest) network_plan -> Plan by plan_view };
}

fn instance_view(row: InstanceRow) -> Instance {
    Instance {
        region: row.region,
        size: row.size,
        image: row.image,
        subnet_id: row.subnet_id.unwrap_or_default(),
        network_id: row.network_id.unwrap_or_default(),
        machine_id: row.machine_id.unwrap_or_default(),
        public_ipv4: row.public_ipv4,
        private_ipv4: row.private_ipv4,
        ..meta_view(row.meta)
    }
}

thin_service! {
    impl instances_server::Instances: Instance by instance_view;
    create(CreateInstanceRequest) instance_create, get(GetInstanceRequest) instance_get,
    delete(DeleteInstanceRequest) instance_delete;
    list(ListInstancesRequest) instance_list -> ListInstancesResponse { instances };
    answers { plan(PlanInstanceRequest) instance_plan -> Plan by plan_view };
}

fn certificate_view(row: CertificateRow) -> Certificate {
    Certificate {
        r#type: row.kind,
        dns_names: row.dns_names,
        not_after: row.not_after.map(timestamp),
        sha256_fingerprint: row.sha256_fingerprint,
        ..meta_view(row.meta)
    }
}

thin_service! {
    impl certificates_server::Certificates: Certificate by certificate_view;
    create(CreateCertificateRequest) certificate_create, get(GetCertificateRequest) certificate_get,
    delete(DeleteCertificateRequest) certificate_delete;
    list(ListCertificatesRequest) certificate_list -> ListCertificatesResponse { certificates };
    answers { plan(PlanCertificateRequest) certificate_plan -> Plan by plan_view };
}

fn volume_view(row: VolumeRow) -> Volume {
    Volume {
        description: row.description,
        region: row.region,
        // The schema bounds a size to 16384.
        size_gigabytes: i32::try_from(row.size_gigabytes).unwrap_or(i32::MAX),
        filesystem_type: row.filesystem_type,
        instance_id: row.instance_id.unwrap_or_default(),
        attached_machine_id: row.attached_machine_id.unwrap_or_default(),
        ..meta_view(row.meta)
    }
}

thin_service! {
    impl volumes_server::Volumes: Volume by volume_view;
    create(CreateVolumeRequest) volume_create, get(GetVolumeRequest) volume_get,
    update(UpdateVolumeRequest) volume_update, delete(DeleteVolumeRequest) volume_delete,
    attach(AttachVolumeRequest) volume_attach, detach(DetachVolumeRequest) volume_detach;
    list(ListVolumesRequest) volume_list -> ListVolumesResponse { volumes };
    answers { plan(PlanVolumeRequest) volume_plan -> Plan by plan_view };
}
