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

class AuditEvent(_message.Message):
    __slots__ = ("seq", "time", "principal_id", "method", "permission", "resource_type", "resource_id", "tenant_id", "decision", "policies", "request_id", "outcome", "principal_name")
    SEQ_FIELD_NUMBER: _ClassVar[int]
    TIME_FIELD_NUMBER: _ClassVar[int]
    PRINCIPAL_ID_FIELD_NUMBER: _ClassVar[int]
    METHOD_FIELD_NUMBER: _ClassVar[int]
    PERMISSION_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_TYPE_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_ID_FIELD_NUMBER: _ClassVar[int]
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    DECISION_FIELD_NUMBER: _ClassVar[int]
    POLICIES_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    OUTCOME_FIELD_NUMBER: _ClassVar[int]
    PRINCIPAL_NAME_FIELD_NUMBER: _ClassVar[int]
    seq: int
    time: _timestamp_pb2.Timestamp
    principal_id: str
    method: str
    permission: str
    resource_type: str
    resource_id: str
    tenant_id: str
    decision: str
    policies: _containers.RepeatedScalarFieldContainer[str]
    request_id: str
    outcome: str
    principal_name: str
    def __init__(self, seq: _Optional[int] = ..., time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., principal_id: _Optional[str] = ..., method: _Optional[str] = ..., permission: _Optional[str] = ..., resource_type: _Optional[str] = ..., resource_id: _Optional[str] = ..., tenant_id: _Optional[str] = ..., decision: _Optional[str] = ..., policies: _Optional[_Iterable[str]] = ..., request_id: _Optional[str] = ..., outcome: _Optional[str] = ..., principal_name: _Optional[str] = ...) -> None: ...

class ListAuditEventsRequest(_message.Message):
    __slots__ = ("tenant_id", "principal_id", "resource_id", "since", "until", "limit")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    PRINCIPAL_ID_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_ID_FIELD_NUMBER: _ClassVar[int]
    SINCE_FIELD_NUMBER: _ClassVar[int]
    UNTIL_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    principal_id: str
    resource_id: str
    since: _timestamp_pb2.Timestamp
    until: _timestamp_pb2.Timestamp
    limit: int
    def __init__(self, tenant_id: _Optional[str] = ..., principal_id: _Optional[str] = ..., resource_id: _Optional[str] = ..., since: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., until: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., limit: _Optional[int] = ...) -> None: ...

class ListAuditEventsResponse(_message.Message):
    __slots__ = ("audit_events",)
    AUDIT_EVENTS_FIELD_NUMBER: _ClassVar[int]
    audit_events: _containers.RepeatedCompositeFieldContainer[AuditEvent]
    def __init__(self, audit_events: _Optional[_Iterable[_Union[AuditEvent, _Mapping]]] = ...) -> None: ...
