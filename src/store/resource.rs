//! What every asynchronous tenant resource (cluster, network, instance, certificate, volume,
//! load balancer) stores alike, written once: the common fields ([`ResourceMeta`], embedded in each
//! row), where a kind is stored ([`ResourceTable`]), and the statements of its lifecycle: fetch
//! by id, the tenant's list, the insert, the mark for deletion, the observation conditional on
//! the row's `version`, and the final delete. Each resource's file keeps its own columns, its
//! children and its rules, and calls these.

use std::ops::{Deref, DerefMut};

use sqlx::any::{AnyArguments, AnyQueryResult, AnyRow};
use sqlx::query::Query;
use sqlx::{Any, Row, Transaction};

use super::{AuthzResourceRow, NewEvent, Store};
use crate::domain::drift::{self, Drift};
use crate::domain::lifecycle_events::LifecycleEvent;
use crate::domain::problem::{self, Problem};
use crate::domain::states::{ClusterState, LifecycleState, LoadBalancerState, ProvisionState, VolumeState};
use crate::error::{Error, Result};

/// A statement with its arguments bound so far.
pub(super) type AnyQuery<'q> = Query<'q, Any, AnyArguments>;

/// What a kind does inside its delete's transaction once the row is marked `deleting` and
/// locked (given the store, the transaction and the id): refuse while something rests on it
/// (an `Err` undoes the whole delete), or carry the delete to what hangs from it.
pub(super) type DeleteHook<'t> = std::pin::Pin<Box<dyn std::future::Future<Output = Result<()>> + Send + 't>>;

/// The fields every asynchronous tenant resource has, as stored; `S` is its kind's state enum.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ResourceMeta<S> {
    /// Its id: a prefix and the body derived from the tenant, the caller and the idempotency key.
    pub id: String,
    /// Its tenant.
    pub tenant_id: String,
    /// Its project.
    pub project_id: Option<String>,
    /// Its provider pool.
    pub pool_id: String,
    /// The pool's account.
    pub account_id: String,
    /// Who created it.
    pub owner_id: String,
    /// Its name, unique among the tenant's live resources of its kind.
    pub name: String,
    /// Its lifecycle state: `pending`, `ready`, `deleting`, `deleted`, `error`, and the kind's own.
    pub state: S,
    /// Why it is in `error`.
    pub message: String,
    /// Bumped by every tenant change.
    pub version: i64,
    /// The create request's idempotency key: kept by networks, instances and certificates; empty
    /// for clusters and load balancers, which keep only the id derived from it.
    pub idempotency_key: String,
    /// Digest of the create request.
    pub request_digest: String,
    /// When deletion was asked for.
    pub delete_requested_at: Option<i64>,
    /// Creation time.
    pub created_at: i64,
    /// Last change.
    pub updated_at: i64,
    /// Deletion time, once deleted.
    pub deleted_at: Option<i64>,
    /// The drift the last pass found at the provider (empty for none).
    pub drift: Vec<Drift>,
    /// Why its passes keep failing, while they do; read by the table's `SELECT` only.
    pub problem: Option<Problem>,
}

impl<S: LifecycleState> ResourceMeta<S> {
    /// The fields of a resource about to be created at `now`: `pending`, version 1, no message.
    /// The identity fields are the caller's to fill in (`..ResourceMeta::pending(now)`).
    pub fn pending(now: i64) -> ResourceMeta<S> {
        ResourceMeta { state: S::PENDING, version: 1, created_at: now, updated_at: now, ..ResourceMeta::default() }
    }

    /// Its authorization row: of `resource_type`, with `attributes`.
    pub fn authz(
        &self,
        resource_type: &str,
        attributes: serde_json::Map<String, serde_json::Value>,
    ) -> AuthzResourceRow {
        AuthzResourceRow {
            resource_type: resource_type.to_owned(),
            resource_id: self.id.clone(),
            tenant_id: Some(self.tenant_id.clone()),
            project_id: self.project_id.clone(),
            owner_id: Some(self.owner_id.clone()),
            attributes,
            created_at: self.created_at,
        }
    }

    /// Reads the common fields of a row of `table`.
    pub(super) fn from_row(row: &AnyRow, table: &ResourceTable) -> Result<ResourceMeta<S>> {
        Ok(read_columns!(row, ResourceMeta {
            id, tenant_id, project_id, pool_id, account_id, owner_id, name, state, message, version, request_digest,
            delete_requested_at, created_at, updated_at, deleted_at;
            idempotency_key: if table.keeps_idempotency_key { row.try_get("idempotency_key")? } else { String::new() },
            drift: drift::from_column(&row.try_get::<String, _>("drift")?),
            // Only the table's own `SELECT` reads it; a write's `RETURNING` does not.
            problem: problem::from_column(row.try_get::<Option<String>, _>("problem").ok().flatten().as_deref()),
        }))
    }
}

/// Which of a tenant's resources of one kind a list returns.
#[derive(Clone, Copy, Debug)]
pub struct ResourceFilter<'a> {
    /// The tenant.
    pub tenant_id: &'a str,
    /// Only those in this pool, when given.
    pub pool_id: Option<&'a str>,
    /// Only those in this project, when given.
    pub project_id: Option<&'a str>,
    /// Deleted ones too.
    pub include_deleted: bool,
    /// Only those after this (created at, id), in the list's order: where a page resumes.
    pub after: Option<(i64, &'a str)>,
    /// At most this many.
    pub limit: i64,
}

/// Hands each child in `children` (read in one query for a whole list) to its parent among
/// `parents`, keeping their order; a child of a parent not listed is passed over.
pub(super) fn attach_children<P, C, S>(
    parents: &mut [P],
    children: impl IntoIterator<Item = Result<C>>,
    parent_of: impl Fn(&C) -> &str,
    attach: impl Fn(&mut P, C),
) -> Result<()>
where
    P: Deref<Target = ResourceMeta<S>>,
{
    let position: std::collections::HashMap<String, usize> =
        parents.iter().enumerate().map(|(i, parent)| (parent.id.clone(), i)).collect();
    for child in children {
        let child = child?;
        if let Some(&i) = position.get(parent_of(&child)) {
            attach(&mut parents[i], child);
        }
    }
    Ok(())
}

/// Where one kind of resource is stored, and how errors, work and events name it.
pub(super) struct ResourceTable {
    /// The table: `networks`.
    pub table: &'static str,
    /// Its own columns, besides the common ones, as a `SELECT` lists them.
    pub columns: &'static str,
    /// Whether the table has an `idempotency_key` column.
    pub keeps_idempotency_key: bool,
    /// The resource in prose: `load balancer`.
    pub noun: &'static str,
    /// The resource as `NOT_FOUND` names it: `loadBalancer`.
    pub not_found: &'static str,
    /// Its id field in the API: `loadBalancerId`.
    pub id_field: &'static str,
    /// The work kind of its reconciler.
    pub work_kind: &'static str,
    /// Its authorization resource type.
    pub authz_type: &'static str,
    /// The source of its events: `/compute/vps`.
    pub event_source: &'static str,
    /// The prefix of its event types: `network` (`network.created`).
    pub event_prefix: &'static str,
}

impl ResourceTable {
    /// `SELECT` of every column of a row, common and own, `FROM` the table.
    fn select(&self) -> String {
        let key = if self.keeps_idempotency_key { "idempotency_key, " } else { "" };
        format!(
            "SELECT id, tenant_id, project_id, pool_id, account_id, owner_id, name, state, message, version, \
             {key}request_digest, delete_requested_at, created_at, updated_at, deleted_at, drift, {}, {} FROM {}",
            self.columns,
            problem::column_sql(self.work_kind, &format!("{}.id", self.table)),
            self.table
        )
    }

    /// The insert of a new row in `pending`, version 1: the common columns bound by
    /// [`ResourceMeta`]'s order in [`bind_meta`], then `own_columns` with `own_values`, whose `?`
    /// are the arguments bound after the common ones.
    fn insert(&self, own_columns: &str, own_values: &str) -> String {
        let (key_column, key_value, next) =
            if self.keeps_idempotency_key { ("idempotency_key, ", "$8, ", 9) } else { ("", "", 8) };
        let own_values = numbered(own_values, next + 2);
        format!(
            "INSERT INTO {} (id, tenant_id, project_id, pool_id, account_id, owner_id, name, state, message, version, \
             {key_column}request_digest, created_at, updated_at, {own_columns}) VALUES ($1, $2, $3, $4, $5, $6, $7, \
             'pending', '', 1, {key_value}${next}, ${created}, ${created}, {own_values})",
            self.table,
            created = next + 1,
        )
    }
}

/// Binds the common fields of an insert (see [`ResourceTable::insert`]).
fn bind_meta<S>(query: AnyQuery<'static>, meta: &ResourceMeta<S>, table: &ResourceTable) -> AnyQuery<'static> {
    let query = query
        .bind(&meta.id)
        .bind(&meta.tenant_id)
        .bind(&meta.project_id)
        .bind(&meta.pool_id)
        .bind(&meta.account_id)
        .bind(&meta.owner_id)
        .bind(&meta.name);
    let query = if table.keeps_idempotency_key { query.bind(&meta.idempotency_key) } else { query };
    query.bind(&meta.request_digest).bind(meta.created_at)
}

/// `sql` with each `?` replaced by `$first`, `$first + 1`, ...: the placeholders of a resource's
/// own arguments, bound after the common ones.
fn numbered(sql: &str, first: usize) -> String {
    let mut out = String::with_capacity(sql.len() + 8);
    let mut next = first;
    for c in sql.chars() {
        if c == '?' {
            out.push_str(&format!("${next}"));
            next += 1;
        } else {
            out.push(c);
        }
    }
    out
}

/// A row of one kind of resource: its common fields and its own.
pub(super) trait Resource: Deref<Target = ResourceMeta<<Self as Resource>::State>> + Sized + Send {
    /// Its kind's states.
    type State: LifecycleState;

    /// Where the kind is stored.
    const TABLE: ResourceTable;

    /// Reads a row selected with the table's columns (children not included).
    fn from_row(row: &AnyRow) -> Result<Self>;

    /// Fields of its events besides the id, name, state and version, placed after the name.
    fn event_fields(&self) -> Vec<(&'static str, serde_json::Value)> {
        Vec::new()
    }

    /// An event (`<prefix>.<kind>`) on the resource's subject: its id, name, own fields, state
    /// and version, then `extra`.
    fn event(&self, kind: LifecycleEvent, now: i64, extra: serde_json::Value) -> NewEvent {
        let table = Self::TABLE;
        let mut data = serde_json::Map::new();
        data.insert(table.id_field.to_owned(), self.id.clone().into());
        data.insert("name".to_owned(), self.name.clone().into());
        for (field, value) in self.event_fields() {
            data.insert(field.to_owned(), value);
        }
        data.insert("state".to_owned(), self.state.as_str().into());
        data.insert("version".to_owned(), self.version.into());
        if let serde_json::Value::Object(extra) = extra {
            data.extend(extra);
        }
        NewEvent {
            source: table.event_source.to_owned(),
            event_type: format!("{}.{kind}", table.event_prefix),
            subject: self.id.clone(),
            tenant_id: self.tenant_id.clone(),
            time: now,
            data: serde_json::Value::Object(data),
        }
    }
}

/// A row of a kind the kit's lifecycle owns, as the services and the reconcilers need it: its
/// kind's states (their stuck deadlines apply where the reconciler is still working), its work
/// kind, how errors name it, and the row with its children. [`converged_kinds!`] implements it
/// for every kind of the kit.
#[async_trait::async_trait]
pub trait ConvergedRow: Send + Sync + Sized + 'static {
    /// Its kind's states.
    type State: LifecycleState;
    /// The work kind of its reconciler (`kubernetes.clusters`).
    const KIND: &'static str;
    /// The resource in prose: `load balancer`.
    const NOUN: &'static str;
    /// Its id field in the API: `loadBalancerId`.
    const ID_FIELD: &'static str;
    /// The prefix of its ids: `plb`.
    const ID_PREFIX: &'static str;
    /// Its authorization resource type: `compute-network`.
    const AUTHZ_TYPE: &'static str;
    /// The row with its children, deleted or not; `None` if it was never there.
    async fn fetch(store: &Store, id: &str) -> Result<Option<Self>>;
    /// The row with its children, `None` once it is deleted or was never there.
    async fn fetch_live(store: &Store, id: &str) -> Result<Option<Self>>;
    /// Ends the delete of row `id` inside `txn`, as the kind's reconciler ends it once the
    /// provider has nothing left (its children, billing and quota, the `deleted` event): whether
    /// it wrote (`false` once deleted, or when no delete was asked for).
    async fn finish_delete_in(store: &Store, txn: &mut Transaction<'static, Any>, id: &str, now: i64) -> Result<bool>;
}

/// The one list of the kinds the kit's lifecycle owns, each with the fetch that reads a row with
/// its children (each with its state enum and id type): implements [`ConvergedRow`] for each and lists their work kinds in
/// [`CONVERGED_KINDS`], which the lifecycle tests iterate over.
macro_rules! converged_kinds {
    ($($row:ty : $state:ty, $id:ty => $fetch:ident, $finish:ident),* $(,)?) => {
        $(
            // The state named here is the row's own (this does not compile otherwise).
            const _: fn(&$row) -> $state = |row| row.state;

            #[async_trait::async_trait]
            impl ConvergedRow for $row {
                type State = $state;
                const KIND: &'static str = <$row as Resource>::TABLE.work_kind;
                const NOUN: &'static str = <$row as Resource>::TABLE.noun;
                const ID_FIELD: &'static str = <$row as Resource>::TABLE.id_field;
                const ID_PREFIX: &'static str = <$id>::PREFIX;
                const AUTHZ_TYPE: &'static str = <$row as Resource>::TABLE.authz_type;
                async fn fetch(store: &Store, id: &str) -> Result<Option<Self>> {
                    store.$fetch(id).await
                }
                async fn fetch_live(store: &Store, id: &str) -> Result<Option<Self>> {
                    Ok(store.$fetch(id).await?.filter(|row| row.deleted_at.is_none()))
                }
                async fn finish_delete_in(
                    store: &Store,
                    txn: &mut Transaction<'static, Any>,
                    id: &str,
                    now: i64,
                ) -> Result<bool> {
                    store.$finish(txn, id, now).await
                }
            }
        )*

        /// The work kinds of every kind the kit's lifecycle owns.
        pub const CONVERGED_KINDS: &[&str] = &[$(<$row as Resource>::TABLE.work_kind),*];
    };
}

converged_kinds! {
    super::ClusterRow: ClusterState, crate::ids::KubernetesClusterId => cluster_fetch, cluster_finish_delete_in,
    super::NetworkRow: ProvisionState, crate::ids::NetworkId => network_fetch, network_finish_delete_in,
    super::InstanceRow: ProvisionState, crate::ids::InstanceId => instance_fetch, instance_finish_delete_in,
    super::CertificateRow: ProvisionState, crate::ids::CertificateId => certificate_fetch, certificate_finish_delete_in,
    super::VolumeRow: VolumeState, crate::ids::VolumeId => volume_fetch, volume_finish_delete_in,
    super::LoadBalancerRow: LoadBalancerState, crate::ids::LoadBalancerId => load_balancer_fetch,
        load_balancer_finish_delete_in,
}

/// Makes each row read and write its common fields as its own (`row.id`, `row.state = ..`).
macro_rules! reads_meta {
    ($($row:ty: $state:ty),* $(,)?) => {
        $(impl Deref for $row {
            type Target = ResourceMeta<$state>;

            fn deref(&self) -> &Self::Target {
                &self.meta
            }
        }

        impl DerefMut for $row {
            fn deref_mut(&mut self) -> &mut Self::Target {
                &mut self.meta
            }
        }

        impl $row {
            /// The `error` event to publish with an observation that leaves it in `state` with
            /// `message`: `None` unless that is a new failure (it was not in `error`, or failed
            /// for another reason).
            pub fn failure_event(&self, state: $state, message: &str, now: i64) -> Option<NewEvent> {
                failure_event(self, state, message, now)
            }
        })*
    };
}

reads_meta!(
    super::ClusterRow: ClusterState,
    super::NetworkRow: ProvisionState,
    super::InstanceRow: ProvisionState,
    super::CertificateRow: ProvisionState,
    super::VolumeRow: VolumeState,
    super::LoadBalancerRow: LoadBalancerState,
);

/// See the rows' `failure_event`.
fn failure_event<R: Resource + Clone + DerefMut>(
    row: &R,
    state: R::State,
    message: &str,
    now: i64,
) -> Option<NewEvent> {
    let error = R::State::ERROR;
    if state != error || (row.state == error && row.message == message) {
        return None;
    }
    let mut failed = row.clone();
    failed.state = error;
    Some(failed.event(LifecycleEvent::Error, now, serde_json::json!({ "message": message })))
}

/// `NOT_FOUND` for resource `id` of kind `R`.
pub(super) fn not_found<R: Resource>(id: &str) -> Error {
    Error::not_found(R::TABLE.not_found, id)
}

/// A create whose id exists: the same request is a retry (`Ok((existing, false))`), another one
/// a `CONFLICT`.
pub(super) fn retried<R: Resource>(existing: R, row: &R) -> Result<(R, bool)> {
    if existing.request_digest != row.request_digest {
        return Err(Error::conflict(format!(
            "idempotency key already used for {} {:?} with a different request",
            R::TABLE.noun,
            existing.id
        ))
        .with_detail(R::TABLE.id_field, existing.id.as_str()));
    }
    Ok((existing, false))
}

/// The `CONFLICT` of a create whose name the tenant already uses.
pub(super) fn name_taken<R: Resource>(row: &R) -> Error {
    let noun = R::TABLE.noun;
    let article = if noun.starts_with(['a', 'e', 'i', 'o', 'u']) { "an" } else { "a" };
    Error::conflict(format!("tenant {:?} already has {article} {noun} named {:?}", row.tenant_id, row.name))
        .with_detail("name", row.name.as_str())
}

impl Store {
    /// Resource `id` of kind `R`, read inside the caller's transaction (children not included).
    pub(super) async fn resource_fetch_in<R: Resource>(
        &self,
        txn: &mut Transaction<'static, Any>,
        id: &str,
    ) -> Result<Option<R>> {
        let sql = format!("{} WHERE id = $1", R::TABLE.select());
        let row = sqlx::query(sqlx::AssertSqlSafe(sql)).bind(id).fetch_optional(&mut **txn).await?;
        row.as_ref().map(R::from_row).transpose()
    }

    /// Resource `id` of kind `R` (children not included), whatever its tenant: callers check.
    pub(super) async fn resource_fetch<R: Resource>(&self, id: &str) -> Result<Option<R>> {
        let sql = format!("{} WHERE id = $1", R::TABLE.select());
        let row = sqlx::query(sqlx::AssertSqlSafe(sql)).bind(id).fetch_optional(&self.pool).await?;
        row.as_ref().map(R::from_row).transpose()
    }

    /// The resources of kind `R` that `filter` asks for (children not included), oldest first.
    pub(super) async fn resource_list<R: Resource>(&self, filter: &ResourceFilter<'_>) -> Result<Vec<R>> {
        // The first page resumes after the least position, rather than leaving the condition
        // out: one statement either way, and `created_at >= $6` stays a range on the index.
        let (after_at, after_id) = filter.after.unwrap_or((i64::MIN, ""));
        let sql = format!(
            "{} WHERE tenant_id = $1 AND ($2 IS NULL OR pool_id = $2) AND ($3 IS NULL OR project_id = $3) \
             AND ($4 = 1 OR deleted_at IS NULL) AND created_at >= $6 AND (created_at > $6 OR id > $7) \
             ORDER BY created_at, id LIMIT $5",
            R::TABLE.select()
        );
        let rows = sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(filter.tenant_id)
            .bind(filter.pool_id)
            .bind(filter.project_id)
            .bind(filter.include_deleted as i64)
            .bind(filter.limit)
            .bind(after_at)
            .bind(after_id)
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(R::from_row).collect()
    }

    /// Inserts `row` in `pending` with `own_columns` set to `own_values` (`?` for each argument
    /// `bind_own` binds, in order), inside the caller's transaction. The result is the driver's,
    /// so that the caller decides what a unique violation means.
    pub(super) async fn resource_insert_in<R: Resource>(
        &self,
        txn: &mut Transaction<'static, Any>,
        row: &R,
        own_columns: &str,
        own_values: &str,
        bind_own: impl FnOnce(AnyQuery<'static>) -> AnyQuery<'static>,
    ) -> std::result::Result<AnyQueryResult, sqlx::Error> {
        let sql = R::TABLE.insert(own_columns, own_values);
        let query = bind_meta(sqlx::query(sqlx::AssertSqlSafe(sql)), row, &R::TABLE);
        bind_own(query).execute(&mut **txn).await
    }

    /// Finishes a create after its insert: the authorization row, the work item in `pending`,
    /// the `created` event with `extra`, the commit. Returns the row as inserted.
    pub(super) async fn resource_created<R: Resource>(
        &self,
        mut txn: Transaction<'static, Any>,
        row: &R,
        authz: &AuthzResourceRow,
        deadline: Option<i64>,
        extra: serde_json::Value,
    ) -> Result<R> {
        self.authz_resource_insert_in(&mut txn, authz).await?;
        self.work_enqueue_in(
            &mut txn,
            R::TABLE.work_kind,
            &row.id,
            R::State::PENDING.as_str(),
            deadline,
            row.created_at,
        )
        .await?;
        let created: R = self.resource_fetch_in(&mut txn, &row.id).await?.expect("just inserted");
        self.event_append_in(&mut txn, &created.event(LifecycleEvent::Created, row.created_at, extra)).await?;
        self.commit_and_signal(txn).await?;
        Ok(created)
    }

    /// Marks resource `id` `deleting` (version bumped, the time of the first request kept),
    /// unless it is deleted or already `deleting` (then `false`). Takes the row lock.
    pub(super) async fn resource_mark_deleting_in<R: Resource>(
        &self,
        txn: &mut Transaction<'static, Any>,
        id: &str,
        now: i64,
    ) -> Result<bool> {
        let sql = format!(
            "UPDATE {} SET state = 'deleting', message = '', version = version + 1, updated_at = $2, \
             delete_requested_at = COALESCE(delete_requested_at, $2) \
             WHERE id = $1 AND deleted_at IS NULL AND state <> 'deleting'",
            R::TABLE.table
        );
        let updated = sqlx::query(sqlx::AssertSqlSafe(sql)).bind(id).bind(now).execute(&mut **txn).await?;
        Ok(updated.rows_affected() > 0)
    }

    /// The delete of every kind, in one transaction: marks resource `id` `deleting` (taking its
    /// row lock), runs the kind's `hook`, queues the reconciler's delete due now (within
    /// `deadline`), and appends the `deleting` event. One already `deleting` is returned
    /// unchanged; one whose delete failed is retried at once. Returns the row without children.
    pub(super) async fn resource_delete<R: Resource>(
        &self,
        id: &str,
        now: i64,
        deadline: Option<i64>,
        hook: impl for<'t> FnOnce(&'t Store, &'t mut Transaction<'static, Any>, &'t str) -> DeleteHook<'t> + Send,
    ) -> Result<R> {
        let mut txn = self.begin_write().await?;
        if !self.resource_mark_deleting_in::<R>(&mut txn, id, now).await? {
            drop(txn);
            return self.resource_fetch::<R>(id).await?.ok_or_else(|| not_found::<R>(id));
        }
        hook(self, &mut txn, id).await?;
        let row: R = self.resource_deleting_in(&mut txn, id, now, deadline).await?;
        self.event_append_in(&mut txn, &row.event(LifecycleEvent::Deleting, now, serde_json::json!({}))).await?;
        self.commit_and_signal(txn).await?;
        Ok(row)
    }

    /// After [`Store::resource_mark_deleting_in`]: a fresh work item in `deleting` due now, and
    /// the row as it is now.
    async fn resource_deleting_in<R: Resource>(
        &self,
        txn: &mut Transaction<'static, Any>,
        id: &str,
        now: i64,
        deadline: Option<i64>,
    ) -> Result<R> {
        self.work_restart_delete_in(txn, R::TABLE.work_kind, id, deadline, now).await?;
        self.resource_fetch_in(txn, id).await?.ok_or_else(|| not_found::<R>(id))
    }

    /// Records an observation of the reconciler: `state`, `message` and `own_set` (`?` for each
    /// argument `bind_own` binds), unless the tenant changed the row since `version` (then
    /// nothing is written and `false` is returned: the change has already queued the next pass).
    pub(super) async fn resource_observe_in<R: Resource>(
        &self,
        txn: &mut Transaction<'static, Any>,
        id: &str,
        (version, state, message): (i64, R::State, &str),
        now: i64,
        own_set: &str,
        bind_own: impl FnOnce(AnyQuery<'static>) -> AnyQuery<'static>,
    ) -> Result<bool> {
        let sql = format!(
            "UPDATE {} SET state = $3, message = $4, updated_at = $5, {} \
             WHERE id = $1 AND version = $2 AND deleted_at IS NULL",
            R::TABLE.table,
            numbered(own_set, 6)
        );
        let query = sqlx::query(sqlx::AssertSqlSafe(sql)).bind(id).bind(version).bind(state).bind(message).bind(now);
        let updated = bind_own(query).execute(&mut **txn).await?;
        Ok(updated.rows_affected() > 0)
    }

    /// Marks resource `id` `deleted` (and `also_set`, a list of assignments or empty) once its
    /// deletion was asked for and it is gone at the provider. Returns the transaction when it
    /// wrote, `None` when there was nothing to write (the work is done).
    pub(super) async fn resource_mark_deleted<R: Resource>(
        &self,
        id: &str,
        now: i64,
        also_set: &str,
    ) -> Result<Option<Transaction<'static, Any>>> {
        let mut txn = self.begin_write().await?;
        let wrote = self.resource_mark_deleted_in::<R>(&mut txn, id, now, also_set).await?;
        Ok(wrote.then_some(txn))
    }

    /// [`Store::resource_mark_deleted`] inside the caller's transaction: whether it wrote.
    pub(super) async fn resource_mark_deleted_in<R: Resource>(
        &self,
        txn: &mut Transaction<'static, Any>,
        id: &str,
        now: i64,
        also_set: &str,
    ) -> Result<bool> {
        let sql = format!(
            "UPDATE {} SET state = 'deleted', message = '', {also_set}deleted_at = $2, updated_at = $2 \
             WHERE id = $1 AND deleted_at IS NULL AND delete_requested_at IS NOT NULL",
            R::TABLE.table
        );
        let updated = sqlx::query(sqlx::AssertSqlSafe(sql)).bind(id).bind(now).execute(&mut **txn).await?;
        Ok(updated.rows_affected() > 0)
    }

    /// After [`Store::resource_mark_deleted`]: removes the authorization row and appends the
    /// `deleted` event. Returns the row as it is now.
    pub(super) async fn resource_deleted_in<R: Resource>(
        &self,
        txn: &mut Transaction<'static, Any>,
        id: &str,
        now: i64,
    ) -> Result<R> {
        self.authz_resource_delete_in(txn, R::TABLE.authz_type, id).await?;
        let row: R = self.resource_fetch_in(txn, id).await?.ok_or_else(|| not_found::<R>(id))?;
        self.event_append_in(txn, &row.event(LifecycleEvent::Deleted, now, serde_json::json!({}))).await?;
        Ok(row)
    }

    /// [`Store::resource_observe_in`] in a transaction of its own that publishes `events`, for
    /// a kind whose observation writes nothing else.
    pub(super) async fn resource_observe<R: Resource>(
        &self,
        id: &str,
        common: (i64, R::State, &str),
        now: i64,
        (own_set, bind_own): (&str, impl FnOnce(AnyQuery<'static>) -> AnyQuery<'static>),
        events: &[NewEvent],
    ) -> Result<bool> {
        let mut txn = self.begin_write().await?;
        if !self.resource_observe_in::<R>(&mut txn, id, common, now, own_set, bind_own).await? {
            return Ok(false);
        }
        self.commit_with_events(txn, events).await?;
        Ok(true)
    }

    /// [`Store::resource_mark_deleted`] and [`Store::resource_deleted_in`] in one transaction,
    /// for a kind with no children to mark.
    pub(super) async fn resource_finish_delete<R: Resource>(&self, id: &str, now: i64, also_set: &str) -> Result<()> {
        let Some(mut txn) = self.resource_mark_deleted::<R>(id, now, also_set).await? else { return Ok(()) };
        self.resource_deleted_in::<R>(&mut txn, id, now).await?;
        self.commit_and_signal(txn).await
    }

    /// [`Store::resource_finish_delete`] inside the caller's transaction: whether it wrote.
    pub(super) async fn resource_finish_delete_in<R: Resource>(
        &self,
        txn: &mut Transaction<'static, Any>,
        id: &str,
        now: i64,
        also_set: &str,
    ) -> Result<bool> {
        if !self.resource_mark_deleted_in::<R>(txn, id, now, also_set).await? {
            return Ok(false);
        }
        self.resource_deleted_in::<R>(txn, id, now).await?;
        Ok(true)
    }

    /// Appends `events` and commits.
    pub(super) async fn commit_with_events(
        &self,
        mut txn: Transaction<'static, Any>,
        events: &[NewEvent],
    ) -> Result<()> {
        self.events_append_in(&mut txn, events).await?;
        self.commit_and_signal(txn).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_placeholders_are_numbered_after_the_common_ones() {
        assert_eq!(numbered("?, ?, '', ?", 10), "$10, $11, '', $12");
    }

    #[test]
    fn an_insert_binds_the_idempotency_key_only_where_the_table_keeps_it() {
        let mut table = ResourceTable {
            table: "things",
            columns: "colour",
            keeps_idempotency_key: true,
            noun: "thing",
            not_found: "thing",
            id_field: "thingId",
            work_kind: "thing",
            authz_type: "compute-thing",
            event_source: "/compute/things",
            event_prefix: "thing",
        };
        assert_eq!(
            table.insert("colour, size", "?, ''"),
            "INSERT INTO things (id, tenant_id, project_id, pool_id, account_id, owner_id, name, state, message, \
             version, idempotency_key, request_digest, created_at, updated_at, colour, size) VALUES ($1, $2, $3, $4, $5, \
             $6, $7, 'pending', '', 1, $8, $9, $10, $10, $11, '')"
        );
        table.keeps_idempotency_key = false;
        assert_eq!(
            table.insert("colour", "?"),
            "INSERT INTO things (id, tenant_id, project_id, pool_id, account_id, owner_id, name, state, message, \
             version, request_digest, created_at, updated_at, colour) VALUES ($1, $2, $3, $4, $5, $6, $7, 'pending', \
             '', 1, $8, $9, $9, $10)"
        );
    }
}
