"""The Python client (clients/python) against a running server, and its retries against a fake.

Usage: client_tenants.py <endpoint> <token> <tenant id>

Creates the tenant through better_compute_client and reads it back over gRPC; checks that
failures raise ApiError with the code string and details; then checks, against an in-process
gRPC server that answers UNAVAILABLE, that the client retries and then gives up. Prints one
JSON line with what it saw; any mismatch raises (non-zero exit).
"""

import json
import os
import sys
from concurrent import futures

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "clients", "python"))

import grpc  # noqa: E402
from better_compute_client import ApiError, Client  # noqa: E402
from better_compute_client.gen.bettercompute.platform.v1 import tenants_pb2, tenants_pb2_grpc  # noqa: E402


def expect_error(call, code):
    try:
        call()
    except ApiError as error:
        assert error.code == code, (error.code, code, error)
        return error
    raise AssertionError(f"expected {code}, the call succeeded")


class Flaky(tenants_pb2_grpc.TenantsServicer):
    """Answers UNAVAILABLE `failures` times, then a tenant."""

    def __init__(self, failures):
        self.failures = failures
        self.calls = 0

    def Get(self, request, context):
        self.calls += 1
        if self.calls <= self.failures:
            context.abort(grpc.StatusCode.UNAVAILABLE, "try again")
        return tenants_pb2.Tenant(id=request.tenant_id, state="active", version=1)


def retries():
    seen = {}
    for failures in (2, 100):
        servicer = Flaky(failures)
        server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
        tenants_pb2_grpc.add_TenantsServicer_to_server(servicer, server)
        port = server.add_insecure_port("127.0.0.1:0")
        server.start()
        try:
            with Client(f"127.0.0.1:{port}", "bck_x.y", retries=3, backoff=0.01) as client:
                request = tenants_pb2.GetTenantRequest(tenant_id="flaky")
                if failures == 2:
                    assert client.tenants.Get(request).id == "flaky"
                else:
                    expect_error(lambda: client.tenants.Get(request), "UNAVAILABLE")
        finally:
            server.stop(None)
        seen[failures] = servicer.calls
    return seen


def main():
    endpoint, token, tenant_id = sys.argv[1:4]
    with Client(endpoint, token) as client:
        # Every service of proto/ is on the client, named after it.
        for service in ("tenants", "api_keys", "principals", "role_bindings", "audit", "events", "usage"):
            assert callable(getattr(getattr(client, service), "List")), service
        created = client.tenants.Create(tenants_pb2.CreateTenantRequest(id=tenant_id, display_name="Python client"))
        read = client.tenants.Get(tenants_pb2.GetTenantRequest(tenant_id=tenant_id))
        assert read == created, (read, created)
        assert (read.id, read.display_name, read.state, read.version) == (tenant_id, "Python client", "active", 1), read

        conflict = expect_error(lambda: client.tenants.Create(tenants_pb2.CreateTenantRequest(id=tenant_id)), "CONFLICT")
        invalid = expect_error(lambda: client.tenants.Create(tenants_pb2.CreateTenantRequest(id="no spaces")), "INVALID_INPUT")
        fields = [f["field"] for f in invalid.details["fields"]]
        assert fields == ["id"], invalid.details
        missing = expect_error(lambda: client.tenants.Get(tenants_pb2.GetTenantRequest(tenant_id="nobody")), "NOT_FOUND")
        assert missing.details == {"resource": "tenant", "id": "nobody"}, missing.details

    with Client(endpoint, "bck_nobody.nothing") as stranger:
        expect_error(lambda: stranger.tenants.Get(tenants_pb2.GetTenantRequest(tenant_id=tenant_id)), "UNAUTHENTICATED")

    print(json.dumps({
        "id": read.id,
        "displayName": read.display_name,
        "conflict": conflict.code,
        "invalidFields": fields,
        "notFound": missing.details,
        "retries": retries(),
    }))


if __name__ == "__main__":
    main()
