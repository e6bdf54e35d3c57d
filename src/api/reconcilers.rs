//! `bettercompute.platform.v1.Reconcilers`: the workers' figures per kind and the stuck objects,
//! read-only, for operators.

use tonic::{Request, Response, Status};

use super::handlers::Handlers;
use super::{context, timestamp};
use crate::proto::platform::{
    ReconcilerKind, ReconcilersStatus, ReconcilersStatusRequest, StuckObject, reconcilers_server,
};
use crate::store::{KindStatus, StuckItem};

fn reconciler_kind_view(k: KindStatus) -> ReconcilerKind {
    ReconcilerKind {
        kind: k.kind,
        objects: k.objects,
        queue_depth: k.queue_depth,
        leased: k.leased,
        failing: k.failing,
        pass_mean_ms: k.pass_mean_micros as f64 / 1000.0,
        pass_max_ms: k.pass_max_micros as f64 / 1000.0,
    }
}

fn stuck_object_view(s: StuckItem) -> StuckObject {
    StuckObject {
        kind: s.kind,
        id: s.object_id,
        state: s.state,
        since: Some(timestamp(s.since)),
        attempts: s.attempts,
        last_error: s.last_error.unwrap_or_default(),
    }
}

#[tonic::async_trait]
impl reconcilers_server::Reconcilers for Handlers {
    async fn status(&self, request: Request<ReconcilersStatusRequest>) -> Result<Response<ReconcilersStatus>, Status> {
        context(&request)?;
        let (kinds, stuck) = self.service.reconcilers_status().await?;
        Ok(Response::new(ReconcilersStatus {
            kinds: kinds.into_iter().map(reconciler_kind_view).collect(),
            stuck: stuck.into_iter().map(stuck_object_view).collect(),
        }))
    }
}
