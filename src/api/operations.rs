//! `bettercompute.compute.v1.Operations`: a resource's operation log.

use tonic::{Request, Response, Status};

use super::handlers::Handlers;
use super::{context, timestamp};
use crate::proto::compute::{ListOperationsRequest, ListOperationsResponse, Operation, operations_server};
use crate::store::OperationRow;

fn operation_view(row: OperationRow) -> Operation {
    Operation {
        id: row.id,
        resource_id: row.resource_id,
        call: row.call,
        provider_operation_id: row.provider_operation_id,
        time: Some(timestamp(row.at_micros)),
        duration_ms: row.duration_micros / 1000,
        outcome: row.outcome,
        error_class: row.error_class,
        message: row.message,
    }
}

#[tonic::async_trait]
impl operations_server::Operations for Handlers {
    async fn list(&self, request: Request<ListOperationsRequest>) -> Result<Response<ListOperationsResponse>, Status> {
        let ctx = context(&request)?;
        let (calls, next_page_token) = self.service.operation_list(&ctx, request.into_inner()).await?;
        Ok(Response::new(ListOperationsResponse {
            operations: calls.into_iter().map(operation_view).collect(),
            next_page_token,
        }))
    }
}
