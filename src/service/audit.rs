//! The audit trail, for operators: each decision on a mutation and how its call ended.

use super::{Context, Service};
use crate::error::{Error, FieldViolation, Result};
use crate::proto::platform::ListAuditEventsRequest;
use crate::store::{AuditFilter, AuditRow};

/// The most decisions one call returns.
const MAX_AUDIT: i64 = 500;

/// Microseconds since the epoch of a protobuf timestamp; `INVALID_INPUT` naming `field` for one
/// outside what microseconds in an `i64` hold (about 292,000 years either side of 1970), which
/// an unchecked product would overflow.
fn micros(field: &str, time: &prost_types::Timestamp) -> Result<i64> {
    time.seconds.checked_mul(1_000_000).and_then(|micros| micros.checked_add(i64::from(time.nanos) / 1_000)).ok_or_else(
        || {
            Error::fields(vec![FieldViolation::new(
                field,
                format!("{} seconds is out of range; give a time between the years 0001 and 9999", time.seconds),
            )])
        },
    )
}

impl Service {
    /// Records how an audited call ended (`OK` or its error code) on the decisions made for it.
    pub async fn audit_settle(&self, request_id: &str, outcome: &str) -> Result<()> {
        self.store.audit_settle(request_id, outcome).await
    }

    /// Decisions on mutations, newest first.
    pub async fn audit_list(&self, _ctx: &Context, request: ListAuditEventsRequest) -> Result<Vec<AuditRow>> {
        let text = |s: String| (!s.is_empty()).then_some(s);
        let filter = AuditFilter {
            tenant_id: text(request.tenant_id),
            principal_id: text(request.principal_id),
            resource_id: text(request.resource_id),
            since: request.since.as_ref().map(|time| micros("since", time)).transpose()?,
            until: request.until.as_ref().map(|time| micros("until", time)).transpose()?,
            limit: if request.limit == 0 { MAX_AUDIT } else { i64::from(request.limit).min(MAX_AUDIT) },
        };
        self.store.audit_list(&filter).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_timestamp_past_what_microseconds_hold_is_refused_not_wrapped() {
        let time = |seconds, nanos| prost_types::Timestamp { seconds, nanos };
        assert_eq!(micros("since", &time(1, 2_000)).unwrap(), 1_000_002);
        for seconds in [i64::MAX, i64::MIN, i64::MAX / 1_000_000 + 1] {
            let error = micros("until", &time(seconds, 0)).unwrap_err();
            assert_eq!(error.code, crate::error::Code::InvalidInput);
            assert!(error.message.contains("until"), "{}", error.message);
        }
    }
}
