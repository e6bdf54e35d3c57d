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

class Volume(_message.Message):
    __slots__ = ("id", "tenant_id", "project_id", "pool_id", "name", "description", "region", "size_gigabytes", "filesystem_type", "instance_id", "attached_machine_id", "state", "message", "version", "created_at", "updated_at", "deleted_at", "drift", "problem")
    ID_FIELD_NUMBER: _ClassVar[int]
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    PROJECT_ID_FIELD_NUMBER: _ClassVar[int]
    POOL_ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    REGION_FIELD_NUMBER: _ClassVar[int]
    SIZE_GIGABYTES_FIELD_NUMBER: _ClassVar[int]
    FILESYSTEM_TYPE_FIELD_NUMBER: _ClassVar[int]
    INSTANCE_ID_FIELD_NUMBER: _ClassVar[int]
    ATTACHED_MACHINE_ID_FIELD_NUMBER: _ClassVar[int]
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
    region: str
    size_gigabytes: int
    filesystem_type: str
    instance_id: str
    attached_machine_id: str
    state: str
    message: str
    version: int
    created_at: _timestamp_pb2.Timestamp
    updated_at: _timestamp_pb2.Timestamp
    deleted_at: _timestamp_pb2.Timestamp
    drift: _containers.RepeatedCompositeFieldContainer[_plans_pb2.Drift]
    problem: _operations_pb2.Problem
    def __init__(self, id: _Optional[str] = ..., tenant_id: _Optional[str] = ..., project_id: _Optional[str] = ..., pool_id: _Optional[str] = ..., name: _Optional[str] = ..., description: _Optional[str] = ..., region: _Optional[str] = ..., size_gigabytes: _Optional[int] = ..., filesystem_type: _Optional[str] = ..., instance_id: _Optional[str] = ..., attached_machine_id: _Optional[str] = ..., state: _Optional[str] = ..., message: _Optional[str] = ..., version: _Optional[int] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., updated_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., deleted_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., drift: _Optional[_Iterable[_Union[_plans_pb2.Drift, _Mapping]]] = ..., problem: _Optional[_Union[_operations_pb2.Problem, _Mapping]] = ...) -> None: ...

class CreateVolumeRequest(_message.Message):
    __slots__ = ("tenant_id", "project_id", "pool_id", "name", "description", "region", "size_gigabytes", "filesystem_type", "idempotency_key")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    PROJECT_ID_FIELD_NUMBER: _ClassVar[int]
    POOL_ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    REGION_FIELD_NUMBER: _ClassVar[int]
    SIZE_GIGABYTES_FIELD_NUMBER: _ClassVar[int]
    FILESYSTEM_TYPE_FIELD_NUMBER: _ClassVar[int]
    IDEMPOTENCY_KEY_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    project_id: str
    pool_id: str
    name: str
    description: str
    region: str
    size_gigabytes: int
    filesystem_type: str
    idempotency_key: str
    def __init__(self, tenant_id: _Optional[str] = ..., project_id: _Optional[str] = ..., pool_id: _Optional[str] = ..., name: _Optional[str] = ..., description: _Optional[str] = ..., region: _Optional[str] = ..., size_gigabytes: _Optional[int] = ..., filesystem_type: _Optional[str] = ..., idempotency_key: _Optional[str] = ...) -> None: ...

class ListVolumesRequest(_message.Message):
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

class ListVolumesResponse(_message.Message):
    __slots__ = ("volumes",)
    VOLUMES_FIELD_NUMBER: _ClassVar[int]
    volumes: _containers.RepeatedCompositeFieldContainer[Volume]
    def __init__(self, volumes: _Optional[_Iterable[_Union[Volume, _Mapping]]] = ...) -> None: ...

class GetVolumeRequest(_message.Message):
    __slots__ = ("tenant_id", "volume_id")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    VOLUME_ID_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    volume_id: str
    def __init__(self, tenant_id: _Optional[str] = ..., volume_id: _Optional[str] = ...) -> None: ...

class UpdateVolumeRequest(_message.Message):
    __slots__ = ("tenant_id", "volume_id", "size_gigabytes", "description", "update_mask", "validate_only")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    VOLUME_ID_FIELD_NUMBER: _ClassVar[int]
    SIZE_GIGABYTES_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    UPDATE_MASK_FIELD_NUMBER: _ClassVar[int]
    VALIDATE_ONLY_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    volume_id: str
    size_gigabytes: int
    description: str
    update_mask: _field_mask_pb2.FieldMask
    validate_only: bool
    def __init__(self, tenant_id: _Optional[str] = ..., volume_id: _Optional[str] = ..., size_gigabytes: _Optional[int] = ..., description: _Optional[str] = ..., update_mask: _Optional[_Union[_field_mask_pb2.FieldMask, _Mapping]] = ..., validate_only: _Optional[bool] = ...) -> None: ...

class DeleteVolumeRequest(_message.Message):
    __slots__ = ("tenant_id", "volume_id", "validate_only", "force")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    VOLUME_ID_FIELD_NUMBER: _ClassVar[int]
    VALIDATE_ONLY_FIELD_NUMBER: _ClassVar[int]
    FORCE_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    volume_id: str
    validate_only: bool
    force: bool
    def __init__(self, tenant_id: _Optional[str] = ..., volume_id: _Optional[str] = ..., validate_only: _Optional[bool] = ..., force: _Optional[bool] = ...) -> None: ...

class PlanVolumeRequest(_message.Message):
    __slots__ = ("update", "delete")
    UPDATE_FIELD_NUMBER: _ClassVar[int]
    DELETE_FIELD_NUMBER: _ClassVar[int]
    update: UpdateVolumeRequest
    delete: DeleteVolumeRequest
    def __init__(self, update: _Optional[_Union[UpdateVolumeRequest, _Mapping]] = ..., delete: _Optional[_Union[DeleteVolumeRequest, _Mapping]] = ...) -> None: ...

class AttachVolumeRequest(_message.Message):
    __slots__ = ("tenant_id", "volume_id", "instance_id")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    VOLUME_ID_FIELD_NUMBER: _ClassVar[int]
    INSTANCE_ID_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    volume_id: str
    instance_id: str
    def __init__(self, tenant_id: _Optional[str] = ..., volume_id: _Optional[str] = ..., instance_id: _Optional[str] = ...) -> None: ...

class DetachVolumeRequest(_message.Message):
    __slots__ = ("tenant_id", "volume_id")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    VOLUME_ID_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    volume_id: str
    def __init__(self, tenant_id: _Optional[str] = ..., volume_id: _Optional[str] = ...) -> None: ...
