import datetime

from better_compute_client.gen.bettercompute.compute.v1 import operations_pb2 as _operations_pb2
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

class KubernetesSubstrate(_message.Message):
    __slots__ = ("pool_id", "mode", "account_id", "cluster_name", "location", "endpoint", "master_version", "node_version", "state", "message", "flavors", "objects", "join_token_id", "version", "created_at", "updated_at", "deleted_at", "problem")
    POOL_ID_FIELD_NUMBER: _ClassVar[int]
    MODE_FIELD_NUMBER: _ClassVar[int]
    ACCOUNT_ID_FIELD_NUMBER: _ClassVar[int]
    CLUSTER_NAME_FIELD_NUMBER: _ClassVar[int]
    LOCATION_FIELD_NUMBER: _ClassVar[int]
    ENDPOINT_FIELD_NUMBER: _ClassVar[int]
    MASTER_VERSION_FIELD_NUMBER: _ClassVar[int]
    NODE_VERSION_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    FLAVORS_FIELD_NUMBER: _ClassVar[int]
    OBJECTS_FIELD_NUMBER: _ClassVar[int]
    JOIN_TOKEN_ID_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    UPDATED_AT_FIELD_NUMBER: _ClassVar[int]
    DELETED_AT_FIELD_NUMBER: _ClassVar[int]
    PROBLEM_FIELD_NUMBER: _ClassVar[int]
    pool_id: str
    mode: str
    account_id: str
    cluster_name: str
    location: str
    endpoint: str
    master_version: str
    node_version: str
    state: str
    message: str
    flavors: _containers.RepeatedCompositeFieldContainer[KubernetesSubstrateFlavor]
    objects: _containers.RepeatedCompositeFieldContainer[KubernetesSubstrateObject]
    join_token_id: str
    version: int
    created_at: _timestamp_pb2.Timestamp
    updated_at: _timestamp_pb2.Timestamp
    deleted_at: _timestamp_pb2.Timestamp
    problem: _operations_pb2.Problem
    def __init__(self, pool_id: _Optional[str] = ..., mode: _Optional[str] = ..., account_id: _Optional[str] = ..., cluster_name: _Optional[str] = ..., location: _Optional[str] = ..., endpoint: _Optional[str] = ..., master_version: _Optional[str] = ..., node_version: _Optional[str] = ..., state: _Optional[str] = ..., message: _Optional[str] = ..., flavors: _Optional[_Iterable[_Union[KubernetesSubstrateFlavor, _Mapping]]] = ..., objects: _Optional[_Iterable[_Union[KubernetesSubstrateObject, _Mapping]]] = ..., join_token_id: _Optional[str] = ..., version: _Optional[int] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., updated_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., deleted_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., problem: _Optional[_Union[_operations_pb2.Problem, _Mapping]] = ...) -> None: ...

class KubernetesSubstrateFlavor(_message.Message):
    __slots__ = ("name", "node_pool", "state", "desired_nodes", "provider_nodes", "joined_nodes")
    NAME_FIELD_NUMBER: _ClassVar[int]
    NODE_POOL_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    DESIRED_NODES_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_NODES_FIELD_NUMBER: _ClassVar[int]
    JOINED_NODES_FIELD_NUMBER: _ClassVar[int]
    name: str
    node_pool: str
    state: str
    desired_nodes: int
    provider_nodes: int
    joined_nodes: int
    def __init__(self, name: _Optional[str] = ..., node_pool: _Optional[str] = ..., state: _Optional[str] = ..., desired_nodes: _Optional[int] = ..., provider_nodes: _Optional[int] = ..., joined_nodes: _Optional[int] = ...) -> None: ...

class KubernetesSubstrateObject(_message.Message):
    __slots__ = ("kind", "namespace", "name")
    KIND_FIELD_NUMBER: _ClassVar[int]
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    kind: str
    namespace: str
    name: str
    def __init__(self, kind: _Optional[str] = ..., namespace: _Optional[str] = ..., name: _Optional[str] = ...) -> None: ...

class ListKubernetesSubstratesRequest(_message.Message):
    __slots__ = ("pool_id",)
    POOL_ID_FIELD_NUMBER: _ClassVar[int]
    pool_id: str
    def __init__(self, pool_id: _Optional[str] = ...) -> None: ...

class ListKubernetesSubstratesResponse(_message.Message):
    __slots__ = ("substrates",)
    SUBSTRATES_FIELD_NUMBER: _ClassVar[int]
    substrates: _containers.RepeatedCompositeFieldContainer[KubernetesSubstrate]
    def __init__(self, substrates: _Optional[_Iterable[_Union[KubernetesSubstrate, _Mapping]]] = ...) -> None: ...

class GetKubernetesSubstrateRequest(_message.Message):
    __slots__ = ("pool_id",)
    POOL_ID_FIELD_NUMBER: _ClassVar[int]
    pool_id: str
    def __init__(self, pool_id: _Optional[str] = ...) -> None: ...
