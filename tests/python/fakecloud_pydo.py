"""DigitalOcean's official Python client (pydo) against the fake cloud: refused to send its
token to the plain-HTTP address (as it refuses any non-TLS URL), it lists and creates against
the HTTPS one, trusting the fake cloud's CA through REQUESTS_CA_BUNDLE. Prints what it saw as
one JSON object.

Usage: fakecloud_pydo.py HTTPS_URL HTTP_URL TOKEN CA_FILE
"""

import json
import os
import sys

from pydo import Client


def main() -> None:
    https_url, http_url, token, ca_file = sys.argv[1:5]
    os.environ["REQUESTS_CA_BUNDLE"] = ca_file
    seen = {}
    try:
        Client(token=token, endpoint=http_url).droplets.list()
        seen["plainHttp"] = "sent"
    except Exception as refusal:  # azure-core refuses a bearer token over http
        seen["plainHttp"] = type(refusal).__name__

    do = Client(token=token, endpoint=https_url)
    vpc = do.vpcs.create(body={"name": "pydo-vpc", "region": "nyc3", "ip_range": "10.77.0.0/24"})["vpc"]
    droplet = do.droplets.create(
        body={
            "name": "pydo-1",
            "region": "nyc3",
            "size": "s-1vcpu-1gb",
            "image": "ubuntu-24-04-x64",
            "vpc_uuid": vpc["id"],
        }
    )["droplet"]
    seen["vpc"] = vpc["name"]
    seen["droplet"] = droplet["name"]
    seen["droplets"] = sorted(d["name"] for d in do.droplets.list()["droplets"])
    seen["vpcs"] = sorted(v["name"] for v in do.vpcs.list()["vpcs"])
    print(json.dumps(seen))


if __name__ == "__main__":
    main()
