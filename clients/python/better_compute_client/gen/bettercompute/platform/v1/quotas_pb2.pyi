import datetime

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

class Quota(_message.Message):
    __slots__ = ("pool_id", "tenant_id", "resource_kind", "limit", "used", "version", "created_at", "updated_at")
    POOL_ID_FIELD_NUMBER: _ClassVar[int]
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_KIND_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    USED_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    UPDATED_AT_FIELD_NUMBER: _ClassVar[int]
    pool_id: str
    tenant_id: str
    resource_kind: str
    limit: int
    used: int
    version: int
    created_at: _timestamp_pb2.Timestamp
    updated_at: _timestamp_pb2.Timestamp
    def __init__(self, pool_id: _Optional[str] = ..., tenant_id: _Optional[str] = ..., resource_kind: _Optional[str] = ..., limit: _Optional[int] = ..., used: _Optional[int] = ..., version: _Optional[int] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., updated_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class CreateQuotaRequest(_message.Message):
    __slots__ = ("pool_id", "tenant_id", "resource_kind", "limit")
    POOL_ID_FIELD_NUMBER: _ClassVar[int]
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_KIND_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    pool_id: str
    tenant_id: str
    resource_kind: str
    limit: int
    def __init__(self, pool_id: _Optional[str] = ..., tenant_id: _Optional[str] = ..., resource_kind: _Optional[str] = ..., limit: _Optional[int] = ...) -> None: ...

class GetQuotaRequest(_message.Message):
    __slots__ = ("pool_id", "tenant_id", "resource_kind")
    POOL_ID_FIELD_NUMBER: _ClassVar[int]
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_KIND_FIELD_NUMBER: _ClassVar[int]
    pool_id: str
    tenant_id: str
    resource_kind: str
    def __init__(self, pool_id: _Optional[str] = ..., tenant_id: _Optional[str] = ..., resource_kind: _Optional[str] = ...) -> None: ...

class ListQuotasRequest(_message.Message):
    __slots__ = ("pool_id", "tenant_id")
    POOL_ID_FIELD_NUMBER: _ClassVar[int]
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    pool_id: str
    tenant_id: str
    def __init__(self, pool_id: _Optional[str] = ..., tenant_id: _Optional[str] = ...) -> None: ...

class ListQuotasResponse(_message.Message):
    __slots__ = ("quotas",)
    QUOTAS_FIELD_NUMBER: _ClassVar[int]
    quotas: _containers.RepeatedCompositeFieldContainer[Quota]
    def __init__(self, quotas: _Optional[_Iterable[_Union[Quota, _Mapping]]] = ...) -> None: ...

class UpdateQuotaRequest(_message.Message):
    __slots__ = ("pool_id", "tenant_id", "resource_kind", "limit", "update_mask")
    POOL_ID_FIELD_NUMBER: _ClassVar[int]
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_KIND_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    UPDATE_MASK_FIELD_NUMBER: _ClassVar[int]
    pool_id: str
    tenant_id: str
    resource_kind: str
    limit: int
    update_mask: _field_mask_pb2.FieldMask
    def __init__(self, pool_id: _Optional[str] = ..., tenant_id: _Optional[str] = ..., resource_kind: _Optional[str] = ..., limit: _Optional[int] = ..., update_mask: _Optional[_Union[_field_mask_pb2.FieldMask, _Mapping]] = ...) -> None: ...

class DeleteQuotaRequest(_message.Message):
    __slots__ = ("pool_id", "tenant_id", "resource_kind")
    POOL_ID_FIELD_NUMBER: _ClassVar[int]
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_KIND_FIELD_NUMBER: _ClassVar[int]
    pool_id: str
    tenant_id: str
    resource_kind: str
    def __init__(self, pool_id: _Optional[str] = ..., tenant_id: _Optional[str] = ..., resource_kind: _Optional[str] = ...) -> None: ...
