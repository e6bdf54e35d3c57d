//! A setting with a default named without a value is refused, never reset to the default: a
//! cluster on the `extended` channel sent `{"releaseChannel": null}` (or a gRPC mask naming
//! `release_channel` with no value) stays `extended`, in the store and at the provider, and
//! what else the update named is not applied either.

use std::time::Duration;

use better_compute::cli::BearerToken;
use better_compute::proto::compute::UpdateKubernetesClusterRequest;
use better_compute::proto::compute::kubernetes_clusters_client::KubernetesClustersClient;
use better_compute::store::Backend;
use serde_json::json;
use tonic::service::interceptor::InterceptedService;
use tonic::transport::Channel;

use super::standard;
use crate::harness::{grpc_error, violated_fields};

crate::on_both_backends!(a_null_release_channel_is_refused_and_the_provider_keeps_the_channel);

const UPDATE: &str = "/api/compute/kubernetesClusters/update";

async fn a_null_release_channel_is_refused_and_the_provider_keeps_the_channel(backend: Backend) {
    let mut env = super::start(backend).await;
    env.start_worker();
    let mut request = standard("ext", "ext");
    request["releaseChannel"] = json!("extended");
    let created = env.ok("/api/compute/kubernetesClusters/create", request).await;
    let id = created["id"].as_str().unwrap().to_owned();
    env.wait_cluster_state(&id, "ready", Duration::from_secs(20)).await;
    assert_eq!(env.fake_clusters()[0]["releaseChannel"], "EXTENDED");
    let cluster_ref = json!({"tenantId": "acme", "clusterId": id});

    // Alone or beside another field, `null` is refused naming the field; nothing changes.
    for change in [json!({"releaseChannel": null}), json!({"releaseChannel": null, "description": "d"})] {
        let mut body = cluster_ref.clone();
        body.as_object_mut().unwrap().extend(change.as_object().unwrap().clone());
        let (status, code, details) = env.refused(UPDATE, body).await;
        assert_eq!((status, code.as_str()), (400, "INVALID_INPUT"), "{details}");
        assert_eq!(violated_fields(&details), ["releaseChannel"]);
    }
    let channel = Channel::from_shared(env.server.endpoint.clone()).unwrap().connect().await.unwrap();
    let mut client = KubernetesClustersClient::new(InterceptedService::new(
        channel,
        BearerToken::new(Some(&env.acme_admin)).unwrap(),
    ));
    let named_empty = UpdateKubernetesClusterRequest {
        tenant_id: "acme".into(),
        cluster_id: id.clone(),
        update_mask: Some(prost_types::FieldMask { paths: vec!["release_channel".into()] }),
        ..Default::default()
    };
    let status = client.update(named_empty).await.unwrap_err();
    assert_eq!((status.code(), grpc_error(&status).code.as_str()), (tonic::Code::InvalidArgument, "INVALID_INPUT"));
    assert!(status.message().contains("releaseChannel"), "{status:?}");
    let kept = env.ok("/api/compute/kubernetesClusters/get", cluster_ref.clone()).await;
    assert_eq!((kept["releaseChannel"].as_str(), kept["version"].as_i64()), (Some("extended"), Some(1)), "{kept}");

    // A change the provider does apply leaves the channel where it is, there too.
    let mut networks = cluster_ref.clone();
    networks["authorizedNetworks"] = json!(["203.0.113.0/24"]);
    let updating = env.ok(UPDATE, networks).await;
    assert_eq!(updating["releaseChannel"], "extended");
    let (ready, _) = env.wait_cluster_state(&id, "ready", Duration::from_secs(20)).await;
    assert_eq!(ready["releaseChannel"], "extended");
    let fake = &env.fake_clusters()[0];
    assert_eq!(fake["authorizedNetworks"]["cidrBlocks"][0]["cidrBlock"], "203.0.113.0/24", "{fake}");
    assert_eq!(fake["releaseChannel"], "EXTENDED", "{fake}");
}
