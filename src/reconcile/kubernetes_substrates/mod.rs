//! The `kubernetes.substrates` reconciler: one pass per pool substrate converges the provider
//! to the pool's `policy.substrate`, one provider step at a time, and records what it saw.
//!
//! Steps, in order: find the cluster (made under the deterministic name `bc-s-<24 of the pool>`
//! and labelled with the pool, so a crashed pass finds it instead of making another; adopted by
//! name); wait out its operations; move a made cluster's release channel; create, change and
//! delete the flavors' node pools (`bc-<pool>-<flavor>`, labelled, never another pool); make or
//! rotate the hosted join token (recorded sealed before it is used); server-side apply the
//! objects, reading each first: one there without the pool's label is never taken over, and
//! puts the substrate in `error` naming it; delete the DaemonSets of removed flavors; count
//! the nodes that joined; `ready` when every node the provider runs has joined the pool. A node
//! the pool's remediation asks to be recreated has its machine made again ([`remediation`]).
//! Teardown (the pool archived): a made cluster is deleted; on an adopted one only what carries
//! the pool's label goes (objects, then node pools), and its namespace only when nothing it did
//! not make is left in it (else the `deleted` event's message names what kept it); then the
//! tokens are revoked, the pool's nodes `deleted` and the substrate `deleted`.

mod flavors;
mod objects;
mod remediation;

use std::sync::Arc;
use std::time::Duration;

use self::flavors::{node_pool_spec, own_flavor, provider_nodes};
pub use self::objects::{DEFAULT_BCD_IMAGE, DaemonEndpoint, FLAVOR_LABEL, SUBSTRATE_LABEL};
use self::objects::{FIELD_MANAGER, Inputs, KINDS, NAMESPACED_KINDS, is_applied, is_ours, reference};
use super::kubernetes_clusters::CLUSTER_LABEL as MANAGED_CLUSTER_LABEL;
use super::node_pool_steps::{self, next_pool_step};
use super::{Backoff, Context, Outcome, Pass, PassError, ResourceReconciler, Schedule};
use crate::bearer::Bearer;
use crate::domain::states::{PoolNodeState, SubstrateState};
use crate::domain::substrate_policy::SubstrateCluster;
use crate::ids::JoinTokenId;
use crate::provider::accounts::GkeAccounts;
use crate::provider::gke::Gke;
use crate::provider::kube::{KubeAuth, KubeClient};
use crate::provider::{
    ClusterApi, ClusterChange, ClusterSpec, ErrorKind, Force, Found, ManagedKubernetes, Node, ProviderError,
};
use crate::secrets::SecretKey;
use crate::store::{
    ClusterMarks, JoinTokenRow, SUBSTRATE_KIND, Store, SubstrateFlavorRow, SubstrateObjectRow, SubstrateObserved,
    SubstrateRow, now_micros,
};

/// The GKE label (keys take no `/`) on a cluster a substrate made: its pool's id.
pub const CLUSTER_LABEL: &str = "better-compute-substrate-pool";
/// The label GKE puts on a Node: the node pool it belongs to.
const NODE_POOL_LABEL: &str = "cloud.google.com/gke-nodepool";

/// The substrates' reconciler.
#[derive(Debug, Clone)]
pub struct KubernetesSubstrates {
    /// Account id to GKE adapter.
    pub accounts: Arc<dyn GkeAccounts>,
    /// Seals the hosted join token at rest.
    pub secret_key: SecretKey,
    /// Where bcd reaches the API; without it a substrate cannot be made (`error` says so).
    pub daemon_endpoint: Option<DaemonEndpoint>,
    /// Delays after transient failures.
    pub backoff: Backoff,
    /// How long a hosted join token is accepted.
    pub token_lifetime: Duration,
    /// How long before it expires it is replaced.
    pub token_renew_before: Duration,
    /// How long the replaced token stays accepted after the Secret was updated, for daemons
    /// that read it just before.
    pub token_grace: Duration,
}

impl KubernetesSubstrates {
    /// The reconciler with the default intervals: a token lives 7 days and is replaced 2 days
    /// before it expires; the old one is revoked 10 minutes after.
    pub fn new(accounts: Arc<dyn GkeAccounts>, secret_key: SecretKey, daemon_endpoint: Option<DaemonEndpoint>) -> Self {
        Self {
            accounts,
            secret_key,
            daemon_endpoint,
            backoff: Backoff::TRANSIENT,
            token_lifetime: Duration::from_secs(7 * 86_400),
            token_renew_before: Duration::from_secs(2 * 86_400),
            token_grace: Duration::from_secs(600),
        }
    }
}

#[tonic::async_trait]
impl ResourceReconciler for KubernetesSubstrates {
    type Row = SubstrateRow;

    fn kind(&self) -> &'static str {
        SUBSTRATE_KIND
    }

    fn schedule(&self) -> Schedule {
        Schedule::with_backoff(self.backoff)
    }

    async fn fetch(&self, store: &Store, id: &str) -> crate::error::Result<Option<SubstrateRow>> {
        store.substrate_for_reconcile(id).await
    }

    async fn reconcile(&self, pass: &Pass, substrate: SubstrateRow) -> Result<Outcome, PassError> {
        let gke = match self.accounts.gke(&substrate.account_id, &substrate.location).await {
            Ok(gke) => gke,
            // The account is gone: nothing of ours can be reached to tear down.
            Err(error) if error.kind == ErrorKind::NotFound && substrate.teardown_requested_at.is_some() => {
                pass.store.substrate_finish_teardown(&substrate, "", now_micros()).await?;
                return Ok(Outcome::remove());
            }
            Err(error) => return Err(error.into()),
        };
        let step = Step { pass, reconciler: self, substrate: &substrate, gke: &gke };
        if substrate.teardown_requested_at.is_some() { step.teardown().await } else { step.converge().await }
    }
}

/// One pass over one substrate.
struct Step<'a> {
    pass: &'a Pass,
    reconciler: &'a KubernetesSubstrates,
    substrate: &'a SubstrateRow,
    gke: &'a Gke,
}

impl Step<'_> {
    fn pool_id(&self) -> &str {
        &self.substrate.pool_id
    }

    fn created(&self) -> bool {
        matches!(self.substrate.spec.cluster, SubstrateCluster::Create { .. })
    }

    /// The state of a substrate on its way: `provisioning` until it was first ready.
    fn busy(&self) -> SubstrateState {
        if self.substrate.ready_once { SubstrateState::Updating } else { SubstrateState::Provisioning }
    }

    /// An observation that keeps everything as it was.
    fn unchanged(&self) -> SubstrateObserved {
        let s = self.substrate;
        SubstrateObserved {
            state: s.state,
            message: s.message.clone(),
            endpoint: s.endpoint.clone(),
            master_version: s.master_version.clone(),
            node_version: s.node_version.clone(),
            flavors: s.flavors.clone(),
            objects: s.objects.clone(),
            changes: Vec::new(),
        }
    }

    /// Writes the observation (with `error` when it newly fails) and returns `outcome`.
    async fn record(&self, mut observed: SubstrateObserved, outcome: Outcome) -> Result<Outcome, PassError> {
        let s = self.substrate;
        if observed.state == SubstrateState::Error
            && (s.state != SubstrateState::Error || s.message != observed.message)
        {
            observed.changes.push("error");
        }
        let state = observed.state;
        // Not written: the pool's policy changed meanwhile and its write queued another pass.
        self.pass.store.substrate_observe(s, &observed, now_micros()).await.context("recording the substrate")?;
        Ok(outcome.in_state(state))
    }

    /// `error` with `message`, retried when something changes (or on the settled interval).
    async fn fail(&self, mut observed: SubstrateObserved, message: String) -> Result<Outcome, PassError> {
        observed.state = SubstrateState::Error;
        observed.message = message.clone();
        self.record(observed, Outcome::permanent(message)).await
    }

    async fn waiting(&self, mut observed: SubstrateObserved, message: String) -> Result<Outcome, PassError> {
        observed.state = self.busy();
        observed.message = message;
        self.record(observed, Outcome::converging()).await
    }

    async fn converge(&self) -> Result<Outcome, PassError> {
        let mut observed = self.unchanged();
        let Some(endpoint) = &self.reconciler.daemon_endpoint else {
            let message = "the worker was started without --api-endpoint: bcd on the cluster's nodes would not know \
                           where to join; restart bc-worker with --api-endpoint URL";
            return self.fail(observed, message.into()).await;
        };
        let name = &self.substrate.cluster_name;
        let remote = match self.gke.cluster_get(name).await.found()? {
            Some(remote) => remote,
            None if self.created() => return self.create_cluster(observed).await,
            None => {
                let message = format!(
                    "cluster {name:?} is not in {} on account {}: an adopted cluster must exist at the provider",
                    self.substrate.location, self.substrate.account_id
                );
                return self.fail(observed, message).await;
            }
        };
        if self.created() && remote.labels.get(CLUSTER_LABEL).map(String::as_str) != Some(self.pool_id()) {
            let message = format!(
                "a cluster named {name:?} exists without the label {CLUSTER_LABEL}={}: it is not this substrate's \
                 and is left untouched",
                self.pool_id()
            );
            return self.fail(observed, message).await;
        }
        if !self.created()
            && let Some(message) = self.managed_elsewhere(&remote).await?
        {
            self.withdraw_from_cluster().await?;
            return self.fail(observed, message).await;
        }
        observed.endpoint = remote.endpoint.clone();
        observed.master_version = remote.master_version.clone();
        observed.node_version = remote.node_version.clone();
        match remote.status.as_str() {
            "RUNNING" => {}
            "ERROR" | "DEGRADED" => {
                let message = match remote.status_message.as_str() {
                    "" => format!("the provider reports the cluster {}", remote.status),
                    said => format!("the provider reports the cluster {}: {said}", remote.status),
                };
                return self.fail(observed, message).await;
            }
            status => return self.waiting(observed, format!("the cluster is {status}")).await,
        }
        if let SubstrateCluster::Create { release_channel, .. } = &self.substrate.spec.cluster {
            let channel = release_channel.to_ascii_uppercase();
            if channel != remote.release_channel {
                let change = ClusterChange::ReleaseChannel(channel);
                return self.issued(observed, self.gke.cluster_update(name, &change).await.map(drop)).await;
            }
        }
        if let Some(outcome) = self.converge_flavors(&remote, &mut observed).await? {
            return Ok(outcome);
        }
        let token = match self.hosted_token(&remote).await? {
            HostedToken::Ready(token) => token,
            HostedToken::Again => return Ok(Outcome::converging().in_state(self.substrate.state)),
        };
        let api =
            KubeClient::new(&remote.endpoint, &remote.ca_certificate_pem, KubeAuth::Google(self.gke.tokens().clone()))
                .context("reaching the cluster's API")?;
        let listed = self.record_nodes(&api, &mut observed).await?;
        self.recreate_unhealthy(&listed).await?;
        if let Some(outcome) = self.converge_objects(&api, endpoint, token.expose(), &mut observed).await? {
            return Ok(outcome);
        }
        self.count_joined(&mut observed).await?;
        let missing: i64 = observed.flavors.iter().map(|f| (f.provider_nodes - f.joined_nodes).max(0)).sum();
        if missing > 0 {
            return self.waiting(observed, format!("waiting for {missing} node(s) to join the pool")).await;
        }
        self.ready(observed).await
    }

    /// Creates the cluster with every flavor's node pool ("already exists" is a crashed pass's).
    async fn create_cluster(&self, observed: SubstrateObserved) -> Result<Outcome, PassError> {
        let SubstrateCluster::Create { release_channel, version, network_id, .. } = &self.substrate.spec.cluster else {
            unreachable!("only a made cluster is created");
        };
        let mut spec = ClusterSpec {
            name: self.substrate.cluster_name.clone(),
            description: format!("better-compute substrate of pool {}", self.pool_id()),
            labels: [(CLUSTER_LABEL.to_owned(), self.pool_id().to_owned())].into(),
            release_channel: release_channel.to_ascii_uppercase(),
            version: version.clone(),
            node_pools: self.substrate.spec.flavors.iter().map(|f| node_pool_spec(self.pool_id(), f)).collect(),
            ..ClusterSpec::default()
        };
        if !network_id.is_empty() {
            (spec.network, spec.subnetwork) =
                super::vps::cluster_network(&self.pass.store, network_id, &self.substrate.location).await?;
        }
        let made = match self.gke.cluster_create(&spec).await {
            Err(error) if error.status == Some(409) => Ok(()),
            other => other.map(drop),
        };
        self.issued(observed, made).await
    }

    /// The outcome of a provider step just issued: on its way, busy (later), refused (`error`
    /// with the provider's words) or failed (retried on the backoff).
    async fn issued(
        &self,
        observed: SubstrateObserved,
        result: Result<(), ProviderError>,
    ) -> Result<Outcome, PassError> {
        match result {
            Ok(()) => self.waiting(observed, String::new()).await,
            Err(error) if error.kind == ErrorKind::ConflictInProgress => self.waiting(observed, String::new()).await,
            Err(error) if matches!(error.kind, ErrorKind::Permanent | ErrorKind::NotFound) => {
                self.fail(observed, format!("the provider refused: {}", error.message)).await
            }
            Err(error) => Err(error.into()),
        }
    }

    /// The flavors' node pools: at most one provider step per pass. `Some` while they are not
    /// all running as their flavors say.
    async fn converge_flavors(
        &self,
        remote: &crate::provider::Cluster,
        observed: &mut SubstrateObserved,
    ) -> Result<Option<Outcome>, PassError> {
        let cluster = remote.name.as_str();
        let pool_id = self.pool_id();
        let mut flavors = Vec::new();
        let mut step: Option<Result<(), ProviderError>> = None;
        let mut waiting_on: Option<String> = None;
        for flavor in &self.substrate.spec.flavors {
            let spec = node_pool_spec(pool_id, flavor);
            let found = remote.node_pools.iter().find(|p| p.name == spec.name);
            let mut row = SubstrateFlavorRow {
                name: flavor.name.clone(),
                node_pool: spec.name.clone(),
                state: SubstrateState::Ready,
                desired_nodes: i64::from(spec.node_count),
                provider_nodes: found.map_or(0, provider_nodes),
                joined_nodes: self
                    .substrate
                    .flavors
                    .iter()
                    .find(|f| f.name == flavor.name)
                    .map_or(0, |f| f.joined_nodes),
                nodes: self
                    .substrate
                    .flavors
                    .iter()
                    .find(|f| f.name == flavor.name)
                    .map_or_else(Vec::new, |f| f.nodes.clone()),
            };
            match found {
                Some(p) if own_flavor(pool_id, p).is_none() => {
                    let message = format!(
                        "node pool {:?} of cluster {cluster:?} exists without this substrate's labels: it is left \
                         untouched; rename the flavor {:?}",
                        spec.name, flavor.name
                    );
                    return self.fail(observed.clone(), message).await.map(Some);
                }
                _ if step.is_some() => row.state = self.substrate_flavor_state(&flavor.name),
                None => {
                    row.state = SubstrateState::Provisioning;
                    step = Some(self.gke.node_pool_create(cluster, &spec).await.map(drop));
                }
                Some(p) if p.status == "ERROR" => {
                    let said = if p.status_message.is_empty() { "ERROR".to_owned() } else { p.status_message.clone() };
                    row.state = SubstrateState::Error;
                    flavors.push(row);
                    observed.flavors = flavors;
                    let message = format!("node pool {:?} of flavor {:?}: {said}", spec.name, flavor.name);
                    return self.fail(observed.clone(), message).await.map(Some);
                }
                Some(p) if p.status != "RUNNING" => {
                    row.state = if p.status == "PROVISIONING" {
                        SubstrateState::Provisioning
                    } else {
                        SubstrateState::Updating
                    };
                    waiting_on.get_or_insert_with(|| format!("node pool {:?} is {}", spec.name, p.status));
                }
                Some(p) => {
                    if let Some(next) = next_pool_step(&spec, remote, p) {
                        row.state = SubstrateState::Updating;
                        step = Some(node_pool_steps::take(self.gke, cluster, &spec.name, &next).await);
                    }
                }
            }
            flavors.push(row);
        }
        if step.is_none() {
            // Node pools of flavors no longer in the policy: deleted, and their nodes leave the pool.
            for p in &remote.node_pools {
                let Some(flavor) = own_flavor(pool_id, p) else { continue };
                if self.substrate.spec.flavors.iter().any(|f| f.name == flavor) {
                    continue;
                }
                self.delete_flavor_nodes(&flavor).await?;
                if p.status == "STOPPING" {
                    waiting_on.get_or_insert_with(|| format!("node pool {:?} is being deleted", p.name));
                } else {
                    step = Some(self.gke.node_pool_delete(cluster, &p.name).await.map(drop));
                }
                break;
            }
        }
        observed.flavors = flavors;
        match (step, waiting_on) {
            (Some(result), _) => self.issued(observed.clone(), result).await.map(Some),
            (None, Some(message)) => self.waiting(observed.clone(), message).await.map(Some),
            (None, None) => Ok(None),
        }
    }

    fn substrate_flavor_state(&self, name: &str) -> SubstrateState {
        self.substrate.flavors.iter().find(|f| f.name == name).map_or(SubstrateState::Pending, |f| f.state)
    }

    /// Marks `deleted` the pool's live nodes of `flavor` (their node pool is going away).
    async fn delete_flavor_nodes(&self, flavor: &str) -> Result<(), PassError> {
        let now = now_micros();
        for node in self.pass.store.node_list(self.pool_id(), i64::MAX).await? {
            if node.deleted_at.is_none() && node.labels.get(FLAVOR_LABEL).is_some_and(|f| f == flavor) {
                self.pass.store.node_delete(&node.id, now).await?;
            }
        }
        Ok(())
    }

    /// The hosted join token's bearer form: made (and recorded sealed) when there is none or it
    /// is due for renewal; the one it replaced revoked once the grace has passed.
    async fn hosted_token(&self, remote: &crate::provider::Cluster) -> Result<HostedToken, PassError> {
        let s = self.substrate;
        let store = &self.pass.store;
        let now = now_micros();
        let reconciler = self.reconciler;
        let micros = |d: Duration| d.as_micros() as i64;
        if !s.previous_join_token_id.is_empty()
            && s.join_token_rotated_at.is_some_and(|at| at + micros(reconciler.token_grace) <= now)
        {
            store.substrate_token_retire_previous(s, now).await?;
        }
        let current = match s.join_token_id.as_str() {
            "" => None,
            id => store.join_token_fetch(id).await?,
        };
        let max_uses = hosted_token_uses(&s.spec.flavors, s.pool_id.as_str(), remote);
        // Replaced too when it has other uses than the node pools now need, or ran out of them
        // (replacement machines used what was left).
        let due = current.as_ref().is_none_or(|t| {
            t.revoked_at.is_some()
                || t.expires_at - micros(reconciler.token_renew_before) <= now
                || t.max_uses != max_uses
                || t.uses >= t.max_uses
        });
        if !due {
            let sealed = &s.join_token_sealed.0;
            return Ok(HostedToken::Ready(self.reconciler.secret_key.open(sealed, &s.pool_id)?));
        }
        if !s.previous_join_token_id.is_empty() {
            // One rotation at a time: the previous token goes first (after its grace).
            return match current {
                Some(_) => Ok(HostedToken::Ready(self.reconciler.secret_key.open(&s.join_token_sealed.0, &s.pool_id)?)),
                None => Ok(HostedToken::Again),
            };
        }
        let bearer: Bearer<JoinTokenId> = Bearer::generate();
        let token = JoinTokenRow {
            id: bearer.id.to_string(),
            pool_id: s.pool_id.clone(),
            tenant_id: s.tenant_id.clone(),
            description: format!("hosted by the pool's substrate (cluster {})", s.cluster_name),
            max_uses,
            uses: 0,
            expires_at: now + micros(reconciler.token_lifetime),
            labels: Default::default(),
            taints: Vec::new(),
            secret_sha256: bearer.secret_sha256(),
            created_by: format!("reconciler:{SUBSTRATE_KIND}"),
            idempotency_key: String::new(),
            request_digest: String::new(),
            created_at: now,
            revoked_at: None,
            last_used_at: None,
            joins: Vec::new(),
            machine_id: None,
        };
        let sealed = self.reconciler.secret_key.seal(&bearer.reveal(), &s.pool_id)?;
        // Not written when the policy changed meanwhile: the next pass makes it.
        store.substrate_token_issue(s, &token, &sealed, now).await?;
        tracing::info!(pool = %s.pool_id, join_token = %token.id, "substrate join token issued");
        Ok(HostedToken::Again)
    }

    /// Why an adopted cluster is not this pool's to adopt: the system manages it (its labels or
    /// a row say so) for another tenant than the pool's. Asked on every pass, before anything
    /// is written into the cluster, because a cluster can become managed after the call.
    async fn managed_elsewhere(&self, remote: &crate::provider::Cluster) -> Result<Option<String>, PassError> {
        let marks = ClusterMarks {
            name: &remote.name,
            cluster_id: remote.labels.get(MANAGED_CLUSTER_LABEL).map(String::as_str),
            substrate_pool: remote.labels.get(CLUSTER_LABEL).map(String::as_str),
        };
        let Some(managed) = self.pass.store.substrate_managed_cluster(marks, self.pool_id()).await? else {
            return Ok(None);
        };
        if managed.adoptable_by(self.substrate.tenant_id.as_deref()) {
            return Ok(None);
        }
        Ok(Some(format!(
            "cluster {:?} is one better-compute manages ({}), not for this pool's own tenant: a substrate adopts \
             only clusters of its pool's own tenant or clusters better-compute does not manage; nothing more is \
             applied to it and the substrate's join tokens are revoked",
            remote.name, managed.managed_as
        )))
    }

    /// Takes back what an adoption refused afterwards had given the cluster: the hosted tokens
    /// are revoked (the cluster's admins can read their Secret) and the pool's nodes of its
    /// flavors are deleted (the cluster's admins control those machines).
    async fn withdraw_from_cluster(&self) -> Result<(), PassError> {
        let s = self.substrate;
        let now = now_micros();
        for token in [&s.join_token_id, &s.previous_join_token_id] {
            if !token.is_empty() {
                self.pass.store.join_token_revoke(token, now).await?;
            }
        }
        for node in self.pass.store.node_list(self.pool_id(), i64::MAX).await? {
            if node.deleted_at.is_none() && node.labels.contains_key(FLAVOR_LABEL) {
                self.pass.store.node_delete(&node.id, now).await?;
            }
        }
        Ok(())
    }

    /// The Nodes the cluster's API lists in each flavor's node pool, recorded before the
    /// objects are applied: the join with the hosted token admits those machine ids only.
    /// Returns what was listed.
    async fn record_nodes(&self, api: &KubeClient, observed: &mut SubstrateObserved) -> Result<Vec<Node>, PassError> {
        let listed_at = now_micros();
        let listed = api.nodes_list().await.context("listing the cluster's nodes")?;
        let names: Vec<&str> = listed.iter().map(|node| node.name.as_str()).collect();
        self.delete_gone_nodes(&names, listed_at).await?;
        for flavor in &mut observed.flavors {
            let mut names: Vec<String> = listed
                .iter()
                .filter(|node| node.labels.get(NODE_POOL_LABEL) == Some(&flavor.node_pool))
                .map(|node| node.name.clone())
                .collect();
            names.sort();
            flavor.nodes = names;
        }
        let recorded = |name: &str| self.substrate.flavors.iter().find(|f| f.name == name).map(|f| &f.nodes);
        if observed.flavors.iter().any(|f| recorded(&f.name) != Some(&f.nodes)) {
            self.pass.store.substrate_record_nodes(self.substrate, &observed.flavors).await?;
        }
        Ok(listed)
    }

    /// Deletes the pool's live nodes of the substrate's flavors whose machine (the cluster's Node
    /// named by their machine id) the cluster no longer has: a node pool shrunk, a machine
    /// replaced or removed. Such a node never heartbeats again, and its machine id may come
    /// back as another node. Only nodes that joined before the Nodes were listed at
    /// `listed_at` are judged: a machine that joined since may be missing from the list.
    async fn delete_gone_nodes(&self, listed: &[&str], listed_at: i64) -> Result<(), PassError> {
        let now = now_micros();
        for node in self.pass.store.node_list(self.pool_id(), i64::MAX).await? {
            let gone = node.deleted_at.is_none()
                && matches!(node.state, PoolNodeState::Ready | PoolNodeState::NotReady)
                && node.labels.contains_key(FLAVOR_LABEL)
                && node.joined_at < listed_at
                && !listed.contains(&node.machine_id.as_str());
            if gone {
                self.pass.store.node_delete(&node.id, now).await?;
                tracing::info!(pool = %self.pool_id(), node = %node.id, machine = %node.machine_id,
                    "the cluster no longer has the node's machine: node deleted");
            }
        }
        Ok(())
    }

    /// Applies the objects that are missing or changed, and deletes the DaemonSets of removed
    /// flavors. `Some` when it stopped (an object not ours in the way).
    async fn converge_objects(
        &self,
        api: &KubeClient,
        endpoint: &DaemonEndpoint,
        token: &str,
        observed: &mut SubstrateObserved,
    ) -> Result<Option<Outcome>, PassError> {
        const DOING: &str = "applying the substrate's objects";
        let flavor_names: Vec<String> = self.substrate.spec.flavors.iter().map(|f| f.name.clone()).collect();
        let image = match self.substrate.spec.bcd_image.as_str() {
            "" => DEFAULT_BCD_IMAGE,
            image => image,
        };
        let inputs = Inputs { pool_id: self.pool_id(), flavors: &flavor_names, image, endpoint, token };
        let desired = objects::desired(&inputs);
        let mut applied = Vec::new();
        for object in &desired {
            let at = reference(object);
            match api.object_get(&at).await.context(DOING)? {
                Some(existing) if !is_ours(&existing, self.pool_id()) => {
                    let message = format!(
                        "{at} exists on the cluster without the label {SUBSTRATE_LABEL}={}: it was not made by this \
                         substrate and is left untouched; remove or rename it",
                        self.pool_id()
                    );
                    return self.fail(observed.clone(), message).await.map(Some);
                }
                Some(existing) if is_applied(&existing, object) => {}
                _ => match api.apply(object, FIELD_MANAGER, Force::No).await {
                    Ok(_) => {}
                    Err(error) if error.status == Some(409) => {
                        let message =
                            format!("{at}: another field manager owns a field this substrate sets: {}", error.message);
                        return self.fail(observed.clone(), message).await.map(Some);
                    }
                    Err(error) => return Err(PassError::from(error).context(DOING)),
                },
            }
            applied.push(SubstrateObjectRow { kind: at.kind, namespace: at.namespace, name: at.name });
        }
        let selector = format!("{SUBSTRATE_LABEL}={}", self.pool_id());
        for stale in api.objects_labelled("DaemonSet", &selector).await.context(DOING)? {
            if !applied.iter().any(|o| o.kind == stale.kind && o.namespace == stale.namespace && o.name == stale.name) {
                api.object_delete(&stale).await.context(DOING)?;
            }
        }
        observed.objects = applied;
        Ok(None)
    }

    /// Counts each flavor's nodes that joined the pool and are `ready`.
    async fn count_joined(&self, observed: &mut SubstrateObserved) -> Result<(), PassError> {
        let nodes = self.pass.store.node_list(self.pool_id(), i64::MAX).await?;
        for flavor in &mut observed.flavors {
            flavor.joined_nodes = nodes
                .iter()
                .filter(|n| n.state == PoolNodeState::Ready && n.labels.get(FLAVOR_LABEL) == Some(&flavor.name))
                .count() as i64;
        }
        Ok(())
    }

    /// Everything converged: `ready`, publishing `ready` the first time and `updated` when it is
    /// ready again after a change.
    async fn ready(&self, mut observed: SubstrateObserved) -> Result<Outcome, PassError> {
        let s = self.substrate;
        observed.state = SubstrateState::Ready;
        observed.message = String::new();
        if !s.ready_once {
            observed.changes.push("ready");
        } else if s.state != SubstrateState::Ready {
            observed.changes.push("updated");
        }
        // Settled, but back soon enough to renew the token and count nodes that come and go.
        self.record(observed, Outcome::settled()).await
    }

    /// Tears the substrate down, one step per pass, then ends it.
    async fn teardown(&self) -> Result<Outcome, PassError> {
        let mut observed = self.unchanged();
        // What an earlier pass of the teardown left (a namespace kept) is said until the end.
        if self.substrate.state != SubstrateState::Deleting {
            observed.message = String::new();
        }
        observed.state = SubstrateState::Deleting;
        let name = &self.substrate.cluster_name;
        let Some(remote) = self.gke.cluster_get(name).await.found()? else {
            return self.finish(&observed.message).await;
        };
        if self.created() {
            if remote.labels.get(CLUSTER_LABEL).map(String::as_str) != Some(self.pool_id()) {
                // Not the cluster this substrate made: left as it is.
                return self.finish("").await;
            }
            if remote.status == "STOPPING" {
                return self.record(observed, Outcome::converging()).await;
            }
            let deleted = self.gke.cluster_delete(name).await;
            return match deleted {
                Err(error) if error.is_not_found() => self.finish("").await,
                Err(error) if error.kind == ErrorKind::ConflictInProgress => {
                    self.record(observed, Outcome::converging()).await
                }
                Err(error) => Err(error.into()),
                Ok(_) => self.record(observed, Outcome::converging()).await,
            };
        }
        // Adopted: the objects carrying the pool's label, then its node pools; nothing else. The
        // cluster's API answers while GKE reconciles it (another pool's node pool going away on
        // a shared cluster); in any other state the objects wait, and so does everything after
        // them, or the substrate would end with its objects left on the cluster.
        let api_up = matches!(remote.status.as_str(), "RUNNING" | "RECONCILING");
        if !api_up && !self.substrate.objects.is_empty() {
            observed.message = format!("waiting for the cluster ({}) to delete the substrate's objects", remote.status);
            return self.record(observed, Outcome::converging()).await;
        }
        if api_up {
            const DOING: &str = "deleting the substrate's objects";
            let api = KubeClient::new(
                &remote.endpoint,
                &remote.ca_certificate_pem,
                KubeAuth::Google(self.gke.tokens().clone()),
            )
            .context(DOING)?;
            let selector = format!("{SUBSTRATE_LABEL}={}", self.pool_id());
            for kind in KINDS.iter().rev().filter(|kind| **kind != "Namespace") {
                for object in api.objects_labelled(kind, &selector).await.context(DOING)? {
                    api.object_delete(&object).await.context(DOING)?;
                }
            }
            // Deleting a namespace deletes what is in it: it goes only when nothing is left there
            // that the substrate did not make.
            observed.message = String::new();
            for namespace in api.objects_labelled("Namespace", &selector).await.context(DOING)? {
                let mut theirs = Vec::new();
                for kind in NAMESPACED_KINDS {
                    let found = api.objects_in_namespace(kind, &namespace.name).await.context(DOING)?;
                    theirs.extend(objects::not_ours(kind, &found, self.pool_id()));
                }
                if theirs.is_empty() {
                    api.object_delete(&namespace).await.context(DOING)?;
                } else {
                    observed.message = format!(
                        "namespace {:?} was left on the cluster: it holds objects the substrate did not make ({}), \
                         which deleting it would delete; everything the substrate made in it is gone",
                        namespace.name,
                        theirs.join(", ")
                    );
                }
            }
            observed.objects = Vec::new();
        }
        let ours: Vec<_> = remote.node_pools.iter().filter(|p| own_flavor(self.pool_id(), p).is_some()).collect();
        let Some(pool) = ours.first() else { return self.finish(&observed.message).await };
        if pool.status != "STOPPING" {
            match self.gke.node_pool_delete(name, &pool.name).await {
                Ok(_) => {}
                Err(error) if error.is_not_found() || error.kind == ErrorKind::ConflictInProgress => {}
                Err(error) => return Err(error.into()),
            }
        }
        self.record(observed, Outcome::converging()).await
    }

    /// Ends the substrate, its `deleted` event saying `message` (what the teardown left, if
    /// anything).
    async fn finish(&self, message: &str) -> Result<Outcome, PassError> {
        self.pass.store.substrate_finish_teardown(self.substrate, message, now_micros()).await?;
        tracing::info!(pool = %self.pool_id(), "substrate torn down");
        Ok(Outcome::remove())
    }
}

/// The joins a hosted token allows: every node the flavors' node pools may have at once (the
/// fixed size or the autoscaling maximum, per zone, times the node pool's zones), and a quarter
/// more (at least one) for machines that replace them; a token that runs out is replaced.
fn hosted_token_uses(
    flavors: &[crate::domain::substrate_policy::Flavor],
    pool_id: &str,
    remote: &crate::provider::Cluster,
) -> i64 {
    let nodes: i64 = flavors
        .iter()
        .map(|flavor| {
            let per_zone = flavor.autoscaling.map_or(flavor.node_count.unwrap_or(0), |bounds| bounds.max).max(0);
            let node_pool = crate::store::flavor_node_pool_name(pool_id, &flavor.name);
            let zones = remote.node_pools.iter().find(|p| p.name == node_pool).map_or(1, |p| p.locations.len().max(1));
            per_zone * zones as i64
        })
        .sum();
    nodes + ((nodes + 3) / 4).max(1)
}

/// The hosted token, or "come back": one was just made (the next pass reads it back).
enum HostedToken {
    Ready(crate::secrets::Secret),
    Again,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::substrate_policy::Flavor;
    use crate::provider::NodePool;

    const POOL: &str = "pool_0123456789abcdefghjkmnpqrs";

    #[test]
    fn a_hosted_token_has_the_uses_of_the_node_pools_at_their_largest_and_a_quarter_more() {
        let flavors: Vec<Flavor> = serde_json::from_value(serde_json::json!([
            {"name": "cpu", "machineType": "e2-standard-4", "nodeCount": 2, "diskGiB": 50},
            {"name": "gpu", "machineType": "g2-standard-8", "autoscaling": {"min": 0, "max": 3}, "diskGiB": 50},
        ]))
        .unwrap();
        let zonal = crate::provider::Cluster::default();
        assert_eq!(hosted_token_uses(&flavors, POOL, &zonal), 5 + 2);
        // A node pool in three zones has its size in each.
        let gpu = NodePool {
            name: crate::store::flavor_node_pool_name(POOL, "gpu"),
            locations: vec!["us-central1-a".into(), "us-central1-b".into(), "us-central1-c".into()],
            ..NodePool::default()
        };
        let regional = crate::provider::Cluster { node_pools: vec![gpu], ..Default::default() };
        assert_eq!(hosted_token_uses(&flavors, POOL, &regional), 11 + 3);
        assert_eq!(hosted_token_uses(&flavors[..1], POOL, &zonal), 3, "never fewer than one spare");
    }
}
