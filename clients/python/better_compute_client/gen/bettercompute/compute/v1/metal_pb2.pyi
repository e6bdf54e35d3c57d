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

class MetalBmc(_message.Message):
    __slots__ = ("driver", "address", "username", "password", "ca_certificate", "insecure")
    DRIVER_FIELD_NUMBER: _ClassVar[int]
    ADDRESS_FIELD_NUMBER: _ClassVar[int]
    USERNAME_FIELD_NUMBER: _ClassVar[int]
    PASSWORD_FIELD_NUMBER: _ClassVar[int]
    CA_CERTIFICATE_FIELD_NUMBER: _ClassVar[int]
    INSECURE_FIELD_NUMBER: _ClassVar[int]
    driver: str
    address: str
    username: str
    password: str
    ca_certificate: str
    insecure: bool
    def __init__(self, driver: _Optional[str] = ..., address: _Optional[str] = ..., username: _Optional[str] = ..., password: _Optional[str] = ..., ca_certificate: _Optional[str] = ..., insecure: _Optional[bool] = ...) -> None: ...

class MetalNic(_message.Message):
    __slots__ = ("name", "mac")
    NAME_FIELD_NUMBER: _ClassVar[int]
    MAC_FIELD_NUMBER: _ClassVar[int]
    name: str
    mac: str
    def __init__(self, name: _Optional[str] = ..., mac: _Optional[str] = ...) -> None: ...

class MetalDisk(_message.Message):
    __slots__ = ("name", "size_bytes")
    NAME_FIELD_NUMBER: _ClassVar[int]
    SIZE_BYTES_FIELD_NUMBER: _ClassVar[int]
    name: str
    size_bytes: int
    def __init__(self, name: _Optional[str] = ..., size_bytes: _Optional[int] = ...) -> None: ...

class MetalInventory(_message.Message):
    __slots__ = ("cpus", "cpu_model", "memory_mib", "nics", "disks", "vendor", "model", "serial")
    CPUS_FIELD_NUMBER: _ClassVar[int]
    CPU_MODEL_FIELD_NUMBER: _ClassVar[int]
    MEMORY_MIB_FIELD_NUMBER: _ClassVar[int]
    NICS_FIELD_NUMBER: _ClassVar[int]
    DISKS_FIELD_NUMBER: _ClassVar[int]
    VENDOR_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    SERIAL_FIELD_NUMBER: _ClassVar[int]
    cpus: int
    cpu_model: str
    memory_mib: int
    nics: _containers.RepeatedCompositeFieldContainer[MetalNic]
    disks: _containers.RepeatedCompositeFieldContainer[MetalDisk]
    vendor: str
    model: str
    serial: str
    def __init__(self, cpus: _Optional[int] = ..., cpu_model: _Optional[str] = ..., memory_mib: _Optional[int] = ..., nics: _Optional[_Iterable[_Union[MetalNic, _Mapping]]] = ..., disks: _Optional[_Iterable[_Union[MetalDisk, _Mapping]]] = ..., vendor: _Optional[str] = ..., model: _Optional[str] = ..., serial: _Optional[str] = ...) -> None: ...

class MetalMachine(_message.Message):
    __slots__ = ("id", "pool_id", "name", "labels", "driver", "address", "username", "credentials_set", "ca_certificate", "insecure", "power_state", "provision_state", "previous_state", "deadline", "last_error", "inventory", "image", "created_by", "version", "created_at", "updated_at", "deleted_at", "allowed_verbs", "drift", "problem")
    class LabelsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    ID_FIELD_NUMBER: _ClassVar[int]
    POOL_ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    LABELS_FIELD_NUMBER: _ClassVar[int]
    DRIVER_FIELD_NUMBER: _ClassVar[int]
    ADDRESS_FIELD_NUMBER: _ClassVar[int]
    USERNAME_FIELD_NUMBER: _ClassVar[int]
    CREDENTIALS_SET_FIELD_NUMBER: _ClassVar[int]
    CA_CERTIFICATE_FIELD_NUMBER: _ClassVar[int]
    INSECURE_FIELD_NUMBER: _ClassVar[int]
    POWER_STATE_FIELD_NUMBER: _ClassVar[int]
    PROVISION_STATE_FIELD_NUMBER: _ClassVar[int]
    PREVIOUS_STATE_FIELD_NUMBER: _ClassVar[int]
    DEADLINE_FIELD_NUMBER: _ClassVar[int]
    LAST_ERROR_FIELD_NUMBER: _ClassVar[int]
    INVENTORY_FIELD_NUMBER: _ClassVar[int]
    IMAGE_FIELD_NUMBER: _ClassVar[int]
    CREATED_BY_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    UPDATED_AT_FIELD_NUMBER: _ClassVar[int]
    DELETED_AT_FIELD_NUMBER: _ClassVar[int]
    ALLOWED_VERBS_FIELD_NUMBER: _ClassVar[int]
    DRIFT_FIELD_NUMBER: _ClassVar[int]
    PROBLEM_FIELD_NUMBER: _ClassVar[int]
    id: str
    pool_id: str
    name: str
    labels: _containers.ScalarMap[str, str]
    driver: str
    address: str
    username: str
    credentials_set: bool
    ca_certificate: str
    insecure: bool
    power_state: str
    provision_state: str
    previous_state: str
    deadline: _timestamp_pb2.Timestamp
    last_error: str
    inventory: MetalInventory
    image: str
    created_by: str
    version: int
    created_at: _timestamp_pb2.Timestamp
    updated_at: _timestamp_pb2.Timestamp
    deleted_at: _timestamp_pb2.Timestamp
    allowed_verbs: _containers.RepeatedScalarFieldContainer[str]
    drift: _containers.RepeatedCompositeFieldContainer[_plans_pb2.Drift]
    problem: _operations_pb2.Problem
    def __init__(self, id: _Optional[str] = ..., pool_id: _Optional[str] = ..., name: _Optional[str] = ..., labels: _Optional[_Mapping[str, str]] = ..., driver: _Optional[str] = ..., address: _Optional[str] = ..., username: _Optional[str] = ..., credentials_set: _Optional[bool] = ..., ca_certificate: _Optional[str] = ..., insecure: _Optional[bool] = ..., power_state: _Optional[str] = ..., provision_state: _Optional[str] = ..., previous_state: _Optional[str] = ..., deadline: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., last_error: _Optional[str] = ..., inventory: _Optional[_Union[MetalInventory, _Mapping]] = ..., image: _Optional[str] = ..., created_by: _Optional[str] = ..., version: _Optional[int] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., updated_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., deleted_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., allowed_verbs: _Optional[_Iterable[str]] = ..., drift: _Optional[_Iterable[_Union[_plans_pb2.Drift, _Mapping]]] = ..., problem: _Optional[_Union[_operations_pb2.Problem, _Mapping]] = ...) -> None: ...

class EnrollMetalRequest(_message.Message):
    __slots__ = ("pool_id", "name", "bmc", "labels", "idempotency_key")
    class LabelsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    POOL_ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    BMC_FIELD_NUMBER: _ClassVar[int]
    LABELS_FIELD_NUMBER: _ClassVar[int]
    IDEMPOTENCY_KEY_FIELD_NUMBER: _ClassVar[int]
    pool_id: str
    name: str
    bmc: MetalBmc
    labels: _containers.ScalarMap[str, str]
    idempotency_key: str
    def __init__(self, pool_id: _Optional[str] = ..., name: _Optional[str] = ..., bmc: _Optional[_Union[MetalBmc, _Mapping]] = ..., labels: _Optional[_Mapping[str, str]] = ..., idempotency_key: _Optional[str] = ...) -> None: ...

class ListMetalRequest(_message.Message):
    __slots__ = ("pool_id",)
    POOL_ID_FIELD_NUMBER: _ClassVar[int]
    pool_id: str
    def __init__(self, pool_id: _Optional[str] = ...) -> None: ...

class ListMetalResponse(_message.Message):
    __slots__ = ("machines",)
    MACHINES_FIELD_NUMBER: _ClassVar[int]
    machines: _containers.RepeatedCompositeFieldContainer[MetalMachine]
    def __init__(self, machines: _Optional[_Iterable[_Union[MetalMachine, _Mapping]]] = ...) -> None: ...

class UpdateMetalRequest(_message.Message):
    __slots__ = ("pool_id", "node_id", "name", "labels", "address", "username", "password", "ca_certificate", "insecure", "update_mask", "validate_only")
    class LabelsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    POOL_ID_FIELD_NUMBER: _ClassVar[int]
    NODE_ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    LABELS_FIELD_NUMBER: _ClassVar[int]
    ADDRESS_FIELD_NUMBER: _ClassVar[int]
    USERNAME_FIELD_NUMBER: _ClassVar[int]
    PASSWORD_FIELD_NUMBER: _ClassVar[int]
    CA_CERTIFICATE_FIELD_NUMBER: _ClassVar[int]
    INSECURE_FIELD_NUMBER: _ClassVar[int]
    UPDATE_MASK_FIELD_NUMBER: _ClassVar[int]
    VALIDATE_ONLY_FIELD_NUMBER: _ClassVar[int]
    pool_id: str
    node_id: str
    name: str
    labels: _containers.ScalarMap[str, str]
    address: str
    username: str
    password: str
    ca_certificate: str
    insecure: bool
    update_mask: _field_mask_pb2.FieldMask
    validate_only: bool
    def __init__(self, pool_id: _Optional[str] = ..., node_id: _Optional[str] = ..., name: _Optional[str] = ..., labels: _Optional[_Mapping[str, str]] = ..., address: _Optional[str] = ..., username: _Optional[str] = ..., password: _Optional[str] = ..., ca_certificate: _Optional[str] = ..., insecure: _Optional[bool] = ..., update_mask: _Optional[_Union[_field_mask_pb2.FieldMask, _Mapping]] = ..., validate_only: _Optional[bool] = ...) -> None: ...

class GetMetalRequest(_message.Message):
    __slots__ = ("pool_id", "node_id")
    POOL_ID_FIELD_NUMBER: _ClassVar[int]
    NODE_ID_FIELD_NUMBER: _ClassVar[int]
    pool_id: str
    node_id: str
    def __init__(self, pool_id: _Optional[str] = ..., node_id: _Optional[str] = ...) -> None: ...

class DeleteMetalRequest(_message.Message):
    __slots__ = ("pool_id", "node_id", "validate_only")
    POOL_ID_FIELD_NUMBER: _ClassVar[int]
    NODE_ID_FIELD_NUMBER: _ClassVar[int]
    VALIDATE_ONLY_FIELD_NUMBER: _ClassVar[int]
    pool_id: str
    node_id: str
    validate_only: bool
    def __init__(self, pool_id: _Optional[str] = ..., node_id: _Optional[str] = ..., validate_only: _Optional[bool] = ...) -> None: ...

class PlanMetalRequest(_message.Message):
    __slots__ = ("update", "delete")
    UPDATE_FIELD_NUMBER: _ClassVar[int]
    DELETE_FIELD_NUMBER: _ClassVar[int]
    update: UpdateMetalRequest
    delete: DeleteMetalRequest
    def __init__(self, update: _Optional[_Union[UpdateMetalRequest, _Mapping]] = ..., delete: _Optional[_Union[DeleteMetalRequest, _Mapping]] = ...) -> None: ...

class InspectMetalRequest(_message.Message):
    __slots__ = ("pool_id", "node_id")
    POOL_ID_FIELD_NUMBER: _ClassVar[int]
    NODE_ID_FIELD_NUMBER: _ClassVar[int]
    pool_id: str
    node_id: str
    def __init__(self, pool_id: _Optional[str] = ..., node_id: _Optional[str] = ...) -> None: ...

class CommissionMetalRequest(_message.Message):
    __slots__ = ("pool_id", "node_id")
    POOL_ID_FIELD_NUMBER: _ClassVar[int]
    NODE_ID_FIELD_NUMBER: _ClassVar[int]
    pool_id: str
    node_id: str
    def __init__(self, pool_id: _Optional[str] = ..., node_id: _Optional[str] = ...) -> None: ...

class DeployMetalRequest(_message.Message):
    __slots__ = ("pool_id", "node_id", "image")
    POOL_ID_FIELD_NUMBER: _ClassVar[int]
    NODE_ID_FIELD_NUMBER: _ClassVar[int]
    IMAGE_FIELD_NUMBER: _ClassVar[int]
    pool_id: str
    node_id: str
    image: str
    def __init__(self, pool_id: _Optional[str] = ..., node_id: _Optional[str] = ..., image: _Optional[str] = ...) -> None: ...

class RescueMetalRequest(_message.Message):
    __slots__ = ("pool_id", "node_id", "exit")
    POOL_ID_FIELD_NUMBER: _ClassVar[int]
    NODE_ID_FIELD_NUMBER: _ClassVar[int]
    EXIT_FIELD_NUMBER: _ClassVar[int]
    pool_id: str
    node_id: str
    exit: bool
    def __init__(self, pool_id: _Optional[str] = ..., node_id: _Optional[str] = ..., exit: _Optional[bool] = ...) -> None: ...

class ReleaseMetalRequest(_message.Message):
    __slots__ = ("pool_id", "node_id")
    POOL_ID_FIELD_NUMBER: _ClassVar[int]
    NODE_ID_FIELD_NUMBER: _ClassVar[int]
    pool_id: str
    node_id: str
    def __init__(self, pool_id: _Optional[str] = ..., node_id: _Optional[str] = ...) -> None: ...

class RetireMetalRequest(_message.Message):
    __slots__ = ("pool_id", "node_id")
    POOL_ID_FIELD_NUMBER: _ClassVar[int]
    NODE_ID_FIELD_NUMBER: _ClassVar[int]
    pool_id: str
    node_id: str
    def __init__(self, pool_id: _Optional[str] = ..., node_id: _Optional[str] = ...) -> None: ...
