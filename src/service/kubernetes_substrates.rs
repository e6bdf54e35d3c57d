//! Kubernetes pool substrates as their pool's people see them: the pool's substrate, read. The
//! pool's policy makes one and archiving the pool tears it down (see `store::kubernetes_substrates`).

use super::{Context, Service};
use crate::error::Result;
use crate::proto::compute::{GetKubernetesSubstrateRequest, ListKubernetesSubstratesRequest};
use crate::store::SubstrateRow;

impl Service {
    /// The pool's substrate, in a list: none, or the one its policy made.
    pub async fn substrate_list(
        &self,
        _ctx: &Context,
        request: ListKubernetesSubstratesRequest,
    ) -> Result<Vec<SubstrateRow>> {
        let pool = self.store.pool_fetch(&request.pool_id).await?;
        match self.store.substrate_fetch(&pool.id).await {
            Ok(substrate) => Ok(vec![substrate]),
            Err(error) if error.code == crate::error::Code::NotFound => Ok(Vec::new()),
            Err(error) => Err(error),
        }
    }

    /// The pool's substrate; `NOT_FOUND` when its policy never had one.
    pub async fn substrate_get(&self, _ctx: &Context, request: GetKubernetesSubstrateRequest) -> Result<SubstrateRow> {
        let pool = self.store.pool_fetch(&request.pool_id).await?;
        self.store.substrate_fetch(&pool.id).await
    }
}
