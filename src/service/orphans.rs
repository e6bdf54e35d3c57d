//! Force delete and the orphan report. A delete with `force: true` is decided a second time as
//! the delete's permission with `force-delete` (a tenant's admins and operators hold it; see
//! [`crate::methods::force_permission`]), is accepted only for a resource stuck in `deleting` or
//! whose reconciler's last pass failed (its account refused or unreachable), and ends the
//! resource `deleted` at once: each provider object of the kind's delete plan is recorded as an
//! orphan, which the orphan sweeper keeps removing. The orphan report is read like the tenant's
//! other data; dismissing an orphan is an operator's.

use std::future::Future;
use std::ops::Deref;
use std::sync::OnceLock;

use super::{Context, Service};
use crate::authz::Target;
use crate::changes::deletes::Deletable;
use crate::domain::states::LifecycleState;
use crate::error::{Code, Error, Result};
use crate::methods::{FORCE_FIELD, MethodTable, force_permission};
use crate::proto::compute::{DismissOrphanRequest, ListOrphansRequest};
use crate::store::{ConvergedRow, ForcedDelete, NewOrphan, OrphanFilter, OrphanRow, ResourceMeta, now_micros};

/// The most orphans one list returns.
const LIST_LIMIT: i64 = 500;

/// The delete method of each resource type whose request has `force`, with the permission a
/// forced one decides: read from the descriptors once.
fn force_methods() -> &'static Vec<(String, String, String)> {
    static METHODS: OnceLock<Vec<(String, String, String)>> = OnceLock::new();
    METHODS.get_or_init(|| {
        let table = MethodTable::from_pool(crate::proto::descriptor_pool());
        table
            .iter()
            .filter(|method| method.descriptor.input().get_field_by_name(FORCE_FIELD).is_some())
            .filter_map(|method| {
                let authorization = method.authorization.as_ref()?;
                Some((authorization.resource.clone(), method.name.clone(), force_permission(&authorization.permission)))
            })
            .collect()
    })
}

/// The method and the force permission of the delete of resource type `resource_type`.
fn force_method(resource_type: &str) -> Result<(&'static str, &'static str)> {
    force_methods()
        .iter()
        .find(|(resource, _, _)| resource == resource_type)
        .map(|(_, method, permission)| (method.as_str(), permission.as_str()))
        .ok_or_else(|| Error::internal(format!("no delete of {resource_type} has a force field")))
}

impl Service {
    /// The delete of every kind the kit's lifecycle owns: a normal one marks `row` `deleting`
    /// with `delete` (the store's, given its id and the time), logged as `<what> deleting`; a
    /// `force`d one ends it at once (see the module). One already deleted is the answer as it
    /// is.
    pub(super) async fn delete_resource<R, S, Deleting>(
        &self,
        ctx: &Context,
        what: &str,
        row: R,
        force: bool,
        delete: impl FnOnce(String, i64) -> Deleting,
    ) -> Result<R>
    where
        R: ConvergedRow + Deletable + Deref<Target = ResourceMeta<S>>,
        S: LifecycleState,
        Deleting: Future<Output = Result<R>>,
    {
        if !force || row.deleted_at.is_some() {
            return self.delete_unless_deleted(ctx, what, row, delete).await;
        }
        let (method, permission) = force_method(R::AUTHZ_TYPE)?;
        let target = Target {
            resource_type: R::AUTHZ_TYPE.to_owned(),
            id: row.id.clone(),
            tenant_id: Some(row.tenant_id.clone()),
            ..Default::default()
        };
        self.authorize(ctx, method, permission, target).await.map_err(|error| match error.code {
            Code::AccessDenied => {
                Error { message: format!("force is for the tenant's admins and operators: {}", error.message), ..error }
                    .with_detail("field", FORCE_FIELD)
            }
            _ => error,
        })?;
        let failure = self.store.work_failures(R::KIND, &row.id).await?.filter(|(attempts, _)| *attempts > 0);
        if row.delete_requested_at.is_none() && failure.is_none() {
            return Err(Error::invalid_state(format!(
                "force is for a {what} stuck in deleting or whose provider account cannot be reached; {what} {:?} \
                 is {} and its provider answers: delete it without force",
                row.id, row.state
            ))
            .with_detail("field", FORCE_FIELD)
            .with_detail(R::ID_FIELD, row.id.as_str())
            .with_detail("state", row.state.as_str()));
        }
        let id = row.id.clone();
        if row.delete_requested_at.is_none() {
            // The kind's own delete first: what it refuses (a network in use) stays refused, and
            // the `deleting` event is published as for any delete.
            delete(id.clone(), now_micros()).await?;
        }
        let row = R::fetch_live(&self.store, &id).await?;
        let Some(row) = row else {
            // Its reconciler finished the delete meanwhile: nothing was left behind.
            return R::fetch(&self.store, &id).await?.ok_or_else(|| Error::not_found(what, &id));
        };
        let objects: Vec<NewOrphan> = row
            .provider_objects()
            .into_iter()
            .map(|(object, placement)| NewOrphan {
                provider: object.provider.to_owned(),
                location: placement.location,
                kind: object.kind.to_owned(),
                name: object.name,
                provider_id: placement.provider_id,
            })
            .collect();
        let last_error = failure.and_then(|(_, error)| error).unwrap_or_default();
        let reason = if last_error.is_empty() {
            format!("forced delete by {} while {what} was {}", ctx.caller.principal_id, row.state)
        } else {
            format!("forced delete by {} after: {last_error}", ctx.caller.principal_id)
        };
        let forced = ForcedDelete {
            resource_id: &row.id,
            tenant_id: &row.tenant_id,
            account_id: &row.account_id,
            reason: &reason,
            objects: &objects,
        };
        if self.store.force_delete::<R>(&forced, now_micros()).await? {
            tracing::info!(id = %row.id, by = %ctx.caller.principal_id, force = true, orphans = objects.len(),
                "{what} deleted by force");
        }
        R::fetch(&self.store, &id).await?.ok_or_else(|| Error::not_found(what, &id))
    }

    /// The orphans the caller may read: a tenant principal its own tenant's, an operator the
    /// tenant it names or every tenant's.
    pub async fn orphan_list(&self, ctx: &Context, request: ListOrphansRequest) -> Result<Vec<OrphanRow>> {
        let tenant = self.readable_tenant(ctx, &request.tenant_id)?;
        let filter = OrphanFilter {
            tenant_id: tenant.as_deref(),
            resource_id: (!request.resource_id.is_empty()).then_some(request.resource_id.as_str()),
            status: (!request.status.is_empty()).then_some(request.status.as_str()),
            limit: LIST_LIMIT,
        };
        self.store.orphan_list(&filter).await
    }

    /// Stops the sweeper retrying an orphan (decided as an operator's by its method).
    pub async fn orphan_dismiss(&self, ctx: &Context, request: DismissOrphanRequest) -> Result<OrphanRow> {
        let orphan = self.store.orphan_dismiss(&request.orphan_id, now_micros()).await?;
        tracing::info!(orphan = %orphan.id, by = %ctx.caller.principal_id, status = %orphan.status, "orphan dismissed");
        Ok(orphan)
    }
}
