//! `bc-server` as its own process on a fresh, migrated Postgres database, plain or over TLS with
//! a CA of the test's own ([`System::process`](super::System::process) starts it): an abort or
//! a resident-memory figure is then the server's, not the test binary's, and the daemon's tests
//! reach a real server the way a machine would. Its workers are processes too
//! ([`ServerProcess::worker_process`]).

use std::process::{Command, Stdio};
use std::time::Duration;

use better_compute::store::Store;
use better_compute::tls::LocalCa;
use serde_json::Value;

use super::{Running, Serving, TestDb, WorkerProcess, curl, poll};

const BC_SERVER: &str = env!("CARGO_BIN_EXE_bc-server");

/// The most connections a server process opens to the database, unless its arguments say:
/// half the binary's default, so that many tests' servers fit in one Postgres.
pub(super) const PROCESS_CONNECTIONS: &str = "8";

/// The most connections the test's own store of a server process opens: it seeds principals
/// and looks behind the API, one call at a time.
const LOOKING_CONNECTIONS: u32 = 2;

/// `bc-server` as its own process on a fresh, migrated Postgres database.
pub struct ServerProcess {
    /// `http://127.0.0.1:<port>`, or `https://` over TLS.
    pub endpoint: String,
    /// The operator key given at bootstrap.
    pub admin_token: String,
    /// The server's store, for seeding principals and looking behind the API.
    pub store: Store,
    /// Over TLS: the CA that signed the server's certificate.
    pub ca: Option<LocalCa>,
    /// The database's URL.
    pub database_url: String,
    /// The key that seals provider credentials (`--secret-key`, base64): the workers need it.
    /// With `--secret-key-file`, the file's first key when the server started.
    pub secret_key: String,
    /// The `--secret-key-file` it was started with, which its workers are given too.
    key_file: Option<String>,
    /// The database, kept until the process is gone.
    _db: TestDb,
    /// The arguments it was started with, to start it again.
    args: Vec<String>,
    /// The certificate files over TLS.
    files: tempfile::TempDir,
    process: Option<Running>,
    log: tempfile::NamedTempFile,
}

impl ServerProcess {
    /// Starts `bc-server` with `extra` arguments and waits for `/readyz`; over TLS, with a
    /// certificate for 127.0.0.1 that a new CA signed.
    pub(super) async fn start(extra: &[&str], tls: bool) -> ServerProcess {
        let db = TestDb::new(better_compute::store::Backend::Postgres).await;
        db.store().await;
        let store = Store::connect(&db.url, LOOKING_CONNECTIONS).await.unwrap();
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let admin_token = better_compute::service::ApiKeyToken::generate().reveal();
        let files = tempfile::tempdir().unwrap();
        let key_file = extra.iter().position(|arg| *arg == "--secret-key-file").map(|at| extra[at + 1].to_owned());
        let secret_key = match &key_file {
            Some(path) => std::fs::read_to_string(path).unwrap().lines().next().unwrap().trim().to_owned(),
            None => better_compute::secrets::SecretKey::generate_base64(),
        };
        let mut args: Vec<String> = vec!["--database-url".into(), db.url.clone()];
        args.extend(["--listen".into(), format!("127.0.0.1:{port}")]);
        if key_file.is_none() {
            args.extend(["--secret-key".into(), secret_key.clone()]);
        }
        if !extra.contains(&"--database-max-connections") {
            args.extend(["--database-max-connections".into(), PROCESS_CONNECTIONS.into()]);
        }
        args.extend(extra.iter().map(|arg| arg.to_string()));
        let ca = tls.then(|| {
            let ca = LocalCa::generate("test CA").unwrap();
            let serving = ca.issue_pem("bc-server", &["127.0.0.1", "localhost"]).unwrap();
            std::fs::write(files.path().join("server.pem"), serving.chain).unwrap();
            std::fs::write(files.path().join("server.key"), serving.key).unwrap();
            std::fs::write(files.path().join("ca.pem"), ca.cert_pem()).unwrap();
            args.extend(["--tls-cert".into(), files.path().join("server.pem").display().to_string()]);
            args.extend(["--tls-key".into(), files.path().join("server.key").display().to_string()]);
            ca
        });
        let scheme = if tls { "https" } else { "http" };
        let mut server = ServerProcess {
            endpoint: format!("{scheme}://127.0.0.1:{port}"),
            admin_token,
            store,
            ca,
            database_url: db.url.clone(),
            secret_key,
            key_file,
            _db: db,
            args,
            files,
            process: None,
            log: tempfile::NamedTempFile::new().unwrap(),
        };
        server.spawn_on_a_free_port().await;
        server
    }

    /// A second `bc-server` on this one's database, with the same arguments on another port
    /// (plain only), as replicas behind a balancer run.
    pub async fn another(&self) -> ServerProcess {
        assert!(self.ca.is_none(), "a second server is started plain");
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let mut args = self.args.clone();
        let listen = args.iter().position(|arg| arg == "--listen").expect("--listen") + 1;
        args[listen] = format!("127.0.0.1:{port}");
        let mut server = ServerProcess {
            endpoint: format!("http://127.0.0.1:{port}"),
            admin_token: self.admin_token.clone(),
            store: Store::connect(&self.database_url, LOOKING_CONNECTIONS).await.unwrap(),
            ca: None,
            database_url: self.database_url.clone(),
            secret_key: self.secret_key.clone(),
            key_file: self.key_file.clone(),
            _db: self._db.clone(),
            args,
            files: tempfile::tempdir().unwrap(),
            process: None,
            log: tempfile::NamedTempFile::new().unwrap(),
        };
        server.spawn_on_a_free_port().await;
        server
    }

    /// The server's database served again by a server in this process, beside this one.
    pub async fn in_process(&self) -> Serving {
        Serving::restart(self.store.clone()).await
    }

    /// A `bc-worker` process on the server's database with the key that opens the accounts'
    /// credentials (the server's `--secret-key-file` when it has one), and `args`.
    pub async fn worker_process(&self, args: &[&str]) -> WorkerProcess {
        match &self.key_file {
            Some(path) => {
                let with_file: Vec<&str> =
                    ["--secret-key-file", path.as_str()].into_iter().chain(args.iter().copied()).collect();
                WorkerProcess::start(&self.database_url, None, &with_file).await
            }
            None => WorkerProcess::start(&self.database_url, Some(&self.secret_key), args).await,
        }
    }

    /// Sends SIGTERM: the server drains and exits by itself ([`ServerProcess::wait_exit`]).
    pub fn sigterm(&self) {
        self.process.as_ref().expect("running").sigterm();
    }

    /// Waits up to `limit` for the process to exit; its exit status.
    pub async fn wait_exit(&mut self, limit: Duration) -> std::process::ExitStatus {
        self.process.as_mut().expect("running").wait_exit(limit).await
    }

    /// The first start: the port was free when it was chosen, but another process may take it
    /// before the server binds it; then the server is started on another one.
    async fn spawn_on_a_free_port(&mut self) {
        for _ in 0..4 {
            self.spawn_until_ready_or_exit().await;
            if self.is_alive() || !self.log_text().contains("Address already in use") {
                break;
            }
            let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
            let listen = self.args.iter().position(|arg| arg == "--listen").expect("--listen") + 1;
            self.args[listen] = format!("127.0.0.1:{port}");
            let scheme = if self.ca.is_some() { "https" } else { "http" };
            self.endpoint = format!("{scheme}://127.0.0.1:{port}");
            std::fs::write(self.log.path(), "").unwrap();
        }
        assert!(self.is_alive(), "bc-server exited at start: {}", self.log_text());
    }

    /// Starts the process (again, after [`ServerProcess::kill`]) and waits for `/readyz`.
    pub async fn spawn(&mut self) {
        self.spawn_until_ready_or_exit().await;
        assert!(self.is_alive(), "bc-server exited at start: {}", self.log_text());
    }

    /// Starts the process and waits for `/readyz`, or for the process to exit.
    async fn spawn_until_ready_or_exit(&mut self) {
        let child = Command::new(BC_SERVER)
            .args(&self.args)
            .env("BC_BOOTSTRAP_TOKEN", &self.admin_token)
            .env_remove("BC_CONFIG")
            .env_remove("BC_SECRET_KEY")
            .env_remove("BC_SECRET_KEY_FILE")
            .stdout(Stdio::null())
            .stderr(std::fs::OpenOptions::new().append(true).open(self.log.path()).unwrap())
            .spawn()
            .unwrap();
        self.process = Some(Running(child));
        let this = &*self;
        poll(Duration::from_secs(30), "bc-server ready or exited", || async move {
            match this.curl(&["-s", "-o", "/dev/null", "-w", "%{http_code}", "/readyz"]) {
                ready if ready == "200" => Ok(()),
                _ if !this.is_alive() => Ok(()),
                other => Err(format!("/readyz answers {other:?}; log: {}", this.log_text())),
            }
        })
        .await;
    }

    /// Kills the process (SIGKILL: nothing is finished).
    pub fn kill(&mut self) {
        self.process.take();
    }

    /// Runs curl with `args`, the last being a path on the server (trusting its CA over TLS).
    pub fn curl(&self, args: &[&str]) -> String {
        let (path, options) = args.split_last().expect("a path");
        let url = format!("{}{path}", self.endpoint);
        let ca = self.files.path().join("ca.pem").display().to_string();
        let mut all: Vec<&str> = options.to_vec();
        if self.ca.is_some() {
            all.extend(["--cacert", &ca]);
        }
        all.push(&url);
        curl(&all)
    }

    /// `POST <path>` with a JSON body as `token`: the status and the JSON answer.
    pub async fn post(&self, path: &str, token: &str, body: Value) -> (u16, Value) {
        let mut client = reqwest::Client::builder();
        if let Some(ca) = &self.ca {
            client = client.add_root_certificate(reqwest::Certificate::from_pem(ca.cert_pem().as_bytes()).unwrap());
        }
        let response = client
            .build()
            .unwrap()
            .post(format!("{}{path}", self.endpoint))
            .bearer_auth(token)
            .json(&body)
            .send()
            .await
            .unwrap();
        let status = response.status().as_u16();
        (status, response.json().await.unwrap_or(Value::Null))
    }

    /// `POST <path>` as `token`, which must answer 200.
    pub async fn ok(&self, path: &str, token: &str, body: Value) -> Value {
        let (status, answer) = self.post(path, token, body.clone()).await;
        assert_eq!(status, 200, "{path} {body}: {answer}");
        answer
    }

    /// The process id.
    pub fn pid(&self) -> u32 {
        self.process.as_ref().expect("running").0.id()
    }

    /// Whether the process is still running.
    pub fn is_alive(&self) -> bool {
        std::fs::read_to_string(format!("/proc/{}/stat", self.pid()))
            .is_ok_and(|stat| stat.split_whitespace().nth(2).is_some_and(|state| state != "Z"))
    }

    /// The resident memory of the process, in MiB.
    pub fn rss_mib(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid())).unwrap();
        let kib: u64 = status
            .lines()
            .find_map(|line| line.strip_prefix("VmRSS:"))
            .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
            .expect("VmRSS in /proc/<pid>/status");
        kib / 1024
    }

    /// The processor time the server has used so far, in all its threads (user and system).
    pub fn cpu_time(&self) -> Duration {
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", self.pid())).unwrap();
        // The fields after the command name, which is in parentheses and may hold spaces.
        let fields: Vec<&str> =
            stat.rsplit_once(')').expect("(comm) in /proc/<pid>/stat").1.split_whitespace().collect();
        // utime and stime (fields 14 and 15 of the line) in USER_HZ ticks, 100 a second on Linux.
        let ticks: u64 = fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap();
        Duration::from_millis(ticks * 10)
    }

    /// What the server wrote to stderr so far.
    pub fn log_text(&self) -> String {
        std::fs::read_to_string(self.log.path()).unwrap_or_default()
    }

    /// Panics, with the server's log, unless the process is up and answers `/healthz`.
    pub fn assert_up(&self) {
        assert!(self.is_alive(), "bc-server died: {}", self.log_text());
        let health = self.curl(&["-s", "-m", "5", "-o", "/dev/null", "-w", "%{http_code}", "/healthz"]);
        assert_eq!(health, "200", "bc-server does not answer /healthz: {}", self.log_text());
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        // The process goes before its database.
        self.process.take();
    }
}
