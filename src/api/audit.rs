//! `bettercompute.platform.v1.Audit`: the audit trail, for operators.

use super::handlers::thin_service;
use super::timestamp;
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
        outcome: row.outcome,
        principal_name: row.principal_name,
    }
}

thin_service! {
    impl audit_server::Audit: AuditEvent by audit_event_view;
    list(ListAuditEventsRequest) audit_list -> ListAuditEventsResponse { audit_events };
}
