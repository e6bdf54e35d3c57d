//! The decision of a call: `permission @ resource` for the caller, taken before anything else is
//! looked up or written, and the audit of every decision on a mutation.

use super::{Context, Service};
use crate::authz::{Subject, Target};
use crate::error::{Error, Result};
use crate::store::{AuditRow, now_micros};

/// Whether decisions on `permission` are audited: every permission but reads.
pub fn audited(permission: &str) -> bool {
    !permission.ends_with(":read")
}

impl Service {
    /// Decides `permission` on `target` for the caller of `method`; a refusal is `ACCESS_DENIED`.
    /// The resource's authorization row, when it is under the tenant the request names, adds its
    /// project, owner and attributes; a row under another tenant says nothing of this request
    /// (the service will answer `NOT_FOUND`).
    pub async fn authorize(&self, ctx: &Context, method: &str, permission: &str, mut target: Target) -> Result<()> {
        if !target.id.is_empty()
            && let Some(row) = self.store.authz_resource_fetch(&target.resource_type, &target.id).await?
            && row.tenant_id == target.tenant_id
        {
            target.project_id = target.project_id.or(row.project_id);
            target.owner_id = row.owner_id;
            for (name, value) in row.attributes {
                target.attributes.entry(name).or_insert(value);
            }
        }
        let caller = &ctx.caller;
        let subject = Subject {
            principal_id: &caller.principal_id,
            kind: caller.kind.as_str(),
            tenant_id: caller.tenant_id.as_deref(),
            bindings: &caller.bindings,
        };
        let decision = self.authorizer.decide(&subject, permission, &target);
        if audited(permission) {
            self.store
                .audit_append(&AuditRow {
                    seq: 0,
                    time: now_micros(),
                    principal_id: caller.principal_id.clone(),
                    method: method.to_owned(),
                    permission: permission.to_owned(),
                    resource_type: target.resource_type.clone(),
                    resource_id: target.id.clone(),
                    tenant_id: target.tenant_id.clone().unwrap_or_default(),
                    decision: if decision.allowed { "allow" } else { "deny" }.to_owned(),
                    policies: decision.policies.clone(),
                    request_id: ctx.request_id.clone(),
                })
                .await?;
        }
        if decision.allowed {
            return Ok(());
        }
        let what = if target.id.is_empty() {
            format!("a new {}", target.resource_type)
        } else {
            format!("{} {}", target.resource_type, target.id)
        };
        let under = target.tenant_id.as_deref().map(|t| format!(" of tenant {t}")).unwrap_or_default();
        Err(Error::access_denied(format!("{} may not {permission} on {what}{under}", caller.principal_id))
            .with_detail("permission", permission)
            .with_detail("resource", target.resource_type.as_str()))
    }

    /// Keeps the items the caller may read: the per-item half of a "+ items" list, whose list
    /// itself was decided on the tenant.
    pub fn authorize_items<T>(
        &self,
        ctx: &Context,
        permission: &str,
        items: Vec<T>,
        target_of: impl Fn(&T) -> Target,
    ) -> Vec<T> {
        let caller = &ctx.caller;
        let subject = Subject {
            principal_id: &caller.principal_id,
            kind: caller.kind.as_str(),
            tenant_id: caller.tenant_id.as_deref(),
            bindings: &caller.bindings,
        };
        let targets: Vec<Target> = items.iter().map(target_of).collect();
        let decisions = self.authorizer.decide_each(&subject, permission, &targets);
        items.into_iter().zip(decisions).filter(|(_, decision)| decision.allowed).map(|(item, _)| item).collect()
    }
}
