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

class LoadBalancer(_message.Message):
    __slots__ = ("id", "tenant_id", "project_id", "pool_id", "name", "description", "scope", "region", "subnet_id", "targets", "forwarding", "health_check", "sticky_sessions", "source_ranges", "redirect_http_to_https", "domains", "reached_ids", "state", "message", "address", "address_v6", "provider_name", "version", "created_at", "updated_at", "deleted_at", "drift", "problem")
    ID_FIELD_NUMBER: _ClassVar[int]
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    PROJECT_ID_FIELD_NUMBER: _ClassVar[int]
    POOL_ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    REGION_FIELD_NUMBER: _ClassVar[int]
    SUBNET_ID_FIELD_NUMBER: _ClassVar[int]
    TARGETS_FIELD_NUMBER: _ClassVar[int]
    FORWARDING_FIELD_NUMBER: _ClassVar[int]
    HEALTH_CHECK_FIELD_NUMBER: _ClassVar[int]
    STICKY_SESSIONS_FIELD_NUMBER: _ClassVar[int]
    SOURCE_RANGES_FIELD_NUMBER: _ClassVar[int]
    REDIRECT_HTTP_TO_HTTPS_FIELD_NUMBER: _ClassVar[int]
    DOMAINS_FIELD_NUMBER: _ClassVar[int]
    REACHED_IDS_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    ADDRESS_FIELD_NUMBER: _ClassVar[int]
    ADDRESS_V6_FIELD_NUMBER: _ClassVar[int]
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
    scope: str
    region: str
    subnet_id: str
    targets: LoadBalancerTargets
    forwarding: _containers.RepeatedCompositeFieldContainer[LoadBalancerForwardingRule]
    health_check: LoadBalancerHealthCheck
    sticky_sessions: LoadBalancerStickySessions
    source_ranges: LoadBalancerSourceRanges
    redirect_http_to_https: bool
    domains: _containers.RepeatedCompositeFieldContainer[LoadBalancerDomain]
    reached_ids: _containers.RepeatedScalarFieldContainer[str]
    state: str
    message: str
    address: str
    address_v6: str
    provider_name: str
    version: int
    created_at: _timestamp_pb2.Timestamp
    updated_at: _timestamp_pb2.Timestamp
    deleted_at: _timestamp_pb2.Timestamp
    drift: _containers.RepeatedCompositeFieldContainer[_plans_pb2.Drift]
    problem: _operations_pb2.Problem
    def __init__(self, id: _Optional[str] = ..., tenant_id: _Optional[str] = ..., project_id: _Optional[str] = ..., pool_id: _Optional[str] = ..., name: _Optional[str] = ..., description: _Optional[str] = ..., scope: _Optional[str] = ..., region: _Optional[str] = ..., subnet_id: _Optional[str] = ..., targets: _Optional[_Union[LoadBalancerTargets, _Mapping]] = ..., forwarding: _Optional[_Iterable[_Union[LoadBalancerForwardingRule, _Mapping]]] = ..., health_check: _Optional[_Union[LoadBalancerHealthCheck, _Mapping]] = ..., sticky_sessions: _Optional[_Union[LoadBalancerStickySessions, _Mapping]] = ..., source_ranges: _Optional[_Union[LoadBalancerSourceRanges, _Mapping]] = ..., redirect_http_to_https: _Optional[bool] = ..., domains: _Optional[_Iterable[_Union[LoadBalancerDomain, _Mapping]]] = ..., reached_ids: _Optional[_Iterable[str]] = ..., state: _Optional[str] = ..., message: _Optional[str] = ..., address: _Optional[str] = ..., address_v6: _Optional[str] = ..., provider_name: _Optional[str] = ..., version: _Optional[int] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., updated_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., deleted_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., drift: _Optional[_Iterable[_Union[_plans_pb2.Drift, _Mapping]]] = ..., problem: _Optional[_Union[_operations_pb2.Problem, _Mapping]] = ...) -> None: ...

class LoadBalancerTargets(_message.Message):
    __slots__ = ("pool", "instance_ids", "load_balancer_ids")
    POOL_FIELD_NUMBER: _ClassVar[int]
    INSTANCE_IDS_FIELD_NUMBER: _ClassVar[int]
    LOAD_BALANCER_IDS_FIELD_NUMBER: _ClassVar[int]
    pool: bool
    instance_ids: _containers.RepeatedScalarFieldContainer[str]
    load_balancer_ids: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, pool: _Optional[bool] = ..., instance_ids: _Optional[_Iterable[str]] = ..., load_balancer_ids: _Optional[_Iterable[str]] = ...) -> None: ...

class LoadBalancerForwardingRule(_message.Message):
    __slots__ = ("entry_protocol", "entry_port", "target_protocol", "target_port", "certificate_id", "tls_passthrough")
    ENTRY_PROTOCOL_FIELD_NUMBER: _ClassVar[int]
    ENTRY_PORT_FIELD_NUMBER: _ClassVar[int]
    TARGET_PROTOCOL_FIELD_NUMBER: _ClassVar[int]
    TARGET_PORT_FIELD_NUMBER: _ClassVar[int]
    CERTIFICATE_ID_FIELD_NUMBER: _ClassVar[int]
    TLS_PASSTHROUGH_FIELD_NUMBER: _ClassVar[int]
    entry_protocol: str
    entry_port: int
    target_protocol: str
    target_port: int
    certificate_id: str
    tls_passthrough: bool
    def __init__(self, entry_protocol: _Optional[str] = ..., entry_port: _Optional[int] = ..., target_protocol: _Optional[str] = ..., target_port: _Optional[int] = ..., certificate_id: _Optional[str] = ..., tls_passthrough: _Optional[bool] = ...) -> None: ...

class LoadBalancerHealthCheck(_message.Message):
    __slots__ = ("protocol", "port", "path", "interval_seconds", "timeout_seconds", "healthy_threshold", "unhealthy_threshold")
    PROTOCOL_FIELD_NUMBER: _ClassVar[int]
    PORT_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    INTERVAL_SECONDS_FIELD_NUMBER: _ClassVar[int]
    TIMEOUT_SECONDS_FIELD_NUMBER: _ClassVar[int]
    HEALTHY_THRESHOLD_FIELD_NUMBER: _ClassVar[int]
    UNHEALTHY_THRESHOLD_FIELD_NUMBER: _ClassVar[int]
    protocol: str
    port: int
    path: str
    interval_seconds: int
    timeout_seconds: int
    healthy_threshold: int
    unhealthy_threshold: int
    def __init__(self, protocol: _Optional[str] = ..., port: _Optional[int] = ..., path: _Optional[str] = ..., interval_seconds: _Optional[int] = ..., timeout_seconds: _Optional[int] = ..., healthy_threshold: _Optional[int] = ..., unhealthy_threshold: _Optional[int] = ...) -> None: ...

class LoadBalancerStickySessions(_message.Message):
    __slots__ = ("cookie_name", "ttl_seconds")
    COOKIE_NAME_FIELD_NUMBER: _ClassVar[int]
    TTL_SECONDS_FIELD_NUMBER: _ClassVar[int]
    cookie_name: str
    ttl_seconds: int
    def __init__(self, cookie_name: _Optional[str] = ..., ttl_seconds: _Optional[int] = ...) -> None: ...

class LoadBalancerSourceRanges(_message.Message):
    __slots__ = ("allow", "deny")
    ALLOW_FIELD_NUMBER: _ClassVar[int]
    DENY_FIELD_NUMBER: _ClassVar[int]
    allow: _containers.RepeatedScalarFieldContainer[str]
    deny: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, allow: _Optional[_Iterable[str]] = ..., deny: _Optional[_Iterable[str]] = ...) -> None: ...

class LoadBalancerDomain(_message.Message):
    __slots__ = ("name", "certificate_id")
    NAME_FIELD_NUMBER: _ClassVar[int]
    CERTIFICATE_ID_FIELD_NUMBER: _ClassVar[int]
    name: str
    certificate_id: str
    def __init__(self, name: _Optional[str] = ..., certificate_id: _Optional[str] = ...) -> None: ...

class CreateLoadBalancerRequest(_message.Message):
    __slots__ = ("tenant_id", "project_id", "pool_id", "name", "description", "scope", "region", "subnet_id", "targets", "forwarding", "health_check", "sticky_sessions", "source_ranges", "redirect_http_to_https", "domains", "idempotency_key")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    PROJECT_ID_FIELD_NUMBER: _ClassVar[int]
    POOL_ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    REGION_FIELD_NUMBER: _ClassVar[int]
    SUBNET_ID_FIELD_NUMBER: _ClassVar[int]
    TARGETS_FIELD_NUMBER: _ClassVar[int]
    FORWARDING_FIELD_NUMBER: _ClassVar[int]
    HEALTH_CHECK_FIELD_NUMBER: _ClassVar[int]
    STICKY_SESSIONS_FIELD_NUMBER: _ClassVar[int]
    SOURCE_RANGES_FIELD_NUMBER: _ClassVar[int]
    REDIRECT_HTTP_TO_HTTPS_FIELD_NUMBER: _ClassVar[int]
    DOMAINS_FIELD_NUMBER: _ClassVar[int]
    IDEMPOTENCY_KEY_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    project_id: str
    pool_id: str
    name: str
    description: str
    scope: str
    region: str
    subnet_id: str
    targets: LoadBalancerTargets
    forwarding: _containers.RepeatedCompositeFieldContainer[LoadBalancerForwardingRule]
    health_check: LoadBalancerHealthCheck
    sticky_sessions: LoadBalancerStickySessions
    source_ranges: LoadBalancerSourceRanges
    redirect_http_to_https: bool
    domains: _containers.RepeatedCompositeFieldContainer[LoadBalancerDomain]
    idempotency_key: str
    def __init__(self, tenant_id: _Optional[str] = ..., project_id: _Optional[str] = ..., pool_id: _Optional[str] = ..., name: _Optional[str] = ..., description: _Optional[str] = ..., scope: _Optional[str] = ..., region: _Optional[str] = ..., subnet_id: _Optional[str] = ..., targets: _Optional[_Union[LoadBalancerTargets, _Mapping]] = ..., forwarding: _Optional[_Iterable[_Union[LoadBalancerForwardingRule, _Mapping]]] = ..., health_check: _Optional[_Union[LoadBalancerHealthCheck, _Mapping]] = ..., sticky_sessions: _Optional[_Union[LoadBalancerStickySessions, _Mapping]] = ..., source_ranges: _Optional[_Union[LoadBalancerSourceRanges, _Mapping]] = ..., redirect_http_to_https: _Optional[bool] = ..., domains: _Optional[_Iterable[_Union[LoadBalancerDomain, _Mapping]]] = ..., idempotency_key: _Optional[str] = ...) -> None: ...

class ListLoadBalancersRequest(_message.Message):
    __slots__ = ("tenant_id", "pool_id", "project_id", "include_deleted")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    POOL_ID_FIELD_NUMBER: _ClassVar[int]
    PROJECT_ID_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_DELETED_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    pool_id: str
    project_id: str
    include_deleted: bool
    def __init__(self, tenant_id: _Optional[str] = ..., pool_id: _Optional[str] = ..., project_id: _Optional[str] = ..., include_deleted: _Optional[bool] = ...) -> None: ...

class ListLoadBalancersResponse(_message.Message):
    __slots__ = ("load_balancers",)
    LOAD_BALANCERS_FIELD_NUMBER: _ClassVar[int]
    load_balancers: _containers.RepeatedCompositeFieldContainer[LoadBalancer]
    def __init__(self, load_balancers: _Optional[_Iterable[_Union[LoadBalancer, _Mapping]]] = ...) -> None: ...

class GetLoadBalancerRequest(_message.Message):
    __slots__ = ("tenant_id", "load_balancer_id")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    LOAD_BALANCER_ID_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    load_balancer_id: str
    def __init__(self, tenant_id: _Optional[str] = ..., load_balancer_id: _Optional[str] = ...) -> None: ...

class UpdateLoadBalancerRequest(_message.Message):
    __slots__ = ("tenant_id", "load_balancer_id", "targets", "forwarding", "health_check", "sticky_sessions", "source_ranges", "redirect_http_to_https", "domains", "set_domains", "clear_sticky_sessions", "scope", "region", "pool_id", "subnet_id", "update_mask", "validate_only")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    LOAD_BALANCER_ID_FIELD_NUMBER: _ClassVar[int]
    TARGETS_FIELD_NUMBER: _ClassVar[int]
    FORWARDING_FIELD_NUMBER: _ClassVar[int]
    HEALTH_CHECK_FIELD_NUMBER: _ClassVar[int]
    STICKY_SESSIONS_FIELD_NUMBER: _ClassVar[int]
    SOURCE_RANGES_FIELD_NUMBER: _ClassVar[int]
    REDIRECT_HTTP_TO_HTTPS_FIELD_NUMBER: _ClassVar[int]
    DOMAINS_FIELD_NUMBER: _ClassVar[int]
    SET_DOMAINS_FIELD_NUMBER: _ClassVar[int]
    CLEAR_STICKY_SESSIONS_FIELD_NUMBER: _ClassVar[int]
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    REGION_FIELD_NUMBER: _ClassVar[int]
    POOL_ID_FIELD_NUMBER: _ClassVar[int]
    SUBNET_ID_FIELD_NUMBER: _ClassVar[int]
    UPDATE_MASK_FIELD_NUMBER: _ClassVar[int]
    VALIDATE_ONLY_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    load_balancer_id: str
    targets: LoadBalancerTargets
    forwarding: _containers.RepeatedCompositeFieldContainer[LoadBalancerForwardingRule]
    health_check: LoadBalancerHealthCheck
    sticky_sessions: LoadBalancerStickySessions
    source_ranges: LoadBalancerSourceRanges
    redirect_http_to_https: bool
    domains: _containers.RepeatedCompositeFieldContainer[LoadBalancerDomain]
    set_domains: bool
    clear_sticky_sessions: bool
    scope: str
    region: str
    pool_id: str
    subnet_id: str
    update_mask: _field_mask_pb2.FieldMask
    validate_only: bool
    def __init__(self, tenant_id: _Optional[str] = ..., load_balancer_id: _Optional[str] = ..., targets: _Optional[_Union[LoadBalancerTargets, _Mapping]] = ..., forwarding: _Optional[_Iterable[_Union[LoadBalancerForwardingRule, _Mapping]]] = ..., health_check: _Optional[_Union[LoadBalancerHealthCheck, _Mapping]] = ..., sticky_sessions: _Optional[_Union[LoadBalancerStickySessions, _Mapping]] = ..., source_ranges: _Optional[_Union[LoadBalancerSourceRanges, _Mapping]] = ..., redirect_http_to_https: _Optional[bool] = ..., domains: _Optional[_Iterable[_Union[LoadBalancerDomain, _Mapping]]] = ..., set_domains: _Optional[bool] = ..., clear_sticky_sessions: _Optional[bool] = ..., scope: _Optional[str] = ..., region: _Optional[str] = ..., pool_id: _Optional[str] = ..., subnet_id: _Optional[str] = ..., update_mask: _Optional[_Union[_field_mask_pb2.FieldMask, _Mapping]] = ..., validate_only: _Optional[bool] = ...) -> None: ...

class DeleteLoadBalancerRequest(_message.Message):
    __slots__ = ("tenant_id", "load_balancer_id", "validate_only", "force")
    TENANT_ID_FIELD_NUMBER: _ClassVar[int]
    LOAD_BALANCER_ID_FIELD_NUMBER: _ClassVar[int]
    VALIDATE_ONLY_FIELD_NUMBER: _ClassVar[int]
    FORCE_FIELD_NUMBER: _ClassVar[int]
    tenant_id: str
    load_balancer_id: str
    validate_only: bool
    force: bool
    def __init__(self, tenant_id: _Optional[str] = ..., load_balancer_id: _Optional[str] = ..., validate_only: _Optional[bool] = ..., force: _Optional[bool] = ...) -> None: ...

class PlanLoadBalancerRequest(_message.Message):
    __slots__ = ("update", "delete")
    UPDATE_FIELD_NUMBER: _ClassVar[int]
    DELETE_FIELD_NUMBER: _ClassVar[int]
    update: UpdateLoadBalancerRequest
    delete: DeleteLoadBalancerRequest
    def __init__(self, update: _Optional[_Union[UpdateLoadBalancerRequest, _Mapping]] = ..., delete: _Optional[_Union[DeleteLoadBalancerRequest, _Mapping]] = ...) -> None: ...
