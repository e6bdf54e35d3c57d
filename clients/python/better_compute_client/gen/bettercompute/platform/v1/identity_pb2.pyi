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

class Principal(_message.Message):
    __slots__ = ("id", "tenant_id", "kind", "name", "state", "created_at", "deleted_at")
    ID_FIELD_NUMBER: _ClassVar[int]
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    DELETED_AT_FIELD_NUMBER: _ClassVar[int]
    id: str
    tenant_id: str
    kind: str
    name: str
    state: str
    created_at: _timestamp_pb2.Timestamp
    deleted_at: _timestamp_pb2.Timestamp
    def __init__(self, id: _Optional[str] = ..., tenant_id: _Optional[str] = ..., kind: _Optional[str] = ..., name: _Optional[str] = ..., state: _Optional[str] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., deleted_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class CreatePrincipalRequest(_message.Message):
    __slots__ = ("tenant_id", "kind", "name")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    kind: str
    name: str
    def __init__(self, tenant_id: _Optional[str] = ..., kind: _Optional[str] = ..., name: _Optional[str] = ...) -> None: ...

class GetPrincipalRequest(_message.Message):
    __slots__ = ("tenant_id", "principal_id")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    PRINCIPAL_ID_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    principal_id: str
    def __init__(self, tenant_id: _Optional[str] = ..., principal_id: _Optional[str] = ...) -> None: ...

class ListPrincipalsRequest(_message.Message):
    __slots__ = ("tenant_id", "include_deleted", "page_size", "page_token")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_DELETED_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    include_deleted: bool
    page_size: int
    page_token: str
    def __init__(self, tenant_id: _Optional[str] = ..., include_deleted: _Optional[bool] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class ListPrincipalsResponse(_message.Message):
    __slots__ = ("principals", "next_page_token")
    PRINCIPALS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    principals: _containers.RepeatedCompositeFieldContainer[Principal]
    next_page_token: str
    def __init__(self, principals: _Optional[_Iterable[_Union[Principal, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class DeletePrincipalRequest(_message.Message):
    __slots__ = ("tenant_id", "principal_id")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    PRINCIPAL_ID_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    principal_id: str
    def __init__(self, tenant_id: _Optional[str] = ..., principal_id: _Optional[str] = ...) -> None: ...

class ApiKey(_message.Message):
    __slots__ = ("id", "principal_id", "tenant_id", "description", "state", "created_at", "expires_at", "revoked_at", "token")
    ID_FIELD_NUMBER: _ClassVar[int]
    PRINCIPAL_ID_FIELD_NUMBER: _ClassVar[int]
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    EXPIRES_AT_FIELD_NUMBER: _ClassVar[int]
    REVOKED_AT_FIELD_NUMBER: _ClassVar[int]
    TOKEN_FIELD_NUMBER: _ClassVar[int]
    id: str
    principal_id: str
    tenant_id: str
    description: str
    state: str
    created_at: _timestamp_pb2.Timestamp
    expires_at: _timestamp_pb2.Timestamp
    revoked_at: _timestamp_pb2.Timestamp
    token: str
    def __init__(self, id: _Optional[str] = ..., principal_id: _Optional[str] = ..., tenant_id: _Optional[str] = ..., description: _Optional[str] = ..., state: _Optional[str] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., expires_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., revoked_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., token: _Optional[str] = ...) -> None: ...

class CreateApiKeyRequest(_message.Message):
    __slots__ = ("tenant_id", "principal_id", "description", "ttl_seconds")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    PRINCIPAL_ID_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    TTL_SECONDS_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    principal_id: str
    description: str
    ttl_seconds: int
    def __init__(self, tenant_id: _Optional[str] = ..., principal_id: _Optional[str] = ..., description: _Optional[str] = ..., ttl_seconds: _Optional[int] = ...) -> None: ...

class ListApiKeysRequest(_message.Message):
    __slots__ = ("tenant_id", "principal_id", "page_size", "page_token")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    PRINCIPAL_ID_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    principal_id: str
    page_size: int
    page_token: str
    def __init__(self, tenant_id: _Optional[str] = ..., principal_id: _Optional[str] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class ListApiKeysResponse(_message.Message):
    __slots__ = ("api_keys", "next_page_token")
    API_KEYS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    api_keys: _containers.RepeatedCompositeFieldContainer[ApiKey]
    next_page_token: str
    def __init__(self, api_keys: _Optional[_Iterable[_Union[ApiKey, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class RevokeApiKeyRequest(_message.Message):
    __slots__ = ("tenant_id", "api_key_id")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    API_KEY_ID_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    api_key_id: str
    def __init__(self, tenant_id: _Optional[str] = ..., api_key_id: _Optional[str] = ...) -> None: ...

class RoleBinding(_message.Message):
    __slots__ = ("id", "principal_id", "role", "scope_type", "scope_id", "tenant_id", "created_at")
    ID_FIELD_NUMBER: _ClassVar[int]
    PRINCIPAL_ID_FIELD_NUMBER: _ClassVar[int]
    ROLE_FIELD_NUMBER: _ClassVar[int]
    SCOPE_TYPE_FIELD_NUMBER: _ClassVar[int]
    SCOPE_ID_FIELD_NUMBER: _ClassVar[int]
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    id: str
    principal_id: str
    role: str
    scope_type: str
    scope_id: str
    tenant_id: str
    created_at: _timestamp_pb2.Timestamp
    def __init__(self, id: _Optional[str] = ..., principal_id: _Optional[str] = ..., role: _Optional[str] = ..., scope_type: _Optional[str] = ..., scope_id: _Optional[str] = ..., tenant_id: _Optional[str] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class CreateRoleBindingRequest(_message.Message):
    __slots__ = ("tenant_id", "principal_id", "role", "scope_type", "scope_id")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    PRINCIPAL_ID_FIELD_NUMBER: _ClassVar[int]
    ROLE_FIELD_NUMBER: _ClassVar[int]
    SCOPE_TYPE_FIELD_NUMBER: _ClassVar[int]
    SCOPE_ID_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    principal_id: str
    role: str
    scope_type: str
    scope_id: str
    def __init__(self, tenant_id: _Optional[str] = ..., principal_id: _Optional[str] = ..., role: _Optional[str] = ..., scope_type: _Optional[str] = ..., scope_id: _Optional[str] = ...) -> None: ...

class ListRoleBindingsRequest(_message.Message):
    __slots__ = ("tenant_id", "principal_id", "page_size", "page_token")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    PRINCIPAL_ID_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    principal_id: str
    page_size: int
    page_token: str
    def __init__(self, tenant_id: _Optional[str] = ..., principal_id: _Optional[str] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class ListRoleBindingsResponse(_message.Message):
    __slots__ = ("role_bindings", "next_page_token")
    ROLE_BINDINGS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    role_bindings: _containers.RepeatedCompositeFieldContainer[RoleBinding]
    next_page_token: str
    def __init__(self, role_bindings: _Optional[_Iterable[_Union[RoleBinding, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class DeleteRoleBindingRequest(_message.Message):
    __slots__ = ("tenant_id", "role_binding_id")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    ROLE_BINDING_ID_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    role_binding_id: str
    def __init__(self, tenant_id: _Optional[str] = ..., role_binding_id: _Optional[str] = ...) -> None: ...
