//! `bettercompute.platform.v1.Offers`: Offers of platform pools to tenants.

use tonic::{Request, Response, Status};

use super::{context, timestamp};
use crate::proto::platform::{
    CreateOfferRequest, DeleteOfferRequest, GetOfferRequest, ListOffersRequest, ListOffersResponse, Offer,
    UpdateOfferRequest, offers_server,
};
use crate::service::Service;
use crate::store::OfferRow;

/// The gRPC service of offers.
#[derive(Debug)]
pub struct OffersApi {
    service: Service,
}

impl OffersApi {
    /// The service over `service`.
    pub fn server(service: Service) -> offers_server::OffersServer<Self> {
        offers_server::OffersServer::new(Self { service })
    }
}

fn view(row: OfferRow) -> Offer {
    Offer {
        pool_id: row.pool_id,
        tenant_id: row.tenant_id,
        state: row.state,
        excluded_regions: row.excluded_regions,
        version: row.version,
        created_at: Some(timestamp(row.created_at)),
        updated_at: Some(timestamp(row.updated_at)),
    }
}

#[tonic::async_trait]
impl offers_server::Offers for OffersApi {
    async fn create(&self, request: Request<CreateOfferRequest>) -> Result<Response<Offer>, Status> {
        let ctx = context(&request)?;
        Ok(Response::new(view(self.service.offer_create(&ctx, request.into_inner()).await?)))
    }

    async fn get(&self, request: Request<GetOfferRequest>) -> Result<Response<Offer>, Status> {
        let ctx = context(&request)?;
        Ok(Response::new(view(self.service.offer_get(&ctx, request.into_inner()).await?)))
    }

    async fn list(&self, request: Request<ListOffersRequest>) -> Result<Response<ListOffersResponse>, Status> {
        let ctx = context(&request)?;
        let rows = self.service.offer_list(&ctx, request.into_inner()).await?;
        Ok(Response::new(ListOffersResponse { offers: rows.into_iter().map(view).collect() }))
    }

    async fn update(&self, request: Request<UpdateOfferRequest>) -> Result<Response<Offer>, Status> {
        let ctx = context(&request)?;
        Ok(Response::new(view(self.service.offer_update(&ctx, request.into_inner()).await?)))
    }

    async fn delete(&self, request: Request<DeleteOfferRequest>) -> Result<Response<Offer>, Status> {
        let ctx = context(&request)?;
        Ok(Response::new(view(self.service.offer_delete(&ctx, request.into_inner()).await?)))
    }
}
