//! The hostile-input suite: each test replays an attack a probe found (or one of its kind) and
//! checks that the server refuses it cleanly, stays up, and keeps its memory bounded. Every new
//! way in (a method, a decoder, a stream) gets a case here.
//!
//! Where a finding was about a crash or memory, the test runs the real `bc-server` binary as its
//! own process ([`ServerProcess`]), so that an abort or a resident-memory figure is the server's
//! and not the test binary's.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use better_compute::store::Store;

use crate::harness::TestDb;
use crate::harness::{Running, curl};

mod accounts;
mod authorization;
mod daemons;
mod decoders;
mod identity;
mod listener;
mod watches;

const BC_SERVER: &str = env!("CARGO_BIN_EXE_bc-server");

/// `bc-server` as its own process on a fresh, migrated Postgres database.
pub struct ServerProcess {
    /// `http://127.0.0.1:<port>`.
    pub endpoint: String,
    /// The operator key given at bootstrap.
    pub admin_token: String,
    /// The server's store, for seeding principals and looking behind the API.
    pub store: Store,
    /// The database, kept until the process is gone.
    _db: TestDb,
    process: Option<Running>,
    log: tempfile::NamedTempFile,
}

impl ServerProcess {
    /// Starts `bc-server` with `extra` arguments and waits for `/readyz`.
    pub async fn start(extra: &[&str]) -> ServerProcess {
        let db = TestDb::postgres().await;
        let store = db.store().await;
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let admin_token = better_compute::service::ApiKeyToken::generate().reveal();
        let log = tempfile::NamedTempFile::new().unwrap();
        let child = Command::new(BC_SERVER)
            .args(["--database-url", &db.url, "--listen", &format!("127.0.0.1:{port}")])
            .args(["--secret-key", &better_compute::secrets::SecretKey::generate_base64()])
            .args(extra)
            .env("BC_BOOTSTRAP_TOKEN", &admin_token)
            .env_remove("BC_CONFIG")
            .stdout(Stdio::null())
            .stderr(log.reopen().unwrap())
            .spawn()
            .unwrap();
        let server = ServerProcess {
            endpoint: format!("http://127.0.0.1:{port}"),
            admin_token,
            store,
            _db: db,
            process: Some(Running(child)),
            log,
        };
        let deadline = Instant::now() + Duration::from_secs(30);
        while curl(&["-s", "-o", "/dev/null", "-w", "%{http_code}", &format!("{}/readyz", server.endpoint)]) != "200" {
            assert!(server.is_alive(), "bc-server exited at start: {}", server.log_text());
            assert!(Instant::now() < deadline, "bc-server did not come up: {}", server.log_text());
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        server
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
        let health =
            curl(&["-s", "-m", "5", "-o", "/dev/null", "-w", "%{http_code}", &format!("{}/healthz", self.endpoint)]);
        assert_eq!(health, "200", "bc-server does not answer /healthz: {}", self.log_text());
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        // The process goes before its database.
        self.process.take();
    }
}
