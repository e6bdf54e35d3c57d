//! What the scale run makes before it measures: the tenant's clusters, created through the API
//! over gRPC by concurrent callers, and the operators whose keys hold the event watches (one
//! principal holds at most 16 watches, and a tenant's own principals 256 in all).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use better_compute::cli::{AuthedChannel, BearerToken};
use better_compute::proto::compute::CreateKubernetesClusterRequest;
use better_compute::proto::compute::kubernetes_clusters_client::KubernetesClustersClient;
use prost::Message;
use serde_json::json;
use tonic::service::interceptor::InterceptedService;
use tonic::transport::Channel;

use crate::common::grpc::{Method, code_of, encode_json};
use crate::common::platform::{Api, cluster_request};

/// Watches one principal may hold open on a server (`WATCHES_PER_PRINCIPAL`).
pub const WATCHES_PER_PRINCIPAL: usize = 16;

/// One HTTP/2 connection to `endpoint`, its calls made as `token`.
pub async fn authed_channel(endpoint: &str, token: &str) -> Result<AuthedChannel, String> {
    let channel = connect(endpoint).await?;
    Ok(InterceptedService::new(channel, BearerToken::new(Some(token))?))
}

/// One HTTP/2 connection to `endpoint`.
pub async fn connect(endpoint: &str) -> Result<Channel, String> {
    Channel::from_shared(endpoint.to_owned())
        .map_err(|e| e.to_string())?
        .connect()
        .await
        .map_err(|e| format!("cannot connect to {endpoint}: {e}"))
}

/// Creates `count` clusters of `tenant` in `pool` (each with the two node pools of
/// [`cluster_request`]) over one gRPC connection, `concurrency` calls at a time. Returns their
/// ids, in the order of their names (`s00000`, `s00001`, ...), and how long it took.
pub async fn create_clusters(
    endpoint: &str,
    token: &str,
    tenant: &str,
    pool: &str,
    count: usize,
    concurrency: usize,
) -> Result<(Vec<String>, Duration), String> {
    let create = Method::find("bettercompute.compute.v1.KubernetesClusters", "Create").ok_or("no Create method")?;
    let encoded = encode_json(&create.descriptor.input(), &cluster_request(tenant, pool, "template"))?;
    let template = Arc::new(CreateKubernetesClusterRequest::decode(encoded).map_err(|e| e.to_string())?);
    let client = KubernetesClustersClient::new(authed_channel(endpoint, token).await?);
    let next = Arc::new(AtomicUsize::new(0));
    let started = Instant::now();
    let mut tasks = Vec::new();
    for _ in 0..concurrency {
        let (mut client, next, template) = (client.clone(), next.clone(), template.clone());
        tasks.push(tokio::spawn(async move {
            let mut made = Vec::new();
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= count {
                    return Ok::<_, String>(made);
                }
                let name = format!("s{i:05}");
                let request = CreateKubernetesClusterRequest {
                    name: name.clone(),
                    idempotency_key: name.clone(),
                    ..(*template).clone()
                };
                let cluster = client
                    .create(request)
                    .await
                    .map_err(|status| format!("create {name}: {} {}", code_of(&status), status.message()))?;
                made.push((i, cluster.into_inner().id));
            }
        }));
    }
    let mut ids = Vec::with_capacity(count);
    for task in tasks {
        ids.extend(task.await.map_err(|e| e.to_string())??);
    }
    let took = started.elapsed();
    ids.sort();
    Ok((ids.into_iter().map(|(_, id)| id).collect(), took))
}

/// Makes `count` operators bound to `platform-admin`, each with an API key; returns the keys.
pub async fn operators(api: &Api, admin: &str, count: usize) -> Result<Vec<String>, String> {
    let mut tokens = Vec::with_capacity(count);
    for i in 0..count {
        let principal = api
            .ok(admin, "/api/platform/principals/create", json!({"kind": "operator", "name": format!("watcher-{i}")}))
            .await?;
        api.ok(
            admin,
            "/api/platform/roleBindings/create",
            json!({"principalId": principal["id"], "role": "platform-admin"}),
        )
        .await?;
        let key = api
            .ok(
                admin,
                "/api/platform/apiKeys/create",
                json!({"principalId": principal["id"], "description": "watches"}),
            )
            .await?;
        tokens.push(key["token"].as_str().ok_or_else(|| format!("apiKeys.create gave no token: {key}"))?.to_owned());
    }
    Ok(tokens)
}
