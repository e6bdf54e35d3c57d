//! The reads at scale, over gRPC at concurrency 1: walks of the whole cluster list a page at a
//! time (each page timed, and every cluster checked to come exactly once), and `get` of random
//! clusters for a few seconds.

use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

use better_compute::cli::AuthedChannel;
use better_compute::proto::compute::kubernetes_clusters_client::KubernetesClustersClient;
use better_compute::proto::compute::{GetKubernetesClusterRequest, ListKubernetesClustersRequest};

use crate::common::grpc::code_of;
use crate::common::stats::Sample;

/// One walk of the list from the first page to the last.
pub struct Walk {
    /// Each page's latency.
    pub pages: Sample,
    /// From the first call to the last answer.
    pub seconds: f64,
}

/// Walks `tenant`'s list `page_size` at a time; fails unless every cluster of `expected` comes
/// exactly once and nothing else comes.
pub async fn walk(
    channel: &AuthedChannel,
    tenant: &str,
    page_size: i32,
    expected: &HashSet<String>,
) -> Result<Walk, String> {
    let mut client = KubernetesClustersClient::new(channel.clone());
    let mut seen: HashMap<String, u32> = HashMap::with_capacity(expected.len());
    let mut pages = Sample::default();
    let mut page_token = String::new();
    let started = Instant::now();
    loop {
        let request = ListKubernetesClustersRequest {
            tenant_id: tenant.to_owned(),
            page_size,
            page_token: page_token.clone(),
            ..Default::default()
        };
        let began = Instant::now();
        let page = client.list(request).await.map_err(|status| {
            format!("list page {}: {} {}", pages.latencies_us.len() + 1, code_of(&status), status.message())
        })?;
        pages.latencies_us.push(began.elapsed().as_micros() as u64);
        let page = page.into_inner();
        for cluster in page.clusters {
            *seen.entry(cluster.id).or_default() += 1;
        }
        if page.next_page_token.is_empty() {
            break;
        }
        page_token = page.next_page_token;
    }
    pages.elapsed = started.elapsed();
    let twice = seen.values().filter(|n| **n > 1).count();
    let missing = expected.iter().filter(|id| !seen.contains_key(*id)).count();
    let strangers = seen.keys().filter(|id| !expected.contains(*id)).count();
    if twice + missing + strangers > 0 {
        return Err(format!(
            "the walk of {} pages of {page_size} did not give every cluster once: {twice} came more than once, \
             {missing} never came, {strangers} were not among the {} created",
            pages.latencies_us.len(),
            expected.len()
        ));
    }
    Ok(Walk { seconds: pages.elapsed.as_secs_f64(), pages })
}

/// `get` of a random one of `ids`, one call after another, for `window`.
pub async fn gets(channel: &AuthedChannel, tenant: &str, ids: &[String], window: Duration) -> Sample {
    let mut client = KubernetesClustersClient::new(channel.clone());
    let mut sample = Sample::default();
    let started = Instant::now();
    while started.elapsed() < window && !ids.is_empty() {
        let cluster_id = ids[rand::random_range(0..ids.len())].clone();
        let began = Instant::now();
        match client.get(GetKubernetesClusterRequest { tenant_id: tenant.to_owned(), cluster_id }).await {
            Ok(_) => sample.latencies_us.push(began.elapsed().as_micros() as u64),
            Err(status) => *sample.failures.entry(code_of(&status)).or_default() += 1,
        }
    }
    sample.elapsed = started.elapsed();
    sample
}
