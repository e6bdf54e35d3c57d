//! Certificates in the store. A custom certificate's private key is kept only as ciphertext
//! (`private_key_encrypted`, sealed to the certificate's id, see [`crate::secrets`]); no row type
//! carries it, so no view, event or log can show it. The reconciler opens it with
//! [`Store::certificate_private_key`] to upload it, and nothing else reads it.

use sqlx::any::AnyRow;
use sqlx::{Any, Row, Transaction};

use super::catalog::{strings_from_json, strings_to_json};
use super::networks::VPS_EVENT_SOURCE;
use super::resource::{AnyQuery, Resource, ResourceFilter, ResourceMeta, ResourceTable, name_taken, retried};
use super::{AuthzResourceRow, NewEvent, Store, conflict_on_unique, hold_live_row_in};
use crate::domain::lifecycle_events::LifecycleEvent;
use crate::domain::states::ProvisionState;
use crate::error::{Error, Result};
use crate::secrets::{Secret, SecretKey};

/// The work kind of certificates in the `vps.provider-resources` reconciler.
pub const CERTIFICATE_KIND: &str = "certificate";

/// The authorization resource type of a certificate.
pub const CERTIFICATE_RESOURCE: &str = "compute-certificate";

/// A certificate as stored, without its private key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CertificateRow {
    /// Its common fields (`id` is `pcert_...`; `state` is `pending`, `ready`, `deleting`,
    /// `deleted` or `error`).
    pub meta: ResourceMeta<ProvisionState>,
    /// `custom` or `letsEncrypt`.
    pub kind: String,
    /// The names it covers.
    pub dns_names: Vec<String>,
    /// When the leaf expires (µs), once known.
    pub not_after: Option<i64>,
    /// SHA-256 of the leaf's DER, hex (custom).
    pub sha256_fingerprint: String,
    /// The leaf (PEM, custom).
    pub leaf_certificate: String,
    /// The chain (PEM, custom).
    pub certificate_chain: String,
    /// The provider's certificate id, once it has one.
    pub provider_id: String,
}

impl Resource for CertificateRow {
    type State = ProvisionState;

    const TABLE: ResourceTable = ResourceTable {
        table: "certificates",
        columns: "type, dns_names, not_after, sha256_fingerprint, leaf_certificate, certificate_chain, provider_id",
        keeps_idempotency_key: true,
        noun: "certificate",
        not_found: "certificate",
        id_field: "certificateId",
        work_kind: CERTIFICATE_KIND,
        authz_type: CERTIFICATE_RESOURCE,
        event_source: VPS_EVENT_SOURCE,
        event_prefix: "certificate",
    };

    fn from_row(row: &AnyRow) -> Result<CertificateRow> {
        Ok(read_columns!(row, CertificateRow {
            not_after, sha256_fingerprint, leaf_certificate, certificate_chain, provider_id;
            meta: ResourceMeta::from_row(row, &Self::TABLE)?,
            kind: row.try_get("type")?,
            dns_names: strings_from_json(&row.try_get::<String, _>("dns_names")?)?,
        }))
    }

    /// Its events say its type: names and expiry, never key material.
    fn event_fields(&self) -> Vec<(&'static str, serde_json::Value)> {
        vec![("type", self.kind.clone().into())]
    }
}

/// A certificate to create. `Debug` leaves the sealed key out.
#[derive(Clone)]
pub struct NewCertificate {
    /// The row (state `pending`).
    pub row: CertificateRow,
    /// The private key sealed to the row's id (custom); empty for Let's Encrypt.
    pub sealed_private_key: String,
    /// When `pending` counts as stuck.
    pub deadline: Option<i64>,
}

impl std::fmt::Debug for NewCertificate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NewCertificate").field("row", &self.row).finish_non_exhaustive()
    }
}

/// What the reconciler observed of a certificate, and the events that follow.
#[derive(Clone, Debug, Default)]
pub struct CertificateObserved {
    /// The certificate's version the observation was made against.
    pub version: i64,
    /// Its new state.
    pub state: ProvisionState,
    /// Its message.
    pub message: String,
    /// The provider's id.
    pub provider_id: String,
    /// The names, as the provider reports them (unchanged when empty).
    pub dns_names: Vec<String>,
    /// The expiry, as the provider reports it (unchanged when `None`).
    pub not_after: Option<i64>,
    /// Events to publish with the write.
    pub events: Vec<NewEvent>,
}

/// A certificate event (`certificate.<kind>`) on the certificate's subject: names and expiry,
/// never key material.
pub fn certificate_event(
    kind: LifecycleEvent,
    certificate: &CertificateRow,
    now: i64,
    extra: serde_json::Value,
) -> NewEvent {
    certificate.event(kind, now, extra)
}

impl Store {
    async fn certificate_fetch_in(
        &self,
        txn: &mut Transaction<'static, Any>,
        id: &str,
    ) -> Result<Option<CertificateRow>> {
        crate::measured::store("certificate_fetch_in", self.resource_fetch_in(txn, id)).await
    }

    /// One certificate by id (whatever its tenant: callers check).
    pub async fn certificate_fetch(&self, id: &str) -> Result<Option<CertificateRow>> {
        crate::measured::store("certificate_fetch", self.resource_fetch(id)).await
    }

    /// Opens a custom certificate's private key with `key`: for the one call that uploads it.
    pub async fn certificate_private_key(&self, key: &SecretKey, id: &str) -> Result<Secret> {
        crate::measured::store("certificate_private_key", async {
            let sealed: Option<String> =
                sqlx::query_scalar("SELECT private_key_encrypted FROM certificates WHERE id = $1")
                    .bind(id)
                    .fetch_optional(&self.pool)
                    .await?;
            match sealed {
                Some(sealed) if !sealed.is_empty() => key.open(&sealed, id),
                Some(_) => Err(Error::invalid_state(format!("certificate {id:?} has no private key"))),
                None => Err(Error::not_found("certificate", id)),
            }
        })
        .await
    }

    /// Creates a certificate with its authorization row, its work item and its `created` event,
    /// in one transaction. A retry (same id) is returned as it is when its request hash matches
    /// (`Ok((row, false))`), else `CONFLICT`.
    pub async fn certificate_create(
        &self,
        new: &NewCertificate,
        authz: &AuthzResourceRow,
    ) -> Result<(CertificateRow, bool)> {
        crate::measured::store("certificate_create", async {
            let row = &new.row;
            let mut txn = self.begin_write().await?;
            if let Some(existing) = self.certificate_fetch_in(&mut txn, &row.id).await? {
                drop(txn);
                return retried(existing, row);
            }
            let insert = self
                .resource_insert_in(
                    &mut txn,
                    row,
                    "type, dns_names, not_after, sha256_fingerprint, leaf_certificate, certificate_chain, \
                     private_key_encrypted, provider_id",
                    "?, ?, ?, ?, ?, ?, ?, ''",
                    |query| {
                        query
                            .bind(&row.kind)
                            .bind(strings_to_json(&row.dns_names))
                            .bind(row.not_after)
                            .bind(&row.sha256_fingerprint)
                            .bind(&row.leaf_certificate)
                            .bind(&row.certificate_chain)
                            .bind(&new.sealed_private_key)
                    },
                )
                .await;
            conflict_on_unique(insert, || name_taken(row))?;
            let extra = serde_json::json!({"poolId": row.pool_id, "dnsNames": row.dns_names});
            let created = self.resource_created(txn, row, authz, new.deadline, extra).await?;
            Ok((created, true))
        })
        .await
    }

    /// The tenant's certificates, oldest first, at most `limit`.
    pub async fn certificate_list(&self, filter: &ResourceFilter<'_>) -> Result<Vec<CertificateRow>> {
        crate::measured::store("certificate_list", self.resource_list(filter)).await
    }

    /// Marks a certificate for deletion and wakes the reconciler, through the shared delete
    /// ([`Store::resource_delete`]); `INVALID_STATE` while a load balancer names it.
    pub async fn certificate_delete(&self, id: &str, now: i64, deadline: Option<i64>) -> Result<CertificateRow> {
        crate::measured::store("certificate_delete", async {
            self.resource_delete(id, now, deadline, |store, txn, id| {
                Box::pin(async move {
                    // The row lock is held: a load balancer naming it now either committed before
                    // (and is counted here) or waits and is refused (`certificate_hold_in`).
                    let users = store.load_balancers_naming_certificate_in(txn, id).await?;
                    if users.is_empty() {
                        return Ok(());
                    }
                    Err(Error::invalid_state(format!(
                        "certificate {id:?} is used by load balancer(s) {}; delete them or have them name \
                         another certificate first",
                        users.join(", ")
                    ))
                    .with_detail("reason", "inUse")
                    .with_detail("loadBalancers", users))
                })
            })
            .await
        })
        .await
    }

    /// Inside a transaction that makes a load balancer name certificate `id`: takes the
    /// certificate's row lock and checks it is not being deleted (`INVALID_STATE` otherwise). A
    /// concurrent delete waits for this transaction and then sees the load balancer, or this one
    /// waits for the delete and is refused.
    pub async fn certificate_hold_in(&self, txn: &mut Transaction<'static, Any>, id: &str) -> Result<()> {
        crate::measured::store("certificate_hold_in", async {
            if !hold_live_row_in(txn, "certificates", id).await? {
                return Err(Error::invalid_state(format!("certificate {id:?} is being deleted; name another one"))
                    .with_detail("certificateId", id)
                    .with_detail("state", ProvisionState::Deleting.as_str()));
            }
            Ok(())
        })
        .await
    }

    /// Records an observation of the reconciler with its events, unless the tenant changed the
    /// certificate meanwhile (then nothing is written and `false` is returned).
    pub async fn certificate_observe(&self, id: &str, observed: &CertificateObserved, now: i64) -> Result<bool> {
        crate::measured::store("certificate_observe", async {
            let dns_names = (!observed.dns_names.is_empty()).then(|| strings_to_json(&observed.dns_names));
            let common = (observed.version, observed.state, observed.message.as_str());
            let set = "provider_id = ?, dns_names = COALESCE(?, dns_names), not_after = COALESCE(?, not_after)";
            let bind =
                |query: AnyQuery<'static>| query.bind(&observed.provider_id).bind(dns_names).bind(observed.not_after);
            self.resource_observe::<CertificateRow>(id, common, now, (set, bind), &observed.events).await
        })
        .await
    }

    /// The certificate is gone at the provider: marks it deleted, forgets its private key,
    /// removes its authorization row and publishes `deleted`, in one transaction.
    pub async fn certificate_finish_delete(&self, id: &str, now: i64) -> Result<()> {
        crate::measured::store("certificate_finish_delete", async {
            let forget_key = "private_key_encrypted = '', ";
            self.resource_finish_delete::<CertificateRow>(id, now, forget_key).await
        })
        .await
    }

    /// [`Store::certificate_finish_delete`] inside the caller's transaction: whether it wrote.
    pub(super) async fn certificate_finish_delete_in(
        &self,
        txn: &mut Transaction<'static, Any>,
        id: &str,
        now: i64,
    ) -> Result<bool> {
        self.resource_finish_delete_in::<CertificateRow>(txn, id, now, "private_key_encrypted = '', ").await
    }
}
