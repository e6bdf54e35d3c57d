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

class Account(_message.Message):
    __slots__ = ("id", "tenant_id", "provider", "name", "description", "endpoint", "zones", "regions", "capabilities", "credentials_set", "state", "version", "rate_limits", "rate_limits_set", "credentials_check", "created_at", "updated_at", "deleted_at")
    ID_FIELD_NUMBER: _ClassVar[int]
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    ENDPOINT_FIELD_NUMBER: _ClassVar[int]
    ZONES_FIELD_NUMBER: _ClassVar[int]
    REGIONS_FIELD_NUMBER: _ClassVar[int]
    CAPABILITIES_FIELD_NUMBER: _ClassVar[int]
    CREDENTIALS_SET_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    RATE_LIMITS_FIELD_NUMBER: _ClassVar[int]
    RATE_LIMITS_SET_FIELD_NUMBER: _ClassVar[int]
    CREDENTIALS_CHECK_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    UPDATED_AT_FIELD_NUMBER: _ClassVar[int]
    DELETED_AT_FIELD_NUMBER: _ClassVar[int]
    id: str
    tenant_id: str
    provider: str
    name: str
    description: str
    endpoint: str
    zones: _containers.RepeatedScalarFieldContainer[str]
    regions: _containers.RepeatedScalarFieldContainer[str]
    capabilities: _containers.RepeatedScalarFieldContainer[str]
    credentials_set: bool
    state: str
    version: int
    rate_limits: _containers.RepeatedCompositeFieldContainer[RateLimit]
    rate_limits_set: bool
    credentials_check: CredentialsCheck
    created_at: _timestamp_pb2.Timestamp
    updated_at: _timestamp_pb2.Timestamp
    deleted_at: _timestamp_pb2.Timestamp
    def __init__(self, id: _Optional[str] = ..., tenant_id: _Optional[str] = ..., provider: _Optional[str] = ..., name: _Optional[str] = ..., description: _Optional[str] = ..., endpoint: _Optional[str] = ..., zones: _Optional[_Iterable[str]] = ..., regions: _Optional[_Iterable[str]] = ..., capabilities: _Optional[_Iterable[str]] = ..., credentials_set: _Optional[bool] = ..., state: _Optional[str] = ..., version: _Optional[int] = ..., rate_limits: _Optional[_Iterable[_Union[RateLimit, _Mapping]]] = ..., rate_limits_set: _Optional[bool] = ..., credentials_check: _Optional[_Union[CredentialsCheck, _Mapping]] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., updated_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., deleted_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class RateLimit(_message.Message):
    __slots__ = ("requests", "per_seconds")
    REQUESTS_FIELD_NUMBER: _ClassVar[int]
    PER_SECONDS_FIELD_NUMBER: _ClassVar[int]
    requests: int
    per_seconds: int
    def __init__(self, requests: _Optional[int] = ..., per_seconds: _Optional[int] = ...) -> None: ...

class CredentialsCheck(_message.Message):
    __slots__ = ("state", "since", "message", "next_probe_at")
    STATE_FIELD_NUMBER: _ClassVar[int]
    SINCE_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    NEXT_PROBE_AT_FIELD_NUMBER: _ClassVar[int]
    state: str
    since: _timestamp_pb2.Timestamp
    message: str
    next_probe_at: _timestamp_pb2.Timestamp
    def __init__(self, state: _Optional[str] = ..., since: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., message: _Optional[str] = ..., next_probe_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class CreateAccountRequest(_message.Message):
    __slots__ = ("tenant_id", "provider", "name", "description", "credentials", "endpoint", "zones", "regions", "rate_limits")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    CREDENTIALS_FIELD_NUMBER: _ClassVar[int]
    ENDPOINT_FIELD_NUMBER: _ClassVar[int]
    ZONES_FIELD_NUMBER: _ClassVar[int]
    REGIONS_FIELD_NUMBER: _ClassVar[int]
    RATE_LIMITS_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    provider: str
    name: str
    description: str
    credentials: str
    endpoint: str
    zones: _containers.RepeatedScalarFieldContainer[str]
    regions: _containers.RepeatedScalarFieldContainer[str]
    rate_limits: _containers.RepeatedCompositeFieldContainer[RateLimit]
    def __init__(self, tenant_id: _Optional[str] = ..., provider: _Optional[str] = ..., name: _Optional[str] = ..., description: _Optional[str] = ..., credentials: _Optional[str] = ..., endpoint: _Optional[str] = ..., zones: _Optional[_Iterable[str]] = ..., regions: _Optional[_Iterable[str]] = ..., rate_limits: _Optional[_Iterable[_Union[RateLimit, _Mapping]]] = ...) -> None: ...

class GetAccountRequest(_message.Message):
    __slots__ = ("account_id",)
    ACCOUNT_ID_FIELD_NUMBER: _ClassVar[int]
    account_id: str
    def __init__(self, account_id: _Optional[str] = ...) -> None: ...

class ListAccountsRequest(_message.Message):
    __slots__ = ("tenant_id", "platform_only", "include_deleted")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    PLATFORM_ONLY_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_DELETED_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    platform_only: bool
    include_deleted: bool
    def __init__(self, tenant_id: _Optional[str] = ..., platform_only: _Optional[bool] = ..., include_deleted: _Optional[bool] = ...) -> None: ...

class ListAccountsResponse(_message.Message):
    __slots__ = ("accounts",)
    ACCOUNTS_FIELD_NUMBER: _ClassVar[int]
    accounts: _containers.RepeatedCompositeFieldContainer[Account]
    def __init__(self, accounts: _Optional[_Iterable[_Union[Account, _Mapping]]] = ...) -> None: ...

class UpdateAccountRequest(_message.Message):
    __slots__ = ("account_id", "name", "description", "credentials", "endpoint", "zones", "regions", "rate_limits", "update_mask")
    ACCOUNT_ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    CREDENTIALS_FIELD_NUMBER: _ClassVar[int]
    ENDPOINT_FIELD_NUMBER: _ClassVar[int]
    ZONES_FIELD_NUMBER: _ClassVar[int]
    REGIONS_FIELD_NUMBER: _ClassVar[int]
    RATE_LIMITS_FIELD_NUMBER: _ClassVar[int]
    UPDATE_MASK_FIELD_NUMBER: _ClassVar[int]
    account_id: str
    name: str
    description: str
    credentials: str
    endpoint: str
    zones: _containers.RepeatedScalarFieldContainer[str]
    regions: _containers.RepeatedScalarFieldContainer[str]
    rate_limits: _containers.RepeatedCompositeFieldContainer[RateLimit]
    update_mask: _field_mask_pb2.FieldMask
    def __init__(self, account_id: _Optional[str] = ..., name: _Optional[str] = ..., description: _Optional[str] = ..., credentials: _Optional[str] = ..., endpoint: _Optional[str] = ..., zones: _Optional[_Iterable[str]] = ..., regions: _Optional[_Iterable[str]] = ..., rate_limits: _Optional[_Iterable[_Union[RateLimit, _Mapping]]] = ..., update_mask: _Optional[_Union[_field_mask_pb2.FieldMask, _Mapping]] = ...) -> None: ...

class DeleteAccountRequest(_message.Message):
    __slots__ = ("account_id",)
    ACCOUNT_ID_FIELD_NUMBER: _ClassVar[int]
    account_id: str
    def __init__(self, account_id: _Optional[str] = ...) -> None: ...
