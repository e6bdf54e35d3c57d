import datetime

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

class Orphan(_message.Message):
    __slots__ = ("id", "tenant_id", "resource_id", "resource_kind", "provider", "account_id", "kind", "name", "provider_id", "reason", "status", "last_error", "created_at", "updated_at", "location")
    ID_FIELD_NUMBER: _ClassVar[int]
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_ID_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_KIND_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_FIELD_NUMBER: _ClassVar[int]
    ACCOUNT_ID_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_ID_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    LAST_ERROR_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    UPDATED_AT_FIELD_NUMBER: _ClassVar[int]
    LOCATION_FIELD_NUMBER: _ClassVar[int]
    id: str
    tenant_id: str
    resource_id: str
    resource_kind: str
    provider: str
    account_id: str
    kind: str
    name: str
    provider_id: str
    reason: str
    status: str
    last_error: str
    created_at: _timestamp_pb2.Timestamp
    updated_at: _timestamp_pb2.Timestamp
    location: str
    def __init__(self, id: _Optional[str] = ..., tenant_id: _Optional[str] = ..., resource_id: _Optional[str] = ..., resource_kind: _Optional[str] = ..., provider: _Optional[str] = ..., account_id: _Optional[str] = ..., kind: _Optional[str] = ..., name: _Optional[str] = ..., provider_id: _Optional[str] = ..., reason: _Optional[str] = ..., status: _Optional[str] = ..., last_error: _Optional[str] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., updated_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., location: _Optional[str] = ...) -> None: ...

class ListOrphansRequest(_message.Message):
    __slots__ = ("tenant_id", "resource_id", "status")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_ID_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    resource_id: str
    status: str
    def __init__(self, tenant_id: _Optional[str] = ..., resource_id: _Optional[str] = ..., status: _Optional[str] = ...) -> None: ...

class ListOrphansResponse(_message.Message):
    __slots__ = ("orphans",)
    ORPHANS_FIELD_NUMBER: _ClassVar[int]
    orphans: _containers.RepeatedCompositeFieldContainer[Orphan]
    def __init__(self, orphans: _Optional[_Iterable[_Union[Orphan, _Mapping]]] = ...) -> None: ...

class DismissOrphanRequest(_message.Message):
    __slots__ = ("orphan_id",)
    ORPHAN_ID_FIELD_NUMBER: _ClassVar[int]
    orphan_id: str
    def __init__(self, orphan_id: _Optional[str] = ...) -> None: ...
