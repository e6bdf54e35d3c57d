//! `bcctl metal ...`: bare-metal machines of a pool, enrolled by their BMCs and moved through the
//! provision state machine. The BMC password is read from `--password-file` or asked for on the
//! terminal without echo; it is never a flag's value, so it stays out of shell histories and
//! process lists.

use std::io::{BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};

use super::columns::Column;
use super::follow::answer;
use super::kubernetes::parse_label;
use super::output::OutputFormat;
use super::plan::{self, Change, DryRun};
use super::{Cli, complete, connect, output};
use crate::proto::compute::{
    CommissionMetalRequest, DeleteMetalRequest, DeployMetalRequest, EnrollMetalRequest, GetMetalRequest,
    InspectMetalRequest, ListMetalRequest, MetalBmc, ReleaseMetalRequest, RescueMetalRequest, RetireMetalRequest,
    UpdateMetalRequest, metal_client::MetalClient,
};

/// The pool and machine every command but `enroll` and `list` names.
#[derive(clap::Args, Debug)]
pub struct MachineArgs {
    /// The pool (`pool_...`).
    #[arg(long, add = complete::pools())]
    pool: String,
    /// The machine's id (`node_...`).
    node_id: String,
    /// Wait until the workflow the command started ends, showing each state it passes through;
    /// fails when it ends in a failed state.
    #[arg(long)]
    wait: bool,
}

/// The metal commands.
#[derive(clap::Subcommand, Debug)]
pub enum MetalCommand {
    /// Enrolls a machine by its BMC; it is `enrolling` until the BMC answers.
    Enroll {
        /// The pool (`pool_...`).
        #[arg(long, add = complete::pools())]
        pool: String,
        /// Its name (a DNS label).
        #[arg(long)]
        name: String,
        /// `redfish` or `ipmi`.
        #[arg(long)]
        driver: String,
        /// Redfish: the service root's URL (`https://10.0.0.5`); IPMI: `host` or `host:port`.
        #[arg(long)]
        address: String,
        /// The BMC user.
        #[arg(long)]
        username: String,
        /// A file holding the BMC password; asked for on the terminal when not given.
        #[arg(long)]
        password_file: Option<PathBuf>,
        /// A PEM file of the CA the Redfish BMC's certificate chains to.
        #[arg(long)]
        ca_certificate_file: Option<PathBuf>,
        /// Accept any certificate from the BMC.
        #[arg(long)]
        insecure: bool,
        /// A label `key=value`; repeat for more.
        #[arg(long = "label", value_parser = parse_label)]
        labels: Vec<(String, String)>,
        /// Names this enrolment, so that a retry returns the same machine; a new one each call
        /// when not given.
        #[arg(long)]
        idempotency_key: Option<String>,
        /// Wait until the BMC is reached (`manageable`) or enrolment fails, showing each state.
        #[arg(long)]
        wait: bool,
    },
    /// Lists a pool's machines, oldest first.
    List {
        /// The pool (`pool_...`).
        #[arg(long, add = complete::pools())]
        pool: String,
    },
    /// Shows a machine's metal view.
    Get(MachineArgs),
    /// Changes an idle machine's name, labels or BMC (address, user, password, certificate).
    Update {
        #[command(flatten)]
        machine: MachineArgs,
        /// The new name.
        #[arg(long)]
        name: Option<String>,
        /// A label `key=value` of the new set (it replaces the old); repeat for more.
        #[arg(long = "label", value_parser = parse_label)]
        labels: Vec<(String, String)>,
        /// The BMC's new address.
        #[arg(long)]
        address: Option<String>,
        /// The new BMC user.
        #[arg(long)]
        username: Option<String>,
        /// A file holding the new BMC password.
        #[arg(long, conflicts_with = "prompt_password")]
        password_file: Option<PathBuf>,
        /// Ask for the new BMC password on the terminal.
        #[arg(long)]
        prompt_password: bool,
        /// A PEM file of the CA the Redfish BMC's certificate chains to.
        #[arg(long)]
        ca_certificate_file: Option<PathBuf>,
        /// Accept any certificate from the BMC (`true` or `false`).
        #[arg(long)]
        insecure: Option<bool>,
        #[command(flatten)]
        dry_run: DryRun,
    },
    /// Rotates the machine's BMC credentials: the new ones are checked against the BMC before
    /// the old ones are dropped; refused, the old ones stay in use. With `--wait`, waits for the
    /// check and fails if the BMC refused them.
    RotateCredentials {
        #[command(flatten)]
        machine: MachineArgs,
        /// The new BMC user; the current one when not given.
        #[arg(long)]
        username: Option<String>,
        /// A file holding the new BMC password; asked for on the terminal when not given.
        #[arg(long)]
        password_file: Option<PathBuf>,
    },
    /// Deletes a machine that is manageable (powered off first: `deleting`), enrollFailed or
    /// retired.
    Delete {
        #[command(flatten)]
        machine: MachineArgs,
        #[command(flatten)]
        dry_run: DryRun,
    },
    /// Reads the machine's inventory through its BMC.
    Inspect(MachineArgs),
    /// Commissions the machine: boot order, disk erase, firmware and inventory checks.
    Commission(MachineArgs),
    /// Deploys an image; the machine is deployed when its bcd joins the pool.
    Deploy {
        #[command(flatten)]
        machine: MachineArgs,
        /// The image's URL; the pool's default (`policy.metal.image`) when not given.
        #[arg(long, default_value = "")]
        image: String,
    },
    /// Boots the rescue image, or with `--exit` leaves rescue.
    Rescue {
        #[command(flatten)]
        machine: MachineArgs,
        /// Leave rescue, back to the state it was rescued from.
        #[arg(long)]
        exit: bool,
    },
    /// Releases the machine: powered off through an erase of its disks, back to ready.
    Release(MachineArgs),
    /// Retires the machine for good: powered off first (`retiring`), then its BMC credentials
    /// are wiped.
    Retire(MachineArgs),
}

/// The text of `path`, without the line end an editor adds.
fn read_secret_file(path: &Path) -> Result<String, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    Ok(text.trim_end_matches(['\n', '\r']).to_owned())
}

/// Asks for the BMC password on the terminal, without echo.
fn prompt_password() -> Result<String, String> {
    let stdin = std::io::stdin();
    if !stdin.is_terminal() {
        return Err("no BMC password: give --password-file, or run on a terminal to be asked for it".to_owned());
    }
    eprint!("BMC password: ");
    std::io::stderr().flush().ok();
    let before = rustix::termios::tcgetattr(&stdin).map_err(|e| format!("cannot read the terminal's mode: {e}"))?;
    let mut quiet = before.clone();
    quiet.local_modes.remove(rustix::termios::LocalModes::ECHO);
    rustix::termios::tcsetattr(&stdin, rustix::termios::OptionalActions::Now, &quiet)
        .map_err(|e| format!("cannot turn the terminal's echo off: {e}"))?;
    let mut line = String::new();
    let read = stdin.lock().read_line(&mut line);
    rustix::termios::tcsetattr(&stdin, rustix::termios::OptionalActions::Now, &before).ok();
    eprintln!();
    read.map_err(|e| format!("cannot read the password: {e}"))?;
    Ok(line.trim_end_matches(['\n', '\r']).to_owned())
}

fn read_optional(path: &Option<PathBuf>) -> Result<Option<String>, String> {
    path.as_deref()
        .map(|p| std::fs::read_to_string(p).map_err(|e| format!("cannot read {}: {e}", p.display())))
        .transpose()
}

/// Runs a metal command.
pub async fn run(cli: &Cli, command: &MetalCommand) -> Result<(), String> {
    let mut client = MetalClient::new(connect(cli).await?);
    let machine = match command {
        MetalCommand::Enroll {
            pool,
            name,
            driver,
            address,
            username,
            password_file,
            ca_certificate_file,
            insecure,
            labels,
            idempotency_key,
            wait: _,
        } => {
            let password = match password_file {
                Some(path) => read_secret_file(path)?,
                None => prompt_password()?,
            };
            let request = EnrollMetalRequest {
                pool_id: pool.clone(),
                name: name.clone(),
                bmc: Some(MetalBmc {
                    driver: driver.clone(),
                    address: address.clone(),
                    username: username.clone(),
                    password,
                    ca_certificate: read_optional(ca_certificate_file)?.unwrap_or_default(),
                    insecure: *insecure,
                }),
                labels: labels.iter().cloned().collect(),
                idempotency_key: idempotency_key.clone().unwrap_or_else(|| crate::ids::NodeId::random().to_string()),
            };
            client.enroll(request).await
        }
        MetalCommand::List { pool } => {
            let list = answer(client.list(ListMetalRequest { pool_id: pool.clone() }).await)?;
            let json = output::to_json(&list, "bettercompute.compute.v1.ListMetalResponse");
            let rows = json["machines"].as_array().cloned().unwrap_or_default();
            print_machines(cli.output, &json, &rows);
            return Ok(());
        }
        MetalCommand::Get(m) => {
            client.get(GetMetalRequest { pool_id: m.pool.clone(), node_id: m.node_id.clone() }).await
        }
        MetalCommand::Update {
            machine: m,
            name,
            labels,
            address,
            username,
            password_file,
            prompt_password: prompt,
            ca_certificate_file,
            insecure,
            dry_run,
        } => {
            let password = match (password_file, prompt) {
                (Some(path), _) => Some(read_secret_file(path)?),
                (None, true) => Some(prompt_password()?),
                (None, false) => None,
            };
            // Without a mask, the fields given a value are the mask.
            let request = UpdateMetalRequest {
                pool_id: m.pool.clone(),
                node_id: m.node_id.clone(),
                name: name.clone(),
                labels: labels.iter().cloned().collect(),
                address: address.clone(),
                username: username.clone(),
                password,
                ca_certificate: read_optional(ca_certificate_file)?,
                insecure: *insecure,
                update_mask: None,
                validate_only: false,
            };
            if dry_run.dry_run {
                return plan::show(cli, &answer(client.plan(request.planned()).await)?);
            }
            client.update(request).await
        }
        MetalCommand::RotateCredentials { machine: m, username, password_file } => {
            let password = match password_file {
                Some(path) => read_secret_file(path)?,
                None => prompt_password()?,
            };
            let request = UpdateMetalRequest {
                pool_id: m.pool.clone(),
                node_id: m.node_id.clone(),
                username: username.clone(),
                password: Some(password),
                ..Default::default()
            };
            let updated = answer(client.update(request).await)?;
            let machine = if m.wait { wait_for_check(&mut client, updated).await? } else { updated };
            let json = output::to_json(&machine, "bettercompute.compute.v1.MetalMachine");
            print_machines(cli.output, &json, std::slice::from_ref(&json));
            return match m.wait && machine.last_error.starts_with("credentials:") {
                true => Err(format!("machine {}: {}", machine.id, machine.last_error)),
                false => Ok(()),
            };
        }
        MetalCommand::Delete { machine: m, dry_run } => {
            let request =
                DeleteMetalRequest { pool_id: m.pool.clone(), node_id: m.node_id.clone(), validate_only: false };
            if dry_run.dry_run {
                return plan::show(cli, &answer(client.plan(request.planned()).await)?);
            }
            client.delete(request).await
        }
        MetalCommand::Inspect(m) => {
            client.inspect(InspectMetalRequest { pool_id: m.pool.clone(), node_id: m.node_id.clone() }).await
        }
        MetalCommand::Commission(m) => {
            client.commission(CommissionMetalRequest { pool_id: m.pool.clone(), node_id: m.node_id.clone() }).await
        }
        MetalCommand::Deploy { machine: m, image } => {
            let request =
                DeployMetalRequest { pool_id: m.pool.clone(), node_id: m.node_id.clone(), image: image.clone() };
            client.deploy(request).await
        }
        MetalCommand::Rescue { machine: m, exit } => {
            let request = RescueMetalRequest { pool_id: m.pool.clone(), node_id: m.node_id.clone(), exit: *exit };
            client.rescue(request).await
        }
        MetalCommand::Release(m) => {
            client.release(ReleaseMetalRequest { pool_id: m.pool.clone(), node_id: m.node_id.clone() }).await
        }
        MetalCommand::Retire(m) => {
            client.retire(RetireMetalRequest { pool_id: m.pool.clone(), node_id: m.node_id.clone() }).await
        }
    };
    let mut machine = answer(machine)?;
    if command.waits() {
        machine = wait(&mut client, machine).await?;
    }
    let json = output::to_json(&machine, "bettercompute.compute.v1.MetalMachine");
    print_machines(cli.output, &json, std::slice::from_ref(&json));
    match command.waits() && machine.provision_state.ends_with("Failed") {
        true => Err(format!("machine {} is {}: {}", machine.id, machine.provision_state, machine.last_error)),
        false => Ok(()),
    }
}

/// Prints machines: the whole view as JSON or YAML, every field with `-o wide`, and by default
/// a table of what an operator scans for (see [`machine_table`]) sized to the terminal.
fn print_machines(format: OutputFormat, value: &serde_json::Value, rows: &[serde_json::Value]) {
    match format {
        OutputFormat::Table => output::emit(&machine_table(rows, plan::terminal_width())),
        other => output::print(other, value, rows),
    }
}

/// The widest terminal the narrow table is made for; from [`WITH_BMC`] columns on, the table
/// adds the BMC's driver and address.
const WITH_BMC: usize = 120;

/// The machines' table: id, name, provision state, power state (80 columns for names of up to
/// 12 characters) and the problem while one is stuck; on a terminal `width` of [`WITH_BMC`] or
/// more, the driver, the BMC's address (cut to what is left of the width) and the age too.
fn machine_table(rows: &[serde_json::Value], width: usize) -> String {
    let mut columns = vec![
        Column::named("ID", "id"),
        Column::named("NAME", "name"),
        Column::named("STATE", "provisionState"),
        Column::named("POWER", "powerState"),
    ];
    if rows.iter().any(|row| row["problem"].is_object()) {
        columns.push(Column::problem());
    }
    if width < WITH_BMC {
        return output::table(rows, &columns, None);
    }
    columns.insert(4, Column::named("DRIVER", "driver"));
    columns.insert(5, Column::named("ADDRESS", "address"));
    columns.push(Column::age("createdAt"));
    // The address takes what the other columns leave: measured without it (its header's
    // width), then cut to fit.
    let without: Vec<serde_json::Value> = rows.iter().map(|row| with_address(row, "")).collect();
    let used = output::table(&without, &columns, None).lines().map(|line| line.chars().count()).max().unwrap_or(0);
    let room = (width + "ADDRESS".len()).saturating_sub(used).max("ADDRESS".len());
    let cut: Vec<serde_json::Value> =
        rows.iter().map(|row| with_address(row, &cut_to(row["address"].as_str().unwrap_or_default(), room))).collect();
    output::table(&cut, &columns, None)
}

/// `row` with its `address` replaced.
fn with_address(row: &serde_json::Value, address: &str) -> serde_json::Value {
    let mut row = row.clone();
    row["address"] = serde_json::Value::from(address);
    row
}

/// `text` cut to `room` characters, ending in `…` when cut.
fn cut_to(text: &str, room: usize) -> String {
    if text.chars().count() <= room {
        return text.to_owned();
    }
    let kept: String = text.chars().take(room.saturating_sub(1)).collect();
    format!("{kept}…")
}

impl MetalCommand {
    /// Whether `--wait` was given.
    fn waits(&self) -> bool {
        match self {
            MetalCommand::Enroll { wait, .. } => *wait,
            MetalCommand::List { .. } => false,
            MetalCommand::Get(m)
            | MetalCommand::Inspect(m)
            | MetalCommand::Commission(m)
            | MetalCommand::Release(m)
            | MetalCommand::Retire(m) => m.wait,
            MetalCommand::Update { machine: m, .. }
            | MetalCommand::Delete { machine: m, .. }
            | MetalCommand::RotateCredentials { machine: m, .. }
            | MetalCommand::Deploy { machine: m, .. }
            | MetalCommand::Rescue { machine: m, .. } => m.wait,
        }
    }
}

/// Reads the machine until the check of its new credentials changed it (taken: the old ones
/// dropped; refused: `lastError` says so).
async fn wait_for_check(
    client: &mut MetalClient<super::AuthedChannel>,
    updated: crate::proto::compute::MetalMachine,
) -> Result<crate::proto::compute::MetalMachine, String> {
    let request = GetMetalRequest { pool_id: updated.pool_id.clone(), node_id: updated.id.clone() };
    eprintln!("{}: checking the new credentials against the BMC", updated.id);
    loop {
        tokio::time::sleep(WAIT_POLL).await;
        let now = answer(client.get(request.clone()).await)?;
        if now.version > updated.version {
            return Ok(now);
        }
    }
}

/// How often `--wait` reads the machine.
const WAIT_POLL: std::time::Duration = std::time::Duration::from_millis(500);

/// Reads the machine until no workflow runs on it, printing each state it passes through (and
/// the power state while it changes) on standard error.
async fn wait(
    client: &mut MetalClient<super::AuthedChannel>,
    mut machine: crate::proto::compute::MetalMachine,
) -> Result<crate::proto::compute::MetalMachine, String> {
    let request = GetMetalRequest { pool_id: machine.pool_id.clone(), node_id: machine.id.clone() };
    eprintln!("{}: {} (power {})", machine.id, machine.provision_state, machine.power_state);
    // A deleting machine's wait ends when it is deleted (it keeps its last state).
    while machine.deleted_at.is_none()
        && machine.provision_state.parse().ok().and_then(crate::domain::metal_states::transient).is_some()
    {
        tokio::time::sleep(WAIT_POLL).await;
        let now = answer(client.get(request.clone()).await)?;
        if now.provision_state != machine.provision_state {
            eprintln!("{}: {} -> {}", now.id, machine.provision_state, now.provision_state);
        } else if now.power_state != machine.power_state {
            eprintln!("{}: {} (power {})", now.id, now.provision_state, now.power_state);
        }
        machine = now;
    }
    Ok(machine)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_password_file_loses_its_line_end_only() {
        let dir = std::env::temp_dir().join(format!("bc-metal-cli-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("password");
        std::fs::write(&path, " pa ss \n").unwrap();
        assert_eq!(read_secret_file(&path).unwrap(), " pa ss ");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Machines as the list answers them, in the longest states and power states there are.
    fn machines() -> Vec<serde_json::Value> {
        let created = "2026-12-06T01:00:00Z";
        let machine = |name: &str, state: &str, power: &str| {
            serde_json::json!({"id": "node_01jf4c9v7x8w2q3r5t6y7z8a9b", "name": name, "provisionState": state,
                "powerState": power, "driver": "redfish", "createdAt": created,
                "address": "https://bmc-rack12-slot4.example.internal:8443/redfish/v1/Systems/System.Embedded.1"})
        };
        vec![
            machine("rack12-slot4", "commissionFailed", "poweringOff"),
            machine("r1-1", "deployed", "on"),
            machine("r1-2", "exitingRescue", "unknown"),
        ]
    }

    #[test]
    fn the_machine_table_shows_provision_and_power_state_in_80_columns() {
        let text = machine_table(&machines(), 80);
        let lines: Vec<&str> = text.lines().collect();
        assert!(
            lines[0].starts_with("ID ") && lines[0].contains("  STATE ") && lines[0].ends_with("  POWER"),
            "{text}"
        );
        assert!(lines[1].contains("commissionFailed  poweringOff"), "{text}");
        assert!(!text.contains("ADDRESS"), "{text}");
        for line in &lines {
            assert!(line.chars().count() <= 80, "{} columns: {line}", line.chars().count());
        }
        // A stuck machine adds its problem.
        let mut stuck = machines();
        stuck[2]["problem"] = serde_json::json!({"class": "unreachable", "attempts": 12});
        let text = machine_table(&stuck, 80);
        assert!(text.lines().nth(3).unwrap().ends_with("exitingRescue     unknown      unreachable x12"), "{text}");
    }

    #[test]
    fn at_120_columns_the_table_adds_the_bmc_cut_to_fit() {
        let text = machine_table(&machines(), 120);
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[0].contains("  DRIVER   ADDRESS") && lines[0].ends_with("AGE"), "{text}");
        assert!(lines[1].contains("redfish  https://bmc-rack12"), "{text}");
        assert!(lines[1].contains('…'), "the address is cut: {text}");
        for line in &lines {
            assert!(line.chars().count() <= 120, "{} columns: {line}", line.chars().count());
        }
        let short = vec![with_address(&machines()[1], "https://10.0.0.5")];
        assert!(machine_table(&short, 120).contains("https://10.0.0.5 "), "a short address is whole");
    }

    #[test]
    fn the_password_is_no_flag() {
        use clap::Parser;
        let parsed = Cli::try_parse_from([
            "bcctl",
            "metal",
            "enroll",
            "--pool",
            "pool_x",
            "--name",
            "m1",
            "--driver",
            "ipmi",
            "--address",
            "h",
            "--username",
            "u",
            "--password",
            "secret",
        ]);
        assert!(parsed.is_err(), "--password is not a flag");
    }
}
