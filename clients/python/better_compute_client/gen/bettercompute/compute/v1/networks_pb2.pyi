import datetime

from better_compute_client.gen.bettercompute.compute.v1 import operations_pb2 as _operations_pb2
from better_compute_client.gen.bettercompute.compute.v1 import plans_pb2 as _plans_pb2
from better_compute_client.gen.bettercompute.options.v1 import options_pb2 as _options_pb2
from better_compute_client.gen.buf.validate import validate_pb2 as _validate_pb2
from google.api import annotations_pb2 as _annotations_pb2
from google.protobuf import field_mask_pb2 as _field_mask_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Network(_message.Message):
    __slots__ = ("id", "tenant_id", "project_id", "pool_id", "name", "description", "subnets", "state", "message", "version", "created_at", "updated_at", "deleted_at", "drift", "problem")
    ID_FIELD_NUMBER: _ClassVar[int]
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    PROJECT_ID_FIELD_NUMBER: _ClassVar[int]
    POOL_ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    SUBNETS_FIELD_NUMBER: _ClassVar[int]
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
    description: str
    subnets: _containers.RepeatedCompositeFieldContainer[Subnet]
    state: str
    message: str
    version: int
    created_at: _timestamp_pb2.Timestamp
    updated_at: _timestamp_pb2.Timestamp
    deleted_at: _timestamp_pb2.Timestamp
    drift: _containers.RepeatedCompositeFieldContainer[_plans_pb2.Drift]
    problem: _operations_pb2.Problem
    def __init__(self, id: _Optional[str] = ..., tenant_id: _Optional[str] = ..., project_id: _Optional[str] = ..., pool_id: _Optional[str] = ..., name: _Optional[str] = ..., description: _Optional[str] = ..., subnets: _Optional[_Iterable[_Union[Subnet, _Mapping]]] = ..., state: _Optional[str] = ..., message: _Optional[str] = ..., version: _Optional[int] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., updated_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., deleted_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., drift: _Optional[_Iterable[_Union[_plans_pb2.Drift, _Mapping]]] = ..., problem: _Optional[_Union[_operations_pb2.Problem, _Mapping]] = ...) -> None: ...

class Subnet(_message.Message):
    __slots__ = ("id", "network_id", "name", "region", "ip_range", "state", "message")
    ID_FIELD_NUMBER: _ClassVar[int]
    NETWORK_ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    REGION_FIELD_NUMBER: _ClassVar[int]
    IP_RANGE_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    id: str
    network_id: str
    name: str
    region: str
    ip_range: str
    state: str
    message: str
    def __init__(self, id: _Optional[str] = ..., network_id: _Optional[str] = ..., name: _Optional[str] = ..., region: _Optional[str] = ..., ip_range: _Optional[str] = ..., state: _Optional[str] = ..., message: _Optional[str] = ...) -> None: ...

class SubnetSpec(_message.Message):
    __slots__ = ("name", "region", "ip_range")
    NAME_FIELD_NUMBER: _ClassVar[int]
    REGION_FIELD_NUMBER: _ClassVar[int]
    IP_RANGE_FIELD_NUMBER: _ClassVar[int]
    name: str
    region: str
    ip_range: str
    def __init__(self, name: _Optional[str] = ..., region: _Optional[str] = ..., ip_range: _Optional[str] = ...) -> None: ...

class CreateNetworkRequest(_message.Message):
    __slots__ = ("tenant_id", "project_id", "pool_id", "name", "description", "subnets", "idempotency_key")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    PROJECT_ID_FIELD_NUMBER: _ClassVar[int]
    POOL_ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    SUBNETS_FIELD_NUMBER: _ClassVar[int]
    IDEMPOTENCY_KEY_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    project_id: str
    pool_id: str
    name: str
    description: str
    subnets: _containers.RepeatedCompositeFieldContainer[SubnetSpec]
    idempotency_key: str
    def __init__(self, tenant_id: _Optional[str] = ..., project_id: _Optional[str] = ..., pool_id: _Optional[str] = ..., name: _Optional[str] = ..., description: _Optional[str] = ..., subnets: _Optional[_Iterable[_Union[SubnetSpec, _Mapping]]] = ..., idempotency_key: _Optional[str] = ...) -> None: ...

class ListNetworksRequest(_message.Message):
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

class ListNetworksResponse(_message.Message):
    __slots__ = ("networks",)
    NETWORKS_FIELD_NUMBER: _ClassVar[int]
    networks: _containers.RepeatedCompositeFieldContainer[Network]
    def __init__(self, networks: _Optional[_Iterable[_Union[Network, _Mapping]]] = ...) -> None: ...

class GetNetworkRequest(_message.Message):
    __slots__ = ("tenant_id", "network_id")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    NETWORK_ID_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    network_id: str
    def __init__(self, tenant_id: _Optional[str] = ..., network_id: _Optional[str] = ...) -> None: ...

class UpdateNetworkRequest(_message.Message):
    __slots__ = ("tenant_id", "network_id", "description", "update_mask", "validate_only")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    NETWORK_ID_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    UPDATE_MASK_FIELD_NUMBER: _ClassVar[int]
    VALIDATE_ONLY_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    network_id: str
    description: str
    update_mask: _field_mask_pb2.FieldMask
    validate_only: bool
    def __init__(self, tenant_id: _Optional[str] = ..., network_id: _Optional[str] = ..., description: _Optional[str] = ..., update_mask: _Optional[_Union[_field_mask_pb2.FieldMask, _Mapping]] = ..., validate_only: _Optional[bool] = ...) -> None: ...

class DeleteNetworkRequest(_message.Message):
    __slots__ = ("tenant_id", "network_id", "validate_only", "force")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    NETWORK_ID_FIELD_NUMBER: _ClassVar[int]
    VALIDATE_ONLY_FIELD_NUMBER: _ClassVar[int]
    FORCE_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    network_id: str
    validate_only: bool
    force: bool
    def __init__(self, tenant_id: _Optional[str] = ..., network_id: _Optional[str] = ..., validate_only: _Optional[bool] = ..., force: _Optional[bool] = ...) -> None: ...

class PlanNetworkRequest(_message.Message):
    __slots__ = ("update", "delete")
    UPDATE_FIELD_NUMBER: _ClassVar[int]
    DELETE_FIELD_NUMBER: _ClassVar[int]
    update: UpdateNetworkRequest
    delete: DeleteNetworkRequest
    def __init__(self, update: _Optional[_Union[UpdateNetworkRequest, _Mapping]] = ..., delete: _Optional[_Union[DeleteNetworkRequest, _Mapping]] = ...) -> None: ...
