import datetime

from better_compute_client.gen.bettercompute.options.v1 import options_pb2 as _options_pb2
from google.api import annotations_pb2 as _annotations_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class ReconcilersStatusRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ReconcilersStatus(_message.Message):
    __slots__ = ("kinds", "stuck")
    KINDS_FIELD_NUMBER: _ClassVar[int]
    STUCK_FIELD_NUMBER: _ClassVar[int]
    kinds: _containers.RepeatedCompositeFieldContainer[ReconcilerKind]
    stuck: _containers.RepeatedCompositeFieldContainer[StuckObject]
    def __init__(self, kinds: _Optional[_Iterable[_Union[ReconcilerKind, _Mapping]]] = ..., stuck: _Optional[_Iterable[_Union[StuckObject, _Mapping]]] = ...) -> None: ...

class ReconcilerKind(_message.Message):
    __slots__ = ("kind", "objects", "queue_depth", "leased", "failing", "pass_mean_ms", "pass_max_ms")
    KIND_FIELD_NUMBER: _ClassVar[int]
    OBJECTS_FIELD_NUMBER: _ClassVar[int]
    QUEUE_DEPTH_FIELD_NUMBER: _ClassVar[int]
    LEASED_FIELD_NUMBER: _ClassVar[int]
    FAILING_FIELD_NUMBER: _ClassVar[int]
    PASS_MEAN_MS_FIELD_NUMBER: _ClassVar[int]
    PASS_MAX_MS_FIELD_NUMBER: _ClassVar[int]
    kind: str
    objects: int
    queue_depth: int
    leased: int
    failing: int
    pass_mean_ms: float
    pass_max_ms: float
    def __init__(self, kind: _Optional[str] = ..., objects: _Optional[int] = ..., queue_depth: _Optional[int] = ..., leased: _Optional[int] = ..., failing: _Optional[int] = ..., pass_mean_ms: _Optional[float] = ..., pass_max_ms: _Optional[float] = ...) -> None: ...

class StuckObject(_message.Message):
    __slots__ = ("kind", "id", "state", "since", "attempts", "last_error")
    KIND_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    SINCE_FIELD_NUMBER: _ClassVar[int]
    ATTEMPTS_FIELD_NUMBER: _ClassVar[int]
    LAST_ERROR_FIELD_NUMBER: _ClassVar[int]
    kind: str
    id: str
    state: str
    since: _timestamp_pb2.Timestamp
    attempts: int
    last_error: str
    def __init__(self, kind: _Optional[str] = ..., id: _Optional[str] = ..., state: _Optional[str] = ..., since: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., attempts: _Optional[int] = ..., last_error: _Optional[str] = ...) -> None: ...
