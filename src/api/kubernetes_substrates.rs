//! `bettercompute.compute.v1.KubernetesSubstrates`: a pool's substrate, read.

use super::handlers::thin_service;
use super::views::stamps;
use crate::proto::compute::{
    GetKubernetesSubstrateRequest, KubernetesSubstrate, KubernetesSubstrateFlavor, KubernetesSubstrateObject,
    ListKubernetesSubstratesRequest, ListKubernetesSubstratesResponse, kubernetes_substrates_server,
};
use crate::store::SubstrateRow;

fn substrate_view(row: SubstrateRow) -> KubernetesSubstrate {
    KubernetesSubstrate {
        pool_id: row.pool_id,
        mode: row.mode,
        account_id: row.account_id,
        cluster_name: row.cluster_name,
        location: row.location,
        endpoint: row.endpoint,
        master_version: row.master_version,
        node_version: row.node_version,
        state: row.state.into(),
        message: row.message,
        problem: super::views::problem_view(row.problem),
        flavors: row
            .flavors
            .into_iter()
            .map(|flavor| KubernetesSubstrateFlavor {
                name: flavor.name,
                node_pool: flavor.node_pool,
                state: flavor.state.into(),
                desired_nodes: flavor.desired_nodes,
                provider_nodes: flavor.provider_nodes,
                joined_nodes: flavor.joined_nodes,
            })
            .collect(),
        objects: row
            .objects
            .into_iter()
            .map(|object| KubernetesSubstrateObject {
                kind: object.kind,
                namespace: object.namespace,
                name: object.name,
            })
            .collect(),
        join_token_id: row.join_token_id,
        ..stamps(row.version, row.created_at, row.updated_at, row.deleted_at)
    }
}

thin_service! {
    impl kubernetes_substrates_server::KubernetesSubstrates: KubernetesSubstrate by substrate_view;
    get(GetKubernetesSubstrateRequest) substrate_get;
    list(ListKubernetesSubstratesRequest) substrate_list -> ListKubernetesSubstratesResponse { substrates };
}
