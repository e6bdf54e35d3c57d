import datetime

from better_compute_client.gen.bettercompute.compute.v1 import join_tokens_pb2 as _join_tokens_pb2
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

class NodeCapacity(_message.Message):
    __slots__ = ("cpu_millis", "memory_bytes", "ephemeral_storage_bytes", "gpus")
    CPU_MILLIS_FIELD_NUMBER: _ClassVar[int]
    MEMORY_BYTES_FIELD_NUMBER: _ClassVar[int]
    EPHEMERAL_STORAGE_BYTES_FIELD_NUMBER: _ClassVar[int]
    GPUS_FIELD_NUMBER: _ClassVar[int]
    cpu_millis: int
    memory_bytes: int
    ephemeral_storage_bytes: int
    gpus: _containers.RepeatedCompositeFieldContainer[NodeGpus]
    def __init__(self, cpu_millis: _Optional[int] = ..., memory_bytes: _Optional[int] = ..., ephemeral_storage_bytes: _Optional[int] = ..., gpus: _Optional[_Iterable[_Union[NodeGpus, _Mapping]]] = ...) -> None: ...

class PoolNodeSummary(_message.Message):
    __slots__ = ("ready", "not_ready", "left", "deleted", "cordoned", "capacity", "allocatable", "unhealthy", "remediation_paused")
    READY_FIELD_NUMBER: _ClassVar[int]
    NOT_READY_FIELD_NUMBER: _ClassVar[int]
    LEFT_FIELD_NUMBER: _ClassVar[int]
    DELETED_FIELD_NUMBER: _ClassVar[int]
    CORDONED_FIELD_NUMBER: _ClassVar[int]
    CAPACITY_FIELD_NUMBER: _ClassVar[int]
    ALLOCATABLE_FIELD_NUMBER: _ClassVar[int]
    UNHEALTHY_FIELD_NUMBER: _ClassVar[int]
    REMEDIATION_PAUSED_FIELD_NUMBER: _ClassVar[int]
    ready: int
    not_ready: int
    left: int
    deleted: int
    cordoned: int
    capacity: NodeCapacity
    allocatable: NodeCapacity
    unhealthy: int
    remediation_paused: str
    def __init__(self, ready: _Optional[int] = ..., not_ready: _Optional[int] = ..., left: _Optional[int] = ..., deleted: _Optional[int] = ..., cordoned: _Optional[int] = ..., capacity: _Optional[_Union[NodeCapacity, _Mapping]] = ..., allocatable: _Optional[_Union[NodeCapacity, _Mapping]] = ..., unhealthy: _Optional[int] = ..., remediation_paused: _Optional[str] = ...) -> None: ...

class NodeGpus(_message.Message):
    __slots__ = ("model", "count")
    MODEL_FIELD_NUMBER: _ClassVar[int]
    COUNT_FIELD_NUMBER: _ClassVar[int]
    model: str
    count: int
    def __init__(self, model: _Optional[str] = ..., count: _Optional[int] = ...) -> None: ...

class NodeCondition(_message.Message):
    __slots__ = ("type", "status", "message")
    TYPE_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    type: str
    status: str
    message: str
    def __init__(self, type: _Optional[str] = ..., status: _Optional[str] = ..., message: _Optional[str] = ...) -> None: ...

class Node(_message.Message):
    __slots__ = ("id", "pool_id", "machine_id", "hostname", "architecture", "os", "kernel", "bcd_version", "capacity", "allocatable", "conditions", "labels", "taints", "state", "cordoned", "join_token_id", "address", "heartbeat_interval_seconds", "joined_at", "last_heartbeat_at", "left_at", "deleted_at", "version", "remediation", "remediated_at")
    class LabelsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    ID_FIELD_NUMBER: _ClassVar[int]
    POOL_ID_FIELD_NUMBER: _ClassVar[int]
    MACHINE_ID_FIELD_NUMBER: _ClassVar[int]
    HOSTNAME_FIELD_NUMBER: _ClassVar[int]
    ARCHITECTURE_FIELD_NUMBER: _ClassVar[int]
    OS_FIELD_NUMBER: _ClassVar[int]
    KERNEL_FIELD_NUMBER: _ClassVar[int]
    BCD_VERSION_FIELD_NUMBER: _ClassVar[int]
    CAPACITY_FIELD_NUMBER: _ClassVar[int]
    ALLOCATABLE_FIELD_NUMBER: _ClassVar[int]
    CONDITIONS_FIELD_NUMBER: _ClassVar[int]
    LABELS_FIELD_NUMBER: _ClassVar[int]
    TAINTS_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    CORDONED_FIELD_NUMBER: _ClassVar[int]
    JOIN_TOKEN_ID_FIELD_NUMBER: _ClassVar[int]
    ADDRESS_FIELD_NUMBER: _ClassVar[int]
    HEARTBEAT_INTERVAL_SECONDS_FIELD_NUMBER: _ClassVar[int]
    JOINED_AT_FIELD_NUMBER: _ClassVar[int]
    LAST_HEARTBEAT_AT_FIELD_NUMBER: _ClassVar[int]
    LEFT_AT_FIELD_NUMBER: _ClassVar[int]
    DELETED_AT_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    REMEDIATION_FIELD_NUMBER: _ClassVar[int]
    REMEDIATED_AT_FIELD_NUMBER: _ClassVar[int]
    id: str
    pool_id: str
    machine_id: str
    hostname: str
    architecture: str
    os: str
    kernel: str
    bcd_version: str
    capacity: NodeCapacity
    allocatable: NodeCapacity
    conditions: _containers.RepeatedCompositeFieldContainer[NodeCondition]
    labels: _containers.ScalarMap[str, str]
    taints: _containers.RepeatedCompositeFieldContainer[_join_tokens_pb2.NodeTaint]
    state: str
    cordoned: bool
    join_token_id: str
    address: str
    heartbeat_interval_seconds: int
    joined_at: _timestamp_pb2.Timestamp
    last_heartbeat_at: _timestamp_pb2.Timestamp
    left_at: _timestamp_pb2.Timestamp
    deleted_at: _timestamp_pb2.Timestamp
    version: int
    remediation: str
    remediated_at: _timestamp_pb2.Timestamp
    def __init__(self, id: _Optional[str] = ..., pool_id: _Optional[str] = ..., machine_id: _Optional[str] = ..., hostname: _Optional[str] = ..., architecture: _Optional[str] = ..., os: _Optional[str] = ..., kernel: _Optional[str] = ..., bcd_version: _Optional[str] = ..., capacity: _Optional[_Union[NodeCapacity, _Mapping]] = ..., allocatable: _Optional[_Union[NodeCapacity, _Mapping]] = ..., conditions: _Optional[_Iterable[_Union[NodeCondition, _Mapping]]] = ..., labels: _Optional[_Mapping[str, str]] = ..., taints: _Optional[_Iterable[_Union[_join_tokens_pb2.NodeTaint, _Mapping]]] = ..., state: _Optional[str] = ..., cordoned: _Optional[bool] = ..., join_token_id: _Optional[str] = ..., address: _Optional[str] = ..., heartbeat_interval_seconds: _Optional[int] = ..., joined_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., last_heartbeat_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., left_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., deleted_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., version: _Optional[int] = ..., remediation: _Optional[str] = ..., remediated_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class JoinNodeRequest(_message.Message):
    __slots__ = ("machine_id", "hostname", "architecture", "os", "kernel", "bcd_version", "capacity", "labels", "node_credential")
    class LabelsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    MACHINE_ID_FIELD_NUMBER: _ClassVar[int]
    HOSTNAME_FIELD_NUMBER: _ClassVar[int]
    ARCHITECTURE_FIELD_NUMBER: _ClassVar[int]
    OS_FIELD_NUMBER: _ClassVar[int]
    KERNEL_FIELD_NUMBER: _ClassVar[int]
    BCD_VERSION_FIELD_NUMBER: _ClassVar[int]
    CAPACITY_FIELD_NUMBER: _ClassVar[int]
    LABELS_FIELD_NUMBER: _ClassVar[int]
    NODE_CREDENTIAL_FIELD_NUMBER: _ClassVar[int]
    machine_id: str
    hostname: str
    architecture: str
    os: str
    kernel: str
    bcd_version: str
    capacity: NodeCapacity
    labels: _containers.ScalarMap[str, str]
    node_credential: str
    def __init__(self, machine_id: _Optional[str] = ..., hostname: _Optional[str] = ..., architecture: _Optional[str] = ..., os: _Optional[str] = ..., kernel: _Optional[str] = ..., bcd_version: _Optional[str] = ..., capacity: _Optional[_Union[NodeCapacity, _Mapping]] = ..., labels: _Optional[_Mapping[str, str]] = ..., node_credential: _Optional[str] = ...) -> None: ...

class JoinNodeResponse(_message.Message):
    __slots__ = ("node_id", "pool_id", "heartbeat_interval_seconds", "credential")
    NODE_ID_FIELD_NUMBER: _ClassVar[int]
    POOL_ID_FIELD_NUMBER: _ClassVar[int]
    HEARTBEAT_INTERVAL_SECONDS_FIELD_NUMBER: _ClassVar[int]
    CREDENTIAL_FIELD_NUMBER: _ClassVar[int]
    node_id: str
    pool_id: str
    heartbeat_interval_seconds: int
    credential: str
    def __init__(self, node_id: _Optional[str] = ..., pool_id: _Optional[str] = ..., heartbeat_interval_seconds: _Optional[int] = ..., credential: _Optional[str] = ...) -> None: ...

class NodeHeartbeatRequest(_message.Message):
    __slots__ = ("node_id", "capacity", "allocatable", "conditions")
    NODE_ID_FIELD_NUMBER: _ClassVar[int]
    CAPACITY_FIELD_NUMBER: _ClassVar[int]
    ALLOCATABLE_FIELD_NUMBER: _ClassVar[int]
    CONDITIONS_FIELD_NUMBER: _ClassVar[int]
    node_id: str
    capacity: NodeCapacity
    allocatable: NodeCapacity
    conditions: _containers.RepeatedCompositeFieldContainer[NodeCondition]
    def __init__(self, node_id: _Optional[str] = ..., capacity: _Optional[_Union[NodeCapacity, _Mapping]] = ..., allocatable: _Optional[_Union[NodeCapacity, _Mapping]] = ..., conditions: _Optional[_Iterable[_Union[NodeCondition, _Mapping]]] = ...) -> None: ...

class NodeHeartbeatResponse(_message.Message):
    __slots__ = ("cordoned", "heartbeat_interval_seconds", "state", "leave")
    CORDONED_FIELD_NUMBER: _ClassVar[int]
    HEARTBEAT_INTERVAL_SECONDS_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    LEAVE_FIELD_NUMBER: _ClassVar[int]
    cordoned: bool
    heartbeat_interval_seconds: int
    state: str
    leave: bool
    def __init__(self, cordoned: _Optional[bool] = ..., heartbeat_interval_seconds: _Optional[int] = ..., state: _Optional[str] = ..., leave: _Optional[bool] = ...) -> None: ...

class LeaveNodeRequest(_message.Message):
    __slots__ = ("node_id",)
    NODE_ID_FIELD_NUMBER: _ClassVar[int]
    node_id: str
    def __init__(self, node_id: _Optional[str] = ...) -> None: ...

class ListNodesRequest(_message.Message):
    __slots__ = ("pool_id",)
    POOL_ID_FIELD_NUMBER: _ClassVar[int]
    pool_id: str
    def __init__(self, pool_id: _Optional[str] = ...) -> None: ...

class ListNodesResponse(_message.Message):
    __slots__ = ("nodes",)
    NODES_FIELD_NUMBER: _ClassVar[int]
    nodes: _containers.RepeatedCompositeFieldContainer[Node]
    def __init__(self, nodes: _Optional[_Iterable[_Union[Node, _Mapping]]] = ...) -> None: ...

class GetNodeRequest(_message.Message):
    __slots__ = ("pool_id", "node_id")
    POOL_ID_FIELD_NUMBER: _ClassVar[int]
    NODE_ID_FIELD_NUMBER: _ClassVar[int]
    pool_id: str
    node_id: str
    def __init__(self, pool_id: _Optional[str] = ..., node_id: _Optional[str] = ...) -> None: ...

class CordonNodeRequest(_message.Message):
    __slots__ = ("pool_id", "node_id")
    POOL_ID_FIELD_NUMBER: _ClassVar[int]
    NODE_ID_FIELD_NUMBER: _ClassVar[int]
    pool_id: str
    node_id: str
    def __init__(self, pool_id: _Optional[str] = ..., node_id: _Optional[str] = ...) -> None: ...

class UncordonNodeRequest(_message.Message):
    __slots__ = ("pool_id", "node_id")
    POOL_ID_FIELD_NUMBER: _ClassVar[int]
    NODE_ID_FIELD_NUMBER: _ClassVar[int]
    pool_id: str
    node_id: str
    def __init__(self, pool_id: _Optional[str] = ..., node_id: _Optional[str] = ...) -> None: ...

class DeleteNodeRequest(_message.Message):
    __slots__ = ("pool_id", "node_id")
    POOL_ID_FIELD_NUMBER: _ClassVar[int]
    NODE_ID_FIELD_NUMBER: _ClassVar[int]
    pool_id: str
    node_id: str
    def __init__(self, pool_id: _Optional[str] = ..., node_id: _Optional[str] = ...) -> None: ...
