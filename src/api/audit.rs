//! `bettercompute.platform.v1.Audit`: the audit trail, for operators.

use tonic::{Request, Response, Status};

use super::handlers::Handlers;
use super::{context, timestamp};
use crate::proto::platform::{AuditEvent, ListAuditEventsRequest, ListAuditEventsResponse, audit_server};
use crate::store::AuditRow;

fn audit_event_view(row: AuditRow) -> AuditEvent {
    AuditEvent {
        seq: row.seq,
        time: Some(timestamp(row.time)),
        principal_id: row.principal_id,
        method: row.method,
        permission: row.permission,
        resource_type: row.resource_type,
        resource_id: row.resource_id,
        tenant_id: row.tenant_id,
        decision: row.decision,
        policies: row.policies,
        request_id: row.request_id,
    }
}

#[tonic::async_trait]
impl audit_server::Audit for Handlers {
    async fn list(
        &self,
        request: Request<ListAuditEventsRequest>,
    ) -> Result<Response<ListAuditEventsResponse>, Status> {
        let ctx = context(&request)?;
        let rows = self.service.audit_list(&ctx, request.into_inner()).await?;
        Ok(Response::new(ListAuditEventsResponse { audit_events: rows.into_iter().map(audit_event_view).collect() }))
    }
}
