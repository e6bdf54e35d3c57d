//! Kubernetes pool substrates in the store: the desired spec written with the pool's policy (in
//! the pool's own transaction, with the reconciler's work), a teardown asked for when the pool
//! is archived, and the substrate's events on the pool's subject.

use sqlx::any::AnyRow;
use sqlx::{Any, Row, Transaction};

use super::catalog::value_from_json;
use super::record::{Announced, Record, pool_event};
use super::resource::AnyQuery;
use super::{NewEvent, PoolRow, Store};
use crate::domain::states::{PoolState, SubstrateState};
use crate::domain::substrate_policy::{self, SubstrateCluster, SubstratePolicy};
use crate::error::{Error, Result};

/// The work kind of the `kubernetes.substrates` reconciler.
pub const SUBSTRATE_KIND: &str = "kubernetes-substrate";

/// A flavor's node pool as the reconciler last saw it.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SubstrateFlavorRow {
    /// The flavor.
    pub name: String,
    /// Its node pool's name at the provider (`bc-<pool>-<flavor>`).
    pub node_pool: String,
    /// `pending`, `provisioning`, `ready`, `updating`, `deleting` or `error`.
    pub state: SubstrateState,
    /// Nodes asked for (the fixed size, or the autoscaling minimum).
    pub desired_nodes: i64,
    /// Nodes the provider reports.
    pub provider_nodes: i64,
    /// Nodes joined to the pool.
    pub joined_nodes: i64,
    /// The names of the Nodes the cluster's API lists in its node pool, as the reconciler last
    /// saw them: the only machine ids that join with the hosted token.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub nodes: Vec<String>,
}

/// An object applied to the substrate's cluster.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SubstrateObjectRow {
    pub kind: String,
    pub namespace: String,
    pub name: String,
}

/// A substrate as stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SubstrateRow {
    /// Its pool (a pool has at most one).
    pub pool_id: String,
    /// The tenant whose account the pool is on; `None` for a platform pool.
    pub tenant_id: Option<String>,
    /// The GKE account of the cluster.
    pub account_id: String,
    /// `create` or `adopt`.
    pub mode: String,
    /// The policy's substrate, as checked.
    pub spec: SubstratePolicy,
    /// The cluster's name at the provider.
    pub cluster_name: String,
    /// Its zone or region.
    pub location: String,
    /// Its API endpoint, once known.
    pub endpoint: String,
    /// Control plane and node versions, once known.
    pub master_version: String,
    pub node_version: String,
    /// `pending`, `provisioning`, `ready`, `updating`, `deleting`, `deleted` or `error`.
    pub state: SubstrateState,
    /// Why it is in `error`.
    pub message: String,
    /// Its flavors' node pools.
    pub flavors: Vec<SubstrateFlavorRow>,
    /// The objects it applied.
    pub objects: Vec<SubstrateObjectRow>,
    /// The hosted join token; empty until made.
    pub join_token_id: String,
    /// That token's bearer form, sealed with the server's key (bound to the pool id).
    pub join_token_sealed: SealedToken,
    /// The token it replaced, revoked once the daemons have re-read the Secret; empty when none.
    pub previous_join_token_id: String,
    /// When the current token replaced the previous one.
    pub join_token_rotated_at: Option<i64>,
    /// Whether it was ever `ready` (a later `ready` is an `updated`).
    pub ready_once: bool,
    /// Bumped by every change of its spec or state.
    pub version: i64,
    /// When its teardown was asked for.
    pub teardown_requested_at: Option<i64>,
    pub created_at: i64,
    pub updated_at: i64,
    pub deleted_at: Option<i64>,
    /// Why its passes keep failing, while they do.
    pub problem: Option<crate::domain::problem::Problem>,
}

/// A sealed bearer form: `Debug` never prints it.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct SealedToken(pub String);

impl std::fmt::Debug for SealedToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_empty() { "SealedToken(none)" } else { "SealedToken(<sealed>)" })
    }
}

/// A substrate's columns, as its row is read; its insert gives the first twenty.
macro_rules! columns {
    () => {
        "pool_id, tenant_id, account_id, mode, spec, cluster_name, location, endpoint, master_version, node_version, \
         state, message, flavors, objects, join_token_id, version, teardown_requested_at, created_at, updated_at, \
         deleted_at, join_token_sealed, previous_join_token_id, join_token_rotated_at, ready_once"
    };
}

impl Record for SubstrateRow {
    const SELECT: &'static str = concat!(
        "SELECT ",
        columns!(),
        ", (SELECT w.problem_class || '|' || COALESCE(w.problem_since, 0) || '|' || w.attempts || '|' || w.due_at \
         || '|' || COALESCE(w.last_error, '') FROM work_items w WHERE w.kind = 'kubernetes-substrate' \
         AND w.object_id = kubernetes_substrates.pool_id AND w.problem_class <> '') AS problem \
         FROM kubernetes_substrates"
    );
    const ID: &'static str = "pool_id";
    const NOUN: &'static str = "substrate";

    fn from_row(row: &AnyRow) -> Result<SubstrateRow> {
        let json = |column: &str| row.try_get::<String, _>(column);
        Ok(read_columns!(row, SubstrateRow {
            pool_id, tenant_id, account_id, mode, cluster_name, location, endpoint, master_version, node_version,
            state, message, join_token_id, previous_join_token_id, join_token_rotated_at, version,
            teardown_requested_at, created_at, updated_at, deleted_at;
            spec: value_from_json(&json("spec")?)?,
            flavors: value_from_json(&json("flavors")?)?,
            objects: value_from_json(&json("objects")?)?,
            join_token_sealed: SealedToken(row.try_get("join_token_sealed")?),
            ready_once: row.try_get::<i64, _>("ready_once")? != 0,
            // Only the `SELECT` reads it; a write's `RETURNING` does not.
            problem: crate::domain::problem::from_column(row.try_get::<Option<String>, _>("problem").ok().flatten().as_deref()),
        }))
    }
}

impl Announced for SubstrateRow {
    const TABLE: &'static str = "kubernetes_substrates";

    fn deleted_at(&self) -> Option<i64> {
        self.deleted_at
    }

    /// `kubernetes.substrate.<change>` on the pool's subject.
    fn event(&self, change: &str) -> NewEvent {
        let data = serde_json::json!({
            "poolId": self.pool_id, "mode": self.mode, "clusterName": self.cluster_name, "location": self.location,
            "state": self.state, "message": self.message, "version": self.version,
        });
        let tenant = self.tenant_id.as_deref();
        let source = "/compute/kubernetesSubstrates";
        pool_event(source, "kubernetes.substrate", change, &self.pool_id, tenant, self.updated_at, data)
    }
}

/// The name of the cluster a `create` substrate makes: `bc-s-` and 24 characters of the pool id.
pub fn created_cluster_name(pool_id: &str) -> String {
    let body = pool_id.trim_start_matches("pool_");
    format!("bc-s-{}", &body[..body.len().min(24)])
}

/// The provider name of a flavor's node pool: `bc-`, the first 10 characters of the pool id's
/// body, and the flavor (within GKE's 40 characters).
pub fn flavor_node_pool_name(pool_id: &str, flavor: &str) -> String {
    let body = pool_id.trim_start_matches("pool_");
    format!("bc-{}-{flavor}", &body[..body.len().min(10)])
}

/// Its flavors as they are first recorded: each `pending`, sized as the spec asks.
fn pending_flavors(pool_id: &str, spec: &SubstratePolicy, current: &[SubstrateFlavorRow]) -> Vec<SubstrateFlavorRow> {
    spec.flavors
        .iter()
        .map(|flavor| {
            let seen = current.iter().find(|row| row.name == flavor.name);
            SubstrateFlavorRow {
                name: flavor.name.clone(),
                node_pool: flavor_node_pool_name(pool_id, &flavor.name),
                state: seen.map_or(SubstrateState::Pending, |row| row.state),
                desired_nodes: flavor.node_count.or(flavor.autoscaling.map(|bounds| bounds.min)).unwrap_or(0),
                provider_nodes: seen.map_or(0, |row| row.provider_nodes),
                joined_nodes: seen.map_or(0, |row| row.joined_nodes),
                nodes: seen.map_or_else(Vec::new, |row| row.nodes.clone()),
            }
        })
        .collect()
}

/// A substrate as first recorded for `pool`: `pending`, nothing made yet.
fn new_substrate(pool: &PoolRow, spec: SubstratePolicy, now: i64) -> SubstrateRow {
    let (cluster_name, location) = match &spec.cluster {
        SubstrateCluster::Create { location, .. } => (created_cluster_name(&pool.id), location.clone()),
        SubstrateCluster::Adopt { name, location } => (name.clone(), location.clone()),
    };
    SubstrateRow {
        pool_id: pool.id.clone(),
        tenant_id: pool.tenant_id.clone(),
        account_id: spec.account.clone(),
        mode: spec.cluster.mode().to_owned(),
        flavors: pending_flavors(&pool.id, &spec, &[]),
        spec,
        cluster_name,
        location,
        endpoint: String::new(),
        master_version: String::new(),
        node_version: String::new(),
        state: SubstrateState::Pending,
        message: String::new(),
        objects: Vec::new(),
        join_token_id: String::new(),
        join_token_sealed: SealedToken::default(),
        previous_join_token_id: String::new(),
        join_token_rotated_at: None,
        ready_once: false,
        version: 1,
        teardown_requested_at: None,
        created_at: now,
        updated_at: now,
        deleted_at: None,
        problem: None,
    }
}

impl Store {
    /// Follows the pool's policy in the pool's own transaction: a substrate appears `pending`
    /// with its spec, a changed spec is recorded (version bumped), and an archived pool (or one
    /// whose policy lost its substrate) asks for the teardown; each time the reconciler is woken.
    pub(super) async fn substrate_follow_pool_in(
        &self,
        txn: &mut Transaction<'static, Any>,
        pool: &PoolRow,
        now: i64,
    ) -> Result<()> {
        let wanted = substrate_policy::read(&pool.policy)?.filter(|_| pool.state == PoolState::Active);
        let mut current: Option<SubstrateRow> = self.record_find_in(txn, &pool.id).await?;
        if wanted.is_some() && current.as_ref().is_some_and(|row| row.deleted_at.is_some()) {
            // A pool made active again after its substrate was torn down gets one anew.
            sqlx::query("DELETE FROM kubernetes_substrates WHERE pool_id = $1")
                .bind(&pool.id)
                .execute(&mut **txn)
                .await?;
            current = None;
        }
        let (row, change) = match (wanted, current) {
            (None, None) => return Ok(()),
            (None, Some(current)) if current.teardown_requested_at.is_some() || current.deleted_at.is_some() => {
                return Ok(());
            }
            (None, Some(current)) => {
                sqlx::query(
                    "UPDATE kubernetes_substrates SET teardown_requested_at = $2, version = version + 1, \
                     updated_at = $2 WHERE pool_id = $1",
                )
                .bind(&current.pool_id)
                .bind(now)
                .execute(&mut **txn)
                .await?;
                (current, None)
            }
            (Some(spec), None) => {
                let row = new_substrate(pool, spec, now);
                self.substrate_insert_in(txn, &row).await?;
                (row, Some("created"))
            }
            (Some(spec), Some(current)) if spec == current.spec && current.teardown_requested_at.is_none() => {
                return Ok(());
            }
            (Some(spec), Some(current)) => {
                let flavors = pending_flavors(&pool.id, &spec, &current.flavors);
                sqlx::query(
                    "UPDATE kubernetes_substrates SET spec = $2, flavors = $3, teardown_requested_at = NULL, \
                     version = version + 1, updated_at = $4 WHERE pool_id = $1",
                )
                .bind(&current.pool_id)
                .bind(serde_json::to_string(&spec).expect("a spec serializes"))
                .bind(serde_json::to_string(&flavors).expect("flavors serialize"))
                .bind(now)
                .execute(&mut **txn)
                .await?;
                (current, None)
            }
        };
        if let Some(change) = change {
            self.event_append_in(txn, &row.event(change)).await?;
        }
        self.work_enqueue_in(txn, SUBSTRATE_KIND, &row.pool_id, row.state.as_str(), None, now).await
    }

    async fn substrate_insert_in(&self, txn: &mut Transaction<'static, Any>, row: &SubstrateRow) -> Result<()> {
        sqlx::query(concat!(
            "INSERT INTO kubernetes_substrates (",
            columns!(),
            ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, \
             '', '', NULL, 0)"
        ))
        .bind(&row.pool_id)
        .bind(&row.tenant_id)
        .bind(&row.account_id)
        .bind(&row.mode)
        .bind(serde_json::to_string(&row.spec).expect("a spec serializes"))
        .bind(&row.cluster_name)
        .bind(&row.location)
        .bind(&row.endpoint)
        .bind(&row.master_version)
        .bind(&row.node_version)
        .bind(row.state)
        .bind(&row.message)
        .bind(serde_json::to_string(&row.flavors).expect("flavors serialize"))
        .bind(serde_json::to_string(&row.objects).expect("objects serialize"))
        .bind(&row.join_token_id)
        .bind(row.version)
        .bind(row.teardown_requested_at)
        .bind(row.created_at)
        .bind(row.updated_at)
        .bind(row.deleted_at)
        .execute(&mut **txn)
        .await?;
        Ok(())
    }

    /// The pool's substrate; `NOT_FOUND` when its policy never had one.
    pub async fn substrate_fetch(&self, pool_id: &str) -> Result<SubstrateRow> {
        crate::measured::store("substrate_fetch", async {
            self.record_find(pool_id).await?.ok_or_else(|| {
                Error::not_found("substrate", pool_id).with_detail(
                    "hint",
                    "a pool has a substrate once its policy has one (policy.substrate); see pools.update",
                )
            })
        })
        .await
    }

    /// Substrates, oldest first (at most `limit`), those of `tenant`'s pools when it is given.
    pub async fn substrate_list(&self, tenant: Option<&str>, limit: i64) -> Result<Vec<SubstrateRow>> {
        let bind = |q: AnyQuery<'static>| q.bind(tenant.unwrap_or_default().to_owned()).bind(limit);
        let listed = self.record_list("($1 = '' OR tenant_id = $1)", "created_at, pool_id LIMIT $2", bind);
        crate::measured::store("substrate_list", listed).await
    }
}

/// Whom a cluster the system manages is managed for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ClusterOwner {
    /// A tenant's (a cluster of the clusters API, or one a tenant pool's substrate made).
    Tenant(String),
    /// The platform's (one a platform pool's substrate made).
    Platform,
    /// It carries the system's label but no row says whose it is: nobody's to adopt.
    Unknown,
}

/// A cluster the system manages, and what manages it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ManagedCluster {
    pub owner: ClusterOwner,
    /// `kubernetes cluster kcl_...` or `the substrate of pool pool_...`.
    pub managed_as: String,
}

impl ManagedCluster {
    /// Whether a pool of `tenant` (`None`: a platform pool) may adopt it.
    pub fn adoptable_by(&self, tenant: Option<&str>) -> bool {
        match (&self.owner, tenant) {
            (ClusterOwner::Tenant(owner), Some(tenant)) => owner == tenant,
            (ClusterOwner::Platform, None) => true,
            _ => false,
        }
    }
}

/// What marks a cluster at the provider as the system's: its name, and the labels the
/// clusters' and the substrates' reconcilers put on the clusters they make.
#[derive(Clone, Copy, Debug, Default)]
pub struct ClusterMarks<'a> {
    pub name: &'a str,
    /// The `better-compute-cluster` label: a clusters-API cluster's id.
    pub cluster_id: Option<&'a str>,
    /// The `better-compute-substrate-pool` label: the pool whose substrate made it.
    pub substrate_pool: Option<&'a str>,
}

impl Store {
    /// Whether the cluster `marks` describe is one the system manages, other than the one
    /// `pool_id`'s own substrate made: a live clusters-API cluster of that provider name or
    /// label, or a live made substrate cluster of that name or label.
    pub async fn substrate_managed_cluster(
        &self,
        marks: ClusterMarks<'_>,
        pool_id: &str,
    ) -> Result<Option<ManagedCluster>> {
        crate::measured::store("substrate_managed_cluster", async {
            let tenant_of = |tenant: Option<String>| tenant.map_or(ClusterOwner::Platform, ClusterOwner::Tenant);
            let mut cluster_ids: Vec<String> = marks.cluster_id.map(str::to_owned).into_iter().collect();
            // `bc-k-` and 24 characters of the id: the clusters whose id starts with them.
            if let Some(body) = marks.name.strip_prefix("bc-k-")
                && body.len() == 24
                && body.bytes().all(|b| b.is_ascii_digit() || b.is_ascii_lowercase())
            {
                let named: Vec<String> =
                    sqlx::query_scalar("SELECT id FROM kubernetes_clusters WHERE id LIKE $1 AND deleted_at IS NULL")
                        .bind(format!("kcl_{body}%"))
                        .fetch_all(&self.pool)
                        .await?;
                cluster_ids.extend(named);
            }
            let mut unknown = None;
            for id in &cluster_ids {
                let tenant: Option<String> = sqlx::query_scalar(
                    "SELECT tenant_id FROM kubernetes_clusters WHERE id = $1 AND deleted_at IS NULL",
                )
                .bind(id)
                .fetch_optional(&self.pool)
                .await?;
                let managed_as = format!("kubernetes cluster {id}");
                match tenant {
                    Some(tenant) => {
                        return Ok(Some(ManagedCluster { owner: ClusterOwner::Tenant(tenant), managed_as }));
                    }
                    // Labelled as one of the system's, but no live row says whose.
                    None => unknown = unknown.or(Some(ManagedCluster { owner: ClusterOwner::Unknown, managed_as })),
                }
            }
            let made: Option<SubstrateRow> = self
                .record_list(
                    "mode = 'create' AND deleted_at IS NULL AND pool_id <> $2 AND (cluster_name = $1 OR pool_id = $3)",
                    "created_at, pool_id LIMIT 1",
                    |q| {
                        q.bind(marks.name.to_owned())
                            .bind(pool_id.to_owned())
                            .bind(marks.substrate_pool.unwrap_or_default().to_owned())
                    },
                )
                .await?
                .into_iter()
                .next();
            if let Some(made) = made {
                let managed_as = format!("the substrate of pool {}", made.pool_id);
                return Ok(Some(ManagedCluster { owner: tenant_of(made.tenant_id), managed_as }));
            }
            if let Some(pool) = marks.substrate_pool.filter(|pool| *pool != pool_id) {
                let managed_as = format!("the substrate of pool {pool}");
                return Ok(Some(ManagedCluster { owner: ClusterOwner::Unknown, managed_as }));
            }
            Ok(unknown)
        })
        .await
    }

    /// The substrate whose hosted join token (current, or the one it is replacing) is `token_id`.
    pub async fn substrate_hosting(&self, token_id: &str) -> Result<Option<SubstrateRow>> {
        crate::measured::store("substrate_hosting", async {
            let condition = "join_token_id = $1 OR previous_join_token_id = $1";
            let found: Vec<SubstrateRow> =
                self.record_list(condition, "created_at, pool_id", |q| q.bind(token_id.to_owned())).await?;
            Ok(found.into_iter().next())
        })
        .await
    }

    /// Records the Nodes the cluster's API lists in each flavor's node pool, before the objects
    /// that make them join are applied (the join admits only those); the rest of the
    /// observation is written with the pass's.
    pub async fn substrate_record_nodes(&self, current: &SubstrateRow, flavors: &[SubstrateFlavorRow]) -> Result<()> {
        crate::measured::store("substrate_record_nodes", async {
            sqlx::query("UPDATE kubernetes_substrates SET flavors = $2 WHERE pool_id = $1 AND deleted_at IS NULL")
                .bind(&current.pool_id)
                .bind(serde_json::to_string(flavors).expect("flavors serialize"))
                .execute(&self.pool)
                .await?;
            Ok(())
        })
        .await
    }
}

/// What one pass of the reconciler saw and made: written only over the version it read.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SubstrateObserved {
    /// `provisioning`, `ready`, `updating`, `deleting` or `error`.
    pub state: SubstrateState,
    /// Why it is in `error`, or what it waits for.
    pub message: String,
    pub endpoint: String,
    pub master_version: String,
    pub node_version: String,
    pub flavors: Vec<SubstrateFlavorRow>,
    pub objects: Vec<SubstrateObjectRow>,
    /// The events to publish with it (`ready`, `updated`, `error`), in order.
    pub changes: Vec<&'static str>,
}

impl Store {
    /// Records a pass's observation if the substrate is still at `version` (a pool update in
    /// between queued another pass, which sees the new spec); the state's change bumps the
    /// version. Returns whether it was written.
    pub async fn substrate_observe(
        &self,
        current: &SubstrateRow,
        observed: &SubstrateObserved,
        now: i64,
    ) -> Result<bool> {
        crate::measured::store("substrate_observe", async {
            let mut txn = self.begin_write().await?;
            let bump = i64::from(observed.state != current.state || observed.message != current.message);
            let ready_once = i64::from(current.ready_once || observed.state == SubstrateState::Ready);
            let updated = sqlx::query(
                "UPDATE kubernetes_substrates SET state = $3, message = $4, endpoint = $5, master_version = $6, \
                 node_version = $7, flavors = $8, objects = $9, ready_once = $10, version = version + $11, \
                 updated_at = $12 WHERE pool_id = $1 AND version = $2 AND deleted_at IS NULL",
            )
            .bind(&current.pool_id)
            .bind(current.version)
            .bind(observed.state)
            .bind(&observed.message)
            .bind(&observed.endpoint)
            .bind(&observed.master_version)
            .bind(&observed.node_version)
            .bind(serde_json::to_string(&observed.flavors).expect("flavors serialize"))
            .bind(serde_json::to_string(&observed.objects).expect("objects serialize"))
            .bind(ready_once)
            .bind(bump)
            .bind(now)
            .execute(&mut *txn)
            .await?;
            if updated.rows_affected() == 0 {
                return Ok(false);
            }
            let row: SubstrateRow = self.record_fetch_in(&mut txn, &current.pool_id).await?;
            for change in &observed.changes {
                self.event_append_in(&mut txn, &row.event(change)).await?;
            }
            self.commit_and_signal(txn).await?;
            Ok(true)
        })
        .await
    }

    /// Makes the substrate's next hosted join token and records it (sealed) as the current one,
    /// the one it replaces as the previous, in one transaction: a pass that crashes after this
    /// finds the token again; one that crashes before made nothing. `false` (nothing written)
    /// when the substrate moved past `current.version` or is being torn down.
    pub async fn substrate_token_issue(
        &self,
        current: &SubstrateRow,
        token: &super::JoinTokenRow,
        sealed: &str,
        now: i64,
    ) -> Result<bool> {
        crate::measured::store("substrate_token_issue", async {
            let mut txn = self.begin_write().await?;
            let updated = sqlx::query(
                "UPDATE kubernetes_substrates SET previous_join_token_id = join_token_id, join_token_id = $3, \
                 join_token_sealed = $4, join_token_rotated_at = $5, updated_at = $5 \
                 WHERE pool_id = $1 AND version = $2 AND teardown_requested_at IS NULL AND previous_join_token_id = ''",
            )
            .bind(&current.pool_id)
            .bind(current.version)
            .bind(&token.id)
            .bind(sealed)
            .bind(now)
            .execute(&mut *txn)
            .await?;
            if updated.rows_affected() == 0 {
                return Ok(false);
            }
            self.join_token_insert_in(&mut txn, token).await?;
            self.commit_and_signal(txn).await?;
            Ok(true)
        })
        .await
    }

    /// Revokes the token the current one replaced, and forgets it.
    pub async fn substrate_token_retire_previous(&self, current: &SubstrateRow, now: i64) -> Result<()> {
        crate::measured::store("substrate_token_retire_previous", async {
            if current.previous_join_token_id.is_empty() {
                return Ok(());
            }
            self.join_token_revoke(&current.previous_join_token_id, now).await?;
            sqlx::query(
                "UPDATE kubernetes_substrates SET previous_join_token_id = '' \
                 WHERE pool_id = $1 AND previous_join_token_id = $2",
            )
            .bind(&current.pool_id)
            .bind(&current.previous_join_token_id)
            .execute(&self.pool)
            .await?;
            Ok(())
        })
        .await
    }

    /// Ends a torn-down substrate: its tokens revoked, its pool's live nodes `deleted`, the
    /// substrate `deleted` with its event. Each step is safe to repeat after a crash.
    pub async fn substrate_finish_teardown(&self, current: &SubstrateRow, message: &str, now: i64) -> Result<()> {
        crate::measured::store("substrate_finish_teardown", async {
            for token in [&current.join_token_id, &current.previous_join_token_id] {
                if !token.is_empty() {
                    self.join_token_revoke(token, now).await?;
                }
            }
            for node in self.node_list(&current.pool_id, i64::MAX).await? {
                if node.deleted_at.is_none() {
                    self.node_delete(&node.id, now).await?;
                }
            }
            let mut txn = self.begin_write().await?;
            let updated = sqlx::query(
                "UPDATE kubernetes_substrates SET state = 'deleted', message = $3, flavors = '[]', objects = '[]', \
                 join_token_sealed = '', previous_join_token_id = '', deleted_at = $2, version = version + 1, \
                 updated_at = $2 WHERE pool_id = $1 AND deleted_at IS NULL AND teardown_requested_at IS NOT NULL",
            )
            .bind(&current.pool_id)
            .bind(now)
            .bind(message)
            .execute(&mut *txn)
            .await?;
            if updated.rows_affected() > 0 {
                self.record_changed_in::<SubstrateRow>(&mut txn, &current.pool_id, "deleted").await?;
                self.commit_and_signal(txn).await?;
            }
            Ok(())
        })
        .await
    }

    /// The substrate the reconciler works on: `None` once it is gone or torn down.
    pub async fn substrate_for_reconcile(&self, pool_id: &str) -> Result<Option<SubstrateRow>> {
        let live = async { Ok(self.record_find(pool_id).await?.filter(|row: &SubstrateRow| row.deleted_at.is_none())) };
        crate::measured::store("substrate_for_reconcile", live).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn provider_names_fit_gke_and_never_collide_with_a_tenants_pools() {
        let pool = "pool_0123456789abcdefghjkmnpqrs";
        assert_eq!(created_cluster_name(pool), "bc-s-0123456789abcdefghjkmnpq");
        let name = flavor_node_pool_name(pool, "abcdefghijklmnopqrstuvwxy");
        assert_eq!(name, "bc-0123456789-abcdefghijklmnopqrstuvwxy");
        assert!(name.len() <= 40, "{}", name.len());
    }
}

#[cfg(test)]
mod problem_tests {
    use super::*;

    #[test]
    fn a_substrate_reads_its_problem_as_every_resource_does() {
        let column = crate::domain::problem::column_sql(SUBSTRATE_KIND, "kubernetes_substrates.pool_id");
        let squeezed = |sql: &str| sql.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(squeezed(SubstrateRow::SELECT).contains(&squeezed(&column)), "{}", SubstrateRow::SELECT);
    }
}
