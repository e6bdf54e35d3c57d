//! Join tokens in the store: the token (only the SHA-256 of its secret), its uses, and its
//! events on the pool's subject. A token's state is read from its row at a time, never stored.

use std::collections::BTreeMap;

use sqlx::Row;
use sqlx::any::AnyRow;

use super::catalog::value_from_json;
use super::record::{Announced, Record, pool_event};
use super::resource::AnyQuery;
use super::{NewEvent, Store};
use crate::error::{Error, Result};

/// A join token as stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JoinTokenRow {
    /// `jt_...`, derived from the pool, the caller and the idempotency key.
    pub id: String,
    /// The pool its nodes join.
    pub pool_id: String,
    /// The tenant whose account the pool is on; `None` for a platform pool.
    pub tenant_id: Option<String>,
    /// Free text.
    pub description: String,
    /// How many nodes may join with it.
    pub max_uses: i64,
    /// How many joined.
    pub uses: i64,
    /// When it stops being accepted (µs).
    pub expires_at: i64,
    /// Labels every node joining with it gets.
    pub labels: BTreeMap<String, String>,
    /// Taints every node joining with it gets: key, value, effect.
    pub taints: Vec<(String, String, String)>,
    /// The SHA-256 of the secret, hex.
    pub secret_sha256: String,
    /// The principal that made it.
    pub created_by: String,
    /// The create's idempotency key.
    pub idempotency_key: String,
    /// The digest of the create request.
    pub request_digest: String,
    /// When it was made.
    pub created_at: i64,
    /// When it was revoked.
    pub revoked_at: Option<i64>,
    /// When a node last joined with it.
    pub last_used_at: Option<i64>,
    /// Each join made with it, oldest first (filled by fetch, empty in lists).
    pub joins: Vec<JoinTokenUseRow>,
    /// The one machine id that may join with it (a bare-metal deploy's token), which then joins
    /// the node recorded for that id; `None` for any machine of the pool.
    pub machine_id: Option<String>,
}

/// One join made with a token.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JoinTokenUseRow {
    /// The node that joined.
    pub node_id: String,
    /// When.
    pub used_at: i64,
    /// The caller's address.
    pub address: String,
}

/// Whether a join token is accepted, read from its row at a time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JoinTokenState {
    /// Accepted.
    Active,
    /// Past its expiry.
    Expired,
    /// Used as many times as it may be.
    Exhausted,
    /// Revoked.
    Revoked,
}

impl JoinTokenState {
    /// The state as the API writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            JoinTokenState::Active => "active",
            JoinTokenState::Expired => "expired",
            JoinTokenState::Exhausted => "exhausted",
            JoinTokenState::Revoked => "revoked",
        }
    }
}

impl JoinTokenRow {
    /// Its state at `now`: revoked first, then exhausted, then expired (the reason a join is
    /// refused names the first that holds).
    pub fn state_at(&self, now: i64) -> JoinTokenState {
        if self.revoked_at.is_some() {
            JoinTokenState::Revoked
        } else if self.uses >= self.max_uses {
            JoinTokenState::Exhausted
        } else if now >= self.expires_at {
            JoinTokenState::Expired
        } else {
            JoinTokenState::Active
        }
    }
}

/// A token's columns, as its row is read and as it is inserted.
macro_rules! columns {
    () => {
        "id, pool_id, tenant_id, description, max_uses, uses, expires_at, labels, taints, secret_sha256, created_by, \
         idempotency_key, request_digest, created_at, revoked_at, last_used_at, machine_id"
    };
}

impl Record for JoinTokenRow {
    const SELECT: &'static str = concat!("SELECT ", columns!(), " FROM join_tokens");
    const NOUN: &'static str = "joinToken";

    /// Without its joins, which only [`Store::join_token_fetch`] reads.
    fn from_row(row: &AnyRow) -> Result<JoinTokenRow> {
        Ok(read_columns!(row, JoinTokenRow {
            id, pool_id, tenant_id, description, max_uses, uses, expires_at, secret_sha256, created_by,
            idempotency_key, request_digest, created_at, revoked_at, last_used_at, machine_id;
            labels: value_from_json(&row.try_get::<String, _>("labels")?)?,
            taints: value_from_json(&row.try_get::<String, _>("taints")?)?,
            joins: Vec::new(),
        }))
    }
}

impl Announced for JoinTokenRow {
    const TABLE: &'static str = "join_tokens";

    /// Tokens are revoked, never deleted.
    fn deleted_at(&self) -> Option<i64> {
        None
    }

    /// `compute.joinToken.<change>` on the pool's subject, at the token's last change (its
    /// revocation, else its last use, else its making: a revoked token is used no more). It names
    /// the token, never its secret.
    fn event(&self, change: &str) -> NewEvent {
        let time = self.revoked_at.or(self.last_used_at).unwrap_or(self.created_at);
        let data = serde_json::json!({
            "joinTokenId": self.id, "poolId": self.pool_id, "description": self.description,
            "maxUses": self.max_uses, "uses": self.uses, "expiresAt": self.expires_at,
            "state": self.state_at(time).as_str(), "createdBy": self.created_by,
        });
        let tenant = self.tenant_id.as_deref();
        pool_event("/compute/joinTokens", "compute.joinToken", change, &self.pool_id, tenant, time, data)
    }
}

impl Store {
    /// Records a new token and its `created` event, in one transaction. A token with the same id
    /// (the same key, racing) makes this a `CONFLICT` that the create turns into its answer.
    pub async fn join_token_create(&self, token: &JoinTokenRow) -> Result<JoinTokenRow> {
        crate::measured::store("join_token_create", async {
            let mut txn = self.begin_write().await?;
            let created = self.join_token_insert_in(&mut txn, token).await?;
            self.commit_and_signal(txn).await?;
            Ok(created)
        })
        .await
    }

    /// Inserts a token and appends its `created` event in the caller's transaction.
    pub(super) async fn join_token_insert_in(
        &self,
        txn: &mut sqlx::Transaction<'static, sqlx::Any>,
        token: &JoinTokenRow,
    ) -> Result<JoinTokenRow> {
        let inserted = sqlx::query(concat!(
            "INSERT INTO join_tokens (",
            columns!(),
            ") VALUES ($1, $2, $3, $4, $5, 0, $6, $7, $8, $9, $10, $11, $12, $13, NULL, NULL, $14)"
        ))
        .bind(&token.id)
        .bind(&token.pool_id)
        .bind(&token.tenant_id)
        .bind(&token.description)
        .bind(token.max_uses)
        .bind(token.expires_at)
        .bind(serde_json::to_string(&token.labels).expect("labels serialize"))
        .bind(serde_json::to_string(&token.taints).expect("taints serialize"))
        .bind(&token.secret_sha256)
        .bind(&token.created_by)
        .bind(&token.idempotency_key)
        .bind(&token.request_digest)
        .bind(token.created_at)
        .bind(&token.machine_id)
        .execute(&mut **txn)
        .await;
        super::conflict_on_unique(inserted, || {
            Error::conflict(format!("join token {:?} was made by another call", token.id))
        })?;
        self.record_changed_in(txn, &token.id, "created").await
    }

    /// One token with its joins, whatever its pool: callers check.
    pub async fn join_token_fetch(&self, id: &str) -> Result<Option<JoinTokenRow>> {
        crate::measured::store("join_token_fetch", async {
            let Some(mut token): Option<JoinTokenRow> = self.record_find(id).await? else { return Ok(None) };
            let uses = sqlx::query(
                "SELECT node_id, used_at, address FROM join_token_uses WHERE token_id = $1 ORDER BY used_at, node_id",
            )
            .bind(id)
            .fetch_all(&self.pool)
            .await?;
            token.joins = uses
                .iter()
                .map(|row| Ok(read_columns!(row, JoinTokenUseRow { node_id, used_at, address })))
                .collect::<Result<_>>()?;
            Ok(Some(token))
        })
        .await
    }

    /// The pool's tokens, newest first, at most `limit` (their joins not filled in).
    pub async fn join_token_list(&self, pool_id: &str, limit: i64) -> Result<Vec<JoinTokenRow>> {
        let bind = |q: AnyQuery<'static>| q.bind(pool_id.to_owned()).bind(limit);
        let listed = self.record_list("pool_id = $1", "created_at DESC, id LIMIT $2", bind);
        crate::measured::store("join_token_list", listed).await
    }

    /// Revokes a token at `now` and appends its `revoked` event; one already revoked or expired
    /// is returned as it is.
    pub async fn join_token_revoke(&self, id: &str, now: i64) -> Result<JoinTokenRow> {
        crate::measured::store("join_token_revoke", async {
            let mut txn = self.begin_write().await?;
            // Not a token that expired in the meantime: it keeps the state that says why it
            // refuses joins.
            let updated = sqlx::query(
                "UPDATE join_tokens SET revoked_at = $2 WHERE id = $1 AND revoked_at IS NULL AND expires_at > $2",
            )
            .bind(id)
            .bind(now)
            .execute(&mut *txn)
            .await?;
            if updated.rows_affected() == 0 {
                return self.record_fetch_in(&mut txn, id).await;
            }
            let token = self.record_changed_in(&mut txn, id, "revoked").await?;
            self.commit_and_signal(txn).await?;
            Ok(token)
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn token(max_uses: i64, uses: i64, revoked_at: Option<i64>) -> JoinTokenRow {
        JoinTokenRow {
            id: "jt_0000000000000000000000000a".into(),
            pool_id: "pool_0000000000000000000000000a".into(),
            tenant_id: None,
            description: String::new(),
            max_uses,
            uses,
            expires_at: 1_000,
            labels: BTreeMap::new(),
            taints: Vec::new(),
            secret_sha256: "ab".into(),
            created_by: "prn_x".into(),
            idempotency_key: "k".into(),
            request_digest: "d".into(),
            created_at: 0,
            revoked_at,
            last_used_at: None,
            joins: Vec::new(),
            machine_id: None,
        }
    }

    #[test]
    fn a_tokens_state_names_the_first_reason_it_is_refused() {
        assert_eq!(token(2, 1, None).state_at(999), JoinTokenState::Active);
        assert_eq!(token(2, 1, None).state_at(1_000), JoinTokenState::Expired, "expiry is exclusive");
        assert_eq!(token(2, 2, None).state_at(1_000), JoinTokenState::Exhausted);
        assert_eq!(token(2, 2, Some(5)).state_at(1_000), JoinTokenState::Revoked);
    }

    #[test]
    fn an_event_never_carries_the_secret_digest() {
        let event = token(1, 0, None).event("created");
        assert_eq!(event.event_type, "compute.joinToken.created");
        assert_eq!(event.subject, "pool_0000000000000000000000000a");
        assert_eq!(event.tenant_id, "platform");
        assert!(!event.data.to_string().contains("secret") && !event.data.to_string().contains("\"ab\""));
    }
}
