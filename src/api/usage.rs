//! `bettercompute.compute.v1.Usage` and `bettercompute.platform.v1.Reconcilers`: read-only views
//! of what the worker records.

use tonic::{Request, Response, Status};

use super::{context, timestamp};
use crate::proto::compute::{ListUsageRequest, ListUsageResponse, UsageRecord, usage_server};
use crate::proto::platform::{
    ReconcilerKind, ReconcilersStatus, ReconcilersStatusRequest, StuckObject, reconcilers_server,
};
use crate::service::Service;

/// The gRPC service of usage.
#[derive(Debug)]
pub struct UsageApi {
    service: Service,
}

impl UsageApi {
    /// The service over `service`.
    pub fn server(service: Service) -> usage_server::UsageServer<Self> {
        usage_server::UsageServer::new(Self { service })
    }
}

#[tonic::async_trait]
impl usage_server::Usage for UsageApi {
    async fn list(&self, request: Request<ListUsageRequest>) -> Result<Response<ListUsageResponse>, Status> {
        let ctx = context(&request)?;
        let rows = self.service.usage_list(&ctx, request.into_inner()).await?;
        let usage = rows
            .into_iter()
            .map(|row| UsageRecord {
                meter: row.meter,
                resource_id: row.resource_id,
                tenant_id: row.tenant_id,
                hour: Some(timestamp(row.hour)),
                quantity: row.quantity,
            })
            .collect();
        Ok(Response::new(ListUsageResponse { usage }))
    }
}

/// The gRPC service of the reconcilers' status.
#[derive(Debug)]
pub struct ReconcilersApi {
    service: Service,
}

impl ReconcilersApi {
    /// The service over `service`.
    pub fn server(service: Service) -> reconcilers_server::ReconcilersServer<Self> {
        reconcilers_server::ReconcilersServer::new(Self { service })
    }
}

#[tonic::async_trait]
impl reconcilers_server::Reconcilers for ReconcilersApi {
    async fn status(&self, request: Request<ReconcilersStatusRequest>) -> Result<Response<ReconcilersStatus>, Status> {
        context(&request)?;
        let (kinds, stuck) = self.service.reconcilers_status().await?;
        Ok(Response::new(ReconcilersStatus {
            kinds: kinds
                .into_iter()
                .map(|k| ReconcilerKind {
                    kind: k.kind,
                    objects: k.objects,
                    queue_depth: k.queue_depth,
                    leased: k.leased,
                    failing: k.failing,
                    pass_mean_ms: k.pass_mean_micros as f64 / 1000.0,
                    pass_max_ms: k.pass_max_micros as f64 / 1000.0,
                })
                .collect(),
            stuck: stuck
                .into_iter()
                .map(|s| StuckObject {
                    kind: s.kind,
                    id: s.object_id,
                    state: s.state,
                    since: Some(timestamp(s.since)),
                    attempts: s.attempts,
                    last_error: s.last_error.unwrap_or_default(),
                })
                .collect(),
        }))
    }
}
