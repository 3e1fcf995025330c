//! gRPC client for the inventory service (what tonic-build would generate, written out).

use tonic::codegen::http::uri::PathAndQuery;
use tonic::transport::{Channel, Endpoint};

#[derive(Clone, PartialEq, prost::Message)]
pub struct ReserveRequest {
    #[prost(string, tag = "1")]
    pub sku: String,
    #[prost(uint32, tag = "2")]
    pub quantity: u32,
    #[prost(string, tag = "3")]
    pub order_id: String,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct ReserveReply {
    #[prost(bool, tag = "1")]
    pub reserved: bool,
    #[prost(uint32, tag = "2")]
    pub available: u32,
}

#[derive(Clone)]
pub struct InventoryClient {
    inner: tonic::client::Grpc<Channel>,
}

impl InventoryClient {
    pub async fn connect(url: String) -> Result<Self, tonic::transport::Error> {
        let channel = Endpoint::from_shared(url)?
            .connect_timeout(std::time::Duration::from_secs(3))
            .connect()
            .await?;
        Ok(Self { inner: tonic::client::Grpc::new(channel) })
    }

    pub async fn reserve(&mut self, request: ReserveRequest) -> Result<ReserveReply, tonic::Status> {
        self.inner
            .ready()
            .await
            .map_err(|e| tonic::Status::unknown(format!("service was not ready: {e}")))?;
        let codec = tonic_prost::ProstCodec::default();
        let path = PathAndQuery::from_static("/inventory.v1.Inventory/Reserve");
        let response = self.inner.unary(tonic::Request::new(request), path, codec).await?;
        Ok(response.into_inner())
    }
}
