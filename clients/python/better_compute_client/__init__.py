"""Python client of the better-compute API, over gRPC.

The messages and stubs in ``better_compute_client.gen`` are generated from ``proto/`` by
grpcio-tools (``clients/generate``); this module is the thin layer around them: a ``Client``
that sends the bearer token on every call, retries calls the server answered ``UNAVAILABLE``,
and raises one exception type, ``ApiError``, carrying the API's code string and details.

    from better_compute_client import Client, ApiError
    from better_compute_client.gen.bettercompute.platform.v1 import tenants_pb2

    with Client("127.0.0.1:8080", token) as client:
        tenant = client.tenants.Create(tenants_pb2.CreateTenantRequest(id="acme"))
"""

import time

import grpc
from google.protobuf import json_format, struct_pb2
from google.rpc import error_details_pb2
from grpc_status import rpc_status

from better_compute_client.gen.services import STUBS

__all__ = ["ApiError", "Client"]

# The API's code string of a gRPC status that carries none (one the transport made itself), as
# the server maps them (src/error.rs).
_CODE_OF_STATUS = {
    grpc.StatusCode.INVALID_ARGUMENT: "INVALID_INPUT",
    grpc.StatusCode.OUT_OF_RANGE: "INVALID_INPUT",
    grpc.StatusCode.UNAUTHENTICATED: "UNAUTHENTICATED",
    grpc.StatusCode.PERMISSION_DENIED: "ACCESS_DENIED",
    grpc.StatusCode.NOT_FOUND: "NOT_FOUND",
    grpc.StatusCode.UNIMPLEMENTED: "NOT_FOUND",
    grpc.StatusCode.ALREADY_EXISTS: "CONFLICT",
    grpc.StatusCode.ABORTED: "CONFLICT",
    grpc.StatusCode.FAILED_PRECONDITION: "INVALID_STATE",
    grpc.StatusCode.RESOURCE_EXHAUSTED: "QUOTA_EXCEEDED",
    grpc.StatusCode.UNAVAILABLE: "UNAVAILABLE",
    grpc.StatusCode.DEADLINE_EXCEEDED: "UNAVAILABLE",
    grpc.StatusCode.CANCELLED: "UNAVAILABLE",
}


class ApiError(Exception):
    """A failed call: the API's code string (``NOT_FOUND``, ...), its message and its details.

    ``code`` is the ``google.rpc.ErrorInfo`` reason the server sent; ``details`` is the
    ``google.protobuf.Struct`` it sent, as a dict (``{"fields": [...]}`` for ``INVALID_INPUT``);
    ``status`` is the gRPC status code.
    """

    def __init__(self, code, message, details=None, status=None):
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.details = details or {}
        self.status = status

    @classmethod
    def from_rpc_error(cls, error):
        """The ApiError of a ``grpc.RpcError``."""
        status = error.code()
        code, details = _CODE_OF_STATUS.get(status, "INTERNAL"), {}
        rich = rpc_status.from_call(error)
        for detail in rich.details if rich is not None else []:
            if detail.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
                info = error_details_pb2.ErrorInfo()
                detail.Unpack(info)
                code = info.reason or code
            elif detail.Is(struct_pb2.Struct.DESCRIPTOR):
                value = struct_pb2.Struct()
                detail.Unpack(value)
                details = json_format.MessageToDict(value)
        return cls(code, error.details() or "", details, status)


class Client:
    """A connection to the API at ``endpoint`` (``host:port``, or ``http://``/``https://`` URL),
    calling as ``token`` (``bck_<id>.<secret>``).

    Each service is an attribute named after it (``client.tenants``, ``client.api_keys``, ...)
    whose methods take the request message and return the response message. A call answered ``UNAVAILABLE`` is tried again up to
    ``retries`` times, waiting ``backoff`` seconds and doubling; any failure raises ``ApiError``.
    """

    def __init__(self, endpoint, token, *, retries=3, backoff=0.2, timeout=30.0):
        secure = endpoint.startswith("https://")
        target = endpoint.split("://", 1)[-1].rstrip("/")
        self._channel = (
            grpc.secure_channel(target, grpc.ssl_channel_credentials()) if secure else grpc.insecure_channel(target)
        )
        self._metadata = (("authorization", f"Bearer {token}"),)
        self._retries = retries
        self._backoff = backoff
        self._timeout = timeout
        for attribute, stub_class in STUBS.items():
            setattr(self, attribute, self.service(stub_class))

    def service(self, stub_class):
        """A service of the API by its generated stub class, wrapped like ``client.tenants``."""
        return _Service(self, stub_class(self._channel))

    def close(self):
        self._channel.close()

    def __enter__(self):
        return self

    def __exit__(self, *_):
        self.close()

    def _call(self, method, request, timeout):
        if isinstance(method, (grpc.UnaryStreamMultiCallable, grpc.StreamStreamMultiCallable)):
            # A stream (Events.Watch) runs until the caller stops reading: no default deadline and
            # no retry (the caller resumes from its last cursor); its errors are ApiError too.
            return _stream(method(request, metadata=self._metadata, timeout=timeout))
        attempt = 0
        while True:
            try:
                return method(request, metadata=self._metadata, timeout=timeout or self._timeout)
            except grpc.RpcError as error:
                if error.code() == grpc.StatusCode.UNAVAILABLE and attempt < self._retries:
                    time.sleep(self._backoff * 2**attempt)
                    attempt += 1
                    continue
                raise ApiError.from_rpc_error(error) from None


def _stream(responses):
    try:
        yield from responses
    except grpc.RpcError as error:
        raise ApiError.from_rpc_error(error) from None


class _Service:
    """A generated stub whose methods go through ``Client._call``."""

    def __init__(self, client, stub):
        self._client = client
        self._stub = stub

    def __getattr__(self, name):
        method = getattr(self._stub, name)

        def call(request, timeout=None):
            return self._client._call(method, request, timeout)

        call.__name__ = name
        return call
