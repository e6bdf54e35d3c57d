//! Offers: a platform pool made visible to a tenant, active or suspended, minus some regions.

use super::checks::zones_and_regions;
use super::update_mask::Named;
use super::{Context, Service};
use crate::domain::states::{OfferState, requested_state};
use crate::error::{Error, FieldViolation, Result};
use crate::proto::platform::{
    CreateOfferRequest, DeleteOfferRequest, GetOfferRequest, ListOffersRequest, UpdateOfferRequest,
};
use crate::store::{NewOffer, OfferChange, OfferRow, now_micros};

/// The states an operator may give an offer.
const OFFER_STATES: &[OfferState] = &[OfferState::Active, OfferState::Suspended];

impl Service {
    /// `INVALID_INPUT` unless every excluded region is a region of the pool's account.
    async fn offer_check_regions(&self, pool_id: &str, excluded: &[String]) -> Result<()> {
        if excluded.is_empty() {
            return Ok(());
        }
        let pool = self.store.pool_fetch(pool_id).await?;
        let account = self.store.account_fetch(&pool.account_id).await?;
        let (_, regions) = zones_and_regions(&account.provider, &account.locations);
        let problems: Vec<FieldViolation> = excluded
            .iter()
            .enumerate()
            .filter(|(_, region)| !regions.contains(region))
            .map(|(i, region)| {
                FieldViolation::new(
                    format!("excludedRegions[{i}]"),
                    format!("{region:?} is not a region of pool {pool_id:?}; its regions are {}", regions.join(", ")),
                )
            })
            .collect();
        if problems.is_empty() { Ok(()) } else { Err(Error::fields(problems).with_detail("regions", regions)) }
    }

    /// Offers a live platform pool to a tenant.
    pub async fn offer_create(&self, ctx: &Context, request: CreateOfferRequest) -> Result<OfferRow> {
        let pool = self.store.pool_fetch(&request.pool_id).await?;
        if pool.deleted_at.is_some() {
            return Err(Error::invalid_state(format!("pool {:?} is deleted", pool.id)).with_detail("poolId", pool.id));
        }
        if let Some(owner) = &pool.tenant_id {
            return Err(Error::fields(vec![FieldViolation::new(
                "poolId",
                format!("pool {:?} is on an account of tenant {owner:?}; only platform pools are offered", pool.id),
            )]));
        }
        self.offer_check_regions(&pool.id, &request.excluded_regions).await?;
        let state = if request.state.is_empty() {
            OfferState::Active
        } else {
            requested_state("state", &request.state, OFFER_STATES)?
        };
        let offer = self
            .store
            .offer_create(&NewOffer {
                pool_id: request.pool_id,
                tenant_id: request.tenant_id,
                state,
                excluded_regions: request.excluded_regions,
                now: now_micros(),
            })
            .await?;
        tracing::info!(pool = %offer.pool_id, tenant = %offer.tenant_id, by = %ctx.caller.principal_id, "offer created");
        Ok(offer)
    }

    /// One offer.
    pub async fn offer_get(&self, _ctx: &Context, request: GetOfferRequest) -> Result<OfferRow> {
        self.store.offer_fetch(&request.pool_id, &request.tenant_id).await
    }

    /// Offers, oldest first.
    pub async fn offer_list(&self, _ctx: &Context, request: ListOffersRequest) -> Result<Vec<OfferRow>> {
        self.store.offer_list(&request.pool_id, &request.tenant_id).await
    }

    /// Changes the state or the excluded regions.
    pub async fn offer_update(&self, ctx: &Context, request: UpdateOfferRequest) -> Result<OfferRow> {
        if request.clear_excluded_regions && !request.excluded_regions.is_empty() {
            return Err(Error::fields(vec![FieldViolation::new(
                "clearExcludedRegions",
                "give excludedRegions or clearExcludedRegions, not both",
            )]));
        }
        let named = Named::of(&request.update_mask);
        named.require_some(&["state", "excludedRegions"])?;
        // `clearExcludedRegions` is the deprecated spelling of naming an empty list.
        let excluded_regions = if request.clear_excluded_regions {
            Some(Vec::new())
        } else {
            named.list("excluded_regions", request.excluded_regions)
        };
        let state = named
            .required("state", "state", request.state)?
            .map(|state| requested_state("state", &state, OFFER_STATES))
            .transpose()?;
        if state.is_none() && excluded_regions.is_none() {
            return Err(Error::invalid_input("name at least one field to change: state, excludedRegions")
                .with_detail("accepted", serde_json::json!(["state", "excludedRegions"])));
        }
        if let Some(regions) = &excluded_regions {
            self.offer_check_regions(&request.pool_id, regions).await?;
        }
        let change = OfferChange { state, excluded_regions };
        let offer = self.store.offer_update(&request.pool_id, &request.tenant_id, &change, now_micros()).await?;
        tracing::info!(pool = %offer.pool_id, tenant = %offer.tenant_id, state = %offer.state, by = %ctx.caller.principal_id, "offer updated");
        Ok(offer)
    }

    /// Withdraws an offer.
    pub async fn offer_delete(&self, ctx: &Context, request: DeleteOfferRequest) -> Result<OfferRow> {
        let offer = self.store.offer_delete(&request.pool_id, &request.tenant_id, now_micros()).await?;
        tracing::info!(pool = %offer.pool_id, tenant = %offer.tenant_id, by = %ctx.caller.principal_id, "offer deleted");
        Ok(offer)
    }
}
