//! `bcctl dev`: the whole system in one process on an embedded SQLite file, for newcomers, examples
//! and demos. It writes `<data-dir>/dev.json` with the endpoint and the tokens to use.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tokio::net::TcpListener;

use crate::error::{Error, Result};
use crate::reconcile::{ProviderResources, Worker, WorkerConfig, registry};
use crate::service::Service;
use crate::store::Store;

/// Options of `bcctl dev`.
#[derive(clap::Args, Clone, Debug)]
pub struct DevOptions {
    /// Where the SQLite file and `dev.json` live; reusing it keeps the data.
    #[arg(long, env = "BC_DEV_DATA_DIR", default_value = "./.bc-dev")]
    pub data_dir: PathBuf,

    /// The port on 127.0.0.1 to serve on; 0 picks a free one.
    #[arg(long, env = "BC_DEV_PORT", default_value_t = 8080)]
    pub port: u16,

    /// Serve over TLS with a local CA kept in `<data-dir>/tls/` (made on first use); prints the
    /// CA's SHA-256 for `bcd join --ca-sha256`. Plain HTTP otherwise.
    #[arg(long, env = "BC_DEV_TLS")]
    pub tls: bool,
}

/// A tenant of the demo platform in `dev.json`.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DevTenant {
    /// The tenant's id.
    pub id: String,
    /// An API key of the tenant's admin.
    pub token: String,
    /// An API key of the tenant's viewer.
    #[serde(default)]
    pub viewer_token: String,
}

/// `<data-dir>/dev.json`: how to reach the running `bcctl dev`.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DevFile {
    /// The API's address, for gRPC, gRPC-web and JSON alike.
    pub endpoint: String,
    /// The operator's API key.
    pub admin_token: String,
    /// The demo tenants.
    pub tenants: Vec<DevTenant>,
    /// The demo pools, by provider.
    pub pools: serde_json::Map<String, serde_json::Value>,
    /// The fake cloud's address.
    pub fakecloud: String,
    /// With `--tls`: the SHA-256 of the local CA's public key, which `bcctl` and `bcd` pin.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ca_sha256: Option<String>,
    /// With `--tls`: the local CA's certificate file, for other clients (`curl --cacert`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ca_file: Option<String>,
    /// The fake cloud over HTTPS, for clients that refuse plain HTTP (pydo).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fakecloud_tls: Option<FakecloudTls>,
    /// The fake cloud's BMCs, one per fake machine, for `bcctl metal enroll`.
    #[serde(default)]
    pub bmcs: Vec<DevBmc>,
}

/// One fake machine's BMC: what enrolment needs. The password is made anew at each start.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DevBmc {
    /// `redfish`.
    pub driver: String,
    /// The system's URL on the fake cloud's HTTPS listener (its CA is `fakecloudTls.caFile`).
    pub address: String,
    pub username: String,
    pub password: String,
}

/// How many fake machines `bcctl dev` puts behind the fake cloud's Redfish BMC.
const DEV_MACHINES: usize = 3;

/// Makes the fake machines and lists their BMCs.
fn dev_bmcs(fakecloud: &fakecloud::FakeCloud) -> Vec<DevBmc> {
    (1..=DEV_MACHINES)
        .map(|number| {
            let password = format!("{:032x}", rand::random::<u128>());
            let spec = fakecloud::BmcSystemSpec {
                name: format!("metal-{number}"),
                username: "admin".into(),
                password: password.clone(),
            };
            let path = fakecloud.add_bmc_system(spec);
            DevBmc {
                driver: "redfish".into(),
                address: format!("{}{path}", fakecloud.https_url()),
                username: "admin".into(),
                password,
            }
        })
        .collect()
}

/// The fake cloud's HTTPS listener.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FakecloudTls {
    /// `https://127.0.0.1:PORT`.
    pub url: String,
    /// Its CA's certificate (made anew at each start), for `--cacert` and `REQUESTS_CA_BUNDLE`.
    pub ca_file: String,
}

impl DevFile {
    /// The file's path in `data_dir`.
    pub fn path(data_dir: &Path) -> PathBuf {
        data_dir.join("dev.json")
    }

    /// Reads `dev.json` from `data_dir`, if it is there.
    pub fn read(data_dir: &Path) -> Option<DevFile> {
        let text = std::fs::read_to_string(Self::path(data_dir)).ok()?;
        serde_json::from_str(&text).ok()
    }

    /// Writes the file whole (to a temporary file, then renamed), readable by its owner only:
    /// it holds tokens.
    fn write(&self, data_dir: &Path) -> Result<()> {
        let path = Self::path(data_dir);
        let temporary = data_dir.join("dev.json.tmp");
        let text = serde_json::to_string_pretty(self).expect("the dev file serializes");
        let io = |error: std::io::Error| Error::internal(format!("cannot write {}: {error}", path.display()));
        std::fs::write(&temporary, text).map_err(io)?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&temporary, std::fs::Permissions::from_mode(0o600)).map_err(io)?;
        }
        std::fs::rename(&temporary, &path).map_err(io)
    }
}

/// Runs `bcctl dev` until Ctrl-C or SIGTERM.
pub async fn run(options: DevOptions) -> Result<()> {
    let data_dir = &options.data_dir;
    std::fs::create_dir_all(data_dir)
        .map_err(|error| Error::internal(format!("cannot create {}: {error}", data_dir.display())))?;
    let database = data_dir.join("bc.sqlite");
    create_private_file(&database)?;
    let url = format!("sqlite://{}?mode=rwc", database.display());
    let store = Store::connect(&url, 1).await?;
    store.migrate().await?;
    let secret_key = dev_secret_key(data_dir)?;
    let services = Service::new(store.clone()).with_secret_key(secret_key.clone());

    let previous = DevFile::read(data_dir);
    let admin_token = match crate::server::bootstrap(&services, None).await? {
        Some(token) => token,
        None => match previous.as_ref().map(|file| file.admin_token.clone()) {
            Some(token) if services.authenticate(Some(&format!("Bearer {token}"))).await.is_ok() => token,
            _ => {
                return Err(Error::invalid_state(format!(
                    "{} has data but its dev.json lost the operator key; remove the directory to start afresh",
                    data_dir.display()
                )));
            }
        },
    };

    let tenants =
        crate::dev_seed::seed_tenants(&services, previous.as_ref().map(|f| f.tenants.as_slice()).unwrap_or_default())
            .await?;
    // The fake cloud runs in this process; the worker's adapters, and the seeded accounts, point
    // at it.
    let fakecloud_config = fakecloud::FakeCloudConfig::default();
    let digitalocean_token = fakecloud_config.digitalocean_token.clone();
    let fakecloud = fakecloud::FakeCloud::start(fakecloud_config)
        .await
        .map_err(|error| Error::unavailable(format!("cannot start the fake cloud: {error}")))?;
    let pools = crate::dev_catalog::seed(&store, &secret_key, &fakecloud, &digitalocean_token).await?;
    // An account pointed at the fake cloud's https:// address verifies it like any provider.
    crate::provider::accounts::trust_root(fakecloud.ca_pem()).map_err(|error| Error::internal(error.to_string()))?;
    let fakecloud_ca = data_dir.join("fakecloud-ca.pem");
    std::fs::write(&fakecloud_ca, fakecloud.ca_pem())
        .map_err(|error| Error::unavailable(format!("cannot write {}: {error}", fakecloud_ca.display())))?;

    let listener = TcpListener::bind(("127.0.0.1", options.port))
        .await
        .map_err(|error| Error::unavailable(format!("cannot listen on 127.0.0.1:{}: {error}", options.port)))?;
    let address = listener.local_addr().map_err(|e| Error::internal(e.to_string()))?;
    let (endpoint, tls, ca) = match options.tls {
        false => (format!("http://{address}"), None, None),
        true => {
            let (ca, ca_file) = dev_ca(data_dir)?;
            let serving = ca.issue("bcctl dev", &["localhost", "127.0.0.1"])?;
            (format!("https://{address}"), Some(crate::tls::server_config(serving)?), Some((ca.sha256(), ca_file)))
        }
    };
    let file = DevFile {
        endpoint: endpoint.clone(),
        admin_token: admin_token.clone(),
        tenants,
        pools,
        fakecloud: fakecloud.base_url().to_owned(),
        ca_sha256: ca.as_ref().map(|(sha256, _)| sha256.clone()),
        ca_file: ca.as_ref().map(|(_, file)| file.display().to_string()),
        fakecloud_tls: Some(FakecloudTls {
            url: fakecloud.https_url().to_owned(),
            ca_file: fakecloud_ca.display().to_string(),
        }),
        bmcs: dev_bmcs(&fakecloud),
    };
    file.write(data_dir)?;
    print_banner(&endpoint, &admin_token, data_dir, ca.as_ref());

    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    // Short intervals, so that a demo converges while one watches.
    let worker = Worker::new(
        store.clone(),
        WorkerConfig {
            converging: Some(Duration::from_secs(2)),
            settled: Some(Duration::from_secs(30)),
            metering_interval: Duration::from_secs(60),
            ..WorkerConfig::default()
        },
    );
    let digitalocean = crate::provider::accounts::StoreDigitalOceanAccounts::new(store.clone(), secret_key.clone());
    // The substrates' daemons (run by the fake cloud in this process) join through this API.
    let daemon_endpoint = crate::reconcile::DaemonEndpoint {
        url: endpoint.clone(),
        ca_sha256: ca.as_ref().map(|(sha256, _)| sha256.clone()),
    };
    let resources = ProviderResources {
        daemon_endpoint: Some(daemon_endpoint),
        ..ProviderResources::new(services.gke_accounts()?, digitalocean, secret_key.clone())
    };
    let worker = worker.with_reconcilers(registry(resources));
    let mut reseal_stop = stop_rx.clone();
    let resealer = crate::reconcile::Resealer::new(store.clone(), secret_key.clone(), Duration::from_secs(600));
    tokio::spawn(resealer.run(async move {
        let _ = reseal_stop.wait_for(|stop| *stop).await;
    }));
    let mut worker_stop = stop_rx.clone();
    let worker = tokio::spawn(worker.run(async move {
        let _ = worker_stop.wait_for(|stop| *stop).await;
    }));
    let options = crate::server::ServeOptions { tls, ..Default::default() };
    let served = crate::server::serve_with(listener, services, options, async move {
        crate::shutdown::signal().await;
        let _ = stop_tx.send(true);
    })
    .await;
    let worked = worker.await.map_err(|error| Error::internal(format!("the worker panicked: {error}")))?;
    store.close().await;
    drop(fakecloud);
    served.and(worked)
}

/// Makes `path` readable by its owner only, creating it empty if it is not there: the store holds
/// key hashes, sealed credentials and every tenant's data. SQLite gives its journal and WAL files
/// the mode of the database file.
fn create_private_file(path: &Path) -> Result<()> {
    let io = |error: std::io::Error| Error::internal(format!("cannot create {}: {error}", path.display()));
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(false);
    #[cfg(unix)]
    {
        use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
        options.mode(0o600);
        options.open(path).map_err(io)?;
        // A file from before this rule keeps its old mode through `open`.
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)).map_err(io)?;
    }
    #[cfg(not(unix))]
    options.open(path).map_err(io)?;
    Ok(())
}

/// The keys that seal credentials in this data directory: one made on first start and kept in
/// `secret.key`, readable by its owner only; a key file like `--secret-key-file`'s (one key a
/// line, the first sealing), re-read when it changes.
fn dev_secret_key(data_dir: &Path) -> Result<crate::secrets::SecretKey> {
    let path = data_dir.join("secret.key");
    let io = |error: std::io::Error| Error::internal(format!("cannot use {}: {error}", path.display()));
    if !path.exists() {
        let text = crate::secrets::SecretKey::generate_base64();
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        std::io::Write::write_all(&mut options.open(&path).map_err(io)?, text.as_bytes()).map_err(io)?;
    }
    let keys = crate::secrets::SecretKey::from_file(&path).map_err(Error::invalid_state)?;
    keys.keep_reloading();
    Ok(keys)
}

/// The local CA of `bcctl dev --tls`: `tls/ca.pem` and `tls/ca.key` (its owner's only) in the data
/// directory, made on first use and kept, so that a pin stays good across restarts.
fn dev_ca(data_dir: &Path) -> Result<(crate::tls::LocalCa, PathBuf)> {
    let dir = data_dir.join("tls");
    let (cert_path, key_path) = (dir.join("ca.pem"), dir.join("ca.key"));
    let io = |path: &Path, error: std::io::Error| Error::internal(format!("cannot use {}: {error}", path.display()));
    if cert_path.exists() && key_path.exists() {
        let cert = std::fs::read_to_string(&cert_path).map_err(|e| io(&cert_path, e))?;
        let key = std::fs::read_to_string(&key_path).map_err(|e| io(&key_path, e))?;
        return Ok((crate::tls::LocalCa::from_pem(&cert, &key)?, cert_path));
    }
    std::fs::create_dir_all(&dir).map_err(|e| io(&dir, e))?;
    let ca = crate::tls::LocalCa::generate("bcctl dev local CA")?;
    create_private_file(&key_path)?;
    std::fs::write(&key_path, ca.key_pem()).map_err(|e| io(&key_path, e))?;
    std::fs::write(&cert_path, ca.cert_pem()).map_err(|e| io(&cert_path, e))?;
    Ok((ca, cert_path))
}

fn print_banner(endpoint: &str, token: &str, data_dir: &Path, ca: Option<&(String, PathBuf)>) {
    if let Some((sha256, file)) = ca {
        println!(
            "TLS: a local CA signs the server's certificate ({file}).\n\
             Its SHA-256, for `bcd join --ca-sha256` and `bcctl --ca-sha256`: {sha256}\n",
            file = file.display()
        );
    }
    println!(
        "better-compute is running on {endpoint} (gRPC, gRPC-web and JSON)\n\
         The console: {endpoint}/console/ (sign in with a key from dev.json)\n\
         \n\
         Data and tokens: {dir} (dev.json has the endpoint and the operator key)\n\
         \n\
         Try:\n\
         \x20 bcctl tenants list\n\
         \x20 bcctl pools visible --tenant acme\n\
         \x20 bcctl quotas list --tenant acme\n\
         \x20 BC_TOKEN=<acme token> bcctl clusters create --tenant acme --pool <gke pool> --name web \\\n\
         \x20   --location us-central1 --node-pool name=general,machine-type=e2-standard-4,count=2 --wait\n\
         \x20 curl -s {endpoint}/api/platform/tenants/list -H 'Authorization: Bearer {token}' -d '{{}}'\n\
         \n\
         Stop with Ctrl-C; run `bcctl dev` again on the same directory to pick up where you left off.",
        dir = data_dir.display(),
    );
}
