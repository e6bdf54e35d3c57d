//! The audit trail, for operators.

use super::{Context, Service};
use crate::error::Result;
use crate::proto::platform::ListAuditEventsRequest;
use crate::store::{AuditFilter, AuditRow};

/// The most decisions one call returns.
const MAX_AUDIT: i64 = 500;

/// Microseconds since the epoch of a protobuf timestamp.
fn micros(time: &prost_types::Timestamp) -> i64 {
    time.seconds * 1_000_000 + i64::from(time.nanos) / 1_000
}

impl Service {
    /// Decisions on mutations, newest first.
    pub async fn audit_list(&self, _ctx: &Context, request: ListAuditEventsRequest) -> Result<Vec<AuditRow>> {
        let text = |s: String| (!s.is_empty()).then_some(s);
        let filter = AuditFilter {
            tenant_id: text(request.tenant_id),
            principal_id: text(request.principal_id),
            resource_id: text(request.resource_id),
            since: request.since.as_ref().map(micros),
            until: request.until.as_ref().map(micros),
            limit: if request.limit == 0 { MAX_AUDIT } else { i64::from(request.limit).min(MAX_AUDIT) },
        };
        self.store.audit_list(&filter).await
    }
}
