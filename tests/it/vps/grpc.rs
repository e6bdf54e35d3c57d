//! The three services over gRPC with the generated tonic clients: a network, an instance on its
//! subnet and a certificate from create to deleted, and another tenant's of each not found.

use std::time::Duration;

use better_compute::cli::{AuthedChannel, BearerToken};
use better_compute::proto::compute::certificates_client::CertificatesClient;
use better_compute::proto::compute::instances_client::InstancesClient;
use better_compute::proto::compute::networks_client::NetworksClient;
use better_compute::proto::compute::{
    CreateCertificateRequest, CreateInstanceRequest, CreateNetworkRequest, DeleteCertificateRequest,
    DeleteInstanceRequest, DeleteNetworkRequest, GetCertificateRequest, GetInstanceRequest, GetNetworkRequest,
    ListNetworksRequest, SubnetSpec, UpdateNetworkRequest,
};
use better_compute::store::Backend;

use super::certificates::issue;
use super::{DO_POOL, Env};
use crate::harness::grpc_error;
use crate::harness::poll;

async fn channel(env: &Env, token: &str) -> AuthedChannel {
    let channel = tonic::transport::Channel::from_shared(env.server.endpoint.clone()).unwrap().connect().await.unwrap();
    tonic::service::interceptor::InterceptedService::new(channel, BearerToken::new(Some(token)).unwrap())
}

/// Polls `get` until it answers `state`.
async fn until<F, Fut>(what: &str, state: &str, mut get: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = String>,
{
    poll(Duration::from_secs(20), &format!("{what} {state}"), || {
        let now = get();
        async move {
            let now = now.await;
            if now == state { Ok(()) } else { Err(now) }
        }
    })
    .await;
}

async fn networks_instances_and_certificates_live_and_die_over_grpc(backend: Backend) {
    let mut env = super::start(backend).await;
    let acme = channel(&env, &env.acme_admin).await;
    let globex = channel(&env, &env.globex_admin).await;
    let (mut networks, mut instances, mut certificates) =
        (NetworksClient::new(acme.clone()), InstancesClient::new(acme.clone()), CertificatesClient::new(acme));

    let network = networks
        .create(CreateNetworkRequest {
            tenant_id: "acme".into(),
            pool_id: DO_POOL.into(),
            name: "grpc-net".into(),
            subnets: vec![SubnetSpec { name: "a".into(), region: "nyc3".into(), ip_range: "10.95.0.0/24".into() }],
            idempotency_key: "grpc-net".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(network.state, "pending");
    let get_network = GetNetworkRequest { tenant_id: "acme".into(), network_id: network.id.clone() };
    until("the network", "ready", || {
        let (mut client, request) = (networks.clone(), get_network.clone());
        async move { client.get(request).await.unwrap().into_inner().state }
    })
    .await;
    let updated = networks
        .update(UpdateNetworkRequest {
            update_mask: None,
            tenant_id: "acme".into(),
            network_id: network.id.clone(),
            description: Some("over gRPC".into()),
            validate_only: false,
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!((updated.description.as_str(), updated.version), ("over gRPC", 2));
    let listed = networks.list(ListNetworksRequest { tenant_id: "acme".into(), ..Default::default() }).await;
    assert_eq!(listed.unwrap().into_inner().networks.len(), 1);

    let instance = instances
        .create(CreateInstanceRequest {
            tenant_id: "acme".into(),
            pool_id: DO_POOL.into(),
            name: "grpc-vm".into(),
            region: "nyc3".into(),
            size: "s-1vcpu-1gb".into(),
            image: "ubuntu-24-04-x64".into(),
            subnet_id: updated.subnets[0].id.clone(),
            idempotency_key: "grpc-vm".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    let get_instance = GetInstanceRequest { tenant_id: "acme".into(), instance_id: instance.id.clone() };
    until("the instance", "ready", || {
        let (mut client, request) = (instances.clone(), get_instance.clone());
        async move { client.get(request).await.unwrap().into_inner().state }
    })
    .await;

    let (key, leaf) = issue(&["grpc.example.com"], 2090);
    let certificate = certificates
        .create(CreateCertificateRequest {
            tenant_id: "acme".into(),
            pool_id: DO_POOL.into(),
            name: "grpc-cert".into(),
            r#type: "custom".into(),
            private_key: key,
            leaf_certificate: leaf,
            idempotency_key: "grpc-cert".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(certificate.dns_names, ["grpc.example.com"]);
    let get_certificate = GetCertificateRequest { tenant_id: "acme".into(), certificate_id: certificate.id.clone() };
    until("the certificate", "ready", || {
        let (mut client, request) = (certificates.clone(), get_certificate.clone());
        async move { client.get(request).await.unwrap().into_inner().state }
    })
    .await;

    // Another tenant's resources are not found over gRPC either.
    let not_found = |status: tonic::Status| grpc_error(&status).code.as_str().to_owned();
    let mut their_networks = NetworksClient::new(globex.clone());
    let request = GetNetworkRequest { tenant_id: "globex".into(), network_id: network.id.clone() };
    assert_eq!(not_found(their_networks.get(request).await.unwrap_err()), "NOT_FOUND");
    let mut their_instances = InstancesClient::new(globex.clone());
    let request = DeleteInstanceRequest {
        tenant_id: "globex".into(),
        instance_id: instance.id.clone(),
        validate_only: false,
        force: false,
    };
    assert_eq!(not_found(their_instances.delete(request).await.unwrap_err()), "NOT_FOUND");
    let mut their_certificates = CertificatesClient::new(globex);
    let request = DeleteCertificateRequest {
        tenant_id: "globex".into(),
        certificate_id: certificate.id.clone(),
        validate_only: false,
        force: false,
    };
    assert_eq!(not_found(their_certificates.delete(request).await.unwrap_err()), "NOT_FOUND");

    // Deleted in order: the certificate, the instance, then the network it rested on.
    let request = DeleteCertificateRequest {
        tenant_id: "acme".into(),
        certificate_id: certificate.id.clone(),
        validate_only: false,
        force: false,
    };
    assert_eq!(certificates.delete(request).await.unwrap().into_inner().state, "deleting");
    // The worker pauses while the instance is being deleted, so the refusal is seen before it
    // is gone.
    env.stop_worker().await;
    let request = DeleteInstanceRequest {
        tenant_id: "acme".into(),
        instance_id: instance.id.clone(),
        validate_only: false,
        force: false,
    };
    assert_eq!(instances.delete(request).await.unwrap().into_inner().state, "deleting");
    let request = DeleteNetworkRequest {
        tenant_id: "acme".into(),
        network_id: network.id.clone(),
        validate_only: false,
        force: false,
    };
    let refused = networks.delete(request.clone()).await.unwrap_err();
    assert_eq!(grpc_error(&refused).code.as_str(), "INVALID_STATE", "the instance still rests on it");
    env.start_worker();
    until("the instance", "deleted", || {
        let (mut client, request) = (instances.clone(), get_instance.clone());
        async move { client.get(request).await.unwrap().into_inner().state }
    })
    .await;
    assert_eq!(networks.delete(request).await.unwrap().into_inner().state, "deleting");
    until("the network", "deleted", || {
        let (mut client, request) = (networks.clone(), get_network.clone());
        async move { client.get(request).await.unwrap().into_inner().state }
    })
    .await;
    until("the certificate", "deleted", || {
        let (mut client, request) = (certificates.clone(), get_certificate.clone());
        async move { client.get(request).await.unwrap().into_inner().state }
    })
    .await;
}

crate::on_both_backends!(networks_instances_and_certificates_live_and_die_over_grpc);
