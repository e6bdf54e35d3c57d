from google.protobuf import descriptor_pb2 as _descriptor_pb2
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Optional as _Optional

DESCRIPTOR: _descriptor.FileDescriptor
AUTHORIZATION_FIELD_NUMBER: _ClassVar[int]
authorization: _descriptor.FieldDescriptor
FIELD_DEFAULT_FIELD_NUMBER: _ClassVar[int]
field_default: _descriptor.FieldDescriptor

class Authorization(_message.Message):
    __slots__ = ("permission", "resource", "items", "id_field", "tenant_field", "credential")
    PERMISSION_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_FIELD_NUMBER: _ClassVar[int]
    ITEMS_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_FIELD_NUMBER: _ClassVar[int]
    TENANT_FIELD_FIELD_NUMBER: _ClassVar[int]
    CREDENTIAL_FIELD_NUMBER: _ClassVar[int]
    permission: str
    resource: str
    items: bool
    id_field: str
    tenant_field: str
    credential: str
    def __init__(self, permission: _Optional[str] = ..., resource: _Optional[str] = ..., items: _Optional[bool] = ..., id_field: _Optional[str] = ..., tenant_field: _Optional[str] = ..., credential: _Optional[str] = ...) -> None: ...
