//! `bettercompute.compute.v1.JoinTokens`: a token's view (its state read at the time of the
//! call), and the create, whose answer alone carries the bearer form.

use tonic::{Request, Response, Status};

use super::handlers::thin_service;
use super::{context, timestamp};
use crate::proto::compute::{
    CreateJoinTokenRequest, GetJoinTokenRequest, JoinToken, JoinTokenUse, ListJoinTokensRequest,
    ListJoinTokensResponse, NodeTaint, RevokeJoinTokenRequest, join_tokens_server,
};
use crate::store::{JoinTokenRow, now_micros};

/// What a retried create says in place of the bearer form.
const SHOWN_ONCE: &str = "this token was made by an earlier call with this idempotencyKey, whose answer carried its \
                          bearer form; it is never shown again (make a new token if it was lost)";

fn join_token_view(row: JoinTokenRow) -> JoinToken {
    JoinToken {
        state: row.state_at(now_micros()).as_str().to_owned(),
        id: row.id,
        pool_id: row.pool_id,
        description: row.description,
        max_uses: row.max_uses as i32,
        uses: row.uses as i32,
        expires_at: Some(timestamp(row.expires_at)),
        labels: row.labels.into_iter().collect(),
        taints: row.taints.into_iter().map(|(key, value, effect)| NodeTaint { key, value, effect }).collect(),
        created_by: row.created_by,
        created_at: Some(timestamp(row.created_at)),
        revoked_at: row.revoked_at.map(timestamp),
        last_used_at: row.last_used_at.map(timestamp),
        joins: row
            .joins
            .into_iter()
            .map(|join| JoinTokenUse {
                node_id: join.node_id,
                used_at: Some(timestamp(join.used_at)),
                address: join.address,
            })
            .collect(),
        token: String::new(),
        token_notice: String::new(),
    }
}

thin_service! {
    impl join_tokens_server::JoinTokens: JoinToken by join_token_view;
    get(GetJoinTokenRequest) join_token_get, revoke(RevokeJoinTokenRequest) join_token_revoke;
    list(ListJoinTokensRequest) join_token_list -> ListJoinTokensResponse { join_tokens };
    and {
        async fn create(&self, request: Request<CreateJoinTokenRequest>) -> Result<Response<JoinToken>, Status> {
            let ctx = context(&request)?;
            let issued = self.service.join_token_create(&ctx, request.into_inner()).await?;
            let mut view = join_token_view(issued.token);
            match issued.bearer {
                Some(bearer) => view.token = bearer,
                None => view.token_notice = SHOWN_ONCE.to_owned(),
            }
            Ok(Response::new(view))
        }
    }
}
