//! What a load balancer rests on, read from the `vps` module's tables (migration 6): instances,
//! subnets with their network's account, and certificates. The load balancer's checks and its
//! reconciler compute what it reaches from these rows on every pass, so they never trust a
//! provider-side grouping such as a tag.

use sqlx::Row;
use sqlx::any::AnyRow;

use super::{Store, TargetCertificate, TargetInstance, TargetSubnet};
use crate::error::Result;

const INSTANCE_COLUMNS: &str = "id, tenant_id, pool_id, account_id, region, subnet_id, machine_id, state";

fn instance_from_row(row: &AnyRow) -> Result<TargetInstance> {
    Ok(read_columns!(row, TargetInstance { id, tenant_id, pool_id, account_id, region, subnet_id, machine_id, state }))
}

impl Store {
    /// The instances among `ids` that exist and are not deleted, of any tenant (the caller tells
    /// another tenant's apart), in the order of `ids`.
    pub async fn load_balancer_instances(&self, ids: &[String]) -> Result<Vec<TargetInstance>> {
        crate::measured::store("load_balancer_instances", async {
            if ids.is_empty() {
                return Ok(Vec::new());
            }
            let placeholders: Vec<String> = (1..=ids.len()).map(|n| format!("${n}")).collect();
            let sql = format!(
                "SELECT {INSTANCE_COLUMNS} FROM instances WHERE deleted_at IS NULL AND id IN ({})",
                placeholders.join(", ")
            );
            let mut query = sqlx::query(sqlx::AssertSqlSafe(sql));
            for id in ids {
                query = query.bind(id);
            }
            let rows = query.fetch_all(&self.pool).await?;
            let mut found: Vec<TargetInstance> = rows.iter().map(instance_from_row).collect::<Result<_>>()?;
            found.sort_by_key(|instance| ids.iter().position(|id| *id == instance.id));
            Ok(found)
        })
        .await
    }

    /// The tenant's instances that are not deleted in `pool` and `region`, on `subnet` (or, for
    /// `None`, on no tenant network), oldest first.
    pub async fn load_balancer_pool_instances(
        &self,
        tenant: &str,
        pool: &str,
        region: &str,
        subnet: Option<&str>,
    ) -> Result<Vec<TargetInstance>> {
        crate::measured::store("load_balancer_pool_instances", async {
            let sql = format!(
                "SELECT {INSTANCE_COLUMNS} FROM instances WHERE tenant_id = $1 AND pool_id = $2 AND region = $3 \
                 AND deleted_at IS NULL AND (($4 IS NULL AND subnet_id IS NULL) OR subnet_id = $4) \
                 ORDER BY created_at, id"
            );
            let rows = sqlx::query(sqlx::AssertSqlSafe(sql))
                .bind(tenant)
                .bind(pool)
                .bind(region)
                .bind(subnet)
                .fetch_all(&self.pool)
                .await?;
            rows.iter().map(instance_from_row).collect()
        })
        .await
    }

    /// A subnet that is not deleted, with its network's account; `None` otherwise.
    pub async fn load_balancer_subnet(&self, id: &str) -> Result<Option<TargetSubnet>> {
        crate::measured::store("load_balancer_subnet", async {
            let row = sqlx::query(
                "SELECT s.id, s.tenant_id, n.account_id, s.region, s.state, s.provider_id FROM subnets s \
                 JOIN networks n ON n.id = s.network_id WHERE s.id = $1 AND s.deleted_at IS NULL",
            )
            .bind(id)
            .fetch_optional(&self.pool)
            .await?;
            row.map(|row| {
                Ok(read_columns!(row, TargetSubnet { id, tenant_id, account_id, region, state, provider_id }))
            })
            .transpose()
        })
        .await
    }

    /// A certificate that is not deleted; `None` otherwise.
    pub async fn load_balancer_certificate(&self, id: &str) -> Result<Option<TargetCertificate>> {
        crate::measured::store("load_balancer_certificate", async {
            let row = sqlx::query(
                "SELECT id, tenant_id, account_id, state, provider_id FROM certificates \
                 WHERE id = $1 AND deleted_at IS NULL",
            )
            .bind(id)
            .fetch_optional(&self.pool)
            .await?;
            row.map(|row| Ok(read_columns!(row, TargetCertificate { id, tenant_id, account_id, state, provider_id })))
                .transpose()
        })
        .await
    }
}
