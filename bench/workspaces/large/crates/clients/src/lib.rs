//! Outbound clients of the benchmark service: a payments REST API, a geo lookup, and a gRPC
//! inventory service.

pub mod geo;
pub mod inventory;
pub mod payments;

use thiserror::Error;

#[derive(Debug, Error)]
pub enum ClientError {
    #[error("http error: {0}")]
    Http(#[from] reqwest::Error),
    #[error("grpc error: {0}")]
    Grpc(#[from] tonic::Status),
    #[error("transport error: {0}")]
    Transport(#[from] tonic::transport::Error),
    #[error("unexpected response: {0}")]
    Unexpected(String),
}

pub type Result<T> = std::result::Result<T, ClientError>;
