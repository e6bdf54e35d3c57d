//! Events and usage: the rules of who reads what. Until policies decide (identity issue), a
//! tenant principal reads its own tenant's events and usage, and an operator any tenant's, or
//! every tenant's at once.

use std::sync::OnceLock;

use super::{Context, PrincipalKind, Service};
use crate::authz::Target;
use crate::error::{Error, Result};
use crate::methods::MethodTable;
use crate::proto::bettercompute::options::v1::Authorization;
use crate::proto::compute::{ListEventsRequest, ListUsageRequest, WatchEventsRequest};
use crate::store::{EventFilter, EventRow, UsageRow};

/// The default and largest page of `Events.List`.
const DEFAULT_EVENTS: i64 = 100;

impl Service {
    /// The tenant whose data the caller reads: `None` for every tenant (operators only).
    pub(super) fn readable_tenant(&self, ctx: &Context, requested: &str) -> Result<Option<String>> {
        match (ctx.caller.kind, ctx.caller.tenant_id.as_deref()) {
            (PrincipalKind::Operator, _) => Ok((!requested.is_empty()).then(|| requested.to_owned())),
            (_, Some(own)) if requested.is_empty() || requested == own => Ok(Some(own.to_owned())),
            (_, Some(_)) => Err(Error::access_denied("a tenant principal reads only its own tenant's data")
                .with_detail("tenantId", requested)),
            (_, None) => Err(Error::access_denied("this principal belongs to no tenant")),
        }
    }

    /// Parses a cursor: empty is the start.
    fn cursor(after: &str) -> Result<i64> {
        if after.is_empty() {
            return Ok(0);
        }
        after.parse().map_err(|_| Error::invalid_input("after must be a cursor returned by the API"))
    }

    /// The filter of a list or a watch: the cursor parsed, the tenant decided.
    fn event_filter(
        &self,
        ctx: &Context,
        after: &str,
        tenant_id: &str,
        type_prefix: String,
        subject: String,
        limit: i32,
    ) -> Result<EventFilter> {
        Ok(EventFilter {
            after: Self::cursor(after)?,
            tenant_id: self.readable_tenant(ctx, tenant_id)?,
            type_prefix,
            subject,
            limit: if limit == 0 { DEFAULT_EVENTS } else { i64::from(limit) },
        })
    }

    /// One page of events after a cursor, and the cursor after it.
    pub async fn event_list(&self, ctx: &Context, request: ListEventsRequest) -> Result<(Vec<EventRow>, i64)> {
        let r = request;
        let filter = self.event_filter(ctx, &r.after, &r.tenant_id, r.type_prefix, r.subject, r.limit)?;
        let events = self.store.event_list_after(&filter).await?;
        let next = events.last().map_or(filter.after, |event| event.seq);
        Ok((events, next))
    }

    /// The filter of a watch when it opens; `event_watch_recheck` checks the caller again later.
    pub fn event_watch_filter(&self, ctx: &Context, request: WatchEventsRequest) -> Result<EventFilter> {
        let r = request;
        self.event_filter(ctx, &r.after, &r.tenant_id, r.type_prefix, r.subject, 0)
    }

    /// Checks again what let `ctx`'s caller open a watch of `request`, as the API layer did when
    /// it opened: the key (still there, not revoked nor expired), its principal (not deleted), the
    /// decision with the principal's bindings as they are now, and the tenant read. The caller
    /// is authenticated anew from `authorization`, the header the watch was opened with.
    pub async fn event_watch_recheck(
        &self,
        ctx: &Context,
        authorization: &str,
        request: &WatchEventsRequest,
    ) -> Result<()> {
        let caller = self.authenticate(Some(authorization)).await?;
        if caller.principal_id != ctx.caller.principal_id {
            return Err(Error::unauthenticated("the API key of this watch now acts as another principal"));
        }
        let ctx = Context::new(caller, ctx.request_id.clone());
        let (method, authorization) = watch_authorization()?;
        let attributes = [
            ("after", &request.after),
            ("tenantId", &request.tenant_id),
            ("typePrefix", &request.type_prefix),
            ("subject", &request.subject),
        ]
        .into_iter()
        .filter(|(_, value)| !value.is_empty())
        .map(|(name, value)| (name.to_owned(), serde_json::Value::from(value.as_str())))
        .collect();
        let target = Target {
            resource_type: authorization.resource.clone(),
            id: String::new(),
            tenant_id: (!request.tenant_id.is_empty()).then(|| request.tenant_id.clone()),
            project_id: None,
            owner_id: None,
            attributes,
        };
        self.authorize(&ctx, method, &authorization.permission, target).await?;
        self.readable_tenant(&ctx, &request.tenant_id).map(|_| ())
    }

    /// Ledger rows of a period.
    pub async fn usage_list(&self, ctx: &Context, request: ListUsageRequest) -> Result<Vec<UsageRow>> {
        let tenant = self.readable_tenant(ctx, &request.tenant_id)?;
        let micros = |t: Option<prost_types::Timestamp>| {
            t.map(|t| t.seconds.saturating_mul(1_000_000).saturating_add(i64::from(t.nanos) / 1000)).unwrap_or(0)
        };
        let (start, end) = (micros(request.start), micros(request.end));
        if end <= start {
            return Err(Error::invalid_input("end must be after start").with_detail("field", "end"));
        }
        self.store.usage_list(tenant.as_deref(), &request.meter, start, end).await
    }
}

/// The name and the authorization option of `Events.Watch`, read from its descriptor once.
fn watch_authorization() -> Result<(&'static str, &'static Authorization)> {
    static WATCH: OnceLock<Option<(String, Authorization)>> = OnceLock::new();
    WATCH
        .get_or_init(|| {
            let table = MethodTable::from_pool(crate::proto::descriptor_pool());
            let method = table.by_grpc_path("/bettercompute.compute.v1.Events/Watch")?;
            Some((method.name.clone(), method.authorization.clone()?))
        })
        .as_ref()
        .map(|(name, authorization)| (name.as_str(), authorization))
        .ok_or_else(|| Error::internal("Events.Watch has no authorization option in the descriptors"))
}
