//! `bc-worker` as its own process on a server's database: what a deployment runs, stopped with
//! SIGTERM or SIGKILL as an orchestrator or a crash stops it.

use std::process::{Command, Stdio};
use std::time::Duration;

use super::server_process::PROCESS_CONNECTIONS;
use super::{Running, curl, poll};

const BC_WORKER: &str = env!("CARGO_BIN_EXE_bc-worker");

/// The intervals of the tests' worker processes: a 50 ms tick, converging objects every 100 ms,
/// settled ones every 2 s, a 100 ms grace on SIGTERM (the spec's are seconds and minutes).
pub const FAST_WORKER_ARGS: &[&str] =
    &["--tick-ms", "50", "--converging-ms", "100", "--settled-ms", "2000", "--shutdown-grace-ms", "100"];

/// `bc-worker` as its own process, serving its `/metrics` on a port of its own.
pub struct WorkerProcess {
    /// `http://127.0.0.1:<port>`, where it serves `/metrics`.
    pub metrics_endpoint: String,
    process: Option<Running>,
    log: tempfile::NamedTempFile,
}

impl WorkerProcess {
    /// Starts `bc-worker` on `database_url` with `args` and `--secret-key` when given (without
    /// it, `args` must give `--secret-key-file`: a worker refuses to start without keys), and
    /// waits until it has started.
    pub(super) async fn start(database_url: &str, secret_key: Option<&str>, args: &[&str]) -> WorkerProcess {
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let log = tempfile::NamedTempFile::new().unwrap();
        let mut command = Command::new(BC_WORKER);
        command
            .args(["--database-url", database_url, "--metrics-listen", &format!("127.0.0.1:{port}")])
            .args(args)
            .env_remove("BC_CONFIG")
            .env("BC_DATABASE_MAX_CONNECTIONS", PROCESS_CONNECTIONS)
            .env_remove("BC_SECRET_KEY")
            .env_remove("BC_SECRET_KEY_FILE")
            .env("RUST_LOG", "info")
            .stdout(Stdio::null())
            .stderr(std::fs::OpenOptions::new().append(true).open(log.path()).unwrap());
        if let Some(key) = secret_key {
            command.args(["--secret-key", key]);
        }
        let worker = WorkerProcess {
            metrics_endpoint: format!("http://127.0.0.1:{port}"),
            process: Some(Running(command.spawn().unwrap())),
            log,
        };
        poll(Duration::from_secs(30), "bc-worker started", || async {
            let log = worker.log_text();
            assert!(worker.exit_status().is_none(), "bc-worker exited at start: {log}");
            if log.contains("worker started") { Ok(()) } else { Err(log) }
        })
        .await;
        worker
    }

    /// Sends SIGTERM: the worker finishes and exits by itself ([`WorkerProcess::wait_exit`]).
    pub fn sigterm(&self) {
        self.process.as_ref().expect("running").sigterm();
    }

    /// Kills the process with SIGKILL and reaps it: nothing is finished or given back.
    pub fn kill(&mut self) {
        self.process.take();
    }

    /// The exit status, once it has exited.
    fn exit_status(&self) -> Option<std::process::ExitStatus> {
        let running = self.process.as_ref()?;
        // `try_wait` needs `&mut`; /proc tells whether the process is gone without reaping it.
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", running.0.id())).unwrap_or_default();
        let exited = stat.split_whitespace().nth(2).is_none_or(|state| state == "Z");
        exited.then(std::process::ExitStatus::default)
    }

    /// Waits up to `limit` for the process to exit; its exit status.
    pub async fn wait_exit(&mut self, limit: Duration) -> std::process::ExitStatus {
        self.process.as_mut().expect("running").wait_exit(limit).await
    }

    /// Its `/metrics` text.
    pub fn metrics(&self) -> String {
        curl(&["-s", "-m", "5", &format!("{}/metrics", self.metrics_endpoint)])
    }

    /// What the worker wrote to stderr so far.
    pub fn log_text(&self) -> String {
        std::fs::read_to_string(self.log.path()).unwrap_or_default()
    }
}
