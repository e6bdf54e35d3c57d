"""pyghmi's fake BMC (pyghmi.cmd.fakebmc) on 127.0.0.1, with a FRU for `ipmitool fru print`,
and optionally the machine behind it booting from the network.

The IPMI driver's tests start it: `ipmi_bmc.py PORT USER PASSWORD`. pyghmi speaks the IPMI 2.0
(lanplus) session; this adds the FRU inventory commands, which its sample BMC lacks (with the
host's MAC addresses in the product area's extra fields, where servers keep them), and prints
the boot device it was last given so the test can read it back.

`ipmi_bmc.py PORT USER PASSWORD PXE_URL BCD STATE_DIR` also runs the machine: powered on with a
network boot set, its firmware asks PXE_URL/<mac> for its iPXE script, as iPXE does when DHCP
points it there, and boots what the script says: the deploy's installer reads the boot
configuration URL from its command line and joins through the real bcd (the program BCD, its
state in STATE_DIR), which keeps running as the installed system. Powered on from its disk once
installed, it runs `bcd run` again; powered off, whatever runs stops. It prints what it does.
"""

import json
import os
import subprocess
import sys
import threading
import urllib.error
import urllib.request

import pyghmi.ipmi.bmc
from pyghmi.cmd.fakebmc import FakeBmc

STORAGE_NETFN = 0x0A
GET_FRU_AREA_INFO = 0x10
READ_FRU_DATA = 0x11


def checksum(data):
    return (-sum(data)) & 0xFF


MACS = ("52:54:00:1b:c0:01", "52:54:00:1b:c0:02")


def product_area(manufacturer, name, part, version, serial, extras=()):
    area = [0x01, 0, 0x00]
    for field in (manufacturer, name, part, version, serial, "", "") + tuple(extras):
        encoded = field.encode("ascii")
        area += [0xC0 | len(encoded)] + list(encoded)
    area.append(0xC1)
    while (len(area) + 1) % 8:
        area.append(0)
    area[1] = (len(area) + 1) // 8
    return area + [checksum(area)]


def fru_image():
    header = [0x01, 0, 0, 0, 1, 0, 0]
    header.append(checksum(header))
    return bytes(header + product_area("Acme Servers", "R100", "R100-PN", "1.0", "SN-IPMI-1", MACS))


class Machine:
    """The host behind the BMC: what it runs while powered on."""

    def __init__(self, pxe_url, bcd, state_dir):
        self.pxe_url, self.bcd, self.state_dir = pxe_url.rstrip("/"), bcd, state_dir
        self.installed = False
        self.running = None
        self.lock = threading.Lock()

    def power_on(self, bootdevice):
        threading.Thread(target=self.boot, args=(bootdevice,), daemon=True).start()

    def power_off(self):
        with self.lock:
            if self.running is not None:
                self.running.terminate()
                self.running.wait()
                self.running = None
                print("machine: stopped", flush=True)

    def boot(self, bootdevice):
        if bootdevice in ("network", "pxe"):
            self.network_boot()
        elif self.installed:
            print("machine: booted the installed system", flush=True)
            self.start([self.bcd, "--state-dir", self.state_dir, "run"], {})

    def network_boot(self):
        for mac in MACS:
            try:
                with urllib.request.urlopen(f"{self.pxe_url}/{mac}", timeout=10) as answer:
                    script = answer.read().decode()
            except urllib.error.HTTPError as error:
                print(f"machine: pxe {mac}: {error.code}", flush=True)
                continue
            print(f"machine: pxe {mac}: got a script", flush=True)
            words = [w for line in script.splitlines() if line.startswith("kernel ") for w in line.split()]
            urls = [w.split("=", 1)[1] for w in words if w.startswith("bc.boot_config=")]
            if not script.startswith("#!ipxe") or not urls:
                print("machine: the script boots nothing", flush=True)
                return
            with urllib.request.urlopen(urls[0], timeout=10) as answer:
                config = json.load(answer)
            self.installed = True
            command = [self.bcd, "--state-dir", self.state_dir, "join", "--endpoint", config["endpoint"],
                       "--machine-id", config["machineId"]]
            if config.get("caSha256"):
                command += ["--ca-sha256", config["caSha256"]]
            elif config["endpoint"].startswith("http://"):
                command.append("--insecure-plaintext")
            for key, value in sorted(config.get("labels", {}).items()):
                command += ["--label", f"{key}={value}"]
            print("machine: the installer joins through bcd", flush=True)
            self.start(command, {"BCD_TOKEN": config["joinToken"]})
            return
        print("machine: no boot script for any of its interfaces", flush=True)

    def start(self, command, environment):
        with self.lock:
            self.running = subprocess.Popen(command, env={**os.environ, **environment},
                                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


class FruBmc(FakeBmc):
    fru = fru_image()

    def __init__(self, authdata, port, machine=None):
        # FakeBmc binds every address; bind only the loopback one.
        pyghmi.ipmi.bmc.Bmc.__init__(self, authdata, port=port, address="127.0.0.1")
        self.powerstate = "off"
        self.bootdevice = "default"
        self.machine = machine

    def set_boot_device(self, bootdevice):
        super().set_boot_device(bootdevice)
        print("bootdev", bootdevice, flush=True)

    def power_on(self):
        was = self.powerstate
        self.powerstate = "on"
        if self.machine is not None and was != "on":
            # A boot override is for the next boot only.
            device, self.bootdevice = self.bootdevice, "default"
            self.machine.power_on(device)

    def power_off(self):
        self.powerstate = "off"
        if self.machine is not None:
            self.machine.power_off()

    def power_shutdown(self):
        self.power_off()

    def power_reset(self):
        if self.machine is not None and self.powerstate == "on":
            self.machine.power_off()
            device, self.bootdevice = self.bootdevice, "default"
            self.machine.power_on(device)

    def handle_raw_request(self, request, session):
        if request["netfn"] == STORAGE_NETFN and request["command"] == GET_FRU_AREA_INFO:
            size = len(self.fru)
            return session.send_ipmi_response(data=[size & 0xFF, size >> 8, 0])
        if request["netfn"] == STORAGE_NETFN and request["command"] == READ_FRU_DATA:
            data = request["data"]
            offset = data[1] | (data[2] << 8)
            chunk = list(self.fru[offset:offset + data[3]])
            return session.send_ipmi_response(data=[len(chunk)] + chunk)
        return super().handle_raw_request(request, session)


def main():
    port, user, password = int(sys.argv[1]), sys.argv[2], sys.argv[3]
    machine = Machine(*sys.argv[4:7]) if len(sys.argv) == 7 else None
    bmc = FruBmc({user: password}, port, machine)
    print("listening", port, flush=True)
    bmc.listen()


if __name__ == "__main__":
    main()
