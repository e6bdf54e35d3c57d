//! What the calls of the asynchronous tenant resources (clusters, networks, instances,
//! certificates, load balancers) share: the common fields and authorization attributes of the
//! row a create request asks for, the store filter a list request asks for, the per-item
//! reading check of its answer, and a delete's answer for a resource already deleted. Their
//! creates also share [`super::create_once`].

use std::ops::Deref;

use super::{Context, Service};
use crate::domain::states::LifecycleState;
use crate::error::Result;
use crate::store::{ResourceFilter, ResourceMeta, now_micros};

/// A list request of a tenant's resources of one kind.
pub trait ListRequest {
    /// The store filter it asks for, of at most `limit` items: an empty pool or project is no
    /// filter.
    fn filter(&self, limit: i64) -> ResourceFilter<'_>;
}

/// A create request of a tenant's resource of one kind.
pub trait CreateRequest {
    /// The request's full name in the API (`bettercompute.compute.v1.CreateNetworkRequest`).
    const MESSAGE: &'static str;

    /// Its tenant and its idempotency key, which its object's id derives from.
    fn key_parts(&self) -> (&str, &str);

    /// The common fields of the resource it asks for, `pending` at `now`: its `id`, on
    /// `account_id`, owned by the caller, made by the request of digest `digest`.
    fn meta<S: LifecycleState>(
        &self,
        ctx: &Context,
        id: &str,
        account_id: &str,
        digest: &str,
        now: i64,
    ) -> ResourceMeta<S>;

    /// The attributes the authorization row of every kind records: the provider account on
    /// `account_id`, the pool and the project. A kind adds its own after them.
    fn authz_attributes(&self, account_id: &str) -> serde_json::Map<String, serde_json::Value>;
}

/// Makes a kind's create and list requests (which all carry a tenant, a project, a pool and,
/// on create, a name and an idempotency key) a [`CreateRequest`] and a [`ListRequest`]; each
/// kind's service file says it for its own requests.
macro_rules! resource_requests {
    (create: $create:ty, list: $list:ty $(,)?) => {
        impl $crate::service::resource_calls::CreateRequest for $create {
            const MESSAGE: &'static str = concat!("bettercompute.compute.v1.", stringify!($create));

            fn key_parts(&self) -> (&str, &str) {
                (&self.tenant_id, &self.idempotency_key)
            }

            fn meta<S: $crate::domain::states::LifecycleState>(
                &self,
                ctx: &$crate::service::Context,
                id: &str,
                account_id: &str,
                digest: &str,
                now: i64,
            ) -> $crate::store::ResourceMeta<S> {
                $crate::store::ResourceMeta {
                    id: id.to_owned(),
                    tenant_id: self.tenant_id.clone(),
                    project_id: (!self.project_id.is_empty()).then(|| self.project_id.clone()),
                    pool_id: self.pool_id.clone(),
                    account_id: account_id.to_owned(),
                    owner_id: ctx.caller.principal_id.clone(),
                    name: self.name.clone(),
                    idempotency_key: self.idempotency_key.clone(),
                    request_digest: digest.to_owned(),
                    ..$crate::store::ResourceMeta::pending(now)
                }
            }

            fn authz_attributes(&self, account_id: &str) -> serde_json::Map<String, serde_json::Value> {
                let mut attributes = serde_json::Map::new();
                attributes.insert("providerAccountId".into(), account_id.into());
                attributes.insert("poolId".into(), self.pool_id.clone().into());
                attributes.insert("projectId".into(), self.project_id.clone().into());
                attributes
            }
        }

        impl $crate::service::resource_calls::ListRequest for $list {
            fn filter(&self, limit: i64) -> $crate::store::ResourceFilter<'_> {
                $crate::store::ResourceFilter {
                    tenant_id: &self.tenant_id,
                    pool_id: (!self.pool_id.is_empty()).then_some(self.pool_id.as_str()),
                    project_id: (!self.project_id.is_empty()).then_some(self.project_id.as_str()),
                    include_deleted: self.include_deleted,
                    after: None,
                    limit,
                }
            }
        }
    };
}

pub(super) use resource_requests;

impl Service {
    /// The resources of `tenant` in `rows` the caller may read (`permission`), each decided as
    /// `get` decides it: with what its authorization row of `resource_type` records (the
    /// attributes of its create), so an operator's policy on them filters the list alike.
    pub(super) async fn readable_resources<R: Deref<Target = ResourceMeta<S>>, S: LifecycleState>(
        &self,
        ctx: &Context,
        permission: &str,
        resource_type: &str,
        tenant: &str,
        rows: Vec<R>,
    ) -> Result<Vec<R>> {
        self.authorize_stored_items(ctx, permission, resource_type, tenant, rows, |row| &row.id).await
    }

    /// Deletes `row` with `delete` (the store's, given its id and the time), logged as
    /// `<what> deleting`; one already deleted is the answer as it is.
    pub(super) async fn delete_unless_deleted<R, S, Deleting>(
        &self,
        ctx: &Context,
        what: &str,
        row: R,
        delete: impl FnOnce(String, i64) -> Deleting,
    ) -> Result<R>
    where
        R: Deref<Target = ResourceMeta<S>>,
        S: LifecycleState,
        Deleting: Future<Output = Result<R>>,
    {
        if row.deleted_at.is_some() {
            return Ok(row);
        }
        let deleting = delete(row.id.clone(), now_micros()).await?;
        tracing::info!(id = %deleting.id, by = %ctx.caller.principal_id, "{what} deleting");
        Ok(deleting)
    }
}
