//! The binaries as their own processes: `bc dev` started and waited for, a child killed when
//! the test ends, and the commands the suites run beside them (curl, Python).

use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

const BC: &str = env!("CARGO_BIN_EXE_bc");

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
        let deadline = Instant::now() + limit;
        loop {
            if let Some(status) = self.0.try_wait().unwrap() {
                return status;
            }
            assert!(Instant::now() < deadline, "the process did not exit within {limit:?}");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Sends SIGTERM and waits for the exit status.
    pub fn terminate(mut self) -> std::process::ExitStatus {
        let pid = self.0.id().to_string();
        Command::new("kill").args(["-TERM", &pid]).status().unwrap();
        let deadline = Instant::now() + Duration::from_secs(15);
        loop {
            if let Some(status) = self.0.try_wait().unwrap() {
                return status;
            }
            assert!(Instant::now() < deadline, "the process did not stop on SIGTERM");
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

/// Starts `bc dev` on a free port in `data_dir` and waits for its `dev.json`.
pub fn start_dev(data_dir: &Path) -> (Running, Value) {
    let mut command = Command::new(BC);
    command.stdout(Stdio::null()).stderr(Stdio::null());
    start_dev_as(command, data_dir, &[])
}

/// Starts `bc dev` as [`start_dev`] does, but as on a machine with no Node and no source tree:
/// an empty environment, no program on its `PATH`, and `data_dir` as its working directory.
pub fn start_dev_bare(data_dir: &Path) -> (Running, Value) {
    let mut command = Command::new(BC);
    command.env_clear().env("PATH", "/var/empty").env("HOME", data_dir).current_dir(data_dir);
    command.stdout(Stdio::null()).stderr(Stdio::null());
    start_dev_as(command, data_dir, &[])
}

/// Starts `bc dev --tls` on a free port in `data_dir` and waits for its `dev.json`.
pub fn start_dev_tls(data_dir: &Path) -> (Running, Value) {
    let mut command = Command::new(BC);
    command.stdout(Stdio::null()).stderr(Stdio::null());
    start_dev_as(command, data_dir, &["--tls"])
}

/// Starts `bc dev` as [`start_dev`] does, logging at `rust_log` to `log`.
pub fn start_dev_logging(data_dir: &Path, rust_log: &str, log: &Path) -> (Running, Value) {
    let log = std::fs::File::create(log).unwrap();
    let mut command = Command::new(BC);
    command.env("RUST_LOG", rust_log).stdout(Stdio::from(log.try_clone().unwrap())).stderr(Stdio::from(log));
    start_dev_as(command, data_dir, &[])
}

/// Runs `command` (`bc`, its output set) as `bc dev` in `data_dir` and waits until the
/// `dev.json` it writes names an endpoint that is ready.
fn start_dev_as(mut command: Command, data_dir: &Path, extra: &[&str]) -> (Running, Value) {
    let spawned = std::time::SystemTime::now();
    let running =
        Running(command.args(["dev", "--port", "0"]).args(extra).arg("--data-dir").arg(data_dir).spawn().unwrap());
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let path = data_dir.join("dev.json");
        let fresh = std::fs::metadata(&path).and_then(|m| m.modified()).is_ok_and(|modified| modified >= spawned);
        if let Some(text) = fresh.then(|| std::fs::read_to_string(&path).ok()).flatten() {
            let dev: Value = serde_json::from_str(&text).unwrap();
            let endpoint = dev["endpoint"].as_str().unwrap().to_owned();
            let mut probe = vec!["-s", "-o", "/dev/null", "-w", "%{http_code}"];
            if let Some(ca_file) = dev["caFile"].as_str() {
                probe.extend(["--cacert", ca_file]);
            }
            let readyz = format!("{endpoint}/readyz");
            probe.push(&readyz);
            if curl(&probe) == "200" {
                return (running, dev);
            }
        }
        assert!(Instant::now() < deadline, "bc dev did not come up");
        std::thread::sleep(Duration::from_millis(100));
    }
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
