//! Configuration: every option is a flag, an environment variable (`BC_*`) and a key of an
//! optional TOML file (`--config`), in that order of precedence. `--help` documents them all.

use std::net::SocketAddr;

pub use bcd::redacted::Redacted;

use crate::telemetry::LogFormat;

/// Options of the database connection.
#[derive(clap::Args, Clone, Debug)]
pub struct DatabaseOptions {
    /// The database: `postgres://user@host:5432/name` in production, or `sqlite://path` for a
    /// single process. Required (only `bcctl dev` makes its own).
    #[arg(long, env = "BC_DATABASE_URL", hide_env_values = true, global = true)]
    pub database_url: Option<String>,

    /// The most connections this process opens to the database.
    #[arg(long, env = "BC_DATABASE_MAX_CONNECTIONS", default_value_t = 16, global = true)]
    pub database_max_connections: u32,
}

impl DatabaseOptions {
    /// The database URL, or an error saying how to give one.
    pub fn require_url(&self) -> Result<&str, String> {
        self.database_url.as_deref().filter(|url| !url.is_empty()).ok_or_else(|| {
            "no database: pass --database-url (or set BC_DATABASE_URL), e.g. postgres://postgres@127.0.0.1:5432/bc; \
             `bcctl dev` runs everything on an embedded SQLite file instead"
                .to_owned()
        })
    }
}

/// Options of the logs.
#[derive(clap::Args, Clone, Debug)]
pub struct LogOptions {
    /// How log lines are written: `text` for people, `json` for collectors. `RUST_LOG` filters.
    #[arg(long, env = "BC_LOG_FORMAT", value_enum, default_value = "text", global = true)]
    pub log_format: LogFormat,
}

/// Options of the API server.
#[derive(clap::Args, Clone, Debug)]
pub struct ServerOptions {
    /// The address the API listens on: gRPC, gRPC-web and JSON share it.
    #[arg(long, env = "BC_LISTEN", default_value = "127.0.0.1:8080")]
    pub listen: SocketAddr,

    /// The operator API key to create on first start against an empty store, as
    /// `bck_<id>.<secret>`. Without it a new key is made and shown once: on the terminal when
    /// standard error is one, else written to `--operator-key-file`; never to the log.
    #[arg(long, env = "BC_BOOTSTRAP_TOKEN", hide_env_values = true)]
    pub bootstrap_token: Option<String>,

    /// Where a new operator key made on first start is written (readable by its owner only) when
    /// standard error is not a terminal; one log line says where, without the key.
    #[arg(long, env = "BC_OPERATOR_KEY_FILE", default_value = "bc-operator-key")]
    pub operator_key_file: std::path::PathBuf,

    /// Cedar policy files to add to the built-in ones (repeat the flag, or separate paths with
    /// commas in `BC_POLICY_FILES`). Each must validate against the schema the server derives
    /// from its API; `bc-server authz-schema` prints that schema.
    #[arg(long = "policy-file", env = "BC_POLICY_FILES", value_delimiter = ',')]
    pub policy_files: Vec<std::path::PathBuf>,

    #[command(flatten)]
    pub secret_keys: SecretKeyOptions,

    /// The most Kubernetes clusters a tenant may have that are not deleted (the Kubernetes
    /// module's `maxClustersPerTenant`); one more is `QUOTA_EXCEEDED`.
    #[arg(long, env = "BC_MAX_CLUSTERS_PER_TENANT", default_value_t = 10, value_parser = clap::value_parser!(i64).range(1..))]
    pub max_clusters_per_tenant: i64,

    /// Seconds a client may take to send a request's headers, and on an idle HTTP/1 connection to
    /// begin its next request; past them the connection is closed.
    #[arg(long, env = "BC_HEADER_READ_TIMEOUT_SECS", default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..))]
    pub header_read_timeout_secs: u64,

    /// Seconds a call may take, from its first byte until its answer begins; past them it is
    /// answered `UNAVAILABLE`. Event watches answer at once and then stream for as long as they last.
    #[arg(long, env = "BC_REQUEST_TIMEOUT_SECS", default_value_t = 60, value_parser = clap::value_parser!(u64).range(1..))]
    pub request_timeout_secs: u64,

    /// Seconds a connection may stay open with no call in flight before it is closed.
    #[arg(long, env = "BC_IDLE_TIMEOUT_SECS", default_value_t = 120, value_parser = clap::value_parser!(u64).range(1..))]
    pub idle_timeout_secs: u64,

    /// The most connections open at once; one more is answered `503` and closed. A sixteenth of
    /// them is kept for callers who prove themselves (health probes and authenticated calls).
    #[arg(long, env = "BC_MAX_CONNECTIONS", default_value_t = 1024, value_parser = clap::value_parser!(u64).range(1..))]
    pub max_connections: u64,

    /// The most connections open at once from one peer address (an IPv6 peer counts by its /64);
    /// one more is answered `503` and closed. Behind a proxy, raise it to the proxy's share.
    #[arg(long, env = "BC_MAX_CONNECTIONS_PER_PEER", default_value_t = 256, value_parser = clap::value_parser!(u64).range(1..))]
    pub max_connections_per_peer: u64,

    /// The most calls in flight at once on one HTTP/2 connection.
    #[arg(long, env = "BC_HTTP2_MAX_STREAMS", default_value_t = 100, value_parser = clap::value_parser!(u32).range(1..))]
    pub http2_max_streams: u32,

    /// MiB of unfinished request bodies one connection may hold; a call whose body would go past
    /// it is answered `QUOTA_EXCEEDED`.
    #[arg(long, env = "BC_CONNECTION_BODY_MIB", default_value_t = 16, value_parser = clap::value_parser!(u64).range(4..=4096))]
    pub connection_body_mib: u64,

    /// MiB of unfinished request bodies the server may hold in all; a call whose body would go
    /// past it is answered `UNAVAILABLE`.
    #[arg(long, env = "BC_SERVER_BODY_MIB", default_value_t = 128, value_parser = clap::value_parser!(u64).range(4..=65536))]
    pub server_body_mib: u64,

    /// A token that `/metrics` requires as `Authorization: Bearer <token>`. Without it and without
    /// `--metrics-listen`, `/metrics` is not served: a scrape queries the store and counts the
    /// objects of every tenant.
    #[arg(long, env = "BC_METRICS_TOKEN", hide_env_values = true)]
    pub metrics_token: Option<Redacted>,

    /// An address to serve `/metrics` on, apart from the API (which then does not serve it); open
    /// to whoever reaches it unless `--metrics-token` is given too.
    #[arg(long, env = "BC_METRICS_LISTEN")]
    pub metrics_listen: Option<SocketAddr>,

    /// How often nodes' daemons heartbeat, in seconds (a join and every heartbeat tell the daemon);
    /// the worker finds a node silent for 3 of its intervals `notReady`.
    #[arg(long, env = "BC_NODE_HEARTBEAT_INTERVAL_SECS", default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub node_heartbeat_interval_secs: u64,

    /// A PEM certificate chain (the server's certificate first) to serve the API over TLS with;
    /// needs `--tls-key`. Without both the API is plain HTTP.
    #[arg(long, env = "BC_TLS_CERT", requires = "tls_key")]
    pub tls_cert: Option<std::path::PathBuf>,

    /// The PEM private key of `--tls-cert`.
    #[arg(long, env = "BC_TLS_KEY", requires = "tls_cert")]
    pub tls_key: Option<std::path::PathBuf>,
}

impl ServerOptions {
    /// The listener's limits these options give.
    pub fn listener_limits(&self) -> crate::server::Limits {
        use std::time::Duration;
        crate::server::Limits {
            header_read_timeout: Duration::from_secs(self.header_read_timeout_secs),
            request_timeout: Duration::from_secs(self.request_timeout_secs),
            idle_timeout: Duration::from_secs(self.idle_timeout_secs),
            max_connections: usize::try_from(self.max_connections).unwrap_or(usize::MAX),
            max_connections_per_peer: usize::try_from(self.max_connections_per_peer).unwrap_or(usize::MAX),
            http2_max_streams: self.http2_max_streams,
            connection_body_bytes: mib(self.connection_body_mib),
            server_body_bytes: mib(self.server_body_mib),
        }
    }

    /// Who may read `/metrics`: a token's holder, or nobody on the API listener.
    pub fn metrics_access(&self) -> crate::api::MetricsAccess {
        match self.metrics_token.as_ref().filter(|token| !token.0.is_empty()) {
            Some(token) => crate::api::MetricsAccess::token(&token.0),
            None if self.metrics_listen.is_some() => crate::api::MetricsAccess::Open,
            None => crate::api::MetricsAccess::Off,
        }
    }

    /// The TLS configuration `--tls-cert` and `--tls-key` give, if they are given.
    pub fn tls(&self) -> Result<Option<std::sync::Arc<rustls::ServerConfig>>, String> {
        let (Some(cert), Some(key)) = (&self.tls_cert, &self.tls_key) else { return Ok(None) };
        let serving = crate::tls::read_serving_certificate(cert, key).map_err(|error| error.to_string())?;
        crate::tls::server_config(serving).map(Some).map_err(|error| error.to_string())
    }

    /// The operator's policy files as (name, text).
    pub fn read_policies(&self) -> Result<Vec<(String, String)>, String> {
        self.policy_files
            .iter()
            .map(|path| {
                std::fs::read_to_string(path)
                    .map(|text| (path.display().to_string(), text))
                    .map_err(|error| format!("cannot read the policy file {}: {error}", path.display()))
            })
            .collect()
    }

    /// The secret keys, or an error saying how to give them.
    pub fn require_secret_key(&self) -> Result<crate::secrets::SecretKey, String> {
        self.secret_keys.require()
    }
}

/// The keys that seal secrets at rest, which servers and workers share.
#[derive(clap::Args, Clone, Debug)]
pub struct SecretKeyOptions {
    /// The keys that seal secrets at rest (provider credentials, BMC passwords, certificates'
    /// private keys, join tokens): 32 random bytes in base64 each (make one with
    /// `openssl rand -base64 32`), comma-separated. The first seals; the others only open what
    /// they sealed, so a key is rotated without making stored secrets unreadable (a worker
    /// re-seals them with the first). Every server and worker needs the same keys; see
    /// docs/secret-keys.md.
    #[arg(long, env = "BC_SECRET_KEY", hide_env_values = true)]
    pub secret_key: Option<Redacted>,

    /// Instead of `--secret-key`: a file of keys, one a line, the first sealing. It is re-read
    /// when it changes, so keys rotate while the process runs.
    #[arg(long, env = "BC_SECRET_KEY_FILE")]
    pub secret_key_file: Option<std::path::PathBuf>,
}

impl SecretKeyOptions {
    /// The keys, or an error saying how to give them. Keys from a file are re-read while the
    /// process runs; the keys in use are logged by id (never the keys).
    pub fn require(&self) -> Result<crate::secrets::SecretKey, String> {
        let text = self.secret_key.as_ref().map(|key| key.0.as_str()).filter(|key| !key.trim().is_empty());
        let keys = match (text, &self.secret_key_file) {
            (Some(_), Some(_)) => {
                return Err("both --secret-key (BC_SECRET_KEY) and --secret-key-file (BC_SECRET_KEY_FILE) are \
                            given; give the keys one way"
                    .to_owned());
            }
            (Some(text), None) => {
                crate::secrets::SecretKey::from_list(text).map_err(|error| format!("--secret-key: {error}"))?
            }
            (None, Some(path)) => {
                crate::secrets::SecretKey::from_file(path).map_err(|error| format!("--secret-key-file: {error}"))?
            }
            (None, None) => {
                return Err("no secret key: pass --secret-key (or set BC_SECRET_KEY) to 32 random bytes in base64, \
                            made with `openssl rand -base64 32`, or --secret-key-file (BC_SECRET_KEY_FILE) to a \
                            file of such keys, one a line; it seals provider credentials at rest"
                    .to_owned());
            }
        };
        keys.announce("secret keys loaded");
        keys.keep_reloading();
        Ok(keys)
    }
}

/// Reads the TOML file named by `--config <path>` (or `BC_CONFIG`) and makes each of its keys the
/// default of the matching option: `database-url = "..."` acts as `BC_DATABASE_URL` would, unless
/// that variable or the flag is given. Call it first thing in `main`, before any thread starts.
pub fn load_config_file() -> Result<(), String> {
    let args: Vec<String> = std::env::args().collect();
    let from_args = args.iter().enumerate().find_map(|(i, arg)| {
        arg.strip_prefix("--config=")
            .map(str::to_owned)
            .or_else(|| (arg == "--config").then(|| args.get(i + 1).cloned()).flatten())
    });
    let Some(path) = from_args.or_else(|| std::env::var("BC_CONFIG").ok()) else { return Ok(()) };
    let text =
        std::fs::read_to_string(&path).map_err(|error| format!("cannot read the config file {path}: {error}"))?;
    let table: toml::Table =
        text.parse().map_err(|error| format!("the config file {path} is not valid TOML: {error}"))?;
    for (key, value) in table {
        let variable = format!("BC_{}", key.replace('-', "_").to_uppercase());
        let value = match value {
            toml::Value::String(s) => s,
            toml::Value::Integer(_) | toml::Value::Float(_) | toml::Value::Boolean(_) => value.to_string(),
            other => {
                return Err(format!("{path}: {key} must be a string, a number or a boolean, not {}", other.type_str()));
            }
        };
        if std::env::var_os(&variable).is_none() {
            // SAFETY: called at the start of `main`, before any other thread exists.
            unsafe { std::env::set_var(variable, value) };
        }
    }
    Ok(())
}

/// The `--config` flag every binary accepts, so that `--help` shows it.
#[derive(clap::Args, Clone, Debug)]
pub struct ConfigFileOption {
    /// A TOML file whose keys (`database-url`, `listen`, ...) give options that neither a flag
    /// nor a `BC_*` variable gives.
    #[arg(long, env = "BC_CONFIG")]
    pub config: Option<std::path::PathBuf>,
}

/// `mib` mebibytes in bytes, saturating on a machine whose `usize` is narrower.
fn mib(mib: u64) -> usize {
    usize::try_from(mib.saturating_mul(1024 * 1024)).unwrap_or(usize::MAX)
}
