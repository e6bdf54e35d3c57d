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

class Offer(_message.Message):
    __slots__ = ("pool_id", "tenant_id", "state", "excluded_regions", "version", "created_at", "updated_at")
    POOL_ID_FIELD_NUMBER: _ClassVar[int]
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    EXCLUDED_REGIONS_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    UPDATED_AT_FIELD_NUMBER: _ClassVar[int]
    pool_id: str
    tenant_id: str
    state: str
    excluded_regions: _containers.RepeatedScalarFieldContainer[str]
    version: int
    created_at: _timestamp_pb2.Timestamp
    updated_at: _timestamp_pb2.Timestamp
    def __init__(self, pool_id: _Optional[str] = ..., tenant_id: _Optional[str] = ..., state: _Optional[str] = ..., excluded_regions: _Optional[_Iterable[str]] = ..., version: _Optional[int] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., updated_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class CreateOfferRequest(_message.Message):
    __slots__ = ("pool_id", "tenant_id", "state", "excluded_regions")
    POOL_ID_FIELD_NUMBER: _ClassVar[int]
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    EXCLUDED_REGIONS_FIELD_NUMBER: _ClassVar[int]
    pool_id: str
    tenant_id: str
    state: str
    excluded_regions: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, pool_id: _Optional[str] = ..., tenant_id: _Optional[str] = ..., state: _Optional[str] = ..., excluded_regions: _Optional[_Iterable[str]] = ...) -> None: ...

class GetOfferRequest(_message.Message):
    __slots__ = ("pool_id", "tenant_id")
    POOL_ID_FIELD_NUMBER: _ClassVar[int]
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    pool_id: str
    tenant_id: str
    def __init__(self, pool_id: _Optional[str] = ..., tenant_id: _Optional[str] = ...) -> None: ...

class ListOffersRequest(_message.Message):
    __slots__ = ("pool_id", "tenant_id")
    POOL_ID_FIELD_NUMBER: _ClassVar[int]
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    pool_id: str
    tenant_id: str
    def __init__(self, pool_id: _Optional[str] = ..., tenant_id: _Optional[str] = ...) -> None: ...

class ListOffersResponse(_message.Message):
    __slots__ = ("offers",)
    OFFERS_FIELD_NUMBER: _ClassVar[int]
    offers: _containers.RepeatedCompositeFieldContainer[Offer]
    def __init__(self, offers: _Optional[_Iterable[_Union[Offer, _Mapping]]] = ...) -> None: ...

class UpdateOfferRequest(_message.Message):
    __slots__ = ("pool_id", "tenant_id", "state", "excluded_regions", "clear_excluded_regions", "update_mask")
    POOL_ID_FIELD_NUMBER: _ClassVar[int]
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    EXCLUDED_REGIONS_FIELD_NUMBER: _ClassVar[int]
    CLEAR_EXCLUDED_REGIONS_FIELD_NUMBER: _ClassVar[int]
    UPDATE_MASK_FIELD_NUMBER: _ClassVar[int]
    pool_id: str
    tenant_id: str
    state: str
    excluded_regions: _containers.RepeatedScalarFieldContainer[str]
    clear_excluded_regions: bool
    update_mask: _field_mask_pb2.FieldMask
    def __init__(self, pool_id: _Optional[str] = ..., tenant_id: _Optional[str] = ..., state: _Optional[str] = ..., excluded_regions: _Optional[_Iterable[str]] = ..., clear_excluded_regions: _Optional[bool] = ..., update_mask: _Optional[_Union[_field_mask_pb2.FieldMask, _Mapping]] = ...) -> None: ...

class DeleteOfferRequest(_message.Message):
    __slots__ = ("pool_id", "tenant_id")
    POOL_ID_FIELD_NUMBER: _ClassVar[int]
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    pool_id: str
    tenant_id: str
    def __init__(self, pool_id: _Optional[str] = ..., tenant_id: _Optional[str] = ...) -> None: ...
