//! What authorization reads and writes in the store: each resource's authorization row, and
//! the audit trail of decisions on mutations.

use sqlx::Row;
use sqlx::any::AnyRow;

use super::Store;
use crate::error::Result;

/// What authorization knows of one resource.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AuthzResourceRow {
    /// The resource type: `compute-kubernetes-cluster`.
    pub resource_type: String,
    /// The resource's id.
    pub resource_id: String,
    /// Its tenant.
    pub tenant_id: Option<String>,
    /// Its project.
    pub project_id: Option<String>,
    /// The principal that created it.
    pub owner_id: Option<String>,
    /// The attributes the reference page lists for the type.
    pub attributes: serde_json::Map<String, serde_json::Value>,
    /// Creation time.
    pub created_at: i64,
}

/// The query of authorization rows, with its `WHERE` clause.
macro_rules! authz_resource_select {
    ($where:literal) => {
        concat!(
            "SELECT resource_type, resource_id, tenant_id, project_id, owner_id, attributes, created_at \
             FROM authz_resources ",
            $where
        )
    };
}

fn authz_resource_row(row: &AnyRow) -> Result<AuthzResourceRow> {
    let attributes: String = row.try_get("attributes")?;
    Ok(read_columns!(row, AuthzResourceRow {
        resource_type, resource_id, tenant_id, project_id, owner_id, created_at;
        attributes: serde_json::from_str(&attributes).unwrap_or_default(),
    }))
}

/// One decision on a mutation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AuditRow {
    /// Position in the trail (assigned on insert).
    pub seq: i64,
    /// When it was decided.
    pub time: i64,
    /// Who called.
    pub principal_id: String,
    /// The method.
    pub method: String,
    /// The permission.
    pub permission: String,
    /// The resource type.
    pub resource_type: String,
    /// The resource id.
    pub resource_id: String,
    /// The tenant the row is filed under, or empty: the resource's, except for a refusal of a
    /// tenant principal naming another tenant, filed under the caller's own.
    pub tenant_id: String,
    /// For such a refusal, the tenant the call named; else empty.
    pub requested_tenant_id: String,
    /// `allow` or `deny`.
    pub decision: String,
    /// The deciding policies.
    pub policies: Vec<String>,
    /// The call's request id.
    pub request_id: String,
    /// How the call ended (`OK` or its error code), once its answer was sent; else empty.
    pub outcome: String,
    /// The caller's name, as the principal's row has it when the trail is read (not written).
    pub principal_name: String,
}

/// What `audit_list` keeps.
#[derive(Clone, Debug, Default)]
pub struct AuditFilter {
    /// Only this tenant's.
    pub tenant_id: Option<String>,
    /// Only this principal's.
    pub principal_id: Option<String>,
    /// Only this resource's.
    pub resource_id: Option<String>,
    /// At or after.
    pub since: Option<i64>,
    /// Before.
    pub until: Option<i64>,
    /// At most this many.
    pub limit: i64,
}

/// The most characters of one text an audit row keeps: ids and tenants are checked to be far
/// shorter before a decision; this bounds what a caller could slip through any other field.
pub const AUDIT_TEXT_CHARS: usize = 256;

/// The most policies an audit row names.
const AUDIT_POLICIES: usize = 32;

/// `text` as an audit row keeps it: NUL (which Postgres refuses in text) replaced with U+FFFD,
/// and at most [`AUDIT_TEXT_CHARS`] characters, a cut one ending in `…`.
pub fn audit_text(text: &str) -> String {
    let mut kept: String =
        text.chars().take(AUDIT_TEXT_CHARS).map(|c| if c == '\0' { '\u{fffd}' } else { c }).collect();
    if text.chars().nth(AUDIT_TEXT_CHARS).is_some() {
        kept.pop();
        kept.push('…');
    }
    kept
}

impl Store {
    /// Writes a resource's authorization row inside the resource's own transaction.
    pub async fn authz_resource_insert_in(&self, txn: &mut sqlx::AnyConnection, row: &AuthzResourceRow) -> Result<()> {
        crate::measured::store("authz_resource_insert_in", async {
            sqlx::query(
                "INSERT INTO authz_resources (resource_type, resource_id, tenant_id, project_id, owner_id, attributes, \
                 created_at) VALUES ($1, $2, $3, $4, $5, $6, $7)",
            )
            .bind(&row.resource_type)
            .bind(&row.resource_id)
            .bind(&row.tenant_id)
            .bind(&row.project_id)
            .bind(&row.owner_id)
            .bind(serde_json::Value::Object(row.attributes.clone()).to_string())
            .bind(row.created_at)
            .execute(&mut *txn)
            .await?;
            Ok(())
        })
        .await
    }

    /// Removes a resource's authorization row inside the transaction that removes the resource.
    pub async fn authz_resource_delete_in(
        &self,
        txn: &mut sqlx::AnyConnection,
        resource_type: &str,
        id: &str,
    ) -> Result<()> {
        crate::measured::store("authz_resource_delete_in", async {
            sqlx::query("DELETE FROM authz_resources WHERE resource_type = $1 AND resource_id = $2")
                .bind(resource_type)
                .bind(id)
                .execute(&mut *txn)
                .await?;
            Ok(())
        })
        .await
    }

    /// A resource's authorization row.
    pub async fn authz_resource_fetch(&self, resource_type: &str, id: &str) -> Result<Option<AuthzResourceRow>> {
        crate::measured::store("authz_resource_fetch", async {
            let row = sqlx::query(authz_resource_select!("WHERE resource_type = $1 AND resource_id = $2"))
                .bind(resource_type)
                .bind(id)
                .fetch_optional(&self.pool)
                .await?;
            row.as_ref().map(authz_resource_row).transpose()
        })
        .await
    }

    /// The authentication generation (see [`Store::auth_generation`]) and the authorization row
    /// of the resource `id` of `resource_type`, if it has one, read in one statement: a call
    /// confirms its cached caller and learns what its decision needs in one round trip.
    pub async fn authz_resource_fetch_at_generation(
        &self,
        resource_type: &str,
        id: &str,
    ) -> Result<(i64, Option<AuthzResourceRow>)> {
        crate::measured::store("authz_resource_fetch_at_generation", async {
            let row = sqlx::query(
                "SELECT g.generation, a.resource_type, a.resource_id, a.tenant_id, a.project_id, a.owner_id, \
                        a.attributes, a.created_at \
                 FROM auth_generation g LEFT JOIN authz_resources a ON a.resource_type = $1 AND a.resource_id = $2 \
                 WHERE g.id = 1",
            )
            .bind(resource_type)
            .bind(id)
            .fetch_one(&self.pool)
            .await?;
            let generation: i64 = row.try_get("generation")?;
            let found = match row.try_get::<Option<String>, _>("resource_id")? {
                Some(_) => Some(authz_resource_row(&row)?),
                None => None,
            };
            Ok((generation, found))
        })
        .await
    }

    /// The authorization row of the resource `id`, whatever its type (ids are unique across
    /// types: each type has its own prefix).
    pub async fn authz_resource_find(&self, id: &str) -> Result<Option<AuthzResourceRow>> {
        crate::measured::store("authz_resource_find", async {
            let row = sqlx::query(authz_resource_select!("WHERE resource_id = $1 LIMIT 1"))
                .bind(id)
                .fetch_optional(&self.pool)
                .await?;
            row.as_ref().map(authz_resource_row).transpose()
        })
        .await
    }

    /// The authorization rows of `tenant`'s resources of one type with the ids `ids` (a list's
    /// items): a page reads its own rows, however many the tenant has.
    pub async fn authz_resource_list(
        &self,
        resource_type: &str,
        tenant: &str,
        ids: &[&str],
    ) -> Result<Vec<AuthzResourceRow>> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        crate::measured::store("authz_resource_list", async {
            let listed: Vec<String> = (0..ids.len()).map(|i| format!("${}", i + 3)).collect();
            let sql = format!(
                "{} AND resource_id IN ({})",
                authz_resource_select!("WHERE resource_type = $1 AND tenant_id = $2"),
                listed.join(", ")
            );
            let mut query = sqlx::query(sqlx::AssertSqlSafe(sql)).bind(resource_type).bind(tenant);
            for id in ids {
                query = query.bind(*id);
            }
            let rows = query.fetch_all(&self.pool).await?;
            rows.iter().map(authz_resource_row).collect()
        })
        .await
    }

    /// Appends a decision to the audit trail. Every text is bounded and NUL-free
    /// ([`audit_text`]): a refusal writes a row of a few hundred bytes whatever the caller sent,
    /// and Postgres (which refuses NUL in text) never turns a refusal into an internal error.
    pub async fn audit_append(&self, row: &AuditRow) -> Result<()> {
        if self.rehearsal {
            // A rehearsed call changes nothing, so there is no change to audit.
            return Ok(());
        }
        crate::measured::store("audit_append", async {
            let policies: Vec<String> = row.policies.iter().take(AUDIT_POLICIES).map(|p| audit_text(p)).collect();
            sqlx::query(
                "INSERT INTO audit_events (time, principal_id, method, permission, resource_type, resource_id, \
                 tenant_id, requested_tenant_id, decision, policies, request_id) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)",
            )
            .bind(row.time)
            .bind(audit_text(&row.principal_id))
            .bind(audit_text(&row.method))
            .bind(audit_text(&row.permission))
            .bind(audit_text(&row.resource_type))
            .bind(audit_text(&row.resource_id))
            .bind(audit_text(&row.tenant_id))
            .bind(audit_text(&row.requested_tenant_id))
            .bind(audit_text(&row.decision))
            .bind(serde_json::to_string(&policies).expect("strings serialize"))
            .bind(audit_text(&row.request_id))
            .execute(&self.pool)
            .await?;
            Ok(())
        })
        .await
    }

    /// Records how the call of `request_id` ended on its decisions (a call may decide more than
    /// once: a load balancer's named instances), once: a row already settled keeps its outcome.
    pub async fn audit_settle(&self, request_id: &str, outcome: &str) -> Result<()> {
        if self.rehearsal {
            return Ok(());
        }
        crate::measured::store("audit_settle", async {
            sqlx::query("UPDATE audit_events SET outcome = $1 WHERE request_id = $2 AND outcome = ''")
                .bind(audit_text(outcome))
                .bind(audit_text(request_id))
                .execute(&self.pool)
                .await?;
            Ok(())
        })
        .await
    }

    /// Decisions matching `filter`, newest first, each with its caller's name.
    pub async fn audit_list(&self, filter: &AuditFilter) -> Result<Vec<AuditRow>> {
        crate::measured::store("audit_list", async {
            let rows = sqlx::query(
                "SELECT a.seq, a.time, a.principal_id, a.method, a.permission, a.resource_type, a.resource_id, \
                        a.tenant_id, a.requested_tenant_id, a.decision, a.policies, a.request_id, a.outcome, \
                        COALESCE(p.name, '') AS principal_name \
                 FROM audit_events a LEFT JOIN principals p ON p.id = a.principal_id \
                 WHERE ($1 IS NULL OR a.tenant_id = $1) AND ($2 IS NULL OR a.principal_id = $2) \
                   AND ($3 IS NULL OR a.resource_id = $3) AND ($4 IS NULL OR a.time >= $4) \
                   AND ($5 IS NULL OR a.time < $5) \
                 ORDER BY a.seq DESC LIMIT $6",
            )
            .bind(&filter.tenant_id)
            .bind(&filter.principal_id)
            .bind(&filter.resource_id)
            .bind(filter.since)
            .bind(filter.until)
            .bind(filter.limit)
            .fetch_all(&self.pool)
            .await?;
            rows.iter().map(audit_from_row).collect()
        })
        .await
    }
}

fn audit_from_row(row: &AnyRow) -> Result<AuditRow> {
    let policies: String = row.try_get("policies")?;
    Ok(read_columns!(row, AuditRow {
        seq, time, principal_id, method, permission, resource_type, resource_id, tenant_id, requested_tenant_id,
        decision, request_id, outcome, principal_name;
        policies: serde_json::from_str(&policies).unwrap_or_default(),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn audited_text_is_bounded_and_nul_free() {
        assert_eq!(audit_text("acme"), "acme");
        assert_eq!(audit_text("ac\0me"), "ac\u{fffd}me");
        let huge = "x".repeat(4_000_000);
        let kept = audit_text(&huge);
        assert_eq!(kept.chars().count(), AUDIT_TEXT_CHARS);
        assert!(kept.ends_with('…'));
        assert_eq!(
            audit_text(&"é".repeat(AUDIT_TEXT_CHARS)),
            "é".repeat(AUDIT_TEXT_CHARS),
            "exactly the bound is kept"
        );
    }
}
