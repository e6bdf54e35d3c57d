//! What the fake machines run once powered on. A machine that boots from its virtual CD with a
//! boot configuration in its removable media runs the installer: it fetches the configuration
//! (the control plane's per-deploy URL), joins the pool with its one-use join token through the
//! real bcd code, and keeps running as the installed system. A machine that boots from its disk
//! with a system installed (and not erased since) runs that system's bcd again, as the node it
//! joined as. Anything else (a rescue image, an empty disk) runs nothing the control plane sees,
//! and neither does a machine whose system hangs (a test's fault) until it boots again.
//!
//! Design: one background task compares what should run with what runs every [`PERIOD`], as the
//! fake kubelets do. A system's disk is a directory per (machine, disk generation) under the
//! fake cloud's own directory, so an erase (a new generation) leaves the machine with nothing
//! installed.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::oneshot;

use super::super::Shared;
use super::machine::Machine;
use bcd::boot_config::BootConfig;
use bcd::daemon::{EmbeddedDaemon, Machine as DaemonMachine, host, run_embedded, state::NodeState};
use bcd::proto::bettercompute::compute::v1::NodeCapacity;

/// How often what runs is compared with what should.
pub const PERIOD: Duration = Duration::from_millis(200);

/// What a powered-on machine runs.
#[derive(Clone, Debug, PartialEq, Eq)]
enum System {
    /// The installer of a deploy, with its boot configuration's URL.
    Installer { config_url: String },
    /// The system installed on its disk.
    Installed,
}

/// A system running on a machine since a boot.
struct Running {
    /// The boot it runs since (its index in the machine's boots) and the disk it runs on.
    since: (usize, u64),
    _stop: oneshot::Sender<()>,
}

/// Runs the fake machines' systems until the task is aborted.
pub async fn run(shared: Arc<Shared>, dir: PathBuf) {
    let mut running: BTreeMap<String, Running> = BTreeMap::new();
    let mut tick = tokio::time::interval(PERIOD);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        let world = shared.world();
        let mut wanted = BTreeMap::new();
        for machine in world.redfish.machines.values() {
            if let Some(want) = wanted_system(machine, &dir) {
                wanted.insert(machine.id.clone(), want);
            }
        }
        running.retain(|id, run| wanted.get(id).is_some_and(|(since, _, _)| *since == run.since));
        drop(world);
        for (id, (since, system, machine)) in wanted {
            if running.contains_key(&id) {
                continue;
            }
            if matches!(system, System::Installer { .. }) {
                install(&shared, &id);
            }
            let (stop, stopped) = oneshot::channel::<()>();
            let disk = disk_dir(&dir, &id, since.1);
            tokio::spawn(boot(id.clone(), machine, system, disk, stopped));
            running.insert(id, Running { since, _stop: stop });
        }
    }
}

/// The installer lays the system on the system disk, as an installed system is found there.
fn install(shared: &Shared, id: &str) {
    let mut world = shared.world();
    if let Some(machine) = world.redfish.machine_mut(id) {
        machine.write(super::SYSTEM_DISK, "better-compute node image\n");
    }
}

/// What `machine` should run now, since which boot, and its name: nothing while it is off.
fn wanted_system(machine: &Machine, dir: &Path) -> Option<((usize, u64), System, String)> {
    if machine.power_state() != "On" || machine.hung {
        return None;
    }
    let boot = machine.boots.last()?;
    let since = (machine.boots.len() - 1, machine.disk_generation);
    let system = match (boot.device.as_str(), &boot.config) {
        ("Cd", Some(config_url)) => System::Installer { config_url: config_url.clone() },
        ("Hdd", _)
            if !machine.broken
                && NodeState::read(&disk_dir(dir, &machine.id, machine.disk_generation)).ok().flatten().is_some() =>
        {
            System::Installed
        }
        _ => return None,
    };
    Some((since, system, machine.spec.name.clone()))
}

fn disk_dir(dir: &Path, machine: &str, generation: u64) -> PathBuf {
    dir.join(format!("machine-{machine}-disk{generation}"))
}

/// Boots `system` on the machine: the installer fetches its configuration and joins; the
/// installed system resumes as its node. Runs until `stop` or its bcd ends.
async fn boot(id: String, name: String, system: System, disk: PathBuf, stop: oneshot::Receiver<()>) {
    let daemon = match &system {
        System::Installer { config_url } => match fetch_config(config_url).await {
            Ok(config) => daemon(&name, &disk, config.endpoint, config.join_token, config.ca_sha256, config.machine_id)
                .map(|mut daemon| {
                    daemon.labels = config.labels.into_iter().collect();
                    daemon
                }),
            Err(error) => Err(error),
        },
        System::Installed => match NodeState::read(&disk) {
            Ok(Some(state)) => {
                daemon(&name, &disk, state.endpoint.clone(), String::new(), None, state.machine_id.unwrap_or_default())
            }
            Ok(None) => Err("nothing is installed".to_owned()),
            Err(error) => Err(error),
        },
    };
    let daemon = match daemon {
        Ok(daemon) => daemon,
        Err(error) => {
            tracing::warn!(machine = %id, "fake machine's {system:?} could not start: {error}");
            return;
        }
    };
    if matches!(system, System::Installer { .. }) {
        // An installer lays a fresh system: a node the disk held before (a redeploy) is gone.
        let _ = std::fs::remove_dir_all(&disk);
    }
    if let Err(error) = std::fs::create_dir_all(&disk) {
        tracing::warn!(machine = %id, "fake machine's disk: {error}");
        return;
    }
    let ended = run_embedded(daemon, async move {
        let _ = stop.await;
    })
    .await;
    if let Err(error) = ended {
        tracing::info!(machine = %id, "fake machine's bcd stopped: {error}");
    }
}

/// Fetches a boot configuration. The fake machine's installer stands for one booted with the
/// operator's CA, so it takes the control plane's certificate as it is; bcd pins it afterwards.
async fn fetch_config(url: &str) -> Result<BootConfig, String> {
    let http = reqwest::Client::builder()
        .danger_accept_invalid_certs(true)
        .timeout(Duration::from_secs(10))
        .build()
        .map_err(|error| error.to_string())?;
    let response = http.get(url).send().await.map_err(|error| format!("fetching the boot configuration: {error}"))?;
    if !response.status().is_success() {
        return Err(format!("the boot configuration's URL answered {}", response.status()));
    }
    response.json().await.map_err(|error| format!("the boot configuration is not JSON: {error}"))
}

/// The bcd of a fake machine (8 CPUs, 32 GiB, two 960 GB disks as the BMC reports).
fn daemon(
    name: &str,
    disk: &Path,
    endpoint: String,
    token: String,
    ca_sha256: Option<String>,
    machine_id: String,
) -> Result<EmbeddedDaemon, String> {
    let ca_sha256 = ca_sha256.map(|pin| pin.parse().map_err(|error| format!("caSha256: {error}"))).transpose()?;
    let capacity = NodeCapacity {
        cpu_millis: 8000,
        memory_bytes: 32 << 30,
        ephemeral_storage_bytes: 1_920_394_248_192,
        gpus: Vec::new(),
    };
    let allocatable = NodeCapacity { cpu_millis: 7800, memory_bytes: (32 << 30) - (1 << 30), ..capacity.clone() };
    Ok(EmbeddedDaemon {
        endpoint,
        token,
        ca_sha256,
        identity: host::Identity {
            machine_id,
            hostname: name.to_owned(),
            architecture: "amd64".into(),
            os: "Better Compute node image".into(),
            kernel: "6.12.0".into(),
        },
        labels: Vec::new(),
        machine: DaemonMachine::Given(host::Resources { capacity, allocatable, conditions: Vec::new() }),
        state_dir: disk.to_owned(),
    })
}
