"""A real gRPC peer: Python's grpcio with stubs generated from proto/ by grpcio-tools.

Usage: tenants_grpc.py <endpoint host:port> <token> <tenant id>

Creates the tenant, reads it back, then checks that a too-long id is refused with
INVALID_ARGUMENT carrying google.rpc.ErrorInfo reason INVALID_INPUT and the field named.
Prints one JSON line with what it saw; exits non-zero on any mismatch.
"""

import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PROTO = os.path.join(ROOT, "proto")


def generate(out):
    files = []
    for base, _, names in os.walk(PROTO):
        files += [os.path.relpath(os.path.join(base, n), PROTO) for n in names if n.endswith(".proto")]
    subprocess.run(
        [sys.executable, "-m", "grpc_tools.protoc", "-I", PROTO, "--python_out", out, "--grpc_python_out", out]
        + sorted(files),
        check=True,
    )
    sys.path.insert(0, out)


def main():
    endpoint, token, tenant_id = sys.argv[1:4]
    with tempfile.TemporaryDirectory() as out:
        generate(out)
        import grpc
        from grpc_status import rpc_status
        from google.rpc import error_details_pb2
        from bettercompute.platform.v1 import tenants_pb2, tenants_pb2_grpc

        metadata = [("authorization", f"Bearer {token}")]
        with grpc.insecure_channel(endpoint) as channel:
            stub = tenants_pb2_grpc.TenantsStub(channel)
            created = stub.Create(tenants_pb2.CreateTenantRequest(id=tenant_id, display_name="From Python"), metadata=metadata)
            read = stub.Get(tenants_pb2.GetTenantRequest(tenant_id=tenant_id), metadata=metadata)
            assert read.id == tenant_id and read.display_name == "From Python", read
            assert read.version == created.version == 1, read

            try:
                stub.Create(tenants_pb2.CreateTenantRequest(id="x" * 129), metadata=metadata)
                raise AssertionError("a 129-character id was accepted")
            except grpc.RpcError as error:
                assert error.code() == grpc.StatusCode.INVALID_ARGUMENT, error.code()
                status = rpc_status.from_call(error)
                reasons, fields = [], []
                for detail in status.details:
                    if detail.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
                        info = error_details_pb2.ErrorInfo()
                        detail.Unpack(info)
                        reasons.append(info.reason)
                    if detail.Is(error_details_pb2.BadRequest.DESCRIPTOR):
                        bad = error_details_pb2.BadRequest()
                        detail.Unpack(bad)
                        fields += [v.field for v in bad.field_violations]
                assert reasons == ["INVALID_INPUT"], reasons
                assert set(fields) == {"id"}, fields

            try:
                stub.Get(tenants_pb2.GetTenantRequest(tenant_id=tenant_id))
                raise AssertionError("a call without credentials was accepted")
            except grpc.RpcError as error:
                assert error.code() == grpc.StatusCode.UNAUTHENTICATED, error.code()

        print(json.dumps({"id": read.id, "displayName": read.display_name, "version": read.version, "refused": fields}))


if __name__ == "__main__":
    main()
