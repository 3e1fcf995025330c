//! gRPC inventory client written against tonic's generic client (no codegen needed).

use prost::Message;
use std::time::Duration;
use tonic::codec::ProstCodec;
use tonic::transport::{Channel, Endpoint};

use crate::{ClientError, Result};

#[derive(Clone, PartialEq, Message)]
pub struct StockRequest {
    #[prost(string, tag = "1")]
    pub sku: String,
}

#[derive(Clone, PartialEq, Message)]
pub struct StockReply {
    #[prost(string, tag = "1")]
    pub sku: String,
    #[prost(int64, tag = "2")]
    pub available: i64,
}

#[derive(Clone)]
pub struct InventoryClient {
    inner: tonic::client::Grpc<Channel>,
}

impl InventoryClient {
    pub async fn connect(addr: &'static str) -> Result<Self> {
        let channel = Endpoint::from_static(addr)
            .connect_timeout(Duration::from_secs(2))
            .timeout(Duration::from_secs(5))
            .connect()
            .await?;
        Ok(Self { inner: tonic::client::Grpc::new(channel) })
    }

    pub async fn stock(&mut self, sku: &str) -> Result<i64> {
        self.inner
            .ready()
            .await
            .map_err(|e| ClientError::Unexpected(e.to_string()))?;
        let codec: ProstCodec<StockRequest, StockReply> = ProstCodec::default();
        let path = tonic::codegen::http::uri::PathAndQuery::from_static("/inventory.Inventory/Stock");
        let reply = self
            .inner
            .unary(tonic::Request::new(StockRequest { sku: sku.to_owned() }), path, codec)
            .await?;
        Ok(reply.into_inner().available)
    }
}
