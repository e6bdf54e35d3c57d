"""pyghmi's fake BMC (pyghmi.cmd.fakebmc) on 127.0.0.1, with a FRU for `ipmitool fru print`.

The IPMI driver's tests start it: `ipmi_bmc.py PORT USER PASSWORD`. pyghmi speaks the IPMI 2.0
(lanplus) session; this adds only the FRU inventory commands, which its sample BMC lacks, and
prints the boot device it was last given so the test can read it back.
"""

import sys

import pyghmi.ipmi.bmc
from pyghmi.cmd.fakebmc import FakeBmc

STORAGE_NETFN = 0x0A
GET_FRU_AREA_INFO = 0x10
READ_FRU_DATA = 0x11


def checksum(data):
    return (-sum(data)) & 0xFF


def product_area(manufacturer, name, part, version, serial):
    area = [0x01, 0, 0x00]
    for field in (manufacturer, name, part, version, serial, "", ""):
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
    return bytes(header + product_area("Acme Servers", "R100", "R100-PN", "1.0", "SN-IPMI-1"))


class FruBmc(FakeBmc):
    fru = fru_image()

    def __init__(self, authdata, port):
        # FakeBmc binds every address; bind only the loopback one.
        pyghmi.ipmi.bmc.Bmc.__init__(self, authdata, port=port, address="127.0.0.1")
        self.powerstate = "off"
        self.bootdevice = "default"

    def set_boot_device(self, bootdevice):
        super().set_boot_device(bootdevice)
        print("bootdev", bootdevice, flush=True)

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
    bmc = FruBmc({user: password}, port)
    print("listening", port, flush=True)
    bmc.listen()


if __name__ == "__main__":
    main()
