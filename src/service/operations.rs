//! The operation log of a resource: read like the resource is, whatever its kind.

use std::collections::HashMap;
use std::sync::OnceLock;

use super::{Context, Service};
use crate::authz::Target;
use crate::error::{Error, Result};
use crate::methods::MethodTable;
use crate::proto::compute::ListOperationsRequest;
use crate::store::OperationRow;

/// The `Operations.List` method, as its decisions and audit name it.
const METHOD: &str = "bettercompute.compute.v1.Operations/List";

/// Calls per page when the request names no size.
const DEFAULT_PAGE_SIZE: i64 = 50;

impl Service {
    /// The calls recorded for the resource the request names, newest first, and the token of
    /// the next page (empty on the last). The tenant-wide decision was the method's; the
    /// resource is then decided as its own `Get` decides it, so a caller who may not read the
    /// resource reads none of its calls, and a resource of another tenant is not found.
    pub async fn operation_list(
        &self,
        ctx: &Context,
        request: ListOperationsRequest,
    ) -> Result<(Vec<OperationRow>, String)> {
        let target = self.operation_log_target(&request).await?;
        let read = target.1;
        self.authorize(ctx, METHOD, read, target.0).await?;
        let before = parse_page_token(&request.page_token)?;
        let size = if request.page_size > 0 { i64::from(request.page_size) } else { DEFAULT_PAGE_SIZE };
        let mut calls = self
            .store
            .operation_log_list(&request.resource_id, before.as_ref().map(|(at, id)| (*at, id.as_str())), size + 1)
            .await?;
        let next = if calls.len() as i64 > size {
            calls.truncate(size as usize);
            calls.last().map(|last| format!("{}.{}", last.at_micros, last.id)).unwrap_or_default()
        } else {
            String::new()
        };
        Ok((calls, next))
    }
}

impl Service {
    /// What reading the resource of `request` is decided on, and the permission: the resource
    /// itself with its type's read, or, for a machine (which has no row of its own), its pool
    /// with `compute:metal:read`, as the machine's `Get` is decided. A resource that is not the
    /// request's tenant's is not found.
    async fn operation_log_target(&self, request: &ListOperationsRequest) -> Result<(Target, &'static str)> {
        let not_found = || Error::not_found("resource", &request.resource_id).with_detail("field", "resourceId");
        let tenant = Some(request.tenant_id.as_str());
        if let Some(row) = self.store.authz_resource_find(&request.resource_id).await? {
            if row.tenant_id.as_deref() != tenant {
                return Err(not_found());
            }
            let Some(read) = read_permission(&row.resource_type) else {
                return Err(Error::invalid_input(format!(
                    "{} {:?} has no operation log: only asynchronous resources have one",
                    row.resource_type, request.resource_id
                ))
                .with_detail("field", "resourceId"));
            };
            let target = Target {
                resource_type: row.resource_type.clone(),
                id: request.resource_id.clone(),
                tenant_id: Some(request.tenant_id.clone()),
                ..Target::default()
            };
            return Ok((target, read));
        }
        let machine = self.store.metal_fetch(&request.resource_id).await?;
        // A machine of a platform pool is under `platform`, as its pool's events are.
        let under =
            |m: &crate::store::MetalMachineRow| m.tenant_id.as_deref().unwrap_or(PLATFORM_EVENTS) == request.tenant_id;
        let Some(machine) = machine.filter(under) else { return Err(not_found()) };
        let target = Target { resource_type: METAL_DECIDED_ON.to_owned(), id: machine.pool_id, ..Target::default() };
        Ok((target, METAL_READ))
    }
}

/// The tenant a platform pool's machines (and its events) are listed under.
const PLATFORM_EVENTS: &str = "platform";

/// What a machine's reads are decided on, and as what (as `Metal.Get` is).
const METAL_DECIDED_ON: &str = "compute-pool";
const METAL_READ: &str = "compute:metal:read";

/// A page token: the time and id of the last call of the previous page.
fn parse_page_token(token: &str) -> Result<Option<(i64, String)>> {
    if token.is_empty() {
        return Ok(None);
    }
    token
        .split_once('.')
        .and_then(|(at, id)| Some((at.parse().ok()?, id.to_owned())))
        .filter(|(_, id)| id.starts_with("opl_"))
        .map(Some)
        .ok_or_else(|| {
            Error::invalid_input(format!(
                "pageToken {token:?} is not a token this list returned; omit it for the first page"
            ))
            .with_detail("field", "pageToken")
        })
}

/// The permission a resource type's `Get` decides (`compute:kubernetes:read`), read from the
/// method table once; `None` for a type no `Get` reads.
fn read_permission(resource_type: &str) -> Option<&'static str> {
    static READS: OnceLock<HashMap<String, String>> = OnceLock::new();
    READS
        .get_or_init(|| {
            let table = MethodTable::from_pool(crate::proto::descriptor_pool());
            table
                .iter()
                .filter(|method| method.name.ends_with("/Get"))
                .filter_map(|method| method.authorization.as_ref())
                .filter(|authorization| authorization.permission.ends_with(":read"))
                .map(|authorization| (authorization.resource.clone(), authorization.permission.clone()))
                .collect()
        })
        .get(resource_type)
        .map(String::as_str)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn page_tokens_read_back_and_foreign_ones_are_refused() {
        assert_eq!(parse_page_token("").unwrap(), None);
        assert_eq!(parse_page_token("17.opl_abc").unwrap(), Some((17, "opl_abc".to_owned())));
        for bad in ["17", "x.opl_abc", "17.evt_abc"] {
            assert_eq!(parse_page_token(bad).unwrap_err().details["field"], "pageToken", "{bad}");
        }
    }

    #[test]
    fn every_asynchronous_resource_type_has_a_read() {
        for resource_type in ["compute-kubernetes-cluster", "compute-provider-load-balancer"] {
            assert!(read_permission(resource_type).is_some_and(|p| p.ends_with(":read")), "{resource_type}");
        }
    }
}
