//! The same methods and refusals over gRPC: each documented code arrives as its gRPC status with
//! the code string in the details.

use better_compute::cli::BearerToken;
use better_compute::proto::compute::load_balancers_client::LoadBalancersClient;
use better_compute::proto::compute::{
    CreateLoadBalancerRequest, DeleteLoadBalancerRequest, GetLoadBalancerRequest, ListLoadBalancersRequest,
    LoadBalancerForwardingRule, LoadBalancerTargets, UpdateLoadBalancerRequest,
};
use better_compute::store::Backend;
use tonic::service::interceptor::InterceptedService;
use tonic::transport::Channel;

use super::{Env, OWN_POOL, POOL, QUOTA, REGION};
use crate::harness::grpc_error;

crate::on_both_backends!(every_method_and_refusal_over_grpc);

pub(super) type Client = LoadBalancersClient<InterceptedService<Channel, BearerToken>>;

pub(super) async fn client(env: &Env, token: &str) -> Client {
    let channel = Channel::from_shared(env.server.endpoint.clone()).unwrap().connect().await.unwrap();
    LoadBalancersClient::new(InterceptedService::new(channel, BearerToken::new(Some(token)).unwrap()))
}

fn http_rule() -> LoadBalancerForwardingRule {
    LoadBalancerForwardingRule {
        entry_protocol: "http".into(),
        entry_port: 80,
        target_protocol: "http".into(),
        target_port: 8080,
        ..Default::default()
    }
}

fn request(name: &str, targets: LoadBalancerTargets) -> CreateLoadBalancerRequest {
    CreateLoadBalancerRequest {
        tenant_id: "acme".into(),
        pool_id: POOL.into(),
        name: name.into(),
        region: REGION.into(),
        targets: Some(targets),
        forwarding: vec![http_rule()],
        idempotency_key: name.into(),
        ..Default::default()
    }
}

fn by_pool() -> LoadBalancerTargets {
    LoadBalancerTargets { pool: Some(true), ..Default::default() }
}

async fn every_method_and_refusal_over_grpc(backend: Backend) {
    let mut env = super::start(backend).await;
    env.start_worker();
    let web = env.instance("acme", POOL, REGION, None).await;
    let theirs = env.instance("globex", POOL, REGION, None).await;
    let mut acme = client(&env, &env.acme_admin.clone()).await;

    let named = LoadBalancerTargets { instance_ids: vec![web.id.clone()], ..Default::default() };
    let created = acme.create(request("web", named)).await.unwrap().into_inner();
    assert_eq!((created.state.as_str(), created.scope.as_str(), created.version), ("pending", "regional", 1));
    let again = acme.create(request("web", by_pool())).await.unwrap_err();
    assert_eq!((again.code(), grpc_error(&again).code.as_str()), (tonic::Code::AlreadyExists, "CONFLICT"));
    let reference = GetLoadBalancerRequest { tenant_id: "acme".into(), load_balancer_id: created.id.clone() };
    env.wait_load_balancer_state("acme", &created.id, "ready").await;
    let got = acme.get(reference.clone()).await.unwrap().into_inner();
    assert_eq!((got.state.as_str(), got.reached_ids.clone()), ("ready", vec![web.id.clone()]));
    assert!(!got.address.is_empty() && !got.address_v6.is_empty());
    let listed = acme
        .list(ListLoadBalancersRequest { tenant_id: "acme".into(), ..Default::default() })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(listed.load_balancers.len(), 1);
    let updated = acme
        .update(UpdateLoadBalancerRequest {
            tenant_id: "acme".into(),
            load_balancer_id: created.id.clone(),
            redirect_http_to_https: Some(false),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!((updated.state.as_str(), updated.version), ("updating", 2));

    let refusals = [
        (
            request("steal", LoadBalancerTargets { instance_ids: vec![theirs.id.clone()], ..Default::default() }),
            tonic::Code::PermissionDenied,
            "ACCESS_DENIED",
        ),
        (
            CreateLoadBalancerRequest { pool_id: OWN_POOL.into(), ..request("own", by_pool()) },
            tonic::Code::ResourceExhausted,
            "QUOTA_EXCEEDED",
        ),
        (
            CreateLoadBalancerRequest { region: "lon1".into(), ..request("far", by_pool()) },
            tonic::Code::InvalidArgument,
            "INVALID_INPUT",
        ),
        (
            CreateLoadBalancerRequest {
                subnet_id: "snet_0000000000000000000000000a".into(),
                ..request("x", by_pool())
            },
            tonic::Code::NotFound,
            "NOT_FOUND",
        ),
        (
            CreateLoadBalancerRequest { forwarding: vec![], ..request("y", by_pool()) },
            tonic::Code::InvalidArgument,
            "INVALID_INPUT",
        ),
    ];
    for (asked, grpc, code) in refusals {
        let status = acme.create(asked).await.unwrap_err();
        assert_eq!((status.code(), grpc_error(&status).code.as_str()), (grpc, code), "{status:?}");
    }
    let edge = acme
        .create(CreateLoadBalancerRequest {
            scope: "global".into(),
            region: String::new(),
            targets: Some(LoadBalancerTargets { load_balancer_ids: vec![created.id.clone()], ..Default::default() }),
            ..request("edge", LoadBalancerTargets::default())
        })
        .await
        .unwrap()
        .into_inner();
    let in_use = acme
        .delete(DeleteLoadBalancerRequest {
            tenant_id: "acme".into(),
            load_balancer_id: created.id.clone(),
            validate_only: false,
            force: false,
        })
        .await
        .unwrap_err();
    let error = grpc_error(&in_use);
    assert_eq!((in_use.code(), error.code.as_str()), (tonic::Code::FailedPrecondition, "INVALID_STATE"));
    assert_eq!(error.details["reason"], "inUse");
    // Fill the quota: the next one has no room.
    for i in 2..QUOTA {
        acme.create(request(&format!("fill-{i}"), by_pool())).await.unwrap();
    }
    let full = acme.create(request("full", by_pool())).await.unwrap_err();
    assert_eq!(grpc_error(&full).details["limit"], QUOTA);
    let deleted = acme
        .delete(DeleteLoadBalancerRequest {
            tenant_id: "acme".into(),
            load_balancer_id: edge.id.clone(),
            validate_only: false,
            force: false,
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(deleted.state, "deleting");
    let mut globex = client(&env, &env.globex_admin.clone()).await;
    let foreign = globex
        .get(GetLoadBalancerRequest { tenant_id: "globex".into(), load_balancer_id: created.id.clone() })
        .await
        .unwrap_err();
    assert_eq!(grpc_error(&foreign).code.as_str(), "NOT_FOUND");
}
