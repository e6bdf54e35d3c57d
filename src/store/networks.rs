//! Tenant networks and their subnets in the store: the tenant's desired state beside what the
//! provider last reported. A write that needs the reconciler enqueues the `network` work item in
//! the same transaction; the reconciler's own writes are conditional on the row's `version`, so
//! an observation made before a tenant's change never overwrites it.
//!
//! What rests on a network (instances on its subnets, clusters using it, and, from migration 7
//! on, load balancers on its subnets) holds the network's row lock while it is written (see
//! [`Store::network_hold_in`]), and a delete takes that lock before it counts what rests on it:
//! the two never both succeed.

use sqlx::any::AnyRow;
use sqlx::{Any, Row, Transaction};

use super::resource::{
    Resource, ResourceFilter, ResourceMeta, ResourceTable, attach_children, name_taken, not_found, retried,
};
use super::{AuthzResourceRow, NewEvent, Store, conflict_on_unique, hold_live_row_in};
use crate::domain::lifecycle_events::LifecycleEvent;
use crate::domain::states::ProvisionState;
use crate::error::{Error, Result};

/// The work kind of networks in the `vps.provider-resources` reconciler.
pub const NETWORK_KIND: &str = "network";

/// The authorization resource type of a network.
pub const NETWORK_RESOURCE: &str = "compute-network";

/// The source of the `vps` module's events.
pub const VPS_EVENT_SOURCE: &str = "/compute/vps";

/// A network as stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NetworkRow {
    /// Its common fields (`id` is `net_...`; `state` is `pending`, `provisioning`, `ready`,
    /// `deleting`, `deleted` or `error`).
    pub meta: ResourceMeta<ProvisionState>,
    /// The account's provider at creation: `gke` or `digitalocean`.
    pub provider: String,
    /// Free text.
    pub description: String,
    /// GKE: the VPC network's name once made; DigitalOcean: empty.
    pub provider_id: String,
    /// Its subnets, in the order they were asked for.
    pub subnets: Vec<SubnetRow>,
}

impl Resource for NetworkRow {
    type State = ProvisionState;

    const TABLE: ResourceTable = ResourceTable {
        table: "networks",
        columns: "provider, description, provider_id",
        keeps_idempotency_key: true,
        noun: "network",
        not_found: "network",
        id_field: "networkId",
        work_kind: NETWORK_KIND,
        authz_type: NETWORK_RESOURCE,
        event_source: VPS_EVENT_SOURCE,
        event_prefix: "network",
    };

    fn from_row(row: &AnyRow) -> Result<NetworkRow> {
        Ok(read_columns!(row, NetworkRow {
            provider, description, provider_id;
            meta: ResourceMeta::from_row(row, &Self::TABLE)?,
            subnets: Vec::new(),
        }))
    }
}

/// A subnet as stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SubnetRow {
    /// `snet_...`.
    pub id: String,
    /// Its network.
    pub network_id: String,
    /// Its tenant.
    pub tenant_id: String,
    /// Its name, unique in the network.
    pub name: String,
    /// Its region.
    pub region: String,
    /// Its IPv4 range (CIDR).
    pub ip_range: String,
    /// `pending`, `ready`, `deleting`, `deleted` or `error`.
    pub state: ProvisionState,
    /// Why it is in `error`.
    pub message: String,
    /// DigitalOcean: the VPC's uuid; GKE: the subnetwork's name. Empty until made.
    pub provider_id: String,
    /// Creation time.
    pub created_at: i64,
    /// Last change.
    pub updated_at: i64,
    /// Deletion time, once deleted.
    pub deleted_at: Option<i64>,
}

/// A network to create with its subnets.
#[derive(Clone, Debug)]
pub struct NewNetwork {
    /// The row (state `pending`), subnets included.
    pub row: NetworkRow,
    /// When `pending` counts as stuck.
    pub deadline: Option<i64>,
}

/// What the reconciler observed of one subnet.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SubnetObserved {
    /// The subnet.
    pub id: String,
    /// Its new state.
    pub state: ProvisionState,
    /// Its message.
    pub message: String,
    /// Its provider id.
    pub provider_id: String,
}

/// What the reconciler observed of a network, and the events that follow.
#[derive(Clone, Debug, Default)]
pub struct NetworkObserved {
    /// The network's version the observation was made against.
    pub version: i64,
    /// Its new state.
    pub state: ProvisionState,
    /// Its message.
    pub message: String,
    /// Its provider id.
    pub provider_id: String,
    /// The subnets' observations.
    pub subnets: Vec<SubnetObserved>,
    /// Events to publish with the write.
    pub events: Vec<NewEvent>,
}

/// What rests on a network: a delete is refused while any of it is there.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NetworkUsage {
    /// Instances on its subnets that are not deleted.
    pub instances: Vec<String>,
    /// Kubernetes clusters using it that are not deleted.
    pub clusters: Vec<String>,
    /// Load balancers living on its subnets that are not deleted.
    pub load_balancers: Vec<String>,
}

impl NetworkUsage {
    /// Whether nothing rests on it.
    pub fn is_empty(&self) -> bool {
        self.instances.is_empty() && self.clusters.is_empty() && self.load_balancers.is_empty()
    }
}

const SUBNET_COLUMNS: &str = "id, network_id, tenant_id, name, region, ip_range, state, message, provider_id, created_at, updated_at, deleted_at";

fn subnet_from_row(row: &AnyRow) -> Result<SubnetRow> {
    Ok(read_columns!(
        row,
        SubnetRow {
            id,
            network_id,
            tenant_id,
            name,
            region,
            ip_range,
            state,
            message,
            provider_id,
            created_at,
            updated_at,
            deleted_at,
        }
    ))
}

/// A network event (`network.<kind>`) on the network's subject.
pub fn network_event(kind: LifecycleEvent, network: &NetworkRow, now: i64, extra: serde_json::Value) -> NewEvent {
    network.event(kind, now, extra)
}

impl Store {
    /// Inside a delete's transaction: a fresh work item in `deleting` due now, so the delete
    /// backoff starts over and the first try is at once (a new delete call retries at once).
    pub(super) async fn work_restart_delete_in(
        &self,
        txn: &mut Transaction<'static, Any>,
        kind: &str,
        id: &str,
        deadline: Option<i64>,
        now: i64,
    ) -> Result<()> {
        crate::measured::store("work_restart_delete_in", async {
            sqlx::query("UPDATE work_items SET attempts = 0 WHERE kind = $1 AND object_id = $2")
                .bind(kind)
                .bind(id)
                .execute(&mut **txn)
                .await?;
            self.work_enqueue_in(txn, kind, id, "deleting", deadline, now).await
        })
        .await
    }

    async fn network_fetch_in(&self, txn: &mut Transaction<'static, Any>, id: &str) -> Result<Option<NetworkRow>> {
        crate::measured::store("network_fetch_in", self.resource_fetch_in(txn, id)).await
    }

    /// The subnets of a network, in the order they were asked for.
    pub async fn subnet_list(&self, network_id: &str) -> Result<Vec<SubnetRow>> {
        crate::measured::store("subnet_list", async {
            let sql = format!("SELECT {SUBNET_COLUMNS} FROM subnets WHERE network_id = $1 ORDER BY created_at, id");
            let rows = sqlx::query(sqlx::AssertSqlSafe(sql)).bind(network_id).fetch_all(&self.pool).await?;
            rows.iter().map(subnet_from_row).collect()
        })
        .await
    }

    /// One subnet by id (whatever its tenant: callers check).
    pub async fn subnet_fetch(&self, id: &str) -> Result<Option<SubnetRow>> {
        crate::measured::store("subnet_fetch", async {
            let sql = format!("SELECT {SUBNET_COLUMNS} FROM subnets WHERE id = $1");
            let row = sqlx::query(sqlx::AssertSqlSafe(sql)).bind(id).fetch_optional(&self.pool).await?;
            row.as_ref().map(subnet_from_row).transpose()
        })
        .await
    }

    /// One network by id with its subnets (whatever its tenant: callers check).
    pub async fn network_fetch(&self, id: &str) -> Result<Option<NetworkRow>> {
        crate::measured::store("network_fetch", async {
            let Some(mut network) = self.resource_fetch::<NetworkRow>(id).await? else { return Ok(None) };
            network.subnets = self.subnet_list(id).await?;
            Ok(Some(network))
        })
        .await
    }

    /// Creates a network with its subnets, its authorization row, its work item and its
    /// `created` event, in one transaction. A network with the same id (a retry) is returned as
    /// it is when its request hash matches (`Ok((row, false))`), else `CONFLICT`.
    pub async fn network_create(&self, new: &NewNetwork, authz: &AuthzResourceRow) -> Result<(NetworkRow, bool)> {
        crate::measured::store("network_create", async {
            let row = &new.row;
            let mut txn = self.begin_write().await?;
            if let Some(existing) = self.network_fetch_in(&mut txn, &row.id).await? {
                drop(txn);
                retried(existing, row)?;
                let existing = self.network_fetch(&row.id).await?.ok_or_else(|| not_found::<NetworkRow>(&row.id))?;
                return Ok((existing, false));
            }
            let insert = self
                .resource_insert_in(&mut txn, row, "provider, description, provider_id", "?, ?, ''", |query| {
                    query.bind(&row.provider).bind(&row.description)
                })
                .await;
            conflict_on_unique(insert, || name_taken(row))?;
            for subnet in &row.subnets {
                sqlx::query(
                    "INSERT INTO subnets (id, network_id, tenant_id, name, region, ip_range, state, message, \
                     provider_id, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, 'pending', '', '', $7, $7)",
                )
                .bind(&subnet.id)
                .bind(&row.id)
                .bind(&row.tenant_id)
                .bind(&subnet.name)
                .bind(&subnet.region)
                .bind(&subnet.ip_range)
                .bind(subnet.created_at)
                .execute(&mut *txn)
                .await?;
            }
            let subnets: Vec<serde_json::Value> = row
                .subnets
                .iter()
                .map(|s| {
                    serde_json::json!({"subnetId": s.id, "name": s.name, "region": s.region, "ipRange": s.ip_range})
                })
                .collect();
            let extra = serde_json::json!({"poolId": row.pool_id, "subnets": subnets});
            self.resource_created(txn, row, authz, new.deadline, extra).await?;
            let created = self.network_fetch(&row.id).await?.ok_or_else(|| not_found::<NetworkRow>(&row.id))?;
            Ok((created, true))
        })
        .await
    }

    /// The tenant's networks with their subnets, oldest first, at most `limit`.
    pub async fn network_list(&self, filter: &ResourceFilter<'_>) -> Result<Vec<NetworkRow>> {
        crate::measured::store("network_list", async {
            let mut networks: Vec<NetworkRow> = self.resource_list(filter).await?;
            if networks.is_empty() {
                return Ok(networks);
            }
            let sql = format!("SELECT {SUBNET_COLUMNS} FROM subnets WHERE tenant_id = $1 ORDER BY created_at, id");
            let subnets = sqlx::query(sqlx::AssertSqlSafe(sql)).bind(filter.tenant_id).fetch_all(&self.pool).await?;
            let subnets = subnets.iter().map(subnet_from_row);
            attach_children(&mut networks, subnets, |s| &s.network_id, |n, s| n.subnets.push(s))?;
            Ok(networks)
        })
        .await
    }

    /// Changes a network's description (nothing changes at the provider), bumps its version,
    /// wakes the reconciler (a pass that raced the change then records what it saw) and
    /// publishes `updated`.
    pub async fn network_update(&self, id: &str, description: &str, now: i64) -> Result<NetworkRow> {
        crate::measured::store("network_update", async {
            let mut txn = self.begin_write().await?;
            let updated = sqlx::query(
                "UPDATE networks SET description = $2, version = version + 1, updated_at = $3 \
                 WHERE id = $1 AND deleted_at IS NULL AND delete_requested_at IS NULL",
            )
            .bind(id)
            .bind(description)
            .bind(now)
            .execute(&mut *txn)
            .await?;
            if updated.rows_affected() == 0 {
                return Err(Error::invalid_state(format!("network {id:?} is being deleted and cannot change"))
                    .with_detail("networkId", id));
            }
            let network = self.network_fetch_in(&mut txn, id).await?.ok_or_else(|| Error::not_found("network", id))?;
            self.work_enqueue_in(&mut txn, NETWORK_KIND, id, network.state.as_str(), None, now).await?;
            let event =
                network_event(LifecycleEvent::Updated, &network, now, serde_json::json!({"changed": ["description"]}));
            self.event_append_in(&mut txn, &event).await?;
            // Read in the transaction that wrote it: a rehearsal rolls it back.
            let sql = format!("SELECT {SUBNET_COLUMNS} FROM subnets WHERE network_id = $1 ORDER BY created_at, id");
            let rows = sqlx::query(sqlx::AssertSqlSafe(sql)).bind(id).fetch_all(&mut *txn).await?;
            let network = NetworkRow { subnets: rows.iter().map(subnet_from_row).collect::<Result<_>>()?, ..network };
            self.commit_and_signal(txn).await?;
            Ok(network)
        })
        .await
    }

    /// Inside a transaction that puts something on network `id` (an instance on one of its
    /// subnets, a cluster, a load balancer): takes the network's row lock and checks it is not
    /// being deleted (`INVALID_STATE` otherwise). A concurrent delete waits for this transaction
    /// and then counts what it wrote, or this one waits for the delete and is refused.
    pub async fn network_hold_in(&self, txn: &mut Transaction<'static, Any>, id: &str) -> Result<()> {
        crate::measured::store("network_hold_in", async {
            if !hold_live_row_in(txn, "networks", id).await? {
                return Err(Error::invalid_state(format!("network {id:?} is being deleted: nothing new can use it"))
                    .with_detail("networkId", id));
            }
            Ok(())
        })
        .await
    }

    /// What rests on network `id`, read inside the caller's transaction.
    pub async fn network_usage_in(&self, txn: &mut Transaction<'static, Any>, id: &str) -> Result<NetworkUsage> {
        crate::measured::store("network_usage_in", async {
            let instances: Vec<String> = sqlx::query_scalar(
                "SELECT id FROM instances WHERE network_id = $1 AND deleted_at IS NULL ORDER BY created_at, id",
            )
            .bind(id)
            .fetch_all(&mut **txn)
            .await?;
            let clusters: Vec<String> = sqlx::query_scalar(
                "SELECT id FROM kubernetes_clusters WHERE network_id = $1 AND deleted_at IS NULL \
                 ORDER BY created_at, id",
            )
            .bind(id)
            .fetch_all(&mut **txn)
            .await?;
            let load_balancers = self.load_balancers_on_network_in(txn, id).await?;
            Ok(NetworkUsage { instances, clusters, load_balancers })
        })
        .await
    }

    /// Marks a network and its subnets for deletion and wakes the reconciler, through the shared
    /// delete ([`Store::resource_delete`]); `INVALID_STATE` naming what rests on it while
    /// anything does (the mark takes the row lock first, so writers that hold the network are
    /// counted).
    pub async fn network_delete(&self, id: &str, now: i64, deadline: Option<i64>) -> Result<NetworkRow> {
        crate::measured::store("network_delete", async {
            // The row with its subnets as the delete's transaction left them: a rehearsal's
            // transaction rolls back, and answers what it wrote.
            let written = std::sync::Arc::new(std::sync::Mutex::new(None));
            let slot = written.clone();
            self.resource_delete::<NetworkRow>(id, now, deadline, |store, txn, id| {
                Box::pin(async move {
                    let usage = store.network_usage_in(txn, id).await?;
                    if !usage.is_empty() {
                        let mut what = Vec::new();
                        if !usage.instances.is_empty() {
                            what.push(format!("instances {}", usage.instances.join(", ")));
                        }
                        if !usage.clusters.is_empty() {
                            what.push(format!("clusters {}", usage.clusters.join(", ")));
                        }
                        if !usage.load_balancers.is_empty() {
                            what.push(format!("load balancers {}", usage.load_balancers.join(", ")));
                        }
                        return Err(Error::invalid_state(format!(
                            "network {id:?} cannot be deleted while {} rest on it; delete them first",
                            what.join(" and ")
                        ))
                        .with_detail("reason", "inUse")
                        .with_detail("networkId", id)
                        .with_detail("instances", usage.instances)
                        .with_detail("clusters", usage.clusters)
                        .with_detail("loadBalancers", usage.load_balancers));
                    }
                    sqlx::query(
                        "UPDATE subnets SET state = 'deleting', message = '', updated_at = $2 \
                         WHERE network_id = $1 AND deleted_at IS NULL",
                    )
                    .bind(id)
                    .bind(now)
                    .execute(&mut **txn)
                    .await?;
                    *slot.lock().expect("not poisoned") = store.network_fetch_in(txn, id).await?;
                    Ok(())
                })
            })
            .await?;
            let written = written.lock().expect("not poisoned").take();
            match written {
                Some(row) => Ok(row),
                None => self.network_fetch(id).await?.ok_or_else(|| Error::not_found("network", id)),
            }
        })
        .await
    }

    /// Records an observation of the reconciler with its events, unless the tenant changed the
    /// network meanwhile (then nothing is written and `false` is returned: the change has
    /// already queued the next pass).
    pub async fn network_observe(&self, id: &str, observed: &NetworkObserved, now: i64) -> Result<bool> {
        crate::measured::store("network_observe", async {
            let mut txn = self.begin_write().await?;
            let common = (observed.version, observed.state, observed.message.as_str());
            let written = self
                .resource_observe_in::<NetworkRow>(&mut txn, id, common, now, "provider_id = ?", |query| {
                    query.bind(&observed.provider_id)
                })
                .await?;
            if !written {
                return Ok(false);
            }
            for subnet in &observed.subnets {
                sqlx::query(
                    "UPDATE subnets SET state = $3, message = $4, provider_id = $5, updated_at = $6 \
                     WHERE id = $1 AND network_id = $2 AND deleted_at IS NULL",
                )
                .bind(&subnet.id)
                .bind(id)
                .bind(subnet.state)
                .bind(&subnet.message)
                .bind(&subnet.provider_id)
                .bind(now)
                .execute(&mut *txn)
                .await?;
            }
            self.commit_with_events(txn, &observed.events).await?;
            Ok(true)
        })
        .await
    }

    /// The network is gone at the provider: marks it and its subnets deleted, removes its
    /// authorization row and publishes `deleted`, in one transaction.
    pub async fn network_finish_delete(&self, id: &str, now: i64) -> Result<()> {
        crate::measured::store("network_finish_delete", async {
            let mut txn = self.begin_write().await?;
            if self.network_finish_delete_in(&mut txn, id, now).await? {
                self.commit_and_signal(txn).await?;
            }
            Ok(())
        })
        .await
    }

    /// [`Store::network_finish_delete`] inside the caller's transaction: whether it wrote.
    pub(super) async fn network_finish_delete_in(
        &self,
        txn: &mut Transaction<'static, Any>,
        id: &str,
        now: i64,
    ) -> Result<bool> {
        if !self.resource_mark_deleted_in::<NetworkRow>(txn, id, now, "").await? {
            return Ok(false);
        }
        sqlx::query(
            "UPDATE subnets SET state = 'deleted', message = '', deleted_at = $2, updated_at = $2 \
             WHERE network_id = $1 AND deleted_at IS NULL",
        )
        .bind(id)
        .bind(now)
        .execute(&mut **txn)
        .await?;
        self.resource_deleted_in::<NetworkRow>(txn, id, now).await?;
        Ok(true)
    }
}
