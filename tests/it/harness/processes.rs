//! The binaries as their own processes: `bcctl dev` started and waited for
//! ([`System::dev`](super::System::dev) starts it), a child killed when the test ends, and the
//! commands the suites run beside them (curl, Python).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

use serde_json::Value;

use super::poll::{poll, poll_blocking};

const BC: &str = env!("CARGO_BIN_EXE_bcctl");

/// A child process killed when the test ends, however it ends.
pub struct Running(pub Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl Running {
    /// Sends SIGTERM and returns at once: the process finishes and exits by itself.
    pub fn sigterm(&self) {
        Command::new("kill").args(["-TERM", &self.0.id().to_string()]).status().unwrap();
    }

    /// Waits up to `limit` for the process to exit by itself; its exit status.
    pub async fn wait_exit(&mut self, limit: Duration) -> std::process::ExitStatus {
        let child = &mut self.0;
        poll(limit, "the process exited", || {
            let exited = child.try_wait().unwrap().ok_or_else(|| "still running".to_owned());
            async move { exited }
        })
        .await
    }

    /// Sends SIGTERM and waits for the exit status.
    pub fn terminate(mut self) -> std::process::ExitStatus {
        self.sigterm();
        poll_blocking(Duration::from_secs(15), "the process stopped on SIGTERM", || {
            self.0.try_wait().unwrap().ok_or_else(|| "still running".to_owned())
        })
    }
}

/// How [`start_dev`] runs `bcctl dev`.
pub(super) struct DevOptions {
    /// `--tls`.
    pub tls: bool,
    /// An empty environment, no program on its `PATH`, its data directory as working directory.
    pub bare: bool,
    /// `RUST_LOG` and the file its output goes to (else it goes nowhere).
    pub logging: Option<(String, PathBuf)>,
}

/// Starts `bcctl dev` on a free port in `data_dir` and waits until the `dev.json` it writes names
/// an endpoint that is ready.
pub(super) fn start_dev(data_dir: &Path, options: DevOptions) -> (Running, Value) {
    let mut command = Command::new(BC);
    if options.bare {
        command.env_clear().env("PATH", "/var/empty").env("HOME", data_dir).current_dir(data_dir);
    }
    match options.logging {
        Some((rust_log, log)) => {
            let log = std::fs::File::create(log).unwrap();
            command.env("RUST_LOG", rust_log).stdout(Stdio::from(log.try_clone().unwrap())).stderr(Stdio::from(log));
        }
        None => {
            command.stdout(Stdio::null()).stderr(Stdio::null());
        }
    }
    command.args(["dev", "--port", "0"]).arg("--data-dir").arg(data_dir);
    if options.tls {
        command.arg("--tls");
    }
    let spawned = std::time::SystemTime::now();
    let running = Running(command.spawn().unwrap());
    let path = data_dir.join("dev.json");
    let dev = poll_blocking(Duration::from_secs(30), "bcctl dev serving what its dev.json names", || {
        let fresh = std::fs::metadata(&path).and_then(|m| m.modified()).is_ok_and(|modified| modified >= spawned);
        let text = fresh.then(|| std::fs::read_to_string(&path).ok()).flatten().ok_or("no fresh dev.json")?;
        let dev: Value = serde_json::from_str(&text).unwrap();
        let endpoint = dev["endpoint"].as_str().unwrap().to_owned();
        let mut probe = vec!["-s", "-o", "/dev/null", "-w", "%{http_code}"];
        if let Some(ca_file) = dev["caFile"].as_str() {
            probe.extend(["--cacert", ca_file]);
        }
        let readyz = format!("{endpoint}/readyz");
        probe.push(&readyz);
        match curl(&probe) {
            ready if ready == "200" => Ok(dev),
            other => Err(format!("/readyz answers {other:?}")),
        }
    });
    (running, dev)
}

pub fn curl(args: &[&str]) -> String {
    let output = Command::new("curl").args(args).output().expect("curl is installed");
    String::from_utf8(output.stdout).unwrap()
}

/// The Python that has grpcio: `BC_TEST_PYTHON` (set by tests/run), else `python3`.
pub fn python() -> String {
    std::env::var("BC_TEST_PYTHON").unwrap_or_else(|_| "python3".to_owned())
}

pub fn run_ok(command: &mut Command) -> Output {
    let output = command.output().unwrap();
    assert!(
        output.status.success(),
        "{command:?} failed:\n{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    output
}
