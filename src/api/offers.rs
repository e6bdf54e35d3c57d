//! `bettercompute.platform.v1.Offers`: Offers of platform pools to tenants.

use super::handlers::thin_service;
use super::timestamp;
use crate::proto::platform::{
    CreateOfferRequest, DeleteOfferRequest, GetOfferRequest, ListOffersRequest, ListOffersResponse, Offer,
    UpdateOfferRequest, offers_server,
};
use crate::store::OfferRow;

fn offer_view(row: OfferRow) -> Offer {
    Offer {
        pool_id: row.pool_id,
        tenant_id: row.tenant_id,
        state: row.state.to_string(),
        excluded_regions: row.excluded_regions,
        version: row.version,
        created_at: Some(timestamp(row.created_at)),
        updated_at: Some(timestamp(row.updated_at)),
    }
}

thin_service! {
    impl offers_server::Offers: Offer by offer_view;
    create(CreateOfferRequest) offer_create, get(GetOfferRequest) offer_get,
    update(UpdateOfferRequest) offer_update, delete(DeleteOfferRequest) offer_delete;
    list(ListOffersRequest) offer_list -> ListOffersResponse { offers };
}
