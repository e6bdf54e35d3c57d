//! Certificates in the store. A custom certificate's private key is kept only as ciphertext
//! (`private_key_encrypted`, sealed to the certificate's id, see [`crate::secrets`]); no row type
//! carries it, so no view, event or log can show it. The reconciler opens it with
//! [`Store::certificate_private_key`] to upload it, and nothing else reads it.

use sqlx::any::AnyRow;
use sqlx::{Any, Row, Transaction};

use super::catalog::{strings_from_json, strings_to_json};
use super::networks::VPS_EVENT_SOURCE;
use super::{AuthzResourceRow, NewEvent, Store, conflict_on_unique, hold_live_row_in};
use crate::error::{Error, Result};
use crate::secrets::{Secret, SecretKey};

/// The work kind of certificates in the `vps.provider-resources` reconciler.
pub const CERTIFICATE_KIND: &str = "certificate";

/// The authorization resource type of a certificate.
pub const CERTIFICATE_RESOURCE: &str = "compute-certificate";

/// A certificate as stored, without its private key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CertificateRow {
    /// `pcert_...`.
    pub id: String,
    /// Its tenant.
    pub tenant_id: String,
    /// Its project.
    pub project_id: Option<String>,
    /// Its provider pool.
    pub pool_id: String,
    /// The pool's account.
    pub account_id: String,
    /// Who created it.
    pub owner_id: String,
    /// Its name.
    pub name: String,
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
    /// `pending`, `ready`, `deleting`, `deleted` or `error`.
    pub state: String,
    /// Why it is in `error`.
    pub message: String,
    /// The provider's certificate id, once it has one.
    pub provider_id: String,
    /// Bumped by every tenant change.
    pub version: i64,
    /// The create request's idempotency key.
    pub idempotency_key: String,
    /// Digest of the create request.
    pub request_hash: String,
    /// When deletion was asked for.
    pub delete_requested_at: Option<i64>,
    /// Creation time.
    pub created_at: i64,
    /// Last change.
    pub updated_at: i64,
    /// Deletion time, once deleted.
    pub deleted_at: Option<i64>,
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
    pub state: String,
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

const COLUMNS: &str = "id, tenant_id, project_id, pool_id, account_id, owner_id, name, type, dns_names, not_after, \
                       sha256_fingerprint, leaf_certificate, certificate_chain, state, message, provider_id, version, \
                       idempotency_key, request_hash, delete_requested_at, created_at, updated_at, deleted_at";

fn certificate_from_row(row: &AnyRow) -> Result<CertificateRow> {
    Ok(CertificateRow {
        id: row.try_get("id")?,
        tenant_id: row.try_get("tenant_id")?,
        project_id: row.try_get("project_id")?,
        pool_id: row.try_get("pool_id")?,
        account_id: row.try_get("account_id")?,
        owner_id: row.try_get("owner_id")?,
        name: row.try_get("name")?,
        kind: row.try_get("type")?,
        dns_names: strings_from_json(&row.try_get::<String, _>("dns_names")?)?,
        not_after: row.try_get("not_after")?,
        sha256_fingerprint: row.try_get("sha256_fingerprint")?,
        leaf_certificate: row.try_get("leaf_certificate")?,
        certificate_chain: row.try_get("certificate_chain")?,
        state: row.try_get("state")?,
        message: row.try_get("message")?,
        provider_id: row.try_get("provider_id")?,
        version: row.try_get("version")?,
        idempotency_key: row.try_get("idempotency_key")?,
        request_hash: row.try_get("request_hash")?,
        delete_requested_at: row.try_get("delete_requested_at")?,
        created_at: row.try_get("created_at")?,
        updated_at: row.try_get("updated_at")?,
        deleted_at: row.try_get("deleted_at")?,
    })
}

/// A certificate event (`certificate.<kind>`) on the certificate's subject: names and expiry,
/// never key material.
pub fn certificate_event(kind: &str, certificate: &CertificateRow, now: i64, extra: serde_json::Value) -> NewEvent {
    let mut data = serde_json::json!({
        "certificateId": certificate.id,
        "name": certificate.name,
        "type": certificate.kind,
        "state": certificate.state,
        "version": certificate.version,
    });
    if let (Some(data), serde_json::Value::Object(extra)) = (data.as_object_mut(), extra) {
        data.extend(extra);
    }
    NewEvent {
        source: VPS_EVENT_SOURCE.to_owned(),
        event_type: format!("certificate.{kind}"),
        subject: certificate.id.clone(),
        tenant_id: certificate.tenant_id.clone(),
        time: now,
        data,
    }
}

impl Store {
    async fn certificate_fetch_in(
        &self,
        txn: &mut Transaction<'static, Any>,
        id: &str,
    ) -> Result<Option<CertificateRow>> {
        crate::measured::store("certificate_fetch_in", async {
            let sql = format!("SELECT {COLUMNS} FROM certificates WHERE id = $1");
            let row = sqlx::query(sqlx::AssertSqlSafe(sql)).bind(id).fetch_optional(&mut **txn).await?;
            row.as_ref().map(certificate_from_row).transpose()
        })
        .await
    }

    /// One certificate by id (whatever its tenant: callers check).
    pub async fn certificate_fetch(&self, id: &str) -> Result<Option<CertificateRow>> {
        crate::measured::store("certificate_fetch", async {
            let sql = format!("SELECT {COLUMNS} FROM certificates WHERE id = $1");
            let row = sqlx::query(sqlx::AssertSqlSafe(sql)).bind(id).fetch_optional(&self.pool).await?;
            row.as_ref().map(certificate_from_row).transpose()
        })
        .await
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
                if existing.request_hash != row.request_hash {
                    return Err(Error::conflict(format!(
                        "idempotency key already used for certificate {:?} with a different request",
                        existing.id
                    ))
                    .with_detail("certificateId", existing.id.as_str()));
                }
                return Ok((existing, false));
            }
            let insert = sqlx::query(
                "INSERT INTO certificates (id, tenant_id, project_id, pool_id, account_id, owner_id, name, type, \
                 dns_names, not_after, sha256_fingerprint, leaf_certificate, certificate_chain, private_key_encrypted, \
                 state, message, provider_id, version, idempotency_key, request_hash, created_at, updated_at) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, 'pending', '', '', 1, $15, $16, \
                 $17, $17)",
            )
            .bind(&row.id)
            .bind(&row.tenant_id)
            .bind(&row.project_id)
            .bind(&row.pool_id)
            .bind(&row.account_id)
            .bind(&row.owner_id)
            .bind(&row.name)
            .bind(&row.kind)
            .bind(strings_to_json(&row.dns_names))
            .bind(row.not_after)
            .bind(&row.sha256_fingerprint)
            .bind(&row.leaf_certificate)
            .bind(&row.certificate_chain)
            .bind(&new.sealed_private_key)
            .bind(&row.idempotency_key)
            .bind(&row.request_hash)
            .bind(row.created_at)
            .execute(&mut *txn)
            .await;
            conflict_on_unique(insert, || {
                Error::conflict(format!("tenant {:?} already has a certificate named {:?}", row.tenant_id, row.name))
                    .with_detail("name", row.name.as_str())
            })?;
            self.authz_resource_insert_in(&mut txn, authz).await?;
            self.work_enqueue_in(&mut txn, CERTIFICATE_KIND, &row.id, "pending", new.deadline, row.created_at).await?;
            let created = self.certificate_fetch_in(&mut txn, &row.id).await?.expect("just inserted");
            let event = certificate_event(
                "created",
                &created,
                row.created_at,
                serde_json::json!({"poolId": row.pool_id, "dnsNames": row.dns_names}),
            );
            self.event_append_in(&mut txn, &event).await?;
            self.commit_and_signal(txn).await?;
            Ok((created, true))
        })
        .await
    }

    /// The tenant's certificates, oldest first, at most `limit`.
    pub async fn certificate_list(
        &self,
        tenant_id: &str,
        pool_id: Option<&str>,
        project_id: Option<&str>,
        include_deleted: bool,
        limit: i64,
    ) -> Result<Vec<CertificateRow>> {
        crate::measured::store("certificate_list", async {
            let sql = format!(
                "SELECT {COLUMNS} FROM certificates WHERE tenant_id = $1 AND ($2 IS NULL OR pool_id = $2) \
                 AND ($3 IS NULL OR project_id = $3) AND ($4 = 1 OR deleted_at IS NULL) ORDER BY created_at, id \
                 LIMIT $5"
            );
            let rows = sqlx::query(sqlx::AssertSqlSafe(sql))
                .bind(tenant_id)
                .bind(pool_id)
                .bind(project_id)
                .bind(include_deleted as i64)
                .bind(limit)
                .fetch_all(&self.pool)
                .await?;
            rows.iter().map(certificate_from_row).collect()
        })
        .await
    }

    /// Marks a certificate for deletion and wakes the reconciler. One already `deleting` is
    /// returned unchanged; one whose delete failed is retried at once.
    pub async fn certificate_delete(&self, id: &str, now: i64, deadline: Option<i64>) -> Result<CertificateRow> {
        crate::measured::store("certificate_delete", async {
            let mut txn = self.begin_write().await?;
            let updated = sqlx::query(
                "UPDATE certificates SET state = 'deleting', message = '', version = version + 1, updated_at = $2, \
                 delete_requested_at = COALESCE(delete_requested_at, $2) \
                 WHERE id = $1 AND deleted_at IS NULL AND state <> 'deleting'",
            )
            .bind(id)
            .bind(now)
            .execute(&mut *txn)
            .await?;
            if updated.rows_affected() == 0 {
                drop(txn);
                return self.certificate_fetch(id).await?.ok_or_else(|| Error::not_found("certificate", id));
            }
            // The update holds the row lock: a load balancer naming it now either committed before
            // (and is counted here) or waits and is refused (`certificate_hold_in`).
            let users = self.load_balancers_naming_certificate_in(&mut txn, id).await?;
            if !users.is_empty() {
                return Err(Error::invalid_state(format!(
                    "certificate {id:?} is used by load balancer(s) {}; delete them or have them name another \
                     certificate first",
                    users.join(", ")
                ))
                .with_detail("reason", "inUse")
                .with_detail("loadBalancers", users));
            }
            self.work_restart_delete_in(&mut txn, CERTIFICATE_KIND, id, deadline, now).await?;
            let certificate =
                self.certificate_fetch_in(&mut txn, id).await?.ok_or_else(|| Error::not_found("certificate", id))?;
            self.commit_and_signal(txn).await?;
            Ok(certificate)
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
                    .with_detail("state", "deleting"));
            }
            Ok(())
        })
        .await
    }

    /// Records an observation of the reconciler with its events, unless the tenant changed the
    /// certificate meanwhile (then nothing is written and `false` is returned).
    pub async fn certificate_observe(&self, id: &str, observed: &CertificateObserved, now: i64) -> Result<bool> {
        crate::measured::store("certificate_observe", async {
            let mut txn = self.begin_write().await?;
            let dns_names = (!observed.dns_names.is_empty()).then(|| strings_to_json(&observed.dns_names));
            let updated = sqlx::query(
                "UPDATE certificates SET state = $3, message = $4, provider_id = $5, \
                 dns_names = COALESCE($6, dns_names), not_after = COALESCE($7, not_after), updated_at = $8 \
                 WHERE id = $1 AND version = $2 AND deleted_at IS NULL",
            )
            .bind(id)
            .bind(observed.version)
            .bind(&observed.state)
            .bind(&observed.message)
            .bind(&observed.provider_id)
            .bind(dns_names)
            .bind(observed.not_after)
            .bind(now)
            .execute(&mut *txn)
            .await?;
            if updated.rows_affected() == 0 {
                return Ok(false);
            }
            for event in &observed.events {
                self.event_append_in(&mut txn, event).await?;
            }
            self.commit_and_signal(txn).await?;
            Ok(true)
        })
        .await
    }

    /// The certificate is gone at the provider: marks it deleted, forgets its private key,
    /// removes its authorization row and publishes `deleted`, in one transaction.
    pub async fn certificate_finish_delete(&self, id: &str, now: i64) -> Result<()> {
        crate::measured::store("certificate_finish_delete", async {
            let mut txn = self.begin_write().await?;
            let updated = sqlx::query(
                "UPDATE certificates SET state = 'deleted', message = '', private_key_encrypted = '', deleted_at = $2, \
                 updated_at = $2 WHERE id = $1 AND deleted_at IS NULL AND delete_requested_at IS NOT NULL",
            )
            .bind(id)
            .bind(now)
            .execute(&mut *txn)
            .await?;
            if updated.rows_affected() == 0 {
                return Ok(());
            }
            self.authz_resource_delete_in(&mut txn, CERTIFICATE_RESOURCE, id).await?;
            let certificate =
                self.certificate_fetch_in(&mut txn, id).await?.ok_or_else(|| Error::not_found("certificate", id))?;
            self.event_append_in(&mut txn, &certificate_event("deleted", &certificate, now, serde_json::json!({})))
                .await?;
            self.commit_and_signal(txn).await?;
            Ok(())
        })
        .await
    }
}
