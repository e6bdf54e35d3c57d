//! What the lists of the asynchronous tenant resources (clusters, networks, instances,
//! certificates, load balancers) share: the store filter a list request asks for, and the
//! per-item reading check of the answer.

use std::ops::Deref;

use super::{Context, Service};
use crate::error::Result;
use crate::proto::compute::{
    ListCertificatesRequest, ListInstancesRequest, ListKubernetesClustersRequest, ListLoadBalancersRequest,
    ListNetworksRequest,
};
use crate::store::{ResourceFilter, ResourceMeta};

/// A list request of a tenant's resources of one kind.
pub trait ListRequest {
    /// The store filter it asks for, of at most `limit` items: an empty pool or project is no
    /// filter.
    fn filter(&self, limit: i64) -> ResourceFilter<'_>;
}

/// The list requests, which all carry a tenant, a pool, a project and `include_deleted`.
macro_rules! list_requests {
    ($($request:ty),* $(,)?) => {
        $(impl ListRequest for $request {
            fn filter(&self, limit: i64) -> ResourceFilter<'_> {
                ResourceFilter {
                    tenant_id: &self.tenant_id,
                    pool_id: (!self.pool_id.is_empty()).then_some(self.pool_id.as_str()),
                    project_id: (!self.project_id.is_empty()).then_some(self.project_id.as_str()),
                    include_deleted: self.include_deleted,
                    limit,
                }
            }
        })*
    };
}

list_requests!(
    ListCertificatesRequest,
    ListInstancesRequest,
    ListKubernetesClustersRequest,
    ListLoadBalancersRequest,
    ListNetworksRequest,
);

impl Service {
    /// The resources of `tenant` in `rows` the caller may read (`permission`), each decided as
    /// `get` decides it: with what its authorization row of `resource_type` records (the
    /// attributes of its create), so an operator's policy on them filters the list alike.
    pub(super) async fn readable_resources<R: Deref<Target = ResourceMeta>>(
        &self,
        ctx: &Context,
        permission: &str,
        resource_type: &str,
        tenant: &str,
        rows: Vec<R>,
    ) -> Result<Vec<R>> {
        self.authorize_stored_items(ctx, permission, resource_type, tenant, rows, |row| &row.id).await
    }
}
