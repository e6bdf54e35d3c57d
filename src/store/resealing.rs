//! The sealed columns, for the re-seal: which values a key other than the sealing one sealed,
//! and the compare-and-set that writes one back sealed again, so that a value changed since it
//! was read (new credentials) is never overwritten.

use sqlx::AssertSqlSafe;

use super::Store;
use crate::error::Result;

/// A column of sealed values, each sealed to its row's id.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SealedColumn {
    /// The table.
    pub table: &'static str,
    /// The column of sealed values ('' where a row has none).
    pub column: &'static str,
    /// The row's id: what each value is sealed to.
    pub row_id: &'static str,
}

impl SealedColumn {
    /// `table.column`, as logs and metrics name it.
    pub fn name(&self) -> String {
        format!("{}.{}", self.table, self.column)
    }
}

/// Every column that holds sealed values.
pub const SEALED_COLUMNS: &[SealedColumn] = &[
    SealedColumn { table: "provider_accounts", column: "credentials", row_id: "id" },
    SealedColumn { table: "certificates", column: "private_key_encrypted", row_id: "id" },
    SealedColumn { table: "metal_machines", column: "password_sealed", row_id: "node_id" },
    SealedColumn { table: "metal_machines", column: "deploy_token_sealed", row_id: "node_id" },
    SealedColumn { table: "kubernetes_substrates", column: "join_token_sealed", row_id: "pool_id" },
];

/// A sealed value and the id of its row.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SealedValue {
    /// The row's id, which the value is sealed to.
    pub row_id: String,
    /// The value as stored.
    pub sealed: String,
}

/// The `LIKE` pattern of the values key `key_id` sealed (a key id is hex: no wildcard in it).
fn sealed_with(key_id: &str) -> String {
    format!("{key_id}:%")
}

impl Store {
    /// Up to `limit` values of `column` that do not name key `key_id` as their sealer (those
    /// sealed before keys had ids included), of rows whose id sorts after `after`, by id: of
    /// every row, deleted ones too, since a value kept is a value some key must open.
    pub async fn sealed_values_not_sealed_with(
        &self,
        column: &SealedColumn,
        key_id: &str,
        after: &str,
        limit: i64,
    ) -> Result<Vec<SealedValue>> {
        crate::measured::store("sealed_values_not_sealed_with", async {
            let SealedColumn { table, column: name, row_id } = column;
            let sql = format!(
                "SELECT {row_id}, {name} FROM {table} WHERE {name} <> '' AND {name} NOT LIKE $1 AND {row_id} > $2 \
                 ORDER BY {row_id} LIMIT $3"
            );
            let rows: Vec<(String, String)> = sqlx::query_as(AssertSqlSafe(sql))
                .bind(sealed_with(key_id))
                .bind(after)
                .bind(limit)
                .fetch_all(&self.pool)
                .await?;
            Ok(rows.into_iter().map(|(row_id, sealed)| SealedValue { row_id, sealed }).collect())
        })
        .await
    }

    /// Writes `resealed` over the value of row `row_id` in `column` if it still is `sealed`:
    /// `false` when it changed since it was read (the newer value stays).
    pub async fn sealed_value_replace(
        &self,
        column: &SealedColumn,
        row_id: &str,
        sealed: &str,
        resealed: &str,
    ) -> Result<bool> {
        crate::measured::store("sealed_value_replace", async {
            let SealedColumn { table, column: name, row_id: id } = column;
            let sql = format!("UPDATE {table} SET {name} = $3 WHERE {id} = $1 AND {name} = $2");
            let replaced =
                sqlx::query(AssertSqlSafe(sql)).bind(row_id).bind(sealed).bind(resealed).execute(&self.pool).await?;
            Ok(replaced.rows_affected() == 1)
        })
        .await
    }
}
