//! What the catalog's store files share: the outbox event of a change, JSON columns, and the
//! existence checks of the rows a catalog row refers to.

use sqlx::{Any, Transaction};

use super::NewEvent;
use crate::error::{Error, Result};

/// The outbox event of a catalog change: `platform.<resource>.<change>`, filed under the owning
/// tenant or, for the platform's own rows, under `platform`. `data` never holds credentials.
pub(super) fn catalog_event(
    resource: &str,
    change: &str,
    subject: &str,
    tenant: Option<&str>,
    time: i64,
    data: serde_json::Value,
) -> NewEvent {
    NewEvent {
        source: format!("/platform/{resource}s"),
        event_type: format!("platform.{resource}.{change}"),
        subject: subject.to_owned(),
        tenant_id: tenant.unwrap_or("platform").to_owned(),
        time,
        data,
    }
}

/// A JSON array of strings as stored.
pub(super) fn strings_to_json(items: &[String]) -> String {
    serde_json::to_string(items).expect("strings serialize")
}

/// A stored JSON array of strings.
pub(super) fn strings_from_json(text: &str) -> Result<Vec<String>> {
    serde_json::from_str(text).map_err(|error| Error::internal(format!("a stored list is not JSON: {error}")))
}

/// A stored JSON value.
pub(super) fn value_from_json<T: serde::de::DeserializeOwned>(text: &str) -> Result<T> {
    serde_json::from_str(text).map_err(|error| Error::internal(format!("a stored document is not JSON: {error}")))
}

/// Checks, inside `txn`, that tenant `id` exists and is not deleted: `NOT_FOUND` or
/// `INVALID_STATE` otherwise.
pub(super) async fn tenant_require_active_in(txn: &mut Transaction<'static, Any>, id: &str) -> Result<()> {
    let deleted: Option<Option<i64>> =
        sqlx::query_scalar("SELECT deleted_at FROM tenants WHERE id = $1").bind(id).fetch_optional(&mut **txn).await?;
    match deleted {
        None => Err(Error::not_found("tenant", id)),
        Some(Some(_)) => Err(Error::invalid_state(format!("tenant {id:?} is deleted")).with_detail("tenantId", id)),
        Some(None) => Ok(()),
    }
}

/// The authorization row of a catalog resource, written with it: its type, id, tenant (none for
/// the platform's own) and the attributes decisions may read.
pub(super) fn authz_row(
    resource_type: &str,
    id: &str,
    tenant_id: Option<&str>,
    attributes: serde_json::Map<String, serde_json::Value>,
    now: i64,
) -> super::AuthzResourceRow {
    super::AuthzResourceRow {
        resource_type: resource_type.to_owned(),
        resource_id: id.to_owned(),
        tenant_id: tenant_id.map(str::to_owned),
        project_id: None,
        owner_id: None,
        attributes,
        created_at: now,
    }
}
