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

class JoinToken(_message.Message):
    __slots__ = ("id", "pool_id", "description", "max_uses", "uses", "state", "expires_at", "labels", "taints", "created_by", "created_at", "revoked_at", "last_used_at", "joins", "token", "token_notice")
    class LabelsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    ID_FIELD_NUMBER: _ClassVar[int]
    POOL_ID_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    MAX_USES_FIELD_NUMBER: _ClassVar[int]
    USES_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    EXPIRES_AT_FIELD_NUMBER: _ClassVar[int]
    LABELS_FIELD_NUMBER: _ClassVar[int]
    TAINTS_FIELD_NUMBER: _ClassVar[int]
    CREATED_BY_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    REVOKED_AT_FIELD_NUMBER: _ClassVar[int]
    LAST_USED_AT_FIELD_NUMBER: _ClassVar[int]
    JOINS_FIELD_NUMBER: _ClassVar[int]
    TOKEN_FIELD_NUMBER: _ClassVar[int]
    TOKEN_NOTICE_FIELD_NUMBER: _ClassVar[int]
    id: str
    pool_id: str
    description: str
    max_uses: int
    uses: int
    state: str
    expires_at: _timestamp_pb2.Timestamp
    labels: _containers.ScalarMap[str, str]
    taints: _containers.RepeatedCompositeFieldContainer[NodeTaint]
    created_by: str
    created_at: _timestamp_pb2.Timestamp
    revoked_at: _timestamp_pb2.Timestamp
    last_used_at: _timestamp_pb2.Timestamp
    joins: _containers.RepeatedCompositeFieldContainer[JoinTokenUse]
    token: str
    token_notice: str
    def __init__(self, id: _Optional[str] = ..., pool_id: _Optional[str] = ..., description: _Optional[str] = ..., max_uses: _Optional[int] = ..., uses: _Optional[int] = ..., state: _Optional[str] = ..., expires_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., labels: _Optional[_Mapping[str, str]] = ..., taints: _Optional[_Iterable[_Union[NodeTaint, _Mapping]]] = ..., created_by: _Optional[str] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., revoked_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., last_used_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., joins: _Optional[_Iterable[_Union[JoinTokenUse, _Mapping]]] = ..., token: _Optional[str] = ..., token_notice: _Optional[str] = ...) -> None: ...

class JoinTokenUse(_message.Message):
    __slots__ = ("node_id", "used_at", "address")
    NODE_ID_FIELD_NUMBER: _ClassVar[int]
    USED_AT_FIELD_NUMBER: _ClassVar[int]
    ADDRESS_FIELD_NUMBER: _ClassVar[int]
    node_id: str
    used_at: _timestamp_pb2.Timestamp
    address: str
    def __init__(self, node_id: _Optional[str] = ..., used_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., address: _Optional[str] = ...) -> None: ...

class NodeTaint(_message.Message):
    __slots__ = ("key", "value", "effect")
    KEY_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    EFFECT_FIELD_NUMBER: _ClassVar[int]
    key: str
    value: str
    effect: str
    def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ..., effect: _Optional[str] = ...) -> None: ...

class CreateJoinTokenRequest(_message.Message):
    __slots__ = ("pool_id", "description", "max_uses", "ttl_seconds", "labels", "taints", "idempotency_key")
    class LabelsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    POOL_ID_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    MAX_USES_FIELD_NUMBER: _ClassVar[int]
    TTL_SECONDS_FIELD_NUMBER: _ClassVar[int]
    LABELS_FIELD_NUMBER: _ClassVar[int]
    TAINTS_FIELD_NUMBER: _ClassVar[int]
    IDEMPOTENCY_KEY_FIELD_NUMBER: _ClassVar[int]
    pool_id: str
    description: str
    max_uses: int
    ttl_seconds: int
    labels: _containers.ScalarMap[str, str]
    taints: _containers.RepeatedCompositeFieldContainer[NodeTaint]
    idempotency_key: str
    def __init__(self, pool_id: _Optional[str] = ..., description: _Optional[str] = ..., max_uses: _Optional[int] = ..., ttl_seconds: _Optional[int] = ..., labels: _Optional[_Mapping[str, str]] = ..., taints: _Optional[_Iterable[_Union[NodeTaint, _Mapping]]] = ..., idempotency_key: _Optional[str] = ...) -> None: ...

class ListJoinTokensRequest(_message.Message):
    __slots__ = ("pool_id",)
    POOL_ID_FIELD_NUMBER: _ClassVar[int]
    pool_id: str
    def __init__(self, pool_id: _Optional[str] = ...) -> None: ...

class ListJoinTokensResponse(_message.Message):
    __slots__ = ("join_tokens",)
    JOIN_TOKENS_FIELD_NUMBER: _ClassVar[int]
    join_tokens: _containers.RepeatedCompositeFieldContainer[JoinToken]
    def __init__(self, join_tokens: _Optional[_Iterable[_Union[JoinToken, _Mapping]]] = ...) -> None: ...

class GetJoinTokenRequest(_message.Message):
    __slots__ = ("pool_id", "join_token_id")
    POOL_ID_FIELD_NUMBER: _ClassVar[int]
    JOIN_TOKEN_ID_FIELD_NUMBER: _ClassVar[int]
    pool_id: str
    join_token_id: str
    def __init__(self, pool_id: _Optional[str] = ..., join_token_id: _Optional[str] = ...) -> None: ...

class RevokeJoinTokenRequest(_message.Message):
    __slots__ = ("pool_id", "join_token_id")
    POOL_ID_FIELD_NUMBER: _ClassVar[int]
    JOIN_TOKEN_ID_FIELD_NUMBER: _ClassVar[int]
    pool_id: str
    join_token_id: str
    def __init__(self, pool_id: _Optional[str] = ..., join_token_id: _Optional[str] = ...) -> None: ...
