import datetime

from better_compute_client.gen.bettercompute.compute.v1 import operations_pb2 as _operations_pb2
from better_compute_client.gen.bettercompute.compute.v1 import plans_pb2 as _plans_pb2
from better_compute_client.gen.bettercompute.options.v1 import options_pb2 as _options_pb2
from better_compute_client.gen.buf.validate import validate_pb2 as _validate_pb2
from google.api import annotations_pb2 as _annotations_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Certificate(_message.Message):
    __slots__ = ("id", "tenant_id", "project_id", "pool_id", "name", "type", "dns_names", "not_after", "sha256_fingerprint", "state", "message", "version", "created_at", "updated_at", "deleted_at", "drift", "problem")
    ID_FIELD_NUMBER: _ClassVar[int]
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    PROJECT_ID_FIELD_NUMBER: _ClassVar[int]
    POOL_ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    DNS_NAMES_FIELD_NUMBER: _ClassVar[int]
    NOT_AFTER_FIELD_NUMBER: _ClassVar[int]
    SHA256_FINGERPRINT_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    UPDATED_AT_FIELD_NUMBER: _ClassVar[int]
    DELETED_AT_FIELD_NUMBER: _ClassVar[int]
    DRIFT_FIELD_NUMBER: _ClassVar[int]
    PROBLEM_FIELD_NUMBER: _ClassVar[int]
    id: str
    tenant_id: str
    project_id: str
    pool_id: str
    name: str
    type: str
    dns_names: _containers.RepeatedScalarFieldContainer[str]
    not_after: _timestamp_pb2.Timestamp
    sha256_fingerprint: str
    state: str
    message: str
    version: int
    created_at: _timestamp_pb2.Timestamp
    updated_at: _timestamp_pb2.Timestamp
    deleted_at: _timestamp_pb2.Timestamp
    drift: _containers.RepeatedCompositeFieldContainer[_plans_pb2.Drift]
    problem: _operations_pb2.Problem
    def __init__(self, id: _Optional[str] = ..., tenant_id: _Optional[str] = ..., project_id: _Optional[str] = ..., pool_id: _Optional[str] = ..., name: _Optional[str] = ..., type: _Optional[str] = ..., dns_names: _Optional[_Iterable[str]] = ..., not_after: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., sha256_fingerprint: _Optional[str] = ..., state: _Optional[str] = ..., message: _Optional[str] = ..., version: _Optional[int] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., updated_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., deleted_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., drift: _Optional[_Iterable[_Union[_plans_pb2.Drift, _Mapping]]] = ..., problem: _Optional[_Union[_operations_pb2.Problem, _Mapping]] = ...) -> None: ...

class CreateCertificateRequest(_message.Message):
    __slots__ = ("tenant_id", "project_id", "pool_id", "name", "type", "private_key", "leaf_certificate", "certificate_chain", "dns_names", "idempotency_key")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    PROJECT_ID_FIELD_NUMBER: _ClassVar[int]
    POOL_ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    PRIVATE_KEY_FIELD_NUMBER: _ClassVar[int]
    LEAF_CERTIFICATE_FIELD_NUMBER: _ClassVar[int]
    CERTIFICATE_CHAIN_FIELD_NUMBER: _ClassVar[int]
    DNS_NAMES_FIELD_NUMBER: _ClassVar[int]
    IDEMPOTENCY_KEY_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    project_id: str
    pool_id: str
    name: str
    type: str
    private_key: str
    leaf_certificate: str
    certificate_chain: str
    dns_names: _containers.RepeatedScalarFieldContainer[str]
    idempotency_key: str
    def __init__(self, tenant_id: _Optional[str] = ..., project_id: _Optional[str] = ..., pool_id: _Optional[str] = ..., name: _Optional[str] = ..., type: _Optional[str] = ..., private_key: _Optional[str] = ..., leaf_certificate: _Optional[str] = ..., certificate_chain: _Optional[str] = ..., dns_names: _Optional[_Iterable[str]] = ..., idempotency_key: _Optional[str] = ...) -> None: ...

class ListCertificatesRequest(_message.Message):
    __slots__ = ("tenant_id", "pool_id", "project_id", "include_deleted")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    POOL_ID_FIELD_NUMBER: _ClassVar[int]
    PROJECT_ID_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_DELETED_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    pool_id: str
    project_id: str
    include_deleted: bool
    def __init__(self, tenant_id: _Optional[str] = ..., pool_id: _Optional[str] = ..., project_id: _Optional[str] = ..., include_deleted: _Optional[bool] = ...) -> None: ...

class ListCertificatesResponse(_message.Message):
    __slots__ = ("certificates",)
    CERTIFICATES_FIELD_NUMBER: _ClassVar[int]
    certificates: _containers.RepeatedCompositeFieldContainer[Certificate]
    def __init__(self, certificates: _Optional[_Iterable[_Union[Certificate, _Mapping]]] = ...) -> None: ...

class GetCertificateRequest(_message.Message):
    __slots__ = ("tenant_id", "certificate_id")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    CERTIFICATE_ID_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    certificate_id: str
    def __init__(self, tenant_id: _Optional[str] = ..., certificate_id: _Optional[str] = ...) -> None: ...

class DeleteCertificateRequest(_message.Message):
    __slots__ = ("tenant_id", "certificate_id", "validate_only", "force")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    CERTIFICATE_ID_FIELD_NUMBER: _ClassVar[int]
    VALIDATE_ONLY_FIELD_NUMBER: _ClassVar[int]
    FORCE_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    certificate_id: str
    validate_only: bool
    force: bool
    def __init__(self, tenant_id: _Optional[str] = ..., certificate_id: _Optional[str] = ..., validate_only: _Optional[bool] = ..., force: _Optional[bool] = ...) -> None: ...

class PlanCertificateRequest(_message.Message):
    __slots__ = ("delete",)
    DELETE_FIELD_NUMBER: _ClassVar[int]
    delete: DeleteCertificateRequest
    def __init__(self, delete: _Optional[_Union[DeleteCertificateRequest, _Mapping]] = ...) -> None: ...
