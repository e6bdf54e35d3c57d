import datetime

from better_compute_client.gen.bettercompute.compute.v1 import operations_pb2 as _operations_pb2
from better_compute_client.gen.bettercompute.compute.v1 import plans_pb2 as _plans_pb2
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

class KubernetesCluster(_message.Message):
    __slots__ = ("id", "tenant_id", "project_id", "pool_id", "name", "description", "mode", "location", "release_channel", "requested_version", "network_id", "authorized_networks", "private_nodes", "node_pools", "state", "message", "endpoint", "kubernetes_version", "node_version", "provider_name", "version", "created_at", "updated_at", "deleted_at", "drift", "problem")
    ID_FIELD_NUMBER: _ClassVar[int]
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    PROJECT_ID_FIELD_NUMBER: _ClassVar[int]
    POOL_ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    MODE_FIELD_NUMBER: _ClassVar[int]
    LOCATION_FIELD_NUMBER: _ClassVar[int]
    RELEASE_CHANNEL_FIELD_NUMBER: _ClassVar[int]
    REQUESTED_VERSION_FIELD_NUMBER: _ClassVar[int]
    NETWORK_ID_FIELD_NUMBER: _ClassVar[int]
    AUTHORIZED_NETWORKS_FIELD_NUMBER: _ClassVar[int]
    PRIVATE_NODES_FIELD_NUMBER: _ClassVar[int]
    NODE_POOLS_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    ENDPOINT_FIELD_NUMBER: _ClassVar[int]
    KUBERNETES_VERSION_FIELD_NUMBER: _ClassVar[int]
    NODE_VERSION_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_NAME_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    UPDATED_AT_FIELD_NUMBER: _ClassVar[int]
    DELETED_AT_FIELD_NUMBER: _ClassVar[int]
    DRIFT_FIELD_NUMBER: _ClassVar[int]
    PROBLEM_FIELD_NUMBER: _ClassVar[int]
    id: str
    tenant_id: str
    project_id: str
    pool_id: str
    name: str
    description: str
    mode: str
    location: str
    release_channel: str
    requested_version: str
    network_id: str
    authorized_networks: _containers.RepeatedScalarFieldContainer[str]
    private_nodes: bool
    node_pools: _containers.RepeatedCompositeFieldContainer[KubernetesNodePool]
    state: str
    message: str
    endpoint: str
    kubernetes_version: str
    node_version: str
    provider_name: str
    version: int
    created_at: _timestamp_pb2.Timestamp
    updated_at: _timestamp_pb2.Timestamp
    deleted_at: _timestamp_pb2.Timestamp
    drift: _containers.RepeatedCompositeFieldContainer[_plans_pb2.Drift]
    problem: _operations_pb2.Problem
    def __init__(self, id: _Optional[str] = ..., tenant_id: _Optional[str] = ..., project_id: _Optional[str] = ..., pool_id: _Optional[str] = ..., name: _Optional[str] = ..., description: _Optional[str] = ..., mode: _Optional[str] = ..., location: _Optional[str] = ..., release_channel: _Optional[str] = ..., requested_version: _Optional[str] = ..., network_id: _Optional[str] = ..., authorized_networks: _Optional[_Iterable[str]] = ..., private_nodes: _Optional[bool] = ..., node_pools: _Optional[_Iterable[_Union[KubernetesNodePool, _Mapping]]] = ..., state: _Optional[str] = ..., message: _Optional[str] = ..., endpoint: _Optional[str] = ..., kubernetes_version: _Optional[str] = ..., node_version: _Optional[str] = ..., provider_name: _Optional[str] = ..., version: _Optional[int] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., updated_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., deleted_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., drift: _Optional[_Iterable[_Union[_plans_pb2.Drift, _Mapping]]] = ..., problem: _Optional[_Union[_operations_pb2.Problem, _Mapping]] = ...) -> None: ...

class KubernetesNodePool(_message.Message):
    __slots__ = ("id", "tenant_id", "cluster_id", "name", "machine_type", "node_count", "autoscaling", "disk_gib", "disk_type", "spot", "accelerators", "zones", "labels", "taints", "current_node_count", "state", "message", "version", "created_at", "updated_at", "deleted_at", "drift", "problem")
    class LabelsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    ID_FIELD_NUMBER: _ClassVar[int]
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    CLUSTER_ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    MACHINE_TYPE_FIELD_NUMBER: _ClassVar[int]
    NODE_COUNT_FIELD_NUMBER: _ClassVar[int]
    AUTOSCALING_FIELD_NUMBER: _ClassVar[int]
    DISK_GIB_FIELD_NUMBER: _ClassVar[int]
    DISK_TYPE_FIELD_NUMBER: _ClassVar[int]
    SPOT_FIELD_NUMBER: _ClassVar[int]
    ACCELERATORS_FIELD_NUMBER: _ClassVar[int]
    ZONES_FIELD_NUMBER: _ClassVar[int]
    LABELS_FIELD_NUMBER: _ClassVar[int]
    TAINTS_FIELD_NUMBER: _ClassVar[int]
    CURRENT_NODE_COUNT_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    UPDATED_AT_FIELD_NUMBER: _ClassVar[int]
    DELETED_AT_FIELD_NUMBER: _ClassVar[int]
    DRIFT_FIELD_NUMBER: _ClassVar[int]
    PROBLEM_FIELD_NUMBER: _ClassVar[int]
    id: str
    tenant_id: str
    cluster_id: str
    name: str
    machine_type: str
    node_count: int
    autoscaling: KubernetesAutoscaling
    disk_gib: int
    disk_type: str
    spot: bool
    accelerators: KubernetesAccelerators
    zones: _containers.RepeatedScalarFieldContainer[str]
    labels: _containers.ScalarMap[str, str]
    taints: _containers.RepeatedCompositeFieldContainer[KubernetesTaint]
    current_node_count: int
    state: str
    message: str
    version: int
    created_at: _timestamp_pb2.Timestamp
    updated_at: _timestamp_pb2.Timestamp
    deleted_at: _timestamp_pb2.Timestamp
    drift: _containers.RepeatedCompositeFieldContainer[_plans_pb2.Drift]
    problem: _operations_pb2.Problem
    def __init__(self, id: _Optional[str] = ..., tenant_id: _Optional[str] = ..., cluster_id: _Optional[str] = ..., name: _Optional[str] = ..., machine_type: _Optional[str] = ..., node_count: _Optional[int] = ..., autoscaling: _Optional[_Union[KubernetesAutoscaling, _Mapping]] = ..., disk_gib: _Optional[int] = ..., disk_type: _Optional[str] = ..., spot: _Optional[bool] = ..., accelerators: _Optional[_Union[KubernetesAccelerators, _Mapping]] = ..., zones: _Optional[_Iterable[str]] = ..., labels: _Optional[_Mapping[str, str]] = ..., taints: _Optional[_Iterable[_Union[KubernetesTaint, _Mapping]]] = ..., current_node_count: _Optional[int] = ..., state: _Optional[str] = ..., message: _Optional[str] = ..., version: _Optional[int] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., updated_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., deleted_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., drift: _Optional[_Iterable[_Union[_plans_pb2.Drift, _Mapping]]] = ..., problem: _Optional[_Union[_operations_pb2.Problem, _Mapping]] = ...) -> None: ...

class KubernetesAutoscaling(_message.Message):
    __slots__ = ("min_nodes", "max_nodes")
    MIN_NODES_FIELD_NUMBER: _ClassVar[int]
    MAX_NODES_FIELD_NUMBER: _ClassVar[int]
    min_nodes: int
    max_nodes: int
    def __init__(self, min_nodes: _Optional[int] = ..., max_nodes: _Optional[int] = ...) -> None: ...

class KubernetesAccelerators(_message.Message):
    __slots__ = ("type", "count")
    TYPE_FIELD_NUMBER: _ClassVar[int]
    COUNT_FIELD_NUMBER: _ClassVar[int]
    type: str
    count: int
    def __init__(self, type: _Optional[str] = ..., count: _Optional[int] = ...) -> None: ...

class KubernetesTaint(_message.Message):
    __slots__ = ("key", "value", "effect")
    KEY_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    EFFECT_FIELD_NUMBER: _ClassVar[int]
    key: str
    value: str
    effect: str
    def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ..., effect: _Optional[str] = ...) -> None: ...

class KubernetesNodePoolSpec(_message.Message):
    __slots__ = ("name", "machine_type", "node_count", "autoscaling", "disk_gib", "disk_type", "spot", "accelerators", "zones", "labels", "taints")
    class LabelsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    NAME_FIELD_NUMBER: _ClassVar[int]
    MACHINE_TYPE_FIELD_NUMBER: _ClassVar[int]
    NODE_COUNT_FIELD_NUMBER: _ClassVar[int]
    AUTOSCALING_FIELD_NUMBER: _ClassVar[int]
    DISK_GIB_FIELD_NUMBER: _ClassVar[int]
    DISK_TYPE_FIELD_NUMBER: _ClassVar[int]
    SPOT_FIELD_NUMBER: _ClassVar[int]
    ACCELERATORS_FIELD_NUMBER: _ClassVar[int]
    ZONES_FIELD_NUMBER: _ClassVar[int]
    LABELS_FIELD_NUMBER: _ClassVar[int]
    TAINTS_FIELD_NUMBER: _ClassVar[int]
    name: str
    machine_type: str
    node_count: int
    autoscaling: KubernetesAutoscaling
    disk_gib: int
    disk_type: str
    spot: bool
    accelerators: KubernetesAccelerators
    zones: _containers.RepeatedScalarFieldContainer[str]
    labels: _containers.ScalarMap[str, str]
    taints: _containers.RepeatedCompositeFieldContainer[KubernetesTaint]
    def __init__(self, name: _Optional[str] = ..., machine_type: _Optional[str] = ..., node_count: _Optional[int] = ..., autoscaling: _Optional[_Union[KubernetesAutoscaling, _Mapping]] = ..., disk_gib: _Optional[int] = ..., disk_type: _Optional[str] = ..., spot: _Optional[bool] = ..., accelerators: _Optional[_Union[KubernetesAccelerators, _Mapping]] = ..., zones: _Optional[_Iterable[str]] = ..., labels: _Optional[_Mapping[str, str]] = ..., taints: _Optional[_Iterable[_Union[KubernetesTaint, _Mapping]]] = ...) -> None: ...

class CreateKubernetesClusterRequest(_message.Message):
    __slots__ = ("tenant_id", "project_id", "pool_id", "name", "mode", "location", "release_channel", "version", "network_id", "authorized_networks", "private_nodes", "description", "node_pools", "idempotency_key")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    PROJECT_ID_FIELD_NUMBER: _ClassVar[int]
    POOL_ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    MODE_FIELD_NUMBER: _ClassVar[int]
    LOCATION_FIELD_NUMBER: _ClassVar[int]
    RELEASE_CHANNEL_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    NETWORK_ID_FIELD_NUMBER: _ClassVar[int]
    AUTHORIZED_NETWORKS_FIELD_NUMBER: _ClassVar[int]
    PRIVATE_NODES_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    NODE_POOLS_FIELD_NUMBER: _ClassVar[int]
    IDEMPOTENCY_KEY_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    project_id: str
    pool_id: str
    name: str
    mode: str
    location: str
    release_channel: str
    version: str
    network_id: str
    authorized_networks: _containers.RepeatedScalarFieldContainer[str]
    private_nodes: bool
    description: str
    node_pools: _containers.RepeatedCompositeFieldContainer[KubernetesNodePoolSpec]
    idempotency_key: str
    def __init__(self, tenant_id: _Optional[str] = ..., project_id: _Optional[str] = ..., pool_id: _Optional[str] = ..., name: _Optional[str] = ..., mode: _Optional[str] = ..., location: _Optional[str] = ..., release_channel: _Optional[str] = ..., version: _Optional[str] = ..., network_id: _Optional[str] = ..., authorized_networks: _Optional[_Iterable[str]] = ..., private_nodes: _Optional[bool] = ..., description: _Optional[str] = ..., node_pools: _Optional[_Iterable[_Union[KubernetesNodePoolSpec, _Mapping]]] = ..., idempotency_key: _Optional[str] = ...) -> None: ...

class ListKubernetesClustersRequest(_message.Message):
    __slots__ = ("tenant_id", "pool_id", "project_id", "include_deleted", "page_size", "page_token")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    POOL_ID_FIELD_NUMBER: _ClassVar[int]
    PROJECT_ID_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_DELETED_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    pool_id: str
    project_id: str
    include_deleted: bool
    page_size: int
    page_token: str
    def __init__(self, tenant_id: _Optional[str] = ..., pool_id: _Optional[str] = ..., project_id: _Optional[str] = ..., include_deleted: _Optional[bool] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class ListKubernetesClustersResponse(_message.Message):
    __slots__ = ("clusters", "next_page_token")
    CLUSTERS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    clusters: _containers.RepeatedCompositeFieldContainer[KubernetesCluster]
    next_page_token: str
    def __init__(self, clusters: _Optional[_Iterable[_Union[KubernetesCluster, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class GetKubernetesClusterRequest(_message.Message):
    __slots__ = ("tenant_id", "cluster_id")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    CLUSTER_ID_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    cluster_id: str
    def __init__(self, tenant_id: _Optional[str] = ..., cluster_id: _Optional[str] = ...) -> None: ...

class UpdateKubernetesClusterRequest(_message.Message):
    __slots__ = ("tenant_id", "cluster_id", "version", "release_channel", "authorized_networks", "description", "set_authorized_networks", "update_mask", "validate_only")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    CLUSTER_ID_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    RELEASE_CHANNEL_FIELD_NUMBER: _ClassVar[int]
    AUTHORIZED_NETWORKS_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    SET_AUTHORIZED_NETWORKS_FIELD_NUMBER: _ClassVar[int]
    UPDATE_MASK_FIELD_NUMBER: _ClassVar[int]
    VALIDATE_ONLY_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    cluster_id: str
    version: str
    release_channel: str
    authorized_networks: _containers.RepeatedScalarFieldContainer[str]
    description: str
    set_authorized_networks: bool
    update_mask: _field_mask_pb2.FieldMask
    validate_only: bool
    def __init__(self, tenant_id: _Optional[str] = ..., cluster_id: _Optional[str] = ..., version: _Optional[str] = ..., release_channel: _Optional[str] = ..., authorized_networks: _Optional[_Iterable[str]] = ..., description: _Optional[str] = ..., set_authorized_networks: _Optional[bool] = ..., update_mask: _Optional[_Union[_field_mask_pb2.FieldMask, _Mapping]] = ..., validate_only: _Optional[bool] = ...) -> None: ...

class DeleteKubernetesClusterRequest(_message.Message):
    __slots__ = ("tenant_id", "cluster_id", "validate_only", "force")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    CLUSTER_ID_FIELD_NUMBER: _ClassVar[int]
    VALIDATE_ONLY_FIELD_NUMBER: _ClassVar[int]
    FORCE_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    cluster_id: str
    validate_only: bool
    force: bool
    def __init__(self, tenant_id: _Optional[str] = ..., cluster_id: _Optional[str] = ..., validate_only: _Optional[bool] = ..., force: _Optional[bool] = ...) -> None: ...

class PlanKubernetesClusterRequest(_message.Message):
    __slots__ = ("update", "delete")
    UPDATE_FIELD_NUMBER: _ClassVar[int]
    DELETE_FIELD_NUMBER: _ClassVar[int]
    update: UpdateKubernetesClusterRequest
    delete: DeleteKubernetesClusterRequest
    def __init__(self, update: _Optional[_Union[UpdateKubernetesClusterRequest, _Mapping]] = ..., delete: _Optional[_Union[DeleteKubernetesClusterRequest, _Mapping]] = ...) -> None: ...

class KubernetesCredentialsRequest(_message.Message):
    __slots__ = ("tenant_id", "cluster_id", "role", "ttl_seconds")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    CLUSTER_ID_FIELD_NUMBER: _ClassVar[int]
    ROLE_FIELD_NUMBER: _ClassVar[int]
    TTL_SECONDS_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    cluster_id: str
    role: str
    ttl_seconds: int
    def __init__(self, tenant_id: _Optional[str] = ..., cluster_id: _Optional[str] = ..., role: _Optional[str] = ..., ttl_seconds: _Optional[int] = ...) -> None: ...

class KubernetesCredentials(_message.Message):
    __slots__ = ("kubeconfig", "expires_at", "role")
    KUBECONFIG_FIELD_NUMBER: _ClassVar[int]
    EXPIRES_AT_FIELD_NUMBER: _ClassVar[int]
    ROLE_FIELD_NUMBER: _ClassVar[int]
    kubeconfig: str
    expires_at: _timestamp_pb2.Timestamp
    role: str
    def __init__(self, kubeconfig: _Optional[str] = ..., expires_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., role: _Optional[str] = ...) -> None: ...

class KubernetesVersionsRequest(_message.Message):
    __slots__ = ("tenant_id", "pool_id", "location")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    POOL_ID_FIELD_NUMBER: _ClassVar[int]
    LOCATION_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    pool_id: str
    location: str
    def __init__(self, tenant_id: _Optional[str] = ..., pool_id: _Optional[str] = ..., location: _Optional[str] = ...) -> None: ...

class KubernetesVersions(_message.Message):
    __slots__ = ("default_version", "valid_versions", "channels")
    DEFAULT_VERSION_FIELD_NUMBER: _ClassVar[int]
    VALID_VERSIONS_FIELD_NUMBER: _ClassVar[int]
    CHANNELS_FIELD_NUMBER: _ClassVar[int]
    default_version: str
    valid_versions: _containers.RepeatedScalarFieldContainer[str]
    channels: _containers.RepeatedCompositeFieldContainer[KubernetesChannelVersions]
    def __init__(self, default_version: _Optional[str] = ..., valid_versions: _Optional[_Iterable[str]] = ..., channels: _Optional[_Iterable[_Union[KubernetesChannelVersions, _Mapping]]] = ...) -> None: ...

class KubernetesChannelVersions(_message.Message):
    __slots__ = ("channel", "default_version", "valid_versions")
    CHANNEL_FIELD_NUMBER: _ClassVar[int]
    DEFAULT_VERSION_FIELD_NUMBER: _ClassVar[int]
    VALID_VERSIONS_FIELD_NUMBER: _ClassVar[int]
    channel: str
    default_version: str
    valid_versions: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, channel: _Optional[str] = ..., default_version: _Optional[str] = ..., valid_versions: _Optional[_Iterable[str]] = ...) -> None: ...

class CreateKubernetesNodePoolRequest(_message.Message):
    __slots__ = ("tenant_id", "cluster_id", "name", "machine_type", "node_count", "autoscaling", "disk_gib", "disk_type", "spot", "accelerators", "zones", "labels", "taints", "idempotency_key")
    class LabelsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    CLUSTER_ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    MACHINE_TYPE_FIELD_NUMBER: _ClassVar[int]
    NODE_COUNT_FIELD_NUMBER: _ClassVar[int]
    AUTOSCALING_FIELD_NUMBER: _ClassVar[int]
    DISK_GIB_FIELD_NUMBER: _ClassVar[int]
    DISK_TYPE_FIELD_NUMBER: _ClassVar[int]
    SPOT_FIELD_NUMBER: _ClassVar[int]
    ACCELERATORS_FIELD_NUMBER: _ClassVar[int]
    ZONES_FIELD_NUMBER: _ClassVar[int]
    LABELS_FIELD_NUMBER: _ClassVar[int]
    TAINTS_FIELD_NUMBER: _ClassVar[int]
    IDEMPOTENCY_KEY_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    cluster_id: str
    name: str
    machine_type: str
    node_count: int
    autoscaling: KubernetesAutoscaling
    disk_gib: int
    disk_type: str
    spot: bool
    accelerators: KubernetesAccelerators
    zones: _containers.RepeatedScalarFieldContainer[str]
    labels: _containers.ScalarMap[str, str]
    taints: _containers.RepeatedCompositeFieldContainer[KubernetesTaint]
    idempotency_key: str
    def __init__(self, tenant_id: _Optional[str] = ..., cluster_id: _Optional[str] = ..., name: _Optional[str] = ..., machine_type: _Optional[str] = ..., node_count: _Optional[int] = ..., autoscaling: _Optional[_Union[KubernetesAutoscaling, _Mapping]] = ..., disk_gib: _Optional[int] = ..., disk_type: _Optional[str] = ..., spot: _Optional[bool] = ..., accelerators: _Optional[_Union[KubernetesAccelerators, _Mapping]] = ..., zones: _Optional[_Iterable[str]] = ..., labels: _Optional[_Mapping[str, str]] = ..., taints: _Optional[_Iterable[_Union[KubernetesTaint, _Mapping]]] = ..., idempotency_key: _Optional[str] = ...) -> None: ...

class ListKubernetesNodePoolsRequest(_message.Message):
    __slots__ = ("tenant_id", "cluster_id", "include_deleted")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    CLUSTER_ID_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_DELETED_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    cluster_id: str
    include_deleted: bool
    def __init__(self, tenant_id: _Optional[str] = ..., cluster_id: _Optional[str] = ..., include_deleted: _Optional[bool] = ...) -> None: ...

class ListKubernetesNodePoolsResponse(_message.Message):
    __slots__ = ("node_pools",)
    NODE_POOLS_FIELD_NUMBER: _ClassVar[int]
    node_pools: _containers.RepeatedCompositeFieldContainer[KubernetesNodePool]
    def __init__(self, node_pools: _Optional[_Iterable[_Union[KubernetesNodePool, _Mapping]]] = ...) -> None: ...

class GetKubernetesNodePoolRequest(_message.Message):
    __slots__ = ("tenant_id", "cluster_id", "node_pool_id")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    CLUSTER_ID_FIELD_NUMBER: _ClassVar[int]
    NODE_POOL_ID_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    cluster_id: str
    node_pool_id: str
    def __init__(self, tenant_id: _Optional[str] = ..., cluster_id: _Optional[str] = ..., node_pool_id: _Optional[str] = ...) -> None: ...

class UpdateKubernetesNodePoolRequest(_message.Message):
    __slots__ = ("tenant_id", "cluster_id", "node_pool_id", "node_count", "autoscaling", "disable_autoscaling", "labels", "set_labels", "machine_type", "disk_gib", "disk_type", "accelerators", "remove_accelerators", "zones", "set_zones", "taints", "set_taints", "spot", "name", "update_mask", "validate_only")
    class LabelsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    CLUSTER_ID_FIELD_NUMBER: _ClassVar[int]
    NODE_POOL_ID_FIELD_NUMBER: _ClassVar[int]
    NODE_COUNT_FIELD_NUMBER: _ClassVar[int]
    AUTOSCALING_FIELD_NUMBER: _ClassVar[int]
    DISABLE_AUTOSCALING_FIELD_NUMBER: _ClassVar[int]
    LABELS_FIELD_NUMBER: _ClassVar[int]
    SET_LABELS_FIELD_NUMBER: _ClassVar[int]
    MACHINE_TYPE_FIELD_NUMBER: _ClassVar[int]
    DISK_GIB_FIELD_NUMBER: _ClassVar[int]
    DISK_TYPE_FIELD_NUMBER: _ClassVar[int]
    ACCELERATORS_FIELD_NUMBER: _ClassVar[int]
    REMOVE_ACCELERATORS_FIELD_NUMBER: _ClassVar[int]
    ZONES_FIELD_NUMBER: _ClassVar[int]
    SET_ZONES_FIELD_NUMBER: _ClassVar[int]
    TAINTS_FIELD_NUMBER: _ClassVar[int]
    SET_TAINTS_FIELD_NUMBER: _ClassVar[int]
    SPOT_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    UPDATE_MASK_FIELD_NUMBER: _ClassVar[int]
    VALIDATE_ONLY_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    cluster_id: str
    node_pool_id: str
    node_count: int
    autoscaling: KubernetesAutoscaling
    disable_autoscaling: bool
    labels: _containers.ScalarMap[str, str]
    set_labels: bool
    machine_type: str
    disk_gib: int
    disk_type: str
    accelerators: KubernetesAccelerators
    remove_accelerators: bool
    zones: _containers.RepeatedScalarFieldContainer[str]
    set_zones: bool
    taints: _containers.RepeatedCompositeFieldContainer[KubernetesTaint]
    set_taints: bool
    spot: bool
    name: str
    update_mask: _field_mask_pb2.FieldMask
    validate_only: bool
    def __init__(self, tenant_id: _Optional[str] = ..., cluster_id: _Optional[str] = ..., node_pool_id: _Optional[str] = ..., node_count: _Optional[int] = ..., autoscaling: _Optional[_Union[KubernetesAutoscaling, _Mapping]] = ..., disable_autoscaling: _Optional[bool] = ..., labels: _Optional[_Mapping[str, str]] = ..., set_labels: _Optional[bool] = ..., machine_type: _Optional[str] = ..., disk_gib: _Optional[int] = ..., disk_type: _Optional[str] = ..., accelerators: _Optional[_Union[KubernetesAccelerators, _Mapping]] = ..., remove_accelerators: _Optional[bool] = ..., zones: _Optional[_Iterable[str]] = ..., set_zones: _Optional[bool] = ..., taints: _Optional[_Iterable[_Union[KubernetesTaint, _Mapping]]] = ..., set_taints: _Optional[bool] = ..., spot: _Optional[bool] = ..., name: _Optional[str] = ..., update_mask: _Optional[_Union[_field_mask_pb2.FieldMask, _Mapping]] = ..., validate_only: _Optional[bool] = ...) -> None: ...

class DeleteKubernetesNodePoolRequest(_message.Message):
    __slots__ = ("tenant_id", "cluster_id", "node_pool_id", "validate_only")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    CLUSTER_ID_FIELD_NUMBER: _ClassVar[int]
    NODE_POOL_ID_FIELD_NUMBER: _ClassVar[int]
    VALIDATE_ONLY_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    cluster_id: str
    node_pool_id: str
    validate_only: bool
    def __init__(self, tenant_id: _Optional[str] = ..., cluster_id: _Optional[str] = ..., node_pool_id: _Optional[str] = ..., validate_only: _Optional[bool] = ...) -> None: ...

class PlanKubernetesNodePoolRequest(_message.Message):
    __slots__ = ("update", "delete")
    UPDATE_FIELD_NUMBER: _ClassVar[int]
    DELETE_FIELD_NUMBER: _ClassVar[int]
    update: UpdateKubernetesNodePoolRequest
    delete: DeleteKubernetesNodePoolRequest
    def __init__(self, update: _Optional[_Union[UpdateKubernetesNodePoolRequest, _Mapping]] = ..., delete: _Optional[_Union[DeleteKubernetesNodePoolRequest, _Mapping]] = ...) -> None: ...
