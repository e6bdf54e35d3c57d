//! The API: gRPC services generated from `proto/`, gRPC-web through tonic-web, and the JSON
//! gateway, all on one listener, plus health, readiness and metrics.
//!
//! Handlers are thin: [`layer`] authenticates and validates every call whatever protocol it
//! came in by, a service module holds the rules, and a handler only turns rows into views.
//! One struct implements every generated service ([`handlers`]); a service's file holds its
//! views and the table of its methods, and is named after its resource, except for these
//! groupings, which follow the proto modules:
//!
//! - `kubernetes`: `KubernetesClusters` and `KubernetesNodePools` (a cluster's view holds its
//!   pools');
//! - `vps`: `Networks`, `Instances`, `Certificates` and `Volumes`;
//! - `identity`: `Principals`, `ApiKeys` and `RoleBindings`.
//!
//! Two services share the name `Pools`: the operator's (`platform.v1`, in `platform_pools`) and
//! the pools a tenant sees (`compute.v1`, in `compute_pools`). What views have alike (the common
//! fields of an asynchronous resource, a row's version and times) is in `views`. The rest is
//! machinery: the layer,
//! the JSON gateway and its streams, the validator, update masks, the OpenAPI document and the
//! wire codecs; and the web console's embedded bundle (`console`).

mod accounts;
mod audit;
mod budgets;
mod compute_pools;
mod connection;
mod console;
mod events;
pub mod gateway;
mod gateway_stream;
mod handlers;
mod identity;
mod join_tokens;
mod kubernetes;
mod kubernetes_substrates;
pub mod layer;
mod load_balancers;
mod metal;
mod metal_boot;
mod nodes;
mod offers;
pub mod openapi;
mod operations;
mod orphans;
mod plans;
mod platform_pools;
mod projects;
mod quotas;
mod reconcilers;
mod tenants;
pub mod update_mask;
mod usage;
pub mod validate;
mod views;
mod vps;
mod wire;

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::State;
use axum::response::IntoResponse;
use axum::routing::{any, get};
use http::{HeaderName, Method, StatusCode};
use tower::Layer;
use tower_http::cors::{AllowOrigin, CorsLayer};

use crate::error::{Error, Result};
use crate::methods::MethodTable;
use crate::proto::{FILE_DESCRIPTOR_SET, compute, descriptor_pool, platform};
use crate::service::{Caller, Context, Service};
use crate::telemetry::Metrics;
pub use connection::{BodyHold, ByteBudget, Connection};
pub use layer::PeerAddress;
use layer::{ApiLayer, LayerState, Rehearsal, RequestId, SchemaViolations};
use sha2::{Digest, Sha256};
use validate::Validator;

/// The service context of a call, put in its extensions by the API layer. A request the
/// schema stage found wrong is refused here with its violations.
pub fn context<T>(request: &tonic::Request<T>) -> Result<Context, tonic::Status> {
    let ctx = context_with_rules(request)?;
    if !ctx.schema.is_empty() {
        return Err(ctx.schema.into_error().into());
    }
    Ok(ctx)
}

/// A node daemon's call: its credential as the layer checked it, and its request id. The
/// schema stage's violations refuse it first.
pub fn daemon_call<T>(request: &tonic::Request<T>) -> Result<crate::service::DaemonCall, tonic::Status> {
    if let Some(SchemaViolations(violations)) = request.extensions().get::<SchemaViolations>() {
        return Err(violations.clone().into_error().into());
    }
    request
        .extensions()
        .get::<crate::service::DaemonCall>()
        .cloned()
        .ok_or_else(|| Error::internal("a daemon's call reached a service without passing the API layer").into())
}

/// The context of a call to a method whose service checks rules of its own: it carries the
/// schema stage's violations, which the service reports together with its own
/// (`Context::report`), looking at nothing else while there are any.
pub fn context_with_rules<T>(request: &tonic::Request<T>) -> Result<Context, tonic::Status> {
    let caller = request.extensions().get::<Caller>().cloned();
    let request_id = request.extensions().get::<RequestId>().cloned();
    match (caller, request_id) {
        (Some(caller), Some(RequestId(request_id))) => {
            let mut ctx = Context::new(caller, request_id);
            ctx.rehearsal = request.extensions().get::<Rehearsal>().is_some();
            if let Some(SchemaViolations(violations)) = request.extensions().get::<SchemaViolations>() {
                ctx.schema = violations.clone();
            }
            Ok(ctx)
        }
        _ => Err(Error::internal("a call reached a service without passing the API layer").into()),
    }
}

/// A store time (µs since the epoch) as a protobuf timestamp.
pub fn timestamp(micros: i64) -> prost_types::Timestamp {
    prost_types::Timestamp {
        seconds: micros.div_euclid(1_000_000),
        nanos: (micros.rem_euclid(1_000_000) * 1_000) as i32,
    }
}

/// Everything the router serves from.
#[derive(Clone)]
struct Shared {
    services: Service,
    metrics: Metrics,
    metrics_access: MetricsAccess,
}

/// Who may read `/metrics`: a scrape runs store queries and counts objects of every tenant.
#[derive(Clone, Debug, Default)]
pub enum MetricsAccess {
    /// Anyone who reaches the listener.
    #[default]
    Open,
    /// Whoever sends `Authorization: Bearer <token>`; the SHA-256 of the token is kept.
    Token([u8; 32]),
    /// Nobody: `/metrics` answers 404 saying how to turn it on.
    Off,
}

impl MetricsAccess {
    /// Access for whoever presents `token`.
    pub fn token(token: &str) -> Self {
        MetricsAccess::Token(Sha256::digest(token.as_bytes()).into())
    }
}

/// The whole API on one router: gRPC, gRPC-web, the JSON gateway, `/openapi.json`, `/healthz`,
/// `/readyz` (the last three without credentials) and `/metrics` as `metrics_access` says.
pub fn router(services: Service, metrics: Metrics, metrics_access: MetricsAccess) -> Result<Router> {
    let pool = descriptor_pool();
    let methods = Arc::new(MethodTable::from_pool(pool));
    let validator = Arc::new(Validator::from_pool(pool).map_err(Error::internal)?);

    let reflection_v1 = tonic_reflection::server::Builder::configure()
        .register_encoded_file_descriptor_set(FILE_DESCRIPTOR_SET)
        .build_v1()
        .map_err(|error| Error::internal(format!("reflection: {error}")))?;
    let reflection_v1alpha = tonic_reflection::server::Builder::configure()
        .register_encoded_file_descriptor_set(FILE_DESCRIPTOR_SET)
        .build_v1alpha()
        .map_err(|error| Error::internal(format!("reflection: {error}")))?;
    let api = handlers::Handlers::new(services.clone());
    let routes = tonic::service::Routes::new(platform::tenants_server::TenantsServer::new(api.clone()))
        .add_service(platform::principals_server::PrincipalsServer::new(api.clone()))
        .add_service(platform::api_keys_server::ApiKeysServer::new(api.clone()))
        .add_service(platform::role_bindings_server::RoleBindingsServer::new(api.clone()))
        .add_service(compute::kubernetes_clusters_server::KubernetesClustersServer::new(api.clone()))
        .add_service(compute::kubernetes_node_pools_server::KubernetesNodePoolsServer::new(api.clone()))
        .add_service(compute::load_balancers_server::LoadBalancersServer::new(api.clone()))
        .add_service(compute::networks_server::NetworksServer::new(api.clone()))
        .add_service(compute::instances_server::InstancesServer::new(api.clone()))
        .add_service(compute::certificates_server::CertificatesServer::new(api.clone()))
        .add_service(compute::volumes_server::VolumesServer::new(api.clone()))
        .add_service(compute::join_tokens_server::JoinTokensServer::new(api.clone()))
        .add_service(compute::nodes_server::NodesServer::new(api.clone()))
        .add_service(compute::metal_server::MetalServer::new(api.clone()))
        .add_service(compute::kubernetes_substrates_server::KubernetesSubstratesServer::new(api.clone()))
        .add_service(platform::audit_server::AuditServer::new(api.clone()))
        .add_service(compute::events_server::EventsServer::new(api.clone()))
        .add_service(compute::operations_server::OperationsServer::new(api.clone()))
        .add_service(compute::usage_server::UsageServer::new(api.clone()))
        .add_service(compute::orphans_server::OrphansServer::new(api.clone()))
        .add_service(platform::reconcilers_server::ReconcilersServer::new(api.clone()))
        .add_service(platform::projects_server::ProjectsServer::new(api.clone()))
        .add_service(platform::accounts_server::AccountsServer::new(api.clone()))
        .add_service(platform::pools_server::PoolsServer::new(api.clone()))
        .add_service(platform::offers_server::OffersServer::new(api.clone()))
        .add_service(platform::quotas_server::QuotasServer::new(api.clone()))
        .add_service(platform::budgets_server::BudgetsServer::new(api.clone()))
        .add_service(compute::pools_server::PoolsServer::new(api))
        .add_service(reflection_v1)
        .add_service(reflection_v1alpha)
        .prepare();

    let grpc = ApiLayer::new(LayerState {
        methods: methods.clone(),
        validator: validator.clone(),
        services: services.clone(),
        metrics: metrics.clone(),
    })
    .layer(routes);
    let gateway = gateway::Gateway { methods, grpc: grpc.clone(), validator, metrics: metrics.clone() };
    let grpc_web = tonic_web::GrpcWebLayer::new().layer(grpc);

    // Built once: the document depends only on the descriptors.
    let document = openapi::document(&crate::proto::documented_descriptor_pool()).map_err(Error::internal)?;
    let document = Arc::new(serde_json::to_string_pretty(&document).expect("a JSON value serializes"));

    let console = console::router(services.clone()).merge(metal_boot::router(services.clone()));
    let shared = Shared { services, metrics, metrics_access };
    let probes = Router::new()
        .route("/healthz", get(|| async { "ok" }))
        .route(
            "/openapi.json",
            get(move || {
                let document = document.clone();
                async move { ([(http::header::CONTENT_TYPE, "application/json")], document.as_str().to_owned()) }
            }),
        )
        .route("/readyz", get(readyz))
        .route("/metrics", get(metrics_text))
        .with_state(shared);
    let json = Router::new().route("/api/{*path}", any(gateway::handle)).with_state(gateway);

    Ok(probes.merge(json).merge(console).fallback_service(grpc_web).layer(cors()))
}

/// `/metrics` alone, for a listener of its own.
pub fn metrics_router(services: Service, metrics: Metrics, metrics_access: MetricsAccess) -> Router {
    Router::new().route("/metrics", get(metrics_text)).with_state(Shared { services, metrics, metrics_access })
}

/// Browsers may call from any origin: every call is authenticated by its bearer token, never by
/// cookies.
fn cors() -> CorsLayer {
    CorsLayer::new()
        .allow_origin(AllowOrigin::mirror_request())
        .allow_methods([Method::POST, Method::GET, Method::OPTIONS])
        .allow_headers([
            http::header::AUTHORIZATION,
            http::header::CONTENT_TYPE,
            HeaderName::from_static("x-grpc-web"),
            HeaderName::from_static("x-user-agent"),
            HeaderName::from_static("grpc-timeout"),
            HeaderName::from_static(layer::REQUEST_ID_HEADER),
        ])
        .expose_headers([
            HeaderName::from_static("grpc-status"),
            HeaderName::from_static("grpc-message"),
            HeaderName::from_static("grpc-status-details-bin"),
            HeaderName::from_static(layer::REQUEST_ID_HEADER),
        ])
        .max_age(Duration::from_secs(3600))
}

async fn readyz(State(shared): State<Shared>) -> impl IntoResponse {
    match shared.services.store().ping().await {
        Ok(()) => (StatusCode::OK, "ready"),
        Err(_) => (StatusCode::SERVICE_UNAVAILABLE, "the store does not answer"),
    }
}

async fn metrics_text(State(shared): State<Shared>, headers: http::HeaderMap) -> axum::response::Response {
    let refused = match &shared.metrics_access {
        MetricsAccess::Open => None,
        MetricsAccess::Off => Some(Error::new(
            crate::error::Code::NotFound,
            "/metrics is not served on this listener: start bc-server with --metrics-token or --metrics-listen",
        )),
        MetricsAccess::Token(expected) => {
            let presented = headers
                .get(http::header::AUTHORIZATION)
                .and_then(|value| value.to_str().ok())
                .and_then(|value| value.strip_prefix("Bearer "))
                .map(|token| <[u8; 32]>::from(Sha256::digest(token.as_bytes())));
            // Comparing digests tells a timing observer nothing about the token.
            (presented.as_ref() != Some(expected)).then(|| {
                Error::unauthenticated("/metrics needs the metrics token: send `Authorization: Bearer <token>` with the token given to --metrics-token")
            })
        }
    };
    if let Some(error) = refused {
        return (error.http_status(), axum::Json(error.to_json())).into_response();
    }
    // The workers' figures live in the store; read them at scrape time.
    match shared.services.reconcilers_status().await {
        Ok((kinds, stuck)) => shared.metrics.set_reconcilers(&kinds, &stuck),
        Err(error) => tracing::warn!(%error, "reading the reconcilers' status for /metrics failed"),
    }
    (
        [(http::header::CONTENT_TYPE, "application/openmetrics-text; version=1.0.0; charset=utf-8")],
        shared.metrics.encode(),
    )
        .into_response()
}
