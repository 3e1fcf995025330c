use async_compression::tokio::bufread::{ZstdDecoder, ZstdEncoder};
use aws_sdk_s3::primitives::ByteStream;
use tokio::io::{AsyncReadExt, BufReader};

use crate::error::{ApiError, ApiResult};
use crate::state::AppState;

pub async fn compress(data: &[u8]) -> ApiResult<Vec<u8>> {
    let mut encoder = ZstdEncoder::new(BufReader::new(data));
    let mut out = Vec::with_capacity(data.len() / 2);
    encoder.read_to_end(&mut out).await.map_err(|e| ApiError::Internal(e.into()))?;
    Ok(out)
}

pub async fn decompress(data: Vec<u8>) -> ApiResult<Vec<u8>> {
    let mut decoder = ZstdDecoder::new(BufReader::new(&data[..]));
    let mut out = Vec::new();
    decoder.read_to_end(&mut out).await.map_err(|e| ApiError::Internal(e.into()))?;
    Ok(out)
}

pub async fn put(state: &AppState, key: &str, data: Vec<u8>, content_type: &str) -> ApiResult<()> {
    state
        .s3
        .put_object()
        .bucket(&state.settings.bucket)
        .key(key)
        .content_type(content_type)
        .body(ByteStream::from(data))
        .send()
        .await
        .map_err(|e| ApiError::Internal(e.into()))?;
    Ok(())
}

pub async fn get(state: &AppState, key: &str) -> ApiResult<Vec<u8>> {
    let object = state
        .s3
        .get_object()
        .bucket(&state.settings.bucket)
        .key(key)
        .send()
        .await
        .map_err(|e| match e.as_service_error() {
            Some(err) if err.is_no_such_key() => ApiError::NotFound,
            _ => ApiError::Internal(e.into()),
        })?;
    let data = object.body.collect().await.map_err(|e| ApiError::Internal(e.into()))?;
    Ok(data.into_bytes().to_vec())
}
