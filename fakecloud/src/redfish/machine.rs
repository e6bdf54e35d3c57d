//! One fake machine behind its BMC: inventory, power with its transitions, the boot override,
//! the virtual CD, and what happened to it (boots, erases) for tests to check.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// How long a power change takes, as on a real machine (never instant, never long).
pub const POWER_TRANSITION: Duration = Duration::from_millis(300);

/// What a test asks of a new fake machine: its name and its BMC's credentials.
#[derive(Clone, Debug)]
pub struct BmcSystemSpec {
    /// The system's name (`Name`); its id is made by the fake.
    pub name: String,
    /// The BMC user.
    pub username: String,
    /// The BMC user's password.
    pub password: String,
}

/// The drive the machine's system is installed on.
pub const SYSTEM_DISK: &str = "disk0";

/// One drive of a fake machine.
#[derive(Clone, Debug)]
pub struct Drive {
    pub id: &'static str,
    pub name: &'static str,
    pub size: u64,
    /// `NVMe` or `SATA`.
    pub protocol: &'static str,
    /// `SSD` or `HDD`.
    pub media: &'static str,
    /// A self-encrypting drive (its key can be replaced: a crypto erase).
    pub encrypting: bool,
    /// The Redfish sanitization types its `Drive.SecureErase` takes.
    pub sanitization: &'static [&'static str],
    pub serial: String,
}

/// One boot of a fake machine.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Boot {
    /// What it booted from: `Cd`, `Pxe` or `Hdd`.
    pub device: String,
    /// The media's URL, when it booted from the virtual CD with media inserted.
    pub image: Option<String>,
    /// The boot configuration's URL in the removable media, when it booted from the CD with one.
    pub config: Option<String>,
}

/// A fake machine and its BMC.
#[derive(Clone, Debug)]
pub struct Machine {
    pub id: String,
    pub spec: BmcSystemSpec,
    /// Its number, from which its inventory is made.
    pub number: u64,
    /// `On` or `Off`.
    pub power: &'static str,
    /// A power change under way: the state it reaches and when.
    pub pending: Option<(&'static str, Instant)>,
    /// `Disabled`, `Once` or `Continuous`.
    pub boot_enabled: String,
    /// `None`, `Cd`, `Pxe` or `Hdd`.
    pub boot_target: String,
    /// The virtual CD's image URL, empty when ejected.
    pub media_image: String,
    /// The virtual removable media's image URL (a boot configuration), empty when ejected.
    pub config_image: String,
    /// Bumped by every erase: what an operating system installed before it is gone.
    pub disk_generation: u64,
    /// Every boot, in order.
    pub boots: Vec<Boot>,
    /// How many times each drive (by id) was erased.
    pub erased: BTreeMap<String, u32>,
    /// What each drive (by id) holds: what was last written on it, empty once erased.
    pub contents: BTreeMap<String, String>,
    /// The drives (by id) that take no writes: an erase of one leaves what it holds.
    pub read_only: std::collections::BTreeSet<String>,
    /// The sanitization type each drive (by id) was last erased with.
    pub erased_by: BTreeMap<String, String>,
    /// The BMC holds every request without answering.
    pub unresponsive: bool,
    /// How many requests it held so.
    pub held_requests: u64,
    /// The BMC refuses every sign-in.
    pub refuses_login: bool,
    /// Its operating system hangs: nothing runs on it though it is on, until it boots again.
    pub hung: bool,
    /// Its installed system is broken: it hangs at every boot from the disk, until an installer
    /// (a deploy's boot) lays it again.
    pub broken: bool,
}

impl Machine {
    pub fn new(id: String, number: u64, spec: BmcSystemSpec) -> Machine {
        Machine {
            id,
            spec,
            number,
            power: "Off",
            pending: None,
            boot_enabled: "Disabled".into(),
            boot_target: "None".into(),
            media_image: String::new(),
            config_image: String::new(),
            disk_generation: 0,
            boots: Vec::new(),
            erased: BTreeMap::new(),
            contents: BTreeMap::new(),
            read_only: Default::default(),
            erased_by: BTreeMap::new(),
            unresponsive: false,
            held_requests: 0,
            refuses_login: false,
            hung: false,
            broken: false,
        }
    }

    /// Applies a due power change; a machine that comes on boots.
    pub fn advance(&mut self, now: Instant) {
        if let Some((state, due)) = self.pending
            && now >= due
        {
            self.pending = None;
            self.power = state;
            if state == "On" {
                self.boot();
            }
        }
    }

    /// Boots from the override (used up when it is `Once`), else from its disk.
    fn boot(&mut self) {
        let device = match self.boot_enabled.as_str() {
            "Once" | "Continuous" if self.boot_target != "None" => self.boot_target.clone(),
            _ => "Hdd".to_owned(),
        };
        if self.boot_enabled == "Once" {
            self.boot_enabled = "Disabled".into();
            self.boot_target = "None".into();
        }
        let image = (device == "Cd" && !self.media_image.is_empty()).then(|| self.media_image.clone());
        let config = (image.is_some() && !self.config_image.is_empty()).then(|| self.config_image.clone());
        self.hung = false;
        self.broken &= config.is_none();
        self.boots.push(Boot { device, image, config });
    }

    /// The image in virtual media device `device` (`Cd` or `Floppy`).
    pub fn media(&self, device: &str) -> &str {
        if device == "Cd" { &self.media_image } else { &self.config_image }
    }

    /// The image of virtual media device `device`, to change.
    pub fn media_mut(&mut self, device: &str) -> &mut String {
        if device == "Cd" { &mut self.media_image } else { &mut self.config_image }
    }

    /// Erases drive `drive` by `sanitization` (empty for a bare `SecureErase`): counted, and
    /// unless the drive is read-only, what it held is gone (the system disk's with it: what
    /// was installed on the machine).
    pub fn erase(&mut self, drive: &str, sanitization: &str) {
        *self.erased.entry(drive.to_owned()).or_default() += 1;
        self.erased_by.insert(drive.to_owned(), sanitization.to_owned());
        if self.read_only.contains(drive) {
            return;
        }
        self.contents.remove(drive);
        if drive == SYSTEM_DISK {
            self.disk_generation += 1;
        }
    }

    /// Writes `text` on drive `drive`, as a system running on the machine would; false if it
    /// has no such drive or the drive is read-only.
    pub fn write(&mut self, drive: &str, text: &str) -> bool {
        if !self.drives().iter().any(|d| d.id == drive) || self.read_only.contains(drive) {
            return false;
        }
        self.contents.entry(drive.to_owned()).or_default().push_str(text);
        true
    }

    /// Whether drive `drive` holds nothing written.
    pub fn blank(&self, drive: &str) -> bool {
        self.contents.get(drive).is_none_or(String::is_empty)
    }

    /// Runs `ComputerSystem.Reset`; false for a reset type it does not know.
    pub fn reset(&mut self, reset_type: &str, now: Instant) -> bool {
        let due = now + POWER_TRANSITION;
        match reset_type {
            "On" | "ForceOn" if self.power == "Off" && self.pending.is_none() => self.pending = Some(("On", due)),
            "ForceOff" | "GracefulShutdown" if self.power == "On" => self.pending = Some(("Off", due)),
            "ForceRestart" | "GracefulRestart" | "PowerCycle" if self.power == "On" => {
                self.power = "Off";
                self.pending = Some(("On", due));
            }
            "On" | "ForceOn" | "ForceOff" | "GracefulShutdown" | "ForceRestart" | "GracefulRestart" | "PowerCycle" => {}
            _ => return false,
        }
        true
    }

    /// Someone pressed the power button: the machine is `On` (and boots, as any power-on does)
    /// or `Off` at once, whatever change was under way; pressed to the state it is in, nothing.
    pub fn press_power(&mut self, on: bool) {
        let state = if on { "On" } else { "Off" };
        self.pending = None;
        if self.power != state {
            self.power = state;
            if on {
                self.boot();
            }
        }
    }

    /// `PowerState`, with the transition under way.
    pub fn power_state(&self) -> &'static str {
        match self.pending {
            Some(("On", _)) => "PoweringOn",
            Some(_) => "PoweringOff",
            None => self.power,
        }
    }

    /// The NICs: name and MAC.
    pub fn nics(&self) -> Vec<(String, String)> {
        (0..2)
            .map(|i| {
                (
                    format!("eno{}", i + 1),
                    format!("52:54:00:{:02x}:{:02x}:{:02x}", self.number >> 8 & 0xff, self.number & 0xff, i),
                )
            })
            .collect()
    }

    /// The drives: a self-encrypting NVMe system disk (crypto erase), a plain NVMe disk (block
    /// erase) and a SATA hard disk (overwrite only), as a mixed server has them.
    pub fn drives(&self) -> Vec<Drive> {
        let serial = |i: u64| format!("FAKE{:06}-D{i}", self.number);
        vec![
            Drive {
                id: SYSTEM_DISK,
                name: "NVMe SSD 0",
                size: 960_197_124_096,
                protocol: "NVMe",
                media: "SSD",
                encrypting: true,
                sanitization: &["CryptographicErase", "BlockErase", "Overwrite"],
                serial: serial(0),
            },
            Drive {
                id: "disk1",
                name: "NVMe SSD 1",
                size: 960_197_124_096,
                protocol: "NVMe",
                media: "SSD",
                encrypting: false,
                sanitization: &["BlockErase", "Overwrite"],
                serial: serial(1),
            },
            Drive {
                id: "disk2",
                name: "SATA HDD 2",
                size: 4_000_787_030_016,
                protocol: "SATA",
                media: "HDD",
                encrypting: false,
                sanitization: &["Overwrite"],
                serial: serial(2),
            },
        ]
    }

    pub fn serial(&self) -> String {
        format!("FAKE{:06}", self.number)
    }

    /// What a test sees of it.
    pub fn inspect(&self) -> Value {
        json!({
            "id": self.id,
            "name": self.spec.name,
            "powerState": self.power_state(),
            "bootOverride": {"enabled": self.boot_enabled, "target": self.boot_target},
            "media": {"image": self.media_image, "inserted": !self.media_image.is_empty()},
            "configMedia": {"image": self.config_image, "inserted": !self.config_image.is_empty()},
            "boots": self.boots.iter().map(|b| json!({"device": b.device, "image": b.image, "config": b.config}))
                .collect::<Vec<_>>(),
            "erased": self.erased,
            "erasedBy": self.erased_by,
            "disks": self.drives().iter().map(|d| (d.id.to_owned(), json!({
                "content": self.contents.get(d.id).cloned().unwrap_or_default(),
                "readOnly": self.read_only.contains(d.id),
            }))).collect::<serde_json::Map<String, Value>>(),
            "unresponsive": self.unresponsive,
            "heldRequests": self.held_requests,
            "refusesLogin": self.refuses_login,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn machine() -> Machine {
        let spec = BmcSystemSpec { name: "m".into(), username: "u".into(), password: "p".into() };
        Machine::new("m1".into(), 1, spec)
    }

    #[test]
    fn powering_on_with_a_cd_override_and_media_boots_the_media_once() {
        let mut machine = machine();
        machine.boot_enabled = "Once".into();
        machine.boot_target = "Cd".into();
        machine.media_image = "http://images/deploy.iso".into();
        let start = Instant::now();
        assert!(machine.reset("On", start));
        assert_eq!(machine.power_state(), "PoweringOn");
        machine.advance(start + POWER_TRANSITION);
        assert_eq!(machine.power_state(), "On");
        assert_eq!(
            machine.boots,
            vec![Boot { device: "Cd".into(), image: Some("http://images/deploy.iso".into()), config: None }]
        );
        assert_eq!(machine.boot_enabled, "Disabled");
        machine.reset("ForceRestart", start);
        machine.advance(start + POWER_TRANSITION);
        assert_eq!(machine.boots[1], Boot { device: "Hdd".into(), image: None, config: None });
    }

    #[test]
    fn the_power_button_changes_the_state_at_once_and_a_power_on_boots() {
        let mut machine = machine();
        machine.reset("On", Instant::now());
        machine.press_power(false);
        assert_eq!((machine.power_state(), machine.boots.len()), ("Off", 0), "the pending power-on is gone");
        machine.press_power(true);
        assert_eq!(machine.power_state(), "On");
        machine.press_power(true);
        assert_eq!(machine.boots, vec![Boot { device: "Hdd".into(), image: None, config: None }]);
    }

    #[test]
    fn unknown_reset_types_are_refused() {
        assert!(!machine().reset("Explode", Instant::now()));
    }
}
