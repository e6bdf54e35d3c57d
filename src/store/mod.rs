//! The store: every SQL statement of the project, behind one `Store` over Postgres (production)
//! or SQLite (`bcctl dev`). Methods are named resource first (`tenant_create`), one file per
//! resource; each mutation is one transaction.
//!
//! Both backends go through sqlx's `Any` driver, so the SQL is shared (`$N` placeholders, plain
//! types: text, integers, times as microseconds since the epoch). Migrations are embedded per
//! backend because their DDL will differ as the schema grows.

/// `Row { field: row.try_get("field")?, .. }` for each field named alone (read from the column of
/// its name) and, after `;`, the fields whose value is written out: a row struct read from a
/// query without naming each column twice.
macro_rules! read_columns {
    ($row:expr, $ty:ident { $($field:ident),* $(,)? $(; $($name:ident: $value:expr),* $(,)?)? }) => {
        $ty { $($field: $row.try_get(stringify!($field))?,)* $($($name: $value,)*)? }
    };
}

mod accounts;
mod api_keys;
mod authz;
mod budgets;
mod catalog;
mod certificates;
mod cluster_access;
mod event_hub;
mod events;
mod instances;
mod join_tokens;
mod kubernetes_clusters;
mod kubernetes_node_pools;
mod kubernetes_substrates;
mod load_balancer_rows;
mod load_balancer_targets;
mod load_balancers;
mod metal;
mod metal_workflow;
mod networks;
mod node_remediation;
mod nodes;
mod offers;
mod operation_log;
mod orphans;
mod pacing;
mod pools;
mod projects;
mod quotas;
mod record;
mod resealing;
mod resource;
mod role_bindings;
mod signals;
mod tenants;
mod usage;
mod volumes;
mod work;

use std::borrow::Cow;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use sqlx::any::{AnyPoolOptions, install_default_drivers};
use sqlx::migrate::{Migration, MigrationType, Migrator};
use sqlx::pool::PoolConnection;
use sqlx::{Any, AnyConnection, AnyPool, AssertSqlSafe, SqlSafeStr, Transaction};

pub use accounts::{AccountChange, AccountCredentials, AccountRow, NewAccount};
pub use api_keys::{ApiKeyRow, NewApiKey, PrincipalRow};
pub use authz::{AuditFilter, AuditRow, AuthzResourceRow};
pub use budgets::{BudgetChange, BudgetRow, NewBudget, month_bounds};
pub use certificates::{
    CERTIFICATE_KIND, CERTIFICATE_RESOURCE, CertificateObserved, CertificateRow, NewCertificate, certificate_event,
};
pub use cluster_access::{AccessGrant, AccessRevocation};
pub use event_hub::{
    EventBatch, EventWatch, GrantCheck, WATCH_POLL, WATCH_RECHECK, WATCHES_PER_PRINCIPAL, WATCHES_PER_TENANT,
};
pub use events::{EventFilter, EventRow, NewEvent};
pub use instances::{INSTANCE_KIND, INSTANCE_RESOURCE, InstanceObserved, InstanceRow, NewInstance, instance_event};
pub use join_tokens::{JoinTokenRow, JoinTokenState, JoinTokenUseRow};
pub use kubernetes_clusters::{
    CLUSTER_KIND, CLUSTER_METER, CLUSTER_RESOURCE, ClusterObserved, ClusterRow, NewCluster, cluster_event,
    provider_name,
};
pub use kubernetes_node_pools::{NodePoolObserved, NodePoolRow, NodePoolSpecRow, node_pool_event};
pub use kubernetes_substrates::{
    ClusterMarks, ClusterOwner, ManagedCluster, SUBSTRATE_KIND, SealedToken, SubstrateFlavorRow, SubstrateObjectRow,
    SubstrateObserved, SubstrateRow, created_cluster_name, flavor_node_pool_name,
};
pub use load_balancer_rows::{
    DomainRow, ForwardingRow, HealthCheckRow, LoadBalancerObserved, LoadBalancerRow, LoadBalancerSettings,
    NewLoadBalancer, SourceRangesRow, StickySessionsRow, TargetCertificate, TargetInstance, TargetSubnet, TargetsRow,
    load_balancer_provider_name,
};
pub use load_balancers::{
    LOAD_BALANCER_KIND, LOAD_BALANCER_METER, LOAD_BALANCER_QUOTA, LOAD_BALANCER_RESOURCE, load_balancer_event,
};
pub use metal::{
    ENROLLED_NODE_STATE, METAL_KIND, MetalChange, MetalMachineRow, MetalMove, NewMetalMachine, metal_machine_id,
};
pub use metal_workflow::{BmcOutage, BootConfigRow, MetalFinish};
pub use networks::{
    NETWORK_KIND, NETWORK_RESOURCE, NetworkObserved, NetworkRow, NetworkUsage, NewNetwork, SubnetObserved, SubnetRow,
    VPS_EVENT_SOURCE, network_event,
};
pub use nodes::{JoinOutcome, JoinOver, NodeCapacityRow, NodeRow, NodeSummaryRow};
pub use offers::{NewOffer, OfferChange, OfferRow};
pub use operation_log::{OPERATIONS_KEPT_MICROS, OPERATIONS_KEPT_PER_RESOURCE, OperationRow};
pub use orphans::{
    ForcedDelete, NewOrphan, ORPHAN_DISMISSED, ORPHAN_PENDING, ORPHAN_REMOVED, ORPHAN_STILL_THERE, ORPHAN_SWEEP_KIND,
    ORPHAN_SWEEP_OBJECT, OrphanFilter, OrphanRow,
};
pub use pacing::{CallReport, OpenBreaker, ReportAnswer, Take, Verdict};
pub use pools::{NewPool, PoolChange, PoolRow, VisiblePool};
pub use projects::{NewProject, ProjectChange, ProjectRow};
pub use quotas::{NewQuota, QuotaRow, quota_exceeded};
pub use resealing::{SEALED_COLUMNS, SealedColumn, SealedValue};
pub use resource::{CONVERGED_KINDS, ConvergedRow, ResourceFilter, ResourceMeta};
pub use role_bindings::RoleBindingRow;
pub use signals::{ACCESS_CHANNEL, NOTIFY_CHANNEL, Signals};
pub use tenants::{NewTenant, TenantChange, TenantRow};
pub use usage::{HOUR_MICROS, UsageRow, hour_floor};
pub use volumes::{NewVolume, VOLUME_KIND, VOLUME_RESOURCE, VolumeObserved, VolumeRow, volume_event};
pub use work::{KindStatus, StuckItem, WorkItem, WorkResult};

use crate::error::{Error, Result};

/// Which database a store runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    /// PostgreSQL (production; the SQL stays within what CockroachDB also accepts).
    Postgres,
    /// SQLite (the embedded default of `bcctl dev`).
    Sqlite,
}

impl Backend {
    /// The backend a database URL names.
    pub fn of_url(url: &str) -> Result<Backend> {
        if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            Ok(Backend::Postgres)
        } else if url.starts_with("sqlite:") {
            Ok(Backend::Sqlite)
        } else {
            Err(Error::invalid_input("the database URL must start with postgres://, postgresql:// or sqlite:"))
        }
    }
}

/// Declares the migrations of both backends from one list, embedded in the binary: a migration is
/// one file `migrations/NNNN_<name>.sql` that both backends run, or, where their SQL must differ,
/// one file per backend (`NNNN_<name>.postgres.sql` and `NNNN_<name>.sqlite.sql`).
macro_rules! migrations {
    ($(($version:literal, $description:literal, $($file:literal)|+),)+) => {
        const POSTGRES_MIGRATIONS: &[(i64, &str, &str)] =
            &[$(($version, $description, migrations!(@file postgres $($file)|+)),)+];
        const SQLITE_MIGRATIONS: &[(i64, &str, &str)] =
            &[$(($version, $description, migrations!(@file sqlite $($file)|+)),)+];
    };
    (@file $backend:ident $shared:literal) => {
        include_str!(concat!("migrations/", $shared, ".sql"))
    };
    (@file postgres $postgres:literal | $sqlite:literal) => {
        include_str!(concat!("migrations/", $postgres, ".sql"))
    };
    (@file sqlite $postgres:literal | $sqlite:literal) => {
        include_str!(concat!("migrations/", $sqlite, ".sql"))
    };
}

migrations!(
    (1, "init", "0001_init"),
    (2, "identity", "0002_identity.postgres" | "0002_identity.sqlite"),
    (3, "worker", "0003_worker"),
    (4, "catalog", "0004_catalog"),
    (5, "kubernetes", "0005_kubernetes"),
    (6, "vps", "0006_vps"),
    (7, "load balancers", "0007_load_balancers"),
    (8, "kubernetes_version_pending", "0008_kubernetes_version_pending"),
    (9, "list_indexes", "0009_list_indexes"),
    (10, "cluster_access", "0010_cluster_access"),
    (11, "audit_requested_tenant", "0011_audit_requested_tenant"),
    (12, "authz_by_tenant", "0012_authz_by_tenant"),
    (13, "node_pool_idempotency", "0013_node_pool_idempotency"),
    (14, "request_digest_name", "0014_request_digest_name"),
    (15, "join_tokens", "0015_join_tokens"),
    (16, "nodes", "0016_nodes"),
    (17, "kubernetes_substrates", "0017_kubernetes_substrates"),
    (18, "substrate_tokens", "0018_substrate_tokens"),
    (19, "metal", "0019_metal"),
    (20, "auth_generation", "0020_auth_generation.postgres" | "0020_auth_generation.sqlite"),
    (21, "metal_workflow", "0021_metal_workflow"),
    (22, "event_numbering", "0022_event_numbering.postgres" | "0022_event_numbering.sqlite"),
    (23, "join_token_machine", "0023_join_token_machine"),
    (24, "volumes", "0024_volumes"),
    (25, "drift", "0025_drift"),
    (26, "operation_log", "0026_operation_log"),
    (27, "orphans", "0027_orphans"),
    (28, "pacing", "0028_pacing"),
    (29, "audit_outcome", "0029_audit_outcome"),
    (30, "node_remediation", "0030_node_remediation"),
    (31, "metal_outage_and_rotation", "0031_metal_outage"),
    (32, "remediation_carried_out", "0032_remediation_carried_out"),
);

/// How long a pooled connection may sit idle before it is pinged again as it is taken.
const IDLE_BEFORE_PING: Duration = Duration::from_millis(500);

/// The store shared by every service and reconciler.
#[derive(Clone, Debug)]
pub struct Store {
    /// The connection pool.
    pool: AnyPool,
    /// Which database the pool talks to.
    backend: Backend,
    /// In-process wake-ups of the worker and of event watchers, shared by every clone.
    signals: Signals,
    /// A rehearsal: every transaction rolls back instead of committing, and nothing is signalled
    /// (see [`Store::rehearsal`]).
    rehearsal: bool,
}

impl Store {
    /// Connects to `url` with at most `max_connections` connections.
    pub async fn connect(url: &str, max_connections: u32) -> Result<Store> {
        crate::measured::store("connect", async {
            install_default_drivers();
            let backend = Backend::of_url(url)?;
            // SQLite allows one writer; one connection makes writers queue in the pool instead of
            // failing with SQLITE_BUSY.
            let max_connections = match backend {
                Backend::Postgres => max_connections,
                Backend::Sqlite => 1,
            };
            let pool = AnyPoolOptions::new()
                .max_connections(max_connections)
                .acquire_timeout(Duration::from_secs(10))
                // The pool already pings every connection as it is released; pinging it again as
                // it is taken cost a round trip per statement. A connection idle long enough to
                // have outlived a database restart is still pinged before use.
                .test_before_acquire(false)
                .before_acquire(|connection, meta| {
                    Box::pin(async move {
                        if meta.idle_for >= IDLE_BEFORE_PING {
                            sqlx::Connection::ping(connection).await?;
                        }
                        Ok(true)
                    })
                })
                .connect(url)
                .await
                .map_err(|error| Error::unavailable(format!("cannot connect to the database: {}", redact(&error))))?;
            if backend == Backend::Sqlite {
                sqlx::query("PRAGMA journal_mode = WAL").execute(&pool).await?;
                sqlx::query("PRAGMA foreign_keys = ON").execute(&pool).await?;
            }
            // CockroachDB speaks Postgres but has no LISTEN/NOTIFY: its workers wake on the tick.
            let notify = backend == Backend::Postgres
                && !sqlx::query_scalar::<_, String>("SELECT version()").fetch_one(&pool).await?.contains("CockroachDB");
            Ok(Store { pool, backend, signals: Signals::new(url, notify), rehearsal: false })
        })
        .await
    }

    /// The backend this store runs on.
    pub fn backend(&self) -> Backend {
        self.backend
    }

    fn migrator(&self) -> Migrator {
        let migrations = match self.backend {
            Backend::Postgres => POSTGRES_MIGRATIONS,
            Backend::Sqlite => SQLITE_MIGRATIONS,
        };
        Migrator::with_migrations(
            migrations
                .iter()
                .map(|(version, description, sql)| {
                    Migration::new(
                        *version,
                        Cow::Borrowed(*description),
                        MigrationType::Simple,
                        AssertSqlSafe(*sql).into_sql_str(),
                        false,
                    )
                })
                .collect(),
        )
    }

    /// Makes the database `url` names when its server has none of that name, so that
    /// `bc-server migrate` on a fresh server needs no `createdb` first; `true` when it made it.
    /// Asking and making go through the server's maintenance database (`postgres`).
    pub async fn create_database_if_missing(url: &str) -> Result<bool> {
        use sqlx::migrate::MigrateDatabase;
        install_default_drivers();
        Backend::of_url(url)?;
        let unreachable = |error: sqlx::Error| {
            Error::unavailable(format!("cannot ask the database server for the database: {}", redact(&error)))
        };
        if sqlx::Any::database_exists(url).await.map_err(unreachable)? {
            return Ok(false);
        }
        sqlx::Any::create_database(url)
            .await
            .map_err(|error| Error::unavailable(format!("cannot create the database: {}", redact(&error))))?;
        Ok(true)
    }

    /// Applies the migrations that are not applied yet.
    pub async fn migrate(&self) -> Result<()> {
        crate::measured::store("migrate", async {
            self.migrator()
                .run(&self.pool)
                .await
                .map_err(|error| Error::internal(format!("migrations failed: {error}")))
        })
        .await
    }

    /// The versions of the embedded migrations that the database has not applied.
    pub async fn pending_migrations(&self) -> Result<Vec<i64>> {
        crate::measured::store("pending_migrations", async {
            let applied: Vec<i64> =
                match sqlx::query_scalar::<_, i64>("SELECT version FROM _sqlx_migrations WHERE success = TRUE")
                    .fetch_all(&self.pool)
                    .await
                {
                    Ok(versions) => versions,
                    // No migrations table yet: nothing is applied.
                    Err(sqlx::Error::Database(_)) => Vec::new(),
                    Err(error) => return Err(error.into()),
                };
            Ok(self.migrator().iter().map(|m| m.version).filter(|version| !applied.contains(version)).collect())
        })
        .await
    }

    /// Checks that the database answers (for `/readyz`).
    pub async fn ping(&self) -> Result<()> {
        crate::measured::store("ping", async {
            sqlx::query("SELECT 1").execute(&self.pool).await?;
            Ok(())
        })
        .await
    }

    /// Begins a transaction that will write: on SQLite it takes the write lock at once, so two
    /// writers queue instead of failing when the second upgrades its read lock.
    async fn begin_write(&self) -> Result<Transaction<'static, Any>> {
        crate::measured::store("begin_write", async {
            let statement = match self.backend {
                Backend::Postgres => "BEGIN",
                Backend::Sqlite => "BEGIN IMMEDIATE",
            };
            Ok(self.pool.begin_with(statement).await?)
        })
        .await
    }

    /// Where to run writes whose statements are each whole alone (a claim, a pass's record): on
    /// Postgres a pooled connection, sparing the `BEGIN` and `COMMIT` round trips; on SQLite a
    /// transaction that takes the write lock at once, as [`Store::begin_write`] does.
    async fn begin_statements(&self) -> Result<StatementWriter> {
        Ok(match self.backend {
            Backend::Postgres if !self.rehearsal => StatementWriter::Pooled(self.pool.acquire().await?),
            _ => StatementWriter::Locked(self.begin_write().await?, self.rehearsal),
        })
    }

    /// The in-process signals of this store (and of every clone of it).
    pub fn signals(&self) -> &Signals {
        &self.signals
    }

    /// The same store as a rehearsal: its writes run their statements and checks as they would
    /// (constraints, row locks, quota bookings) and every transaction then rolls back, with no
    /// wake-up sent (Postgres drops a rolled-back `NOTIFY`), so a call made on it answers what
    /// it would answer and leaves nothing behind. What `validateOnly` and plans run on.
    pub fn rehearsal(&self) -> Store {
        Store { rehearsal: true, ..self.clone() }
    }

    /// Whether this store is a rehearsal ([`Store::rehearsal`]).
    pub fn is_rehearsal(&self) -> bool {
        self.rehearsal
    }

    /// Commits a transaction, or rolls it back on a rehearsal.
    async fn commit(&self, txn: Transaction<'static, Any>) -> Result<()> {
        if self.rehearsal {
            txn.rollback().await?;
        } else {
            txn.commit().await?;
        }
        Ok(())
    }

    /// Commits a transaction that wrote work items or events, then wakes whoever waits on them
    /// in this process (other processes hear Postgres' `NOTIFY`, sent inside the transaction).
    async fn commit_and_signal(&self, txn: Transaction<'static, Any>) -> Result<()> {
        crate::measured::store("commit_and_signal", async {
            self.commit(txn).await?;
            if !self.rehearsal {
                self.signals.wake_all();
            }
            Ok(())
        })
        .await
    }

    /// Closes every connection.
    pub async fn close(&self) {
        self.pool.close().await;
    }
}

/// Writes whose statements are each atomic alone: see [`Store::begin_statements`].
enum StatementWriter {
    /// Postgres: each statement commits by itself.
    Pooled(PoolConnection<Any>),
    /// SQLite, or a rehearsal: one transaction holding the write lock, rolled back at the end
    /// when the flag (a rehearsal) is set.
    Locked(Transaction<'static, Any>, bool),
}

impl StatementWriter {
    /// The connection to run statements on.
    fn connection(&mut self) -> &mut AnyConnection {
        match self {
            StatementWriter::Pooled(connection) => connection,
            StatementWriter::Locked(txn, _) => txn,
        }
    }

    /// Commits what was written (nothing to do where each statement committed itself).
    async fn finish(self) -> Result<()> {
        match self {
            StatementWriter::Locked(txn, true) => txn.rollback().await?,
            StatementWriter::Locked(txn, false) => txn.commit().await?,
            StatementWriter::Pooled(_) => {}
        }
        Ok(())
    }
}

/// Now, in microseconds since the Unix epoch: the unit of every time in the store.
pub fn now_micros() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_micros() as i64).unwrap_or_default()
}

/// Takes the row lock of `table`'s row `id` inside the caller's transaction, when the row is
/// neither deleted nor being deleted (`false` otherwise): what comes to rest on the row holds it,
/// so a concurrent delete of the row either waits and then sees what was written, or wins and
/// refuses the writer.
async fn hold_live_row_in(txn: &mut Transaction<'static, Any>, table: &'static str, id: &str) -> Result<bool> {
    let sql = format!(
        "UPDATE {table} SET updated_at = updated_at WHERE id = $1 AND deleted_at IS NULL \
         AND delete_requested_at IS NULL"
    );
    let held = sqlx::query(sqlx::AssertSqlSafe(sql)).bind(id).execute(&mut **txn).await?;
    Ok(held.rows_affected() > 0)
}

/// The result of an insert, with a unique-constraint violation turned into `conflict()`.
fn conflict_on_unique<T>(result: Result<T, sqlx::Error>, conflict: impl FnOnce() -> Error) -> Result<T> {
    match result {
        Err(sqlx::Error::Database(db)) if db.is_unique_violation() => Err(conflict()),
        other => Ok(other?),
    }
}

/// A connection error without the URL, which may carry a password.
fn redact(error: &sqlx::Error) -> String {
    match error {
        sqlx::Error::Configuration(_) => "the database URL is not valid".to_owned(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A migration file that is not in the list is never applied (0012 once was not).
    #[test]
    fn every_migration_file_is_listed_once_in_order_on_both_backends() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/store/migrations");
        let mut files: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|name| name.ends_with(".sql"))
            .collect();
        files.sort();
        for (backend, listed) in [("postgres", POSTGRES_MIGRATIONS), ("sqlite", SQLITE_MIGRATIONS)] {
            let other = if backend == "postgres" { ".sqlite.sql" } else { ".postgres.sql" };
            let mine: Vec<&String> = files.iter().filter(|name| !name.ends_with(other)).collect();
            let versions: Vec<i64> = listed.iter().map(|(version, _, _)| *version).collect();
            assert_eq!(
                versions,
                (1..=mine.len() as i64).collect::<Vec<_>>(),
                "{backend}: versions 1, 2, ... in order, one a file"
            );
            for (file, (version, _, sql)) in mine.iter().zip(listed) {
                assert!(file.starts_with(&format!("{version:04}_")), "{backend}: {file} is not version {version}");
                assert_eq!(std::fs::read_to_string(dir.join(file)).unwrap(), *sql, "{backend}: {file}");
            }
        }
    }
}
