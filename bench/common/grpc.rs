//! gRPC without generated types: a codec that passes message bytes through untouched, a call
//! of any method by its path, and a method's messages built from the proto3 JSON mapping
//! through the descriptors. The load balancer scenarios use it (they compile whether or not this
//! build has the LoadBalancers service), and the echo baseline answers with it.

use bytes::{Buf, BufMut, Bytes};
use prost::Message;
use prost_reflect::{DynamicMessage, MessageDescriptor, MethodDescriptor};
use tonic::Status;
use tonic::codec::{Codec, DecodeBuf, Decoder, EncodeBuf, Encoder};

use better_compute::cli::AuthedChannel;

/// Message bytes in, the same bytes out.
#[derive(Clone, Copy, Debug, Default)]
pub struct RawCodec;

impl Codec for RawCodec {
    type Encode = Bytes;
    type Decode = Bytes;
    type Encoder = RawCodec;
    type Decoder = RawCodec;

    fn encoder(&mut self) -> Self::Encoder {
        RawCodec
    }

    fn decoder(&mut self) -> Self::Decoder {
        RawCodec
    }
}

impl Encoder for RawCodec {
    type Item = Bytes;
    type Error = Status;

    fn encode(&mut self, item: Bytes, dst: &mut EncodeBuf<'_>) -> Result<(), Status> {
        dst.put(item);
        Ok(())
    }
}

impl Decoder for RawCodec {
    type Item = Bytes;
    type Error = Status;

    fn decode(&mut self, src: &mut DecodeBuf<'_>) -> Result<Option<Bytes>, Status> {
        Ok(Some(src.copy_to_bytes(src.remaining())))
    }
}

/// Calls the method at `path` (`/pkg.Service/Method`) with encoded `request`; the encoded answer.
pub async fn call_raw(channel: &AuthedChannel, path: &str, request: Bytes) -> Result<Bytes, Status> {
    let mut grpc = tonic::client::Grpc::new(channel.clone());
    grpc.ready().await.map_err(|e| Status::unavailable(format!("the channel is not ready: {e}")))?;
    let path = http::uri::PathAndQuery::try_from(path).map_err(|e| Status::internal(e.to_string()))?;
    Ok(grpc.unary(tonic::Request::new(request), path, RawCodec).await?.into_inner())
}

/// A method of the API, found in this build's descriptors.
#[derive(Clone, Debug)]
pub struct Method {
    /// Its descriptor.
    pub descriptor: MethodDescriptor,
    /// `/pkg.Service/Method`.
    pub path: String,
}

impl Method {
    /// `service`'s `method`, if this build has it.
    pub fn find(service: &str, method: &str) -> Option<Method> {
        let service = better_compute::proto::descriptor_pool().get_service_by_name(service)?;
        let descriptor = service.methods().find(|m| m.name() == method)?;
        let path = format!("/{}/{}", service.full_name(), descriptor.name());
        Some(Method { descriptor, path })
    }

    /// The request message encoded from its proto3 JSON form.
    pub fn encode_request(&self, json: &serde_json::Value) -> Result<Bytes, String> {
        encode_json(&self.descriptor.input(), json)
    }

    /// Decodes an answer (checks that it is one).
    pub fn decode_response(&self, bytes: Bytes) -> Result<DynamicMessage, String> {
        DynamicMessage::decode(self.descriptor.output(), bytes).map_err(|e| e.to_string())
    }
}

/// `json` (the proto3 JSON mapping) as the encoded message `descriptor`.
pub fn encode_json(descriptor: &MessageDescriptor, json: &serde_json::Value) -> Result<Bytes, String> {
    let message = DynamicMessage::deserialize(descriptor.clone(), json).map_err(|e| e.to_string())?;
    Ok(Bytes::from(message.encode_to_vec()))
}

/// The code string of a failed gRPC call, as the API names it.
pub fn code_of(status: &Status) -> String {
    better_compute::error::Error::from_status(status).code.as_str().to_owned()
}
