//! Postgres for the benchmarks: a fresh database per run on the machine's server, or (for the
//! soak, which restarts Postgres) a private server of its own in a temporary directory, so that
//! the restart touches nobody else's work. Also the per-table row counters the store's baseline
//! is derived from.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use sqlx::{Connection, Row};

/// The machine's Postgres as its superuser: `BC_BENCH_POSTGRES_URL`, else 127.0.0.1:5432.
pub fn admin_url() -> String {
    std::env::var("BC_BENCH_POSTGRES_URL").unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/postgres".to_owned())
}

/// A database made for one run, dropped when this is dropped.
pub struct Database {
    /// Its URL.
    pub url: String,
    /// Its name.
    pub name: String,
    /// The server's admin URL, to drop it.
    admin_url: String,
}

impl Database {
    /// Creates `bc_bench_<random>` on the server of `admin_url`.
    pub async fn create(admin_url: &str) -> Result<Database, String> {
        let mut admin = sqlx::PgConnection::connect(admin_url)
            .await
            .map_err(|e| format!("the benchmarks need Postgres at {admin_url} ({e}); set BC_BENCH_POSTGRES_URL"))?;
        let name = format!("bc_bench_{}", better_compute::ids::random("db").trim_start_matches("db_"));
        sqlx::query(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}")))
            .execute(&mut admin)
            .await
            .map_err(|e| e.to_string())?;
        let base = admin_url.rsplit_once('/').map(|(base, _)| base).unwrap_or(admin_url);
        Ok(Database { url: format!("{base}/{name}"), name, admin_url: admin_url.to_owned() })
    }

    /// The URL with `sslmode=disable`, for connections that go through the counting proxy (it
    /// reads the protocol, so the stream must be plain) or point at it on `port`.
    pub fn url_via(&self, port: u16) -> String {
        let (_, rest) = self.url.split_once("://").unwrap_or(("", &self.url));
        let (user_host, db) = rest.split_once('/').unwrap_or((rest, ""));
        let user = user_host.split_once('@').map(|(user, _)| format!("{user}@")).unwrap_or_default();
        format!("postgres://{user}127.0.0.1:{port}/{db}?sslmode=disable")
    }

    /// A small pool on it, for polling from several places.
    pub async fn pool(&self) -> Result<sqlx::PgPool, String> {
        sqlx::postgres::PgPoolOptions::new().max_connections(2).connect(&self.url).await.map_err(|e| e.to_string())
    }

    /// Gathers the planner's statistics (`ANALYZE`) after a bulk seed, as autovacuum does on a
    /// server that runs it. Some servers run without it (this machine's CI Postgres does), and
    /// a table filled since its last analysis is planned as if empty: a page of 100 of 10,000
    /// clusters took 26 ms on the wrong index where the right one takes 0.3 ms.
    pub async fn analyze(&self) -> Result<(), String> {
        let mut connection = self.connect().await?;
        sqlx::query("ANALYZE").execute(&mut connection).await.map_err(|e| format!("ANALYZE: {e}"))?;
        Ok(())
    }

    /// One connection to it.
    pub async fn connect(&self) -> Result<sqlx::PgConnection, String> {
        sqlx::PgConnection::connect(&self.url).await.map_err(|e| e.to_string())
    }
}

impl Drop for Database {
    fn drop(&mut self) {
        let (admin_url, name) = (self.admin_url.clone(), self.name.clone());
        // Drop runs outside async: a short-lived runtime on its own thread does the cleanup.
        let _ = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().ok()?;
            runtime.block_on(async {
                let mut admin = sqlx::PgConnection::connect(&admin_url).await.ok()?;
                sqlx::query(sqlx::AssertSqlSafe(format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)")))
                    .execute(&mut admin)
                    .await
                    .ok()
            })
        })
        .join();
    }
}

/// Rows written per table (`pg_stat_user_tables`): inserted, updated, deleted.
pub type TableWrites = BTreeMap<String, [i64; 3]>;

/// The database's row-write counters per table. Backends flush these when they go idle, at
/// most once a second and at the latest ten seconds later: wait before reading a delta.
pub async fn table_writes(connection: &mut sqlx::PgConnection) -> Result<TableWrites, String> {
    sqlx::query("SELECT pg_stat_clear_snapshot()").execute(&mut *connection).await.map_err(|e| e.to_string())?;
    let rows = sqlx::query(
        "SELECT relname::text AS name, n_tup_ins, n_tup_upd, n_tup_del FROM pg_stat_user_tables ORDER BY relname",
    )
    .fetch_all(&mut *connection)
    .await
    .map_err(|e| e.to_string())?;
    rows.iter()
        .map(|row| {
            let name: String = row.try_get("name").map_err(|e| e.to_string())?;
            let counts = [
                row.try_get::<i64, _>("n_tup_ins").map_err(|e| e.to_string())?,
                row.try_get::<i64, _>("n_tup_upd").map_err(|e| e.to_string())?,
                row.try_get::<i64, _>("n_tup_del").map_err(|e| e.to_string())?,
            ];
            Ok((name, counts))
        })
        .collect()
}

/// `after - before`, tables with no writes left out.
pub fn writes_between(before: &TableWrites, after: &TableWrites) -> TableWrites {
    after
        .iter()
        .filter_map(|(table, counts)| {
            let old = before.get(table).copied().unwrap_or_default();
            let delta = [counts[0] - old[0], counts[1] - old[1], counts[2] - old[2]];
            (delta != [0, 0, 0]).then(|| (table.clone(), delta))
        })
        .collect()
}

/// Where the Postgres server programs are (`initdb`, `pg_ctl`): `BC_BENCH_PG_BIN`, else the
/// newest `/usr/lib/postgresql/<version>/bin`.
fn pg_bin() -> Result<PathBuf, String> {
    if let Ok(dir) = std::env::var("BC_BENCH_PG_BIN") {
        return Ok(PathBuf::from(dir));
    }
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .map_err(|e| format!("no /usr/lib/postgresql ({e}); set BC_BENCH_PG_BIN to the directory of initdb"))?
        .filter_map(|entry| {
            let entry = entry.ok()?;
            let version = entry.file_name().to_str()?.parse().ok()?;
            let bin = entry.path().join("bin");
            bin.join("initdb").exists().then_some((version, bin))
        })
        .collect();
    versions.sort();
    versions.pop().map(|(_, bin)| bin).ok_or_else(|| "no initdb under /usr/lib/postgresql".to_owned())
}

/// A Postgres server of the program's own: `initdb` in a temporary directory, trust auth on
/// 127.0.0.1 and a free port. As root it runs as the `postgres` user (Postgres refuses root).
pub struct PrivatePostgres {
    /// The superuser URL of its `postgres` database.
    pub admin_url: String,
    /// Its port.
    pub port: u16,
    /// The data directory.
    data: PathBuf,
    /// The directory, removed with it.
    _dir: tempfile::TempDir,
    /// `pg_ctl`.
    pg_ctl: PathBuf,
    /// Run the programs as `postgres` (we are root).
    as_postgres: bool,
}

impl PrivatePostgres {
    /// Initializes and starts it.
    pub fn start() -> Result<PrivatePostgres, String> {
        let bin = pg_bin()?;
        let dir = tempfile::Builder::new().prefix("bc-bench-pg").tempdir().map_err(|e| e.to_string())?;
        let as_postgres = Command::new("id").arg("-u").output().is_ok_and(|o| o.stdout.starts_with(b"0\n"));
        let data = dir.path().join("data");
        if as_postgres {
            let status = Command::new("chown").args(["-R", "postgres:postgres"]).arg(dir.path()).status();
            if !status.is_ok_and(|s| s.success()) {
                return Err("cannot give the private Postgres directory to the postgres user".to_owned());
            }
        }
        let port = super::procs::free_port();
        let pg = PrivatePostgres {
            admin_url: format!("postgres://postgres@127.0.0.1:{port}/postgres"),
            port,
            data: data.clone(),
            _dir: dir,
            pg_ctl: bin.join("pg_ctl"),
            as_postgres,
        };
        let initdb = bin.join("initdb");
        let data_arg = data.display().to_string();
        pg.run(
            &initdb,
            &["-D", &data_arg, "-U", "postgres", "--auth=trust", "--no-sync", "-E", "UTF8", "--locale=C.UTF-8"],
        )?;
        let options = format!(
            "-c listen_addresses=127.0.0.1 -c port={port} -c unix_socket_directories={} -c max_connections=200 \
             -c fsync=on -c logging_collector=off",
            pg._dir.path().display()
        );
        pg.run(&pg.pg_ctl, &["-D", &data_arg, "-o", &options, "-l", &pg.log_path(), "-w", "-t", "60", "start"])?;
        Ok(pg)
    }

    fn log_path(&self) -> String {
        self.data.with_file_name("postgres.log").display().to_string()
    }

    fn run(&self, program: &std::path::Path, args: &[&str]) -> Result<(), String> {
        let mut command = if self.as_postgres {
            let mut command = Command::new("runuser");
            command.args(["-u", "postgres", "--"]).arg(program);
            command
        } else {
            Command::new(program)
        };
        let output = command.args(args).output().map_err(|e| format!("{}: {e}", program.display()))?;
        if output.status.success() {
            Ok(())
        } else {
            Err(format!(
                "{} {args:?} failed: {}{}",
                program.display(),
                String::from_utf8_lossy(&output.stdout),
                String::from_utf8_lossy(&output.stderr)
            ))
        }
    }

    /// Restarts it (`pg_ctl restart -m fast`: open connections are cut, as in a failover) and
    /// waits until it accepts connections again. Returns how long it was down.
    pub fn restart(&self) -> Result<Duration, String> {
        let started = std::time::Instant::now();
        let data = self.data.display().to_string();
        self.run(&self.pg_ctl, &["-D", &data, "-l", &self.log_path(), "-m", "fast", "-w", "-t", "60", "restart"])?;
        Ok(started.elapsed())
    }
}

impl Drop for PrivatePostgres {
    fn drop(&mut self) {
        let data = self.data.display().to_string();
        let _ = self.run(&self.pg_ctl, &["-D", &data, "-m", "immediate", "-w", "stop"]);
    }
}

/// `host:port` of a Postgres URL (port 5432 when it names none), for a proxy in front of it.
pub fn host_port(url: &str) -> String {
    let rest = url.split_once("://").map(|(_, rest)| rest).unwrap_or(url);
    let host_port = rest.split('/').next().unwrap_or(rest);
    let host_port = host_port.rsplit_once('@').map(|(_, host)| host).unwrap_or(host_port);
    if host_port.contains(':') { host_port.to_owned() } else { format!("{host_port}:5432") }
}
