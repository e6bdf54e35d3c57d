//! The `kubernetes.clusters` reconciler: one pass per cluster reads the row (desired) and the
//! provider's cluster (observed), takes at most one provider step, and records what it saw.
//!
//! Steps, in order: create the cluster (with its first node pools) under its deterministic
//! name `bc-k-<24 of the id>` and label `better-compute-cluster`, so a pass that crashed after
//! the provider accepted finds it instead of making a second one; wait out provider
//! operations; move the release channel, the control-plane version (only while the tenant's
//! request is pending, so a release-channel upgrade by the provider is followed, not undone)
//! and the authorized networks; create and delete node pools, and change each in place
//! (autoscaling, labels, taints, zones, machine type, boot disk, accelerators, size); then
//! upgrade each pool whose nodes are behind the control plane to its version; then `ready`.
//! GKE runs at most five operations at once on a cluster (and a change to the cluster itself
//! only while none runs); each pass issues at most one change and waits while the cluster
//! reconciles, so a cluster has one operation at a time, well inside the rule, and "operation
//! in progress" (another's) means "later": changes queue in the desired state, one per pass. A
//! pool with autoscaling belongs to the autoscaler: its live count is recorded, never resized.
//! Deletion deletes at the provider, waits until the cluster is gone, then finishes the row.
//! Before any step on a running cluster, kubeconfig accounts whose grant was revoked (their
//! principal deleted or no longer allowed the role) or expired are removed from the cluster's
//! own API, so the cluster refuses their tokens.
//!
//! Drift (see [`crate::domain::drift`]): on a pass over a `ready` cluster (its desired state
//! applied and unchanged since), the managed fields of its ready pools that GKE holds at other
//! values ([`node_pool_drift`]) are drift. The pool's `drift: correct` puts them back with the
//! usual steps; `drift: report` converges to the spec with those fields as found, so nothing is
//! sent to put them back, and the drift stays on the view until GKE changes back or the tenant
//! changes the cluster or the pool (which makes it `updating`: the new spec is applied).

use crate::domain::lifecycle_events::LifecycleEvent;
use crate::domain::states::{ClusterState, NodePoolState};
use std::sync::Arc;

use super::node_pool_drift::{self, adopt};
use super::node_pool_steps::{self, next_pool_step};
use super::provider_objects::ProviderObjects;
use super::{Backoff, Context, KitReconciler, Outcome, Pass, PassError, Timings, refusal};
use crate::changes::kubernetes::{cluster_changes, pool_spec, provider_channel, version_matches};
use crate::domain::drift::{self, DriftedField};
use crate::provider::accounts::GkeAccounts;
use crate::provider::cluster_api::{CREDENTIAL_NAMESPACE, CREDENTIAL_PREFIX};
use crate::provider::gke::Gke;
use crate::provider::kube::{KubeAuth, KubeClient};
use crate::provider::{
    Cluster, ClusterApi, ClusterChange, ClusterSpec, ErrorKind, Found, ManagedKubernetes, NodePool, ProviderError,
};
use crate::store::{
    ClusterObserved, ClusterRow, NodePoolObserved, NodePoolRow, cluster_event, node_pool_event, now_micros,
};

/// The label every cluster carries with its id.
pub const CLUSTER_LABEL: &str = "better-compute-cluster";

/// The clusters' reconciler.
#[derive(Debug, Clone)]
pub struct KubernetesClusters {
    /// Account id to GKE adapter.
    pub accounts: Arc<dyn GkeAccounts>,
    /// Its delays and stuck deadline.
    pub timings: Timings,
}

#[tonic::async_trait]
impl KitReconciler for KubernetesClusters {
    type Row = ClusterRow;

    fn timings(&self) -> Timings {
        self.timings
    }

    async fn reconcile(&self, pass: &Pass, cluster: ClusterRow) -> Result<Outcome, PassError> {
        let gke = self.accounts.gke_at(&cluster.account_id, &cluster.location, cluster.account_version).await?;
        let objects = ProviderObjects { gke: Some(self.accounts.clone()), digitalocean: None };
        let step = Step { pass, cluster: &cluster, gke: &gke, delete_backoff: self.timings.delete_backoff, objects };
        if cluster.delete_requested_at.is_some() { step.delete().await } else { step.converge().await }
    }
}

/// One pass over one cluster.
struct Step<'a> {
    pass: &'a Pass,
    cluster: &'a ClusterRow,
    gke: &'a Gke,
    delete_backoff: Backoff,
    objects: ProviderObjects,
}

fn cluster_spec(cluster: &ClusterRow) -> ClusterSpec {
    let autopilot = cluster.mode == "autopilot";
    ClusterSpec {
        name: cluster.provider_name(),
        description: cluster.description.clone(),
        labels: [(CLUSTER_LABEL.to_owned(), cluster.id.clone())].into(),
        release_channel: provider_channel(&cluster.release_channel),
        version: cluster.requested_version.clone(),
        network: String::new(),
        node_pools: if autopilot {
            Vec::new()
        } else {
            cluster.node_pools.iter().filter(|p| p.state != NodePoolState::Deleting).map(pool_spec).collect()
        },
        autopilot,
        authorized_networks: cluster.authorized_networks.clone(),
        private_nodes: cluster.private_nodes,
        subnetwork: String::new(),
    }
}

impl Step<'_> {
    fn now(&self) -> i64 {
        now_micros()
    }

    /// An observation that keeps everything as it was.
    fn unchanged(&self) -> ClusterObserved {
        let c = self.cluster;
        ClusterObserved {
            version: c.version,
            state: c.state,
            message: c.message.clone(),
            endpoint: c.endpoint.clone(),
            ca_certificate: c.ca_certificate.clone(),
            kubernetes_version: c.kubernetes_version.clone(),
            node_version: c.node_version.clone(),
            version_pending: c.version_pending,
            ready_once: c.ready_once,
            accepted_at: c.accepted_at,
            // Billing starts in the write that first records the acceptance; once recorded, the
            // passes after it have nothing to start.
            billed_tenant: (c.accepted_at.is_none() && matches!(c.billing_mode.as_str(), "metered" | "platform-fee"))
                .then(|| c.meta.tenant_id.clone()),
            pools: Vec::new(),
            drift: Vec::new(),
            events: Vec::new(),
        }
    }

    /// Writes the observation (with an `error` event when the cluster newly fails) and returns
    /// `outcome` in the observed state.
    async fn record(&self, mut observed: ClusterObserved, outcome: Outcome) -> Result<Outcome, PassError> {
        let now = self.now();
        observed.events.extend(self.cluster.failure_event(observed.state, &observed.message, now));
        let state = observed.state;
        // Not written: the tenant changed the cluster meanwhile and its write queued a pass.
        self.pass
            .store
            .cluster_observe(&self.cluster.id, &observed, now)
            .await
            .context("recording the cluster failed")?;
        Ok(outcome.in_state(state))
    }

    async fn delete(&self) -> Result<Outcome, PassError> {
        let name = self.cluster.provider_name();
        let Some(remote) = self.gke.cluster_get(&name).await.found()? else { return self.finish_delete().await };
        if remote.status == "STOPPING" {
            return Ok(Outcome::converging().in_state(ClusterState::Deleting));
        }
        match self.gke.cluster_delete(&name).await {
            Ok(_) => Ok(Outcome::converging().in_state(ClusterState::Deleting)),
            Err(error) if error.is_not_found() => self.finish_delete().await,
            Err(error) if error.kind == ErrorKind::ConflictInProgress => {
                Ok(Outcome::converging().in_state(ClusterState::Deleting))
            }
            Err(error) => {
                // Refused: `error` with the provider's words, retried on the delete backoff (a
                // new delete call retries at once).
                let error = refusal(error)?;
                let observed = ClusterObserved {
                    state: ClusterState::Error,
                    message: format!("the provider refused to delete the cluster: {}", error.message),
                    ..self.unchanged()
                };
                self.record(observed, Outcome::retry(error.to_string(), self.delete_backoff)).await
            }
        }
    }

    async fn finish_delete(&self) -> Result<Outcome, PassError> {
        self.objects.confirm_gone(self.cluster).await?;
        self.pass.store.cluster_access_forget_cluster(&self.cluster.id).await?;
        self.pass.store.cluster_finish_delete(&self.cluster.id, self.now()).await?;
        Ok(Outcome::remove())
    }

    async fn converge(&self) -> Result<Outcome, PassError> {
        let name = self.cluster.provider_name();
        let Some(remote) = self.gke.cluster_get(&name).await.found()? else { return self.create().await };
        let mut observed = ClusterObserved {
            endpoint: remote.endpoint.clone(),
            ca_certificate: remote.ca_certificate_pem.clone(),
            kubernetes_version: remote.master_version.clone(),
            node_version: remote.node_version.clone(),
            accepted_at: Some(self.cluster.accepted_at.unwrap_or_else(now_micros)),
            ..self.unchanged()
        };
        let busy_state = if self.cluster.ready_once { ClusterState::Updating } else { ClusterState::Provisioning };
        match remote.status.as_str() {
            "RUNNING" | "RECONCILING" => {}
            "ERROR" | "DEGRADED" => {
                observed.state = ClusterState::Error;
                observed.message = if remote.status_message.is_empty() {
                    format!("the provider reports the cluster {}", remote.status)
                } else {
                    remote.status_message.clone()
                };
                return self.record(observed, Outcome::permanent(format!("cluster is {}", remote.status))).await;
            }
            _ => {
                observed.state = busy_state;
                return self.record(observed, Outcome::converging()).await;
            }
        }
        self.sweep_access(&remote).await?;
        if remote.status == "RECONCILING" {
            observed.state = busy_state;
            return self.record(observed, Outcome::converging()).await;
        }
        if let Some(outcome) = self.change_cluster(&remote, &mut observed, busy_state).await? {
            return Ok(outcome);
        }
        if self.cluster.mode == "standard"
            && let Some(outcome) = self.converge_pools(&remote, &mut observed, busy_state).await?
        {
            return Ok(outcome);
        }
        self.ready(&remote, observed).await
    }

    /// Removes from the cluster the kubeconfig accounts (`bc-u-...`) and their bindings that no
    /// live grant covers, when a grant was revoked or expired. The cluster's objects are listed
    /// before the grants are read: an account made after that was granted before it, and stays.
    /// A failure fails the pass (the kubeconfigs still work until a later pass removes them).
    async fn sweep_access(&self, remote: &Cluster) -> Result<(), PassError> {
        let store = &self.pass.store;
        let id = &self.cluster.id;
        if !store.cluster_access_sweep_due(id, self.now()).await? {
            return Ok(());
        }
        const DOING: &str = "removing access";
        let auth = KubeAuth::Google(self.gke.tokens().clone());
        let api = KubeClient::new(&remote.endpoint, &remote.ca_certificate_pem, auth).context(DOING)?;
        let ours = |names: Vec<String>| -> Vec<String> {
            names.into_iter().filter(|name| name.starts_with(CREDENTIAL_PREFIX)).collect()
        };
        let accounts = ours(api.service_account_names(CREDENTIAL_NAMESPACE).await.context(DOING)?);
        let bindings = ours(api.cluster_role_binding_names().await.context(DOING)?);
        let swept_at = self.now();
        let live = store.cluster_access_live_accounts(id, swept_at).await.context(DOING)?;
        // The binding first: an account left behind by a failure then holds no role.
        for name in bindings.iter().filter(|name| !live.contains(name)) {
            api.cluster_role_binding_delete(name).await.context(DOING)?;
        }
        for name in accounts.iter().filter(|name| !live.contains(name)) {
            api.service_account_delete(CREDENTIAL_NAMESPACE, name).await.context(DOING)?;
            tracing::info!(cluster = %id, account = %name, "kubeconfig account removed");
        }
        store.cluster_access_forget_dead(id, swept_at).await.context(DOING)
    }

    /// Creates the cluster at the provider (an "already exists" is a crashed pass's work).
    async fn create(&self) -> Result<Outcome, PassError> {
        let mut observed = self.unchanged();
        let mut spec = cluster_spec(self.cluster);
        if let Some(network) = &self.cluster.network_id {
            // The tenant network's Compute Engine network and its subnetwork in the region.
            (spec.network, spec.subnetwork) =
                super::vps::cluster_network(&self.pass.store, network, &self.cluster.location).await?;
        }
        match self.gke.cluster_create(&spec).await {
            Ok(_) => {}
            Err(error) if error.status == Some(409) => {}
            Err(error) if error.kind == ErrorKind::ConflictInProgress => return Ok(Outcome::converging()),
            Err(error) if error.kind == ErrorKind::Permanent => {
                observed.state = ClusterState::Error;
                observed.message = format!("the provider refused the cluster: {}", error.message);
                return self.record(observed, Outcome::permanent(error.to_string())).await;
            }
            Err(error) => return Err(error.into()),
        }
        observed.state = ClusterState::Provisioning;
        observed.message = String::new();
        observed.accepted_at = Some(self.cluster.accepted_at.unwrap_or_else(now_micros));
        self.record(observed, Outcome::converging()).await
    }

    /// One change to the cluster itself, if one is due: channel, version pin, authorized
    /// networks. `Some` when a change was issued (or refused).
    async fn change_cluster(
        &self,
        remote: &Cluster,
        observed: &mut ClusterObserved,
        busy: ClusterState,
    ) -> Result<Option<Outcome>, PassError> {
        let cluster = self.cluster;
        // The control plane moves only for a version the tenant asked for and the provider was not
        // sent yet: one the provider moved it to by itself (past the pin) is followed, not undone.
        let version_asked = cluster.version_pending && !cluster.requested_version.is_empty();
        if version_asked && version_matches(&cluster.requested_version, &remote.master_version) {
            observed.version_pending = false;
        }
        let changes = cluster_changes(cluster, remote, observed.version_pending && version_asked);
        let Some(change) = changes.into_iter().next() else { return Ok(None) };
        let mut next = observed.clone();
        next.state = busy;
        let outcome = match self.gke.cluster_update(&remote.name, &change).await {
            Ok(_) => {
                if matches!(change, ClusterChange::MasterVersion(_)) {
                    // Sent: from now on the provider's version is the one to follow.
                    next.version_pending = false;
                }
                Outcome::converging()
            }
            Err(error) if error.kind == ErrorKind::ConflictInProgress => Outcome::converging(),
            Err(error) if error.kind == ErrorKind::Permanent => {
                next.state = ClusterState::Error;
                next.message = format!("the provider refused the change: {}", error.message);
                Outcome::permanent(error.to_string())
            }
            Err(error) => return Err(error.into()),
        };
        self.record(next, outcome).await.map(Some)
    }

    /// Node pools: at most one provider change per pass. `Some` when the cluster is not yet
    /// converged (a change issued, a pool busy or failed).
    async fn converge_pools(
        &self,
        remote: &Cluster,
        observed: &mut ClusterObserved,
        busy: ClusterState,
    ) -> Result<Option<Outcome>, PassError> {
        let name = remote.name.as_str();
        let mut pending = false;
        let mut failed: Option<String> = None;
        let now = self.now();
        let reported = self.judge_drift(remote, observed, now).await?;
        for pool in &self.cluster.node_pools {
            let found: Option<&NodePool> = remote.node_pools.iter().find(|p| p.name == pool.name);
            let mut seen = NodePoolObserved {
                id: pool.id.clone(),
                version: pool.version,
                state: pool.state,
                message: pool.message.clone(),
                current_node_count: found.map_or(0, |p| i64::from(p.node_count)),
                deleted: false,
            };
            // Whether this pool is still on its way: a change issued, or the provider busy.
            let mut busy_pool = false;
            let issued: Option<Result<(), ProviderError>> = match (pool.state, found) {
                (NodePoolState::Deleting, None) => {
                    seen.deleted = true;
                    seen.state = NodePoolState::Deleted;
                    observed.events.push(node_pool_event(LifecycleEvent::Deleted, pool, now, ""));
                    None
                }
                (NodePoolState::Deleting, Some(p)) if p.status == "STOPPING" => {
                    busy_pool = true;
                    None
                }
                (NodePoolState::Deleting, Some(_)) => Some(self.gke.node_pool_delete(name, &pool.name).await.map(drop)),
                (_, None) => Some(self.gke.node_pool_create(name, &pool_spec(pool)).await.map(drop)),
                (_, Some(p)) if p.status == "ERROR" => {
                    if pool.state == NodePoolState::Updating {
                        // Changed after it failed: start it over.
                        Some(self.gke.node_pool_delete(name, &pool.name).await.map(drop))
                    } else {
                        seen.state = NodePoolState::Error;
                        seen.message = if p.status_message.is_empty() {
                            "the provider reports the node pool ERROR".into()
                        } else {
                            p.status_message.clone()
                        };
                        None
                    }
                }
                (_, Some(p)) if p.status != "RUNNING" => {
                    busy_pool = true;
                    None
                }
                (_, Some(p)) => self.pool_change(remote, pool, p, &reported).await,
            };
            match issued {
                None => {}
                Some(Ok(())) => busy_pool = true,
                Some(Err(error)) => match error.kind {
                    ErrorKind::ConflictInProgress => busy_pool = true,
                    ErrorKind::Permanent | ErrorKind::NotFound => {
                        seen.state = NodePoolState::Error;
                        seen.message = error.message.clone();
                    }
                    ErrorKind::Transient => {
                        observed.state = busy;
                        let outcome = Outcome::transient(error.to_string());
                        return self.record(observed.clone(), outcome).await.map(Some);
                    }
                },
            }
            if seen.state == NodePoolState::Error {
                if pool.state != NodePoolState::Error || pool.message != seen.message {
                    observed.events.push(node_pool_event(LifecycleEvent::Error, pool, now, &seen.message));
                }
                failed.get_or_insert_with(|| format!("node pool {:?}: {}", pool.name, seen.message));
            } else if seen.deleted {
            } else if busy_pool || pool.state == NodePoolState::Deleting {
                pending = true;
                if pool.state == NodePoolState::Ready || pool.state == NodePoolState::Error {
                    seen.state = NodePoolState::Updating;
                }
            } else {
                if pool.state != NodePoolState::Ready {
                    observed.events.push(node_pool_event(LifecycleEvent::Ready, pool, now, ""));
                }
                seen.state = NodePoolState::Ready;
                seen.message = String::new();
            }
            // A pool as it was needs no write (the write would change only its `updatedAt`).
            let changed = seen.deleted
                || seen.state != pool.state
                || seen.message != pool.message
                || seen.current_node_count != pool.current_node_count;
            if changed {
                observed.pools.push(seen);
            }
            if busy_pool {
                // One change at a time: the rest waits for the next pass.
                break;
            }
        }
        if let Some(message) = failed {
            observed.state = ClusterState::Error;
            observed.message = message.clone();
            return self.record(observed.clone(), Outcome::permanent(message)).await.map(Some);
        }
        if pending {
            observed.state = busy;
            return self.record(observed.clone(), Outcome::converging()).await.map(Some);
        }
        Ok(None)
    }

    /// Judges the drift of the cluster's ready pools, when the cluster is `ready` (see the
    /// module's rule), into `observed` (its drift, and a `drift` event when one is due).
    /// Returns the paths of the fields left as found (`drift: report`); empty when drift is
    /// corrected or there is none.
    async fn judge_drift(
        &self,
        remote: &Cluster,
        observed: &mut ClusterObserved,
        now: i64,
    ) -> Result<Vec<String>, PassError> {
        let cluster = self.cluster;
        let settled = cluster.state == ClusterState::Ready;
        let mut differing: Vec<DriftedField> = Vec::new();
        if settled {
            for pool in cluster.node_pools.iter().filter(|p| p.state == NodePoolState::Ready) {
                let found = remote.node_pools.iter().find(|p| p.name == pool.name && p.status == "RUNNING");
                if let Some(found) = found {
                    differing.extend(node_pool_drift::pool_drift(&pool_spec(pool), remote, found));
                }
            }
        }
        if differing.is_empty() && cluster.drift.is_empty() {
            return Ok(Vec::new());
        }
        let pool = self.pass.store.pool_fetch(&cluster.pool_id).await?;
        // A policy the pool's checks let through is readable; were it not, the default holds.
        let policy = drift::read(&pool.policy).unwrap_or_default();
        let judged = drift::judge(settled, differing, &cluster.drift, policy, now);
        if let Some(data) = judged.event {
            observed.events.push(cluster_event(LifecycleEvent::Drift, cluster, now, data));
        }
        let reported = if judged.correct { Vec::new() } else { judged.drift.iter().map(|d| d.field.clone()).collect() };
        observed.drift = judged.drift;
        Ok(reported)
    }

    /// The one change a running pool needs, if any (see [`next_pool_step`]), issued; the
    /// fields in `reported` (drift left as found) are taken as GKE holds them.
    async fn pool_change(
        &self,
        cluster: &Cluster,
        pool: &NodePoolRow,
        remote: &NodePool,
        reported: &[String],
    ) -> Option<Result<(), ProviderError>> {
        let step = next_pool_step(&adopt(&pool_spec(pool), remote, reported), cluster, remote)?;
        Some(node_pool_steps::take(self.gke, &cluster.name, &pool.name, &step).await)
    }

    /// Everything converged: `ready`, publishing `ready` the first time and `updated` when it
    /// is ready again after a change or the provider moved its version.
    async fn ready(&self, remote: &Cluster, mut observed: ClusterObserved) -> Result<Outcome, PassError> {
        let cluster = self.cluster;
        let now = self.now();
        observed.state = ClusterState::Ready;
        observed.message = String::new();
        let mut ready = cluster.clone();
        ready.state = ClusterState::Ready;
        let versions = serde_json::json!({
            "kubernetesVersion": remote.master_version, "nodeVersion": remote.node_version,
            "endpoint": remote.endpoint,
        });
        if !cluster.ready_once {
            observed.ready_once = true;
            observed.events.push(cluster_event(LifecycleEvent::Ready, &ready, now, versions));
        } else if cluster.state != ClusterState::Ready {
            observed.events.push(cluster_event(LifecycleEvent::Updated, &ready, now, versions));
        } else if cluster.kubernetes_version != remote.master_version || cluster.node_version != remote.node_version {
            let mut data = versions;
            data["previousKubernetesVersion"] = cluster.kubernetes_version.clone().into();
            data["movedByProvider"] = true.into();
            observed.events.push(cluster_event(LifecycleEvent::Updated, &ready, now, data));
        }
        self.record(observed, Outcome::settled()).await
    }
}
