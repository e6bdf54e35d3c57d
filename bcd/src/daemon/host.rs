//! What `bcd` reads from the machine it runs on: who it is (machine id, host name, architecture,
//! OS, kernel), what it has (`/proc`, `/sys`, statvfs, `nvidia-smi` when present), and how it is.

use std::collections::BTreeMap;
use std::path::Path;

use crate::proto::bettercompute::compute::v1::{NodeCapacity, NodeCondition, NodeGpus};

/// What is held back from pods for the system and bcd itself, as kubelet's reservations do.
const RESERVED_CPU_MILLIS: i64 = 100;
const RESERVED_MEMORY_BYTES: i64 = 256 << 20;
/// The share of the disk kept free for the system, in percent.
const RESERVED_DISK_PERCENT: i64 = 10;
/// Below these free shares (percent) the node reports pressure.
const MEMORY_PRESSURE_PERCENT: i64 = 5;
const DISK_PRESSURE_PERCENT: i64 = 10;

/// The machine's identity, as a join sends it.
#[derive(Clone, Debug)]
pub struct Identity {
    pub machine_id: String,
    pub hostname: String,
    pub architecture: String,
    pub os: String,
    pub kernel: String,
}

impl Identity {
    /// Reads the machine's identity; `machine_id` overrides what `/etc/machine-id` or the DMI
    /// product UUID say (a machine with neither, or several daemons on one machine).
    pub fn read(machine_id: Option<&str>) -> Result<Identity, String> {
        let machine_id = match machine_id {
            Some(id) => id.to_owned(),
            None => ["/etc/machine-id", "/var/lib/dbus/machine-id", "/sys/class/dmi/id/product_uuid"]
                .iter()
                .find_map(|path| read_trimmed(path).filter(|id| !id.is_empty()))
                .ok_or("this machine has no /etc/machine-id nor a DMI product UUID; give one with --machine-id")?,
        };
        let hostname = read_trimmed("/proc/sys/kernel/hostname")
            .or_else(|| std::env::var("HOSTNAME").ok())
            .unwrap_or_else(|| "localhost".to_owned());
        Ok(Identity {
            machine_id,
            hostname,
            architecture: architecture().to_owned(),
            os: os_name(),
            kernel: read_trimmed("/proc/sys/kernel/osrelease").unwrap_or_default(),
        })
    }
}

/// The architecture in the names Kubernetes uses.
fn architecture() -> &'static str {
    match std::env::consts::ARCH {
        "x86_64" => "amd64",
        "aarch64" => "arm64",
        "powerpc64" => "ppc64le",
        other => other,
    }
}

/// `PRETTY_NAME` of `/etc/os-release`, else the OS family.
fn os_name() -> String {
    std::fs::read_to_string("/etc/os-release")
        .ok()
        .and_then(|text| {
            text.lines()
                .find_map(|line| line.strip_prefix("PRETTY_NAME="))
                .map(|value| value.trim_matches('"').chars().take(128).collect())
        })
        .unwrap_or_else(|| std::env::consts::OS.to_owned())
}

fn read_trimmed(path: &str) -> Option<String> {
    std::fs::read_to_string(path).ok().map(|text| text.trim().to_owned())
}

/// The machine's resources and conditions at one moment.
#[derive(Clone, Debug, PartialEq)]
pub struct Resources {
    pub capacity: NodeCapacity,
    pub allocatable: NodeCapacity,
    pub conditions: Vec<NodeCondition>,
}

/// Reads what the machine has now; `disk` is a path on the filesystem pods write to, and `gpus`
/// what [`gpus`] found at start.
pub fn resources(disk: &Path, gpus: &[NodeGpus]) -> Resources {
    let memory = meminfo();
    let (disk_total, disk_free) = filesystem(disk);
    let cpu_millis = std::thread::available_parallelism().map(|n| n.get() as i64 * 1000).unwrap_or(1000);
    let capacity = NodeCapacity {
        cpu_millis,
        memory_bytes: memory.total,
        ephemeral_storage_bytes: disk_total,
        gpus: gpus.to_vec(),
    };
    let allocatable = NodeCapacity {
        cpu_millis: (cpu_millis - RESERVED_CPU_MILLIS).max(0),
        memory_bytes: (memory.total - RESERVED_MEMORY_BYTES).max(0),
        ephemeral_storage_bytes: disk_total - disk_total * RESERVED_DISK_PERCENT / 100,
        gpus: gpus.to_vec(),
    };
    let conditions = vec![
        pressure("MemoryPressure", memory.available, memory.total, MEMORY_PRESSURE_PERCENT, "memory"),
        pressure("DiskPressure", disk_free, disk_total, DISK_PRESSURE_PERCENT, "disk"),
    ];
    Resources { capacity, allocatable, conditions }
}

/// A pressure condition: `True` when less than `percent` of `total` is free.
fn pressure(kind: &str, free: i64, total: i64, percent: i64, what: &str) -> NodeCondition {
    let (status, message) = if total <= 0 {
        ("Unknown", format!("bcd cannot read the {what}'s size"))
    } else {
        let under = free * 100 < total * percent;
        let status = if under { "True" } else { "False" };
        (status, format!("{}% of the {what} is free", free * 100 / total))
    };
    NodeCondition { r#type: kind.to_owned(), status: status.to_owned(), message }
}

struct Memory {
    total: i64,
    available: i64,
}

/// `MemTotal` and `MemAvailable` of `/proc/meminfo`, in bytes.
fn meminfo() -> Memory {
    let text = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
    let field = |name: &str| -> i64 {
        text.lines()
            .find_map(|line| line.strip_prefix(name))
            .and_then(|rest| rest.trim_start_matches(':').split_whitespace().next()?.parse::<i64>().ok())
            .map(|kib| kib * 1024)
            .unwrap_or(0)
    };
    Memory { total: field("MemTotal"), available: field("MemAvailable") }
}

/// The size and the space free to unprivileged users of the filesystem holding `path`, in bytes.
#[cfg(unix)]
fn filesystem(path: &Path) -> (i64, i64) {
    match rustix::fs::statvfs(path) {
        Ok(stat) => {
            let block = stat.f_frsize as i64;
            (stat.f_blocks as i64 * block, stat.f_bavail as i64 * block)
        }
        Err(_) => (0, 0),
    }
}

#[cfg(not(unix))]
fn filesystem(_: &Path) -> (i64, i64) {
    (0, 0)
}

/// The GPUs `nvidia-smi` lists, by model; none when it is not installed or fails.
pub fn gpus() -> Vec<NodeGpus> {
    let Ok(output) =
        std::process::Command::new("nvidia-smi").args(["--query-gpu=name", "--format=csv,noheader"]).output()
    else {
        return Vec::new();
    };
    if !output.status.success() {
        return Vec::new();
    }
    count_models(&String::from_utf8_lossy(&output.stdout))
}

/// One GPU per line of `nvidia-smi`'s CSV, counted by model.
fn count_models(csv: &str) -> Vec<NodeGpus> {
    let mut models = BTreeMap::<String, i32>::new();
    for model in csv.lines().map(str::trim).filter(|line| !line.is_empty()) {
        *models.entry(model.chars().take(128).collect()).or_default() += 1;
    }
    models.into_iter().take(16).map(|(model, count)| NodeGpus { model, count: count.min(64) }).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gpus_are_counted_by_model() {
        let found = count_models("NVIDIA A100-SXM4-80GB\nNVIDIA A100-SXM4-80GB\n\nNVIDIA L4\n");
        assert_eq!(
            found,
            vec![
                NodeGpus { model: "NVIDIA A100-SXM4-80GB".into(), count: 2 },
                NodeGpus { model: "NVIDIA L4".into(), count: 1 }
            ]
        );
    }

    #[test]
    fn pressure_is_true_below_its_share_and_unknown_without_a_size() {
        assert_eq!(pressure("DiskPressure", 5, 100, 10, "disk").status, "True");
        assert_eq!(pressure("DiskPressure", 50, 100, 10, "disk").status, "False");
        assert_eq!(pressure("DiskPressure", 0, 0, 10, "disk").status, "Unknown");
    }

    #[test]
    fn this_machine_has_memory_cpus_and_a_disk() {
        let found = resources(Path::new("/"), &[]);
        assert!(found.capacity.cpu_millis >= 1000);
        assert!(found.capacity.memory_bytes > 0);
        assert!(found.capacity.ephemeral_storage_bytes > 0);
        assert!(found.allocatable.memory_bytes < found.capacity.memory_bytes);
    }
}
