//! gRPC and gRPC-web: the generated tonic client end to end, the same validation and error
//! details as on JSON, and server reflection.

use better_compute::error::Code;
use better_compute::proto::platform::tenants_client::TenantsClient;
use better_compute::proto::platform::{CreateTenantRequest, GetTenantRequest, ListTenantsRequest, UpdateTenantRequest};
use better_compute::store::Backend;
use bytes::{Buf, BufMut, BytesMut};
use prost::Message;

use crate::harness::{System, TestServer, grpc_error, violated_fields};

crate::on_both_backends!(
    tenants_round_trip_over_grpc,
    grpc_validation_names_the_field,
    grpc_without_credentials_is_unauthenticated,
    grpc_web_serves_the_same_methods,
);

async fn tenants_round_trip_over_grpc(backend: Backend) {
    let server = System::on(backend).server().await;
    let mut client = TenantsClient::new(server.channel(Some(&server.admin_token)).await);
    let created = client
        .create(CreateTenantRequest { id: "acme".into(), display_name: "Acme".into(), description: String::new() })
        .await
        .unwrap();
    assert!(created.metadata().get("x-request-id").is_some(), "every call carries a request id");
    let created = created.into_inner();
    assert_eq!((created.id.as_str(), created.state.as_str(), created.version), ("acme", "active", 1));
    let read = client.get(GetTenantRequest { tenant_id: "acme".into() }).await.unwrap().into_inner();
    assert_eq!(read, created);
    let updated = client
        .update(UpdateTenantRequest {
            tenant_id: "acme".into(),
            display_name: Some("ACME".into()),
            description: None,
            update_mask: None,
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!((updated.display_name.as_str(), updated.version), ("ACME", 2));
    let list = client.list(ListTenantsRequest { include_deleted: false }).await.unwrap().into_inner();
    assert_eq!(list.tenants, vec![updated]);

    let status = client.create(CreateTenantRequest { id: "acme".into(), ..Default::default() }).await.unwrap_err();
    assert_eq!(status.code(), tonic::Code::AlreadyExists);
    assert_eq!(grpc_error(&status).code, Code::Conflict, "the code string travels in google.rpc.ErrorInfo");
}

/// A request message with fields the API does not have, or of the wrong wire type.
#[derive(Clone, PartialEq, prost::Message)]
struct CreateWithExtraField {
    #[prost(string, tag = "1")]
    id: String,
    #[prost(string, tag = "99")]
    colour: String,
}

#[derive(Clone, PartialEq, prost::Message)]
struct CreateWithWrongType {
    #[prost(int64, tag = "1")]
    id: i64,
}

/// Calls `path` with `message` encoded as is, and returns the status.
async fn raw_call(server: &TestServer, path: &'static str, message: impl Message + 'static) -> tonic::Status {
    let channel = server.channel(Some(&server.admin_token)).await;
    let mut grpc = tonic::client::Grpc::new(channel);
    grpc.ready().await.unwrap();
    let codec = tonic_prost::ProstCodec::<_, better_compute::proto::platform::Tenant>::default();
    grpc.unary(tonic::Request::new(message), path.parse().unwrap(), codec).await.unwrap_err()
}

async fn grpc_validation_names_the_field(backend: Backend) {
    let server = System::on(backend).server().await;
    let path = "/bettercompute.platform.v1.Tenants/Create";

    let status = raw_call(&server, path, CreateWithExtraField { id: "acme".into(), colour: "red".into() }).await;
    let error = grpc_error(&status);
    assert_eq!((status.code(), error.code), (tonic::Code::InvalidArgument, Code::InvalidInput), "{status:?}");
    assert_eq!(violated_fields(&serde_json::Value::Object(*error.details.clone())), ["#99"], "{error}");

    let status = raw_call(&server, path, CreateWithWrongType { id: 42 }).await;
    let error = grpc_error(&status);
    assert_eq!(error.code, Code::InvalidInput, "{status:?}");
    assert_eq!(violated_fields(&serde_json::Value::Object(*error.details.clone())), ["id"], "{error}");
    assert!(error.message.contains("id: has the wrong type"), "the field is named: {}", error.message);

    let mut client = TenantsClient::new(server.channel(Some(&server.admin_token)).await);
    for (request, field, says) in [
        (CreateTenantRequest { id: "x".repeat(129), ..Default::default() }, "id", "at most 128 characters"),
        (CreateTenantRequest { id: "bad id".into(), ..Default::default() }, "id", "must match"),
        (
            CreateTenantRequest { id: "ok".into(), display_name: "d".repeat(129), ..Default::default() },
            "displayName",
            "at most 128",
        ),
    ] {
        let status = client.create(request).await.unwrap_err();
        assert_eq!(status.code(), tonic::Code::InvalidArgument);
        let error = grpc_error(&status);
        assert_eq!(error.code, Code::InvalidInput);
        let details = serde_json::Value::Object(*error.details.clone());
        let mut fields = violated_fields(&details);
        fields.dedup();
        assert_eq!(fields, [field]);
        let descriptions = details["fields"].as_array().unwrap();
        assert!(descriptions.iter().any(|f| f["description"].as_str().unwrap().contains(says)), "{details}");
        assert!(status.message().contains(field));
    }
    assert!(server.store.tenant_list(true).await.unwrap().is_empty(), "refused calls write nothing");
}

async fn grpc_without_credentials_is_unauthenticated(backend: Backend) {
    let server = System::on(backend).server().await;
    let mut anonymous = TenantsClient::new(server.channel(None).await);
    let status = anonymous.list(ListTenantsRequest::default()).await.unwrap_err();
    assert_eq!(status.code(), tonic::Code::Unauthenticated);
    assert_eq!(grpc_error(&status).code, Code::Unauthenticated);
    let mut wrong = TenantsClient::new(server.channel(Some("bck_0000000000000000000000000a.0123456789abcdef")).await);
    let status = wrong.list(ListTenantsRequest::default()).await.unwrap_err();
    assert_eq!(status.code(), tonic::Code::Unauthenticated);
}

/// A gRPC-web call over HTTP/1.1, as a browser makes it.
async fn grpc_web_serves_the_same_methods(backend: Backend) {
    let server = System::on(backend).server().await;
    let request = CreateTenantRequest { id: "webco".into(), ..Default::default() };
    let mut body = BytesMut::new();
    body.put_u8(0);
    body.put_u32(request.encoded_len() as u32);
    request.encode(&mut body).unwrap();
    let response = reqwest::Client::builder()
        .http1_only()
        .build()
        .unwrap()
        .post(format!("{}/bettercompute.platform.v1.Tenants/Create", server.endpoint))
        .header("content-type", "application/grpc-web+proto")
        .header("x-grpc-web", "1")
        .header("origin", "https://console.example")
        .bearer_auth(&server.admin_token)
        .body(body.freeze())
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["content-type"], "application/grpc-web+proto");
    assert_eq!(response.headers()["access-control-allow-origin"], "https://console.example");
    let mut bytes = response.bytes().await.unwrap();
    assert_eq!(bytes.get_u8(), 0, "a data frame comes first");
    let len = bytes.get_u32() as usize;
    let tenant = better_compute::proto::platform::Tenant::decode(bytes.copy_to_bytes(len)).unwrap();
    assert_eq!(tenant.id, "webco");
    assert_eq!(bytes.get_u8(), 0x80, "then the trailers frame");
    let len = bytes.get_u32() as usize;
    let trailers = String::from_utf8(bytes.copy_to_bytes(len).to_vec()).unwrap();
    assert!(trailers.contains("grpc-status:0"), "{trailers}");
}

#[tokio::test]
async fn reflection_lists_the_api_without_credentials() {
    use tonic_reflection::pb::v1::ServerReflectionRequest;
    use tonic_reflection::pb::v1::server_reflection_client::ServerReflectionClient;
    use tonic_reflection::pb::v1::server_reflection_request::MessageRequest;
    use tonic_reflection::pb::v1::server_reflection_response::MessageResponse;

    let server = System::on(Backend::Sqlite).server().await;
    let mut client = ServerReflectionClient::new(server.channel(None).await);
    let request = ServerReflectionRequest {
        host: String::new(),
        message_request: Some(MessageRequest::ListServices(String::new())),
    };
    let mut stream = client.server_reflection_info(tokio_stream::iter([request])).await.unwrap().into_inner();
    let response = stream.message().await.unwrap().unwrap();
    let Some(MessageResponse::ListServicesResponse(list)) = response.message_response else { panic!("{response:?}") };
    let names: Vec<String> = list.service.into_iter().map(|s| s.name).collect();
    assert!(names.contains(&"bettercompute.platform.v1.Tenants".to_owned()), "{names:?}");
}
