//! The kubeconfigs issued on clusters: which Kubernetes service accounts (`bc-u-<hash>-<role>`)
//! a principal was given on which cluster, until when, and which were revoked. The service
//! writes a grant before it makes the account; a principal's deletion or a removed binding
//! revokes grants in its own transaction and wakes the clusters' reconciler, which removes the
//! accounts and their bindings from the cluster, then forgets the rows.

use sqlx::{Any, Row, Transaction};

use super::{CLUSTER_KIND, Store};
use crate::error::Result;

/// A kubeconfig issued: the account `account` on `cluster_id` for `principal_id` with `role`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AccessGrant {
    /// The cluster.
    pub cluster_id: String,
    /// The Kubernetes service account (`bc-u-<hash>-<role>`).
    pub account: String,
    /// Whom it was issued to.
    pub principal_id: String,
    /// The cluster's tenant.
    pub tenant_id: String,
    /// `view`, `edit` or `admin`.
    pub role: String,
    /// When it was issued (µs).
    pub issued_at: i64,
    /// When its token expires (µs).
    pub expires_at: i64,
}

/// An account to remove from a cluster: its principal was deleted or may no longer have the
/// role there. Recorded whether or not a grant was seen, so that accounts made before grants
/// were kept go too.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AccessRevocation {
    /// The cluster.
    pub cluster_id: String,
    /// The account.
    pub account: String,
    /// The principal it was for.
    pub principal_id: String,
    /// The cluster's tenant.
    pub tenant_id: String,
    /// `view`, `edit` or `admin`.
    pub role: String,
}

impl Store {
    /// Records a kubeconfig about to be issued; a revoked grant of the same account is active
    /// again (its holder was just allowed the role), and keeps the later of the two expiries.
    pub async fn cluster_access_grant(&self, grant: &AccessGrant) -> Result<()> {
        crate::measured::store("cluster_access_grant", async {
            let mut txn = self.begin_write().await?;
            sqlx::query(
                "INSERT INTO cluster_access_grants \
                 (cluster_id, account, principal_id, tenant_id, role, issued_at, expires_at, revoked_at) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, NULL) \
                 ON CONFLICT (cluster_id, account) DO UPDATE SET issued_at = $6, revoked_at = NULL, \
                 expires_at = CASE WHEN cluster_access_grants.expires_at > $7 \
                 THEN cluster_access_grants.expires_at ELSE $7 END",
            )
            .bind(&grant.cluster_id)
            .bind(&grant.account)
            .bind(&grant.principal_id)
            .bind(&grant.tenant_id)
            .bind(&grant.role)
            .bind(grant.issued_at)
            .bind(grant.expires_at)
            .execute(&mut *txn)
            .await?;
            self.commit(txn).await?;
            Ok(())
        })
        .await
    }

    /// Revokes accounts inside the caller's transaction and makes their clusters due now;
    /// commit with `commit_and_signal`.
    pub(super) async fn cluster_access_revoke_in(
        &self,
        txn: &mut Transaction<'static, Any>,
        revocations: &[AccessRevocation],
        now: i64,
    ) -> Result<()> {
        crate::measured::store("cluster_access_revoke_in", async {
            for revocation in revocations {
                sqlx::query(
                    "INSERT INTO cluster_access_grants \
                     (cluster_id, account, principal_id, tenant_id, role, issued_at, expires_at, revoked_at) \
                     VALUES ($1, $2, $3, $4, $5, $6, $6, $6) \
                     ON CONFLICT (cluster_id, account) DO UPDATE SET revoked_at = $6",
                )
                .bind(&revocation.cluster_id)
                .bind(&revocation.account)
                .bind(&revocation.principal_id)
                .bind(&revocation.tenant_id)
                .bind(&revocation.role)
                .bind(now)
                .execute(&mut **txn)
                .await?;
            }
            let mut clusters: Vec<&str> = revocations.iter().map(|r| r.cluster_id.as_str()).collect();
            clusters.sort_unstable();
            clusters.dedup();
            for cluster in &clusters {
                sqlx::query(
                    "UPDATE work_items SET due_at = $3, generation = generation + 1 WHERE kind = $1 AND object_id = $2",
                )
                .bind(CLUSTER_KIND)
                .bind(cluster)
                .bind(now)
                .execute(&mut **txn)
                .await?;
            }
            if !clusters.is_empty() {
                self.work_notify_in(txn, CLUSTER_KIND).await?;
            }
            Ok(())
        })
        .await
    }

    /// The live clusters of `tenant`, and those where `principal_id` holds an unrevoked grant:
    /// where a revocation of the principal may have something to remove.
    pub async fn cluster_access_candidates(&self, tenant: Option<&str>, principal_id: &str) -> Result<Vec<String>> {
        crate::measured::store("cluster_access_candidates", async {
            let ids = sqlx::query_scalar::<_, String>(
                "SELECT id FROM kubernetes_clusters WHERE tenant_id = $1 AND deleted_at IS NULL \
                 UNION SELECT cluster_id FROM cluster_access_grants WHERE principal_id = $2 AND revoked_at IS NULL",
            )
            .bind(tenant.unwrap_or_default())
            .bind(principal_id)
            .fetch_all(&self.pool)
            .await?;
            Ok(ids)
        })
        .await
    }

    /// Whether `cluster_id` has accounts to remove: a grant revoked, or expired by `now`.
    pub async fn cluster_access_sweep_due(&self, cluster_id: &str, now: i64) -> Result<bool> {
        crate::measured::store("cluster_access_sweep_due", async {
            let due: i64 = sqlx::query_scalar(
                "SELECT COUNT(*) FROM cluster_access_grants \
                 WHERE cluster_id = $1 AND (revoked_at IS NOT NULL OR expires_at <= $2)",
            )
            .bind(cluster_id)
            .bind(now)
            .fetch_one(&self.pool)
            .await?;
            Ok(due > 0)
        })
        .await
    }

    /// The accounts of `cluster_id` that must stay at `now`: granted, not revoked, not expired.
    pub async fn cluster_access_live_accounts(&self, cluster_id: &str, now: i64) -> Result<Vec<String>> {
        crate::measured::store("cluster_access_live_accounts", async {
            let rows = sqlx::query(
                "SELECT account FROM cluster_access_grants \
                 WHERE cluster_id = $1 AND revoked_at IS NULL AND expires_at > $2",
            )
            .bind(cluster_id)
            .bind(now)
            .fetch_all(&self.pool)
            .await?;
            rows.iter().map(|row| Ok(row.try_get("account")?)).collect()
        })
        .await
    }

    /// Forgets the grants of `cluster_id` that were dead at `swept_at` (their accounts were
    /// removed by a sweep that read the live ones then); one issued again since stays.
    pub async fn cluster_access_forget_dead(&self, cluster_id: &str, swept_at: i64) -> Result<()> {
        crate::measured::store("cluster_access_forget_dead", async {
            let mut txn = self.begin_write().await?;
            sqlx::query(
                "DELETE FROM cluster_access_grants WHERE cluster_id = $1 \
                 AND (revoked_at <= $2 OR (revoked_at IS NULL AND expires_at <= $2))",
            )
            .bind(cluster_id)
            .bind(swept_at)
            .execute(&mut *txn)
            .await?;
            self.commit(txn).await?;
            Ok(())
        })
        .await
    }

    /// Forgets every grant of a deleted cluster: its accounts went with it.
    pub async fn cluster_access_forget_cluster(&self, cluster_id: &str) -> Result<()> {
        crate::measured::store("cluster_access_forget_cluster", async {
            let mut txn = self.begin_write().await?;
            sqlx::query("DELETE FROM cluster_access_grants WHERE cluster_id = $1")
                .bind(cluster_id)
                .execute(&mut *txn)
                .await?;
            self.commit(txn).await?;
            Ok(())
        })
        .await
    }
}
