import datetime

from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Plan(_message.Message):
    __slots__ = ("effect", "changes", "provider_objects", "disruptions", "violations", "quota_effects")
    EFFECT_FIELD_NUMBER: _ClassVar[int]
    CHANGES_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_OBJECTS_FIELD_NUMBER: _ClassVar[int]
    DISRUPTIONS_FIELD_NUMBER: _ClassVar[int]
    VIOLATIONS_FIELD_NUMBER: _ClassVar[int]
    QUOTA_EFFECTS_FIELD_NUMBER: _ClassVar[int]
    effect: str
    changes: _containers.RepeatedCompositeFieldContainer[PlanChange]
    provider_objects: _containers.RepeatedCompositeFieldContainer[PlanProviderObject]
    disruptions: _containers.RepeatedScalarFieldContainer[str]
    violations: _containers.RepeatedCompositeFieldContainer[PlanViolation]
    quota_effects: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, effect: _Optional[str] = ..., changes: _Optional[_Iterable[_Union[PlanChange, _Mapping]]] = ..., provider_objects: _Optional[_Iterable[_Union[PlanProviderObject, _Mapping]]] = ..., disruptions: _Optional[_Iterable[str]] = ..., violations: _Optional[_Iterable[_Union[PlanViolation, _Mapping]]] = ..., quota_effects: _Optional[_Iterable[str]] = ...) -> None: ...

class PlanChange(_message.Message):
    __slots__ = ("field", "to", "effect", "detail")
    FIELD_FIELD_NUMBER: _ClassVar[int]
    FROM_FIELD_NUMBER: _ClassVar[int]
    TO_FIELD_NUMBER: _ClassVar[int]
    EFFECT_FIELD_NUMBER: _ClassVar[int]
    DETAIL_FIELD_NUMBER: _ClassVar[int]
    field: str
    to: str
    effect: str
    detail: str
    def __init__(self, field: _Optional[str] = ..., to: _Optional[str] = ..., effect: _Optional[str] = ..., detail: _Optional[str] = ..., **kwargs) -> None: ...

class PlanProviderObject(_message.Message):
    __slots__ = ("action", "provider", "kind", "name")
    ACTION_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    action: str
    provider: str
    kind: str
    name: str
    def __init__(self, action: _Optional[str] = ..., provider: _Optional[str] = ..., kind: _Optional[str] = ..., name: _Optional[str] = ...) -> None: ...

class PlanViolation(_message.Message):
    __slots__ = ("code", "field", "description")
    CODE_FIELD_NUMBER: _ClassVar[int]
    FIELD_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    code: str
    field: str
    description: str
    def __init__(self, code: _Optional[str] = ..., field: _Optional[str] = ..., description: _Optional[str] = ...) -> None: ...

class Drift(_message.Message):
    __slots__ = ("field", "applied", "found", "since", "action")
    FIELD_FIELD_NUMBER: _ClassVar[int]
    APPLIED_FIELD_NUMBER: _ClassVar[int]
    FOUND_FIELD_NUMBER: _ClassVar[int]
    SINCE_FIELD_NUMBER: _ClassVar[int]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    field: str
    applied: str
    found: str
    since: _timestamp_pb2.Timestamp
    action: str
    def __init__(self, field: _Optional[str] = ..., applied: _Optional[str] = ..., found: _Optional[str] = ..., since: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., action: _Optional[str] = ...) -> None: ...
