//! The calls the load generator makes, over gRPC (the crate's generated clients, one HTTP/2
//! connection shared by every task, as a service would hold it) and over JSON (`POST
//! /api/compute/...`, a pool of HTTP/1.1 keep-alive connections). The same call runs against
//! the real server and against the echo baseline: only the endpoint differs.

use std::sync::Arc;

use better_compute::cli::{AuthedChannel, BearerToken};
use better_compute::proto::compute::kubernetes_clusters_client::KubernetesClustersClient;
use better_compute::proto::compute::{
    CreateKubernetesClusterRequest, GetKubernetesClusterRequest, ListKubernetesClustersRequest,
};
use prost::Message;
use serde_json::{Value, json};
use tonic::service::interceptor::InterceptedService;
use tonic::transport::Channel;

use crate::common::grpc::{Method, call_raw, code_of, encode_json};
use crate::common::platform::{cluster_request, load_balancer_request};

/// The methods measured.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Api {
    /// `kubernetesClusters.create`, each call with its own idempotency key and name.
    CreateCluster,
    /// `kubernetesClusters.get` of a random cluster of the caller's tenant.
    GetCluster,
    /// `kubernetesClusters.list` of a tenant with the list-size clusters and their node pools.
    ListClusters,
    /// `loadBalancers.create`, each call with its own idempotency key and name.
    CreateLoadBalancer,
}

impl Api {
    /// The method's name as the reference pages write it.
    pub fn name(self) -> &'static str {
        match self {
            Api::CreateCluster => "kubernetesClusters.create",
            Api::GetCluster => "kubernetesClusters.get",
            Api::ListClusters => "kubernetesClusters.list",
            Api::CreateLoadBalancer => "loadBalancers.create",
        }
    }

    /// Its JSON path.
    pub fn json_path(self) -> &'static str {
        match self {
            Api::CreateCluster => "/api/compute/kubernetesClusters/create",
            Api::GetCluster => "/api/compute/kubernetesClusters/get",
            Api::ListClusters => "/api/compute/kubernetesClusters/list",
            Api::CreateLoadBalancer => "/api/compute/loadBalancers/create",
        }
    }

    /// Its gRPC service and method.
    pub fn grpc(self) -> (&'static str, &'static str) {
        match self {
            Api::CreateCluster => ("bettercompute.compute.v1.KubernetesClusters", "Create"),
            Api::GetCluster => ("bettercompute.compute.v1.KubernetesClusters", "Get"),
            Api::ListClusters => ("bettercompute.compute.v1.KubernetesClusters", "List"),
            Api::CreateLoadBalancer => ("bettercompute.compute.v1.LoadBalancers", "Create"),
        }
    }
}

/// The transport.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Protocol {
    /// gRPC over HTTP/2.
    Grpc,
    /// The JSON gateway over HTTP/1.1.
    Json,
}

impl Protocol {
    /// `grpc` or `json`.
    pub fn name(self) -> &'static str {
        match self {
            Protocol::Grpc => "grpc",
            Protocol::Json => "json",
        }
    }
}

/// What the calls need to know of the platform.
pub struct Context {
    /// The GKE pool.
    pub gke_pool: String,
    /// The DigitalOcean pool.
    pub do_pool: String,
    /// The load tenants (id, API key): task `k` calls as tenant `k % len`.
    pub tenants: Vec<(String, String)>,
    /// The tenant whose clusters `list` reads.
    pub list_tenant: (String, String),
    /// Cluster ids of each load tenant, for `get`.
    pub cluster_ids: Vec<Vec<String>>,
}

/// One call by task `task`, its `n`th; `Err` carries the failure's code.
#[tonic::async_trait]
pub trait Call: Send + Sync {
    async fn call(&self, task: usize, n: u64) -> Result<(), String>;
}

/// The request body of `api`'s call number `n` of `task` in run `run`, as JSON, and the index of
/// the tenant it calls as (`None`: the list tenant).
pub fn request(api: Api, context: &Context, run: u32, task: usize, n: u64) -> (Option<usize>, Value) {
    let tenant = task % context.tenants.len();
    let id = &context.tenants[tenant].0;
    let key = format!("r{run}t{task}n{n}");
    match api {
        Api::CreateCluster => (Some(tenant), cluster_request(id, &context.gke_pool, &key)),
        Api::GetCluster => {
            let ids = &context.cluster_ids[tenant];
            let cluster = if ids.is_empty() { "" } else { &ids[rand::random_range(0..ids.len())] };
            (Some(tenant), json!({"tenantId": id, "clusterId": cluster}))
        }
        Api::ListClusters => (None, json!({"tenantId": context.list_tenant.0})),
        Api::CreateLoadBalancer => (Some(tenant), load_balancer_request(id, &context.do_pool, &key)),
    }
}

/// A JSON call.
pub struct JsonCall {
    /// What it calls.
    api: Api,
    /// The shared platform knowledge.
    context: Arc<Context>,
    /// Distinguishes the keys of this run from other runs'.
    run: u32,
    /// `endpoint` + path.
    url: String,
    /// The connection pool.
    http: reqwest::Client,
}

impl JsonCall {
    /// Calls `api` at `endpoint`.
    pub fn new(api: Api, context: Arc<Context>, run: u32, endpoint: &str) -> JsonCall {
        let http = reqwest::Client::builder().pool_max_idle_per_host(256).build().expect("a reqwest client");
        JsonCall { api, context, run, url: format!("{endpoint}{}", api.json_path()), http }
    }
}

#[tonic::async_trait]
impl Call for JsonCall {
    async fn call(&self, task: usize, n: u64) -> Result<(), String> {
        let (tenant, body) = request(self.api, &self.context, self.run, task, n);
        let token = match tenant {
            Some(i) => &self.context.tenants[i].1,
            None => &self.context.list_tenant.1,
        };
        let response = self
            .http
            .post(&self.url)
            .bearer_auth(token)
            .header("content-type", "application/json")
            .body(body.to_string())
            .send()
            .await
            .map_err(|_| "transport".to_owned())?;
        let status = response.status().as_u16();
        let bytes = response.bytes().await.map_err(|_| "transport".to_owned())?;
        if status == 200 {
            return Ok(());
        }
        let answer: Value = serde_json::from_slice(&bytes).unwrap_or_default();
        Err(answer["error"]["code"].as_str().map(str::to_owned).unwrap_or_else(|| format!("HTTP {status}")))
    }
}

/// The channels of a gRPC run: one HTTP/2 connection, one interceptor per tenant.
pub struct Channels {
    /// Per load tenant.
    pub tenants: Vec<AuthedChannel>,
    /// The list tenant's.
    pub list: AuthedChannel,
}

impl Channels {
    /// Connects to `endpoint`.
    pub async fn connect(endpoint: &str, context: &Context) -> Result<Channels, String> {
        let channel = Channel::from_shared(endpoint.to_owned())
            .map_err(|e| e.to_string())?
            .connect()
            .await
            .map_err(|e| format!("cannot connect to {endpoint}: {e}"))?;
        let authed = |token: &str| -> Result<AuthedChannel, String> {
            Ok(InterceptedService::new(channel.clone(), BearerToken::new(Some(token))?))
        };
        Ok(Channels {
            tenants: context.tenants.iter().map(|(_, token)| authed(token)).collect::<Result<_, _>>()?,
            list: authed(&context.list_tenant.1)?,
        })
    }
}

/// A gRPC call through the generated clients (clusters) or through the descriptors (load
/// balancers, whose generated client may not exist in this build).
pub struct GrpcCall {
    /// What it calls.
    api: Api,
    /// The shared platform knowledge.
    context: Arc<Context>,
    /// Distinguishes the keys of this run from other runs'.
    run: u32,
    /// The channels.
    channels: Channels,
    /// `create`'s request with everything but the tenant, name and key filled in.
    create_template: CreateKubernetesClusterRequest,
    /// The method, for calls through the descriptors.
    method: Option<Method>,
}

impl GrpcCall {
    /// Calls `api` at `endpoint`.
    pub async fn new(api: Api, context: Arc<Context>, run: u32, endpoint: &str) -> Result<GrpcCall, String> {
        let channels = Channels::connect(endpoint, &context).await?;
        let (service, method) = api.grpc();
        let method = Method::find(service, method);
        let create = Method::find("bettercompute.compute.v1.KubernetesClusters", "Create").ok_or("no Create")?;
        let bytes = encode_json(&create.descriptor.input(), &cluster_request("t", &context.gke_pool, "k"))?;
        let create_template = CreateKubernetesClusterRequest::decode(bytes).map_err(|e| e.to_string())?;
        Ok(GrpcCall { api, context, run, channels, create_template, method })
    }

    fn clusters(&self, tenant: Option<usize>) -> KubernetesClustersClient<AuthedChannel> {
        let channel = match tenant {
            Some(i) => self.channels.tenants[i].clone(),
            None => self.channels.list.clone(),
        };
        KubernetesClustersClient::new(channel).max_decoding_message_size(256 << 20)
    }
}

#[tonic::async_trait]
impl Call for GrpcCall {
    async fn call(&self, task: usize, n: u64) -> Result<(), String> {
        let tenant = task % self.context.tenants.len();
        let tenant_id = self.context.tenants[tenant].0.clone();
        let code = |status: tonic::Status| code_of(&status);
        match self.api {
            Api::CreateCluster => {
                let key = format!("r{}t{task}n{n}", self.run);
                let request = CreateKubernetesClusterRequest {
                    tenant_id,
                    name: key.clone(),
                    idempotency_key: key,
                    ..self.create_template.clone()
                };
                self.clusters(Some(tenant)).create(request).await.map(drop).map_err(code)
            }
            Api::GetCluster => {
                let ids = &self.context.cluster_ids[tenant];
                let cluster_id = ids.get(rand::random_range(0..ids.len().max(1))).cloned().unwrap_or_default();
                let request = GetKubernetesClusterRequest { tenant_id, cluster_id };
                self.clusters(Some(tenant)).get(request).await.map(drop).map_err(code)
            }
            Api::ListClusters => {
                let request = ListKubernetesClustersRequest {
                    tenant_id: self.context.list_tenant.0.clone(),
                    ..Default::default()
                };
                self.clusters(None).list(request).await.map(drop).map_err(code)
            }
            Api::CreateLoadBalancer => {
                let method = self.method.as_ref().ok_or("UNIMPLEMENTED")?;
                let (_, body) = request(self.api, &self.context, self.run, task, n);
                let bytes = method.encode_request(&body)?;
                let answer = call_raw(&self.channels.tenants[tenant], &method.path, bytes).await.map_err(code)?;
                method.decode_response(answer).map(drop).map_err(|_| "undecodable answer".to_owned())
            }
        }
    }
}

/// The call of `api` over `protocol` at `endpoint`.
pub async fn make(
    api: Api,
    protocol: Protocol,
    context: Arc<Context>,
    run: u32,
    endpoint: &str,
) -> Result<Arc<dyn Call>, String> {
    Ok(match protocol {
        Protocol::Json => Arc::new(JsonCall::new(api, context, run, endpoint)),
        Protocol::Grpc => Arc::new(GrpcCall::new(api, context, run, endpoint).await?),
    })
}
