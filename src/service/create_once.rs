//! One idempotent create, the same for every resource: the object the idempotency key names is
//! looked up first, before any check, so that a retry of a request that was carried out returns
//! its object whatever changed since (a budget reached, an offer suspended); then the checks and
//! the insert; and an insert that hits a unique constraint looks the key up again before it is
//! called a name conflict, so that two creates racing with one key answer one object (or a
//! `CONFLICT` saying the key was reused), on any store.

use std::ops::Deref;

use super::join_tokens::IssuedJoinToken;
use super::request_digest::{self, RequestDigest};
use super::resource_calls::CreateRequest;
use super::{Context, Service};
use crate::domain::states::LifecycleState;
use crate::error::{Code, Error, Result};
use crate::store::{ConvergedRow, NodePoolRow, ResourceMeta};

/// An object a create makes, which keeps the digest of the request that made it.
pub trait Created {
    /// The stored digest of the request that made it.
    fn stored_digest(&self) -> &str;
}

/// Every asynchronous resource keeps it in its common fields.
impl<R: Deref<Target = ResourceMeta<S>>, S: LifecycleState> Created for R {
    fn stored_digest(&self) -> &str {
        &self.request_digest
    }
}

impl Created for NodePoolRow {
    fn stored_digest(&self) -> &str {
        &self.request_digest
    }
}

impl Created for IssuedJoinToken {
    fn stored_digest(&self) -> &str {
        &self.token.request_digest
    }
}

/// What a create names its object by.
#[derive(Clone, Copy, Debug)]
pub struct CreateKey<'a> {
    /// The resource, as errors name it: `cluster`.
    pub what: &'static str,
    /// The id field of its API: `clusterId`.
    pub id_field: &'static str,
    /// The id, derived from the tenant, the caller and the idempotency key.
    pub id: &'a str,
    /// The request's digest.
    pub digest: &'a RequestDigest,
}

impl CreateKey<'_> {
    /// `existing` as the answer to this request: the same request made it (a retry), or the
    /// key was reused for another request (`CONFLICT`).
    fn answer<R: Created>(&self, existing: R) -> Result<R> {
        if self.digest.recognises(existing.stored_digest()) {
            return Ok(existing);
        }
        Err(Error::conflict(format!(
            "idempotency key already used for {} {:?} with a different request; use a new key for a new request",
            self.what, self.id
        ))
        .with_detail("reason", "idempotencyKeyReused")
        .with_detail(self.id_field, self.id))
    }
}

/// The legacy digest of a kind added after digests were read from the descriptors: none, as no
/// earlier release made its objects.
pub(super) fn no_legacy_digest<Req>(_: &Req) -> String {
    String::new()
}

impl Service {
    /// The idempotent create of a kind the kit's lifecycle owns: the id derived from the
    /// tenant, the caller and the idempotency key, the request's digest (and `legacy_digest`, the
    /// one its requests had before digests were read from the descriptors, so that a retry of an
    /// older request recognises its object; [`no_legacy_digest`] for a kind added since), then
    /// [`Service::create_once`] with the kind's fetch and `create_new`, which is given the
    /// request, the id and the digest to check and insert it.
    pub(super) async fn create_resource<Req, R, Made>(
        &self,
        ctx: &Context,
        request: Req,
        legacy_digest: impl FnOnce(&Req) -> String,
        create_new: impl FnOnce(Req, String, String) -> Made,
    ) -> Result<R>
    where
        Req: CreateRequest + prost::Message,
        R: ConvergedRow + Created,
        Made: Future<Output = Result<(R, bool)>>,
    {
        let (tenant, idempotency_key) = request.key_parts();
        let id = crate::ids::derived(R::ID_PREFIX, tenant, &ctx.caller.principal_id, idempotency_key);
        let digest = RequestDigest {
            current: request_digest::of(Req::MESSAGE, &request),
            legacy: Some(legacy_digest(&request)).filter(|legacy| !legacy.is_empty()),
        };
        let key = CreateKey { what: R::NOUN, id_field: R::ID_FIELD, id: &id, digest: &digest };
        let made = create_new(request, id.clone(), digest.current.clone());
        self.create_once(ctx, key, || R::fetch(&self.store, &id), made).await
    }

    /// Creates the object `key` names unless it exists: `fetch` reads it by id, `create` (not
    /// started unless it is needed) checks the request and inserts it, and says whether it made
    /// the object. Returns the object; one this call made is logged (`<what> created`).
    pub(super) async fn create_once<R, Fetched>(
        &self,
        ctx: &Context,
        key: CreateKey<'_>,
        fetch: impl Fn() -> Fetched,
        create: impl Future<Output = Result<(R, bool)>>,
    ) -> Result<R>
    where
        R: Created,
        Fetched: Future<Output = Result<Option<R>>>,
    {
        // A request the schema refused was never carried out: its fields are the answer.
        if ctx.schema.is_empty()
            && let Some(existing) = fetch().await?
        {
            return key.answer(existing);
        }
        match create.await {
            Ok((made, true)) => {
                tracing::info!(id = %key.id, by = %ctx.caller.principal_id, "{} created", key.what);
                Ok(made)
            }
            Ok((existing, false)) => Ok(existing),
            Err(error) if error.code == Code::Conflict => match fetch().await? {
                // Another create with this key committed first.
                Some(existing) => key.answer(existing),
                None => Err(error),
            },
            Err(error) => Err(error),
        }
    }
}
