from better_compute_client.gen.bettercompute.compute.v1 import nodes_pb2 as _nodes_pb2
from better_compute_client.gen.bettercompute.options.v1 import options_pb2 as _options_pb2
from better_compute_client.gen.buf.validate import validate_pb2 as _validate_pb2
from google.api import annotations_pb2 as _annotations_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Pool(_message.Message):
    __slots__ = ("id", "tenant_id", "name", "description", "provider", "provider_account_id", "billing_mode", "state", "capabilities", "zones", "regions", "own", "offer", "nodes")
    ID_FIELD_NUMBER: _ClassVar[int]
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_ACCOUNT_ID_FIELD_NUMBER: _ClassVar[int]
    BILLING_MODE_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    CAPABILITIES_FIELD_NUMBER: _ClassVar[int]
    ZONES_FIELD_NUMBER: _ClassVar[int]
    REGIONS_FIELD_NUMBER: _ClassVar[int]
    OWN_FIELD_NUMBER: _ClassVar[int]
    OFFER_FIELD_NUMBER: _ClassVar[int]
    NODES_FIELD_NUMBER: _ClassVar[int]
    id: str
    tenant_id: str
    name: str
    description: str
    provider: str
    provider_account_id: str
    billing_mode: str
    state: str
    capabilities: _containers.RepeatedScalarFieldContainer[str]
    zones: _containers.RepeatedScalarFieldContainer[str]
    regions: _containers.RepeatedScalarFieldContainer[str]
    own: bool
    offer: PoolOffer
    nodes: _nodes_pb2.PoolNodeSummary
    def __init__(self, id: _Optional[str] = ..., tenant_id: _Optional[str] = ..., name: _Optional[str] = ..., description: _Optional[str] = ..., provider: _Optional[str] = ..., provider_account_id: _Optional[str] = ..., billing_mode: _Optional[str] = ..., state: _Optional[str] = ..., capabilities: _Optional[_Iterable[str]] = ..., zones: _Optional[_Iterable[str]] = ..., regions: _Optional[_Iterable[str]] = ..., own: _Optional[bool] = ..., offer: _Optional[_Union[PoolOffer, _Mapping]] = ..., nodes: _Optional[_Union[_nodes_pb2.PoolNodeSummary, _Mapping]] = ...) -> None: ...

class PoolOffer(_message.Message):
    __slots__ = ("state", "excluded_regions")
    STATE_FIELD_NUMBER: _ClassVar[int]
    EXCLUDED_REGIONS_FIELD_NUMBER: _ClassVar[int]
    state: str
    excluded_regions: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, state: _Optional[str] = ..., excluded_regions: _Optional[_Iterable[str]] = ...) -> None: ...

class ListPoolsRequest(_message.Message):
    __slots__ = ("tenant_id",)
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    def __init__(self, tenant_id: _Optional[str] = ...) -> None: ...

class ListPoolsResponse(_message.Message):
    __slots__ = ("pools",)
    POOLS_FIELD_NUMBER: _ClassVar[int]
    pools: _containers.RepeatedCompositeFieldContainer[Pool]
    def __init__(self, pools: _Optional[_Iterable[_Union[Pool, _Mapping]]] = ...) -> None: ...

class GetPoolRequest(_message.Message):
    __slots__ = ("tenant_id", "pool_id")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    POOL_ID_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    pool_id: str
    def __init__(self, tenant_id: _Optional[str] = ..., pool_id: _Optional[str] = ...) -> None: ...

class CheckPlacementRequest(_message.Message):
    __slots__ = ("tenant_id", "pool_id", "capability", "location", "resource_kind")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    POOL_ID_FIELD_NUMBER: _ClassVar[int]
    CAPABILITY_FIELD_NUMBER: _ClassVar[int]
    LOCATION_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_KIND_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    pool_id: str
    capability: str
    location: str
    resource_kind: str
    def __init__(self, tenant_id: _Optional[str] = ..., pool_id: _Optional[str] = ..., capability: _Optional[str] = ..., location: _Optional[str] = ..., resource_kind: _Optional[str] = ...) -> None: ...

class CheckPlacementResponse(_message.Message):
    __slots__ = ("ok", "zone", "region")
    OK_FIELD_NUMBER: _ClassVar[int]
    ZONE_FIELD_NUMBER: _ClassVar[int]
    REGION_FIELD_NUMBER: _ClassVar[int]
    ok: bool
    zone: str
    region: str
    def __init__(self, ok: _Optional[bool] = ..., zone: _Optional[str] = ..., region: _Optional[str] = ...) -> None: ...
