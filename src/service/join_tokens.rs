//! Join tokens: the rules of create, list, get and revoke. A token belongs to one pool; its
//! bearer form is made here, shown once by the create that made it, and only the SHA-256 of its
//! secret reaches the store. Nothing here logs more of a token than its id.

use super::create_once::CreateKey;
use super::request_digest::{self, RequestDigest};
use super::vps::LIST_LIMIT;
use super::{Context, Service};
use crate::bearer::Bearer;
use crate::error::{Error, FieldViolation, Result};
use crate::ids::JoinTokenId;
use crate::proto::compute::{
    CreateJoinTokenRequest, GetJoinTokenRequest, ListJoinTokensRequest, RevokeJoinTokenRequest,
};
use crate::store::{JoinTokenRow, JoinTokenState, PoolRow, now_micros};

/// How many nodes a token lets join when the request does not say.
const DEFAULT_MAX_USES: i64 = 1;
/// How long a token is accepted when the request does not say: a day.
const DEFAULT_TTL_SECONDS: i64 = 86_400;
/// The shortest life a token may be given: ten minutes.
const MIN_TTL_SECONDS: i64 = 600;

/// The answer to a create: the token, and its bearer form when this call made it.
#[derive(Debug)]
pub struct IssuedJoinToken {
    /// The token.
    pub token: JoinTokenRow,
    /// `bcjt_<id>.<secret>`: only for the call that made the token.
    pub bearer: Option<String>,
}

impl Service {
    /// The pool a token is made on: `NOT_FOUND` for an unknown or deleted pool, `INVALID_STATE`
    /// for an archived one (it takes nothing new).
    async fn join_token_pool(&self, pool_id: &str) -> Result<PoolRow> {
        self.pool_taking_new(pool_id, "no node may join it").await
    }

    /// Token `id` of pool `pool_id`; `NOT_FOUND` for one of another pool.
    async fn join_token_of_pool(&self, pool_id: &str, id: &str) -> Result<JoinTokenRow> {
        match self.store.join_token_fetch(id).await? {
            Some(token) if token.pool_id == pool_id => Ok(token),
            _ => Err(Error::not_found("joinToken", id)),
        }
    }

    /// Makes a token, or answers a retry of the create that made it (without its bearer form).
    pub async fn join_token_create(&self, ctx: &Context, request: CreateJoinTokenRequest) -> Result<IssuedJoinToken> {
        let id = JoinTokenId::derived(&request.pool_id, &ctx.caller.principal_id, &request.idempotency_key);
        let digest = RequestDigest {
            current: request_digest::of("bettercompute.compute.v1.CreateJoinTokenRequest", &request),
            legacy: None,
        };
        let key = CreateKey { what: "join token", id_field: "joinTokenId", id: id.as_str(), digest: &digest };
        let fetch = || async {
            Ok(self.store.join_token_fetch(id.as_str()).await?.map(|token| IssuedJoinToken { token, bearer: None }))
        };
        let create = self.join_token_create_new(ctx, &request, id.clone(), &digest.current);
        self.create_once(ctx, key, fetch, create).await
    }

    /// The checks and the insert of a token no earlier call with its key made.
    async fn join_token_create_new(
        &self,
        ctx: &Context,
        request: &CreateJoinTokenRequest,
        id: JoinTokenId,
        digest: &str,
    ) -> Result<(IssuedJoinToken, bool)> {
        let max_uses = match i64::from(request.max_uses) {
            0 => DEFAULT_MAX_USES,
            n => n,
        };
        let ttl = match request.ttl_seconds {
            0 => DEFAULT_TTL_SECONDS,
            n if n < MIN_TTL_SECONDS => {
                return Err(Error::fields(vec![FieldViolation::new(
                    "ttlSeconds",
                    format!("must be 600 (10 minutes) to 2592000 (30 days), or left out for a day; got {n}"),
                )]));
            }
            n => n,
        };
        let pool = self.join_token_pool(&request.pool_id).await?;
        let bearer = Bearer::for_id(id);
        let now = now_micros();
        let token = JoinTokenRow {
            id: bearer.id.to_string(),
            pool_id: pool.id,
            tenant_id: pool.tenant_id,
            description: request.description.clone(),
            max_uses,
            uses: 0,
            expires_at: now + ttl * 1_000_000,
            labels: request.labels.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
            taints: request.taints.iter().map(|t| (t.key.clone(), t.value.clone(), t.effect.clone())).collect(),
            secret_sha256: bearer.secret_sha256(),
            created_by: ctx.caller.principal_id.clone(),
            idempotency_key: request.idempotency_key.clone(),
            request_digest: digest.to_owned(),
            created_at: now,
            revoked_at: None,
            last_used_at: None,
            joins: Vec::new(),
            machine_id: None,
        };
        let token = self.store.join_token_create(&token).await?;
        Ok((IssuedJoinToken { token, bearer: Some(bearer.reveal()) }, true))
    }

    /// The pool's tokens, newest first, in every state.
    pub async fn join_token_list(&self, _ctx: &Context, request: ListJoinTokensRequest) -> Result<Vec<JoinTokenRow>> {
        let pool = self.store.pool_fetch(&request.pool_id).await?;
        self.store.join_token_list(&pool.id, LIST_LIMIT).await
    }

    /// One token of the pool, with its joins.
    pub async fn join_token_get(&self, _ctx: &Context, request: GetJoinTokenRequest) -> Result<JoinTokenRow> {
        self.join_token_of_pool(&request.pool_id, &request.join_token_id).await
    }

    /// Revokes a token of the pool. A revoked one is returned as it is, and so is an expired one:
    /// it already refuses every join, and `expired` says why (an exhausted token is revoked, so
    /// that a raised limit could not bring it back).
    pub async fn join_token_revoke(&self, ctx: &Context, request: RevokeJoinTokenRequest) -> Result<JoinTokenRow> {
        let token = self.join_token_of_pool(&request.pool_id, &request.join_token_id).await?;
        let now = now_micros();
        if matches!(token.state_at(now), JoinTokenState::Revoked | JoinTokenState::Expired) {
            return Ok(token);
        }
        let mut revoked = self.store.join_token_revoke(&token.id, now).await?;
        tracing::info!(join_token = %revoked.id, pool = %revoked.pool_id, by = %ctx.caller.principal_id, "join token revoked");
        revoked.joins = token.joins;
        Ok(revoked)
    }
}
