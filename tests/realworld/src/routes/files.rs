use std::io::Write;
use std::process::Command;

use axum::body::{Body, Bytes};
use axum::extract::{Path, State};
use axum::http::{header, HeaderMap};
use axum::response::IntoResponse;
use axum::Json;
use base64::Engine;
use serde::Serialize;
use sha2::{Digest, Sha256};
use uuid::Uuid;

use crate::auth::Claims;
use crate::error::{ApiError, ApiResult};
use crate::state::AppState;
use crate::storage;

#[derive(Debug, Serialize)]
pub struct Uploaded {
    pub key: String,
    pub etag: String,
    pub compressed_bytes: usize,
}

/// Uploads are compressed with zstd (streaming, async) and stored in S3.
pub async fn upload(State(state): State<AppState>, claims: Claims, headers: HeaderMap, body: Bytes) -> ApiResult<Json<Uploaded>> {
    let mut hasher = Sha256::new();
    hasher.update(&body);
    let etag = hex::encode(hasher.finalize());
    let content_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("application/octet-stream")
        .to_string();
    let compressed = storage::compress(&body).await?;
    let key = format!("uploads/{}/{}", claims.sub, Uuid::new_v4());
    storage::put(&state, &key, compressed.clone(), &content_type).await?;
    Ok(Json(Uploaded { key, etag, compressed_bytes: compressed.len() }))
}

pub async fn download(State(state): State<AppState>, _claims: Claims, Path(key): Path<String>) -> ApiResult<impl IntoResponse> {
    let bytes = storage::get(&state, &key).await?;
    let plain = storage::decompress(bytes).await?;
    Ok(([(header::CONTENT_TYPE, "application/octet-stream")], Body::from(plain)))
}

/// Renders an invoice PDF. BUG: template read, temp file and the renderer process all block.
pub async fn invoice(State(state): State<AppState>, _claims: Claims, Path(id): Path<Uuid>) -> ApiResult<impl IntoResponse> {
    let order: crate::routes::orders::Order = sqlx::query_as("SELECT * FROM orders WHERE id = $1")
        .bind(id)
        .fetch_one(&state.db)
        .await?;
    let template = std::fs::read_to_string(format!("{}/invoice.html", state.settings.templates_dir))
        .map_err(|e| ApiError::Internal(e.into()))?;
    let html = template
        .replace("{{id}}", &order.id.to_string())
        .replace("{{amount}}", &format!("{:.2}", order.amount_cents as f64 / 100.0));
    let mut file = tempfile::NamedTempFile::new().map_err(|e| ApiError::Internal(e.into()))?;
    file.write_all(html.as_bytes()).map_err(|e| ApiError::Internal(e.into()))?;
    let output = Command::new("wkhtmltopdf")
        .arg(file.path())
        .arg("-")
        .output()
        .map_err(|e| ApiError::Internal(e.into()))?;
    Ok(([(header::CONTENT_TYPE, "application/pdf")], output.stdout))
}

/// Correct version of the above: tokio::fs and tokio::process.
pub async fn receipt(State(state): State<AppState>, _claims: Claims, Path(id): Path<Uuid>) -> ApiResult<impl IntoResponse> {
    let template = tokio::fs::read_to_string(format!("{}/receipt.html", state.settings.templates_dir))
        .await
        .map_err(|e| ApiError::Internal(e.into()))?;
    let html = template.replace("{{id}}", &id.to_string());
    let path = std::env::temp_dir().join(format!("receipt-{id}.html"));
    tokio::fs::write(&path, html.as_bytes()).await.map_err(|e| ApiError::Internal(e.into()))?;
    let output = tokio::process::Command::new("wkhtmltopdf")
        .arg(&path)
        .arg("-")
        .output()
        .await
        .map_err(|e| ApiError::Internal(e.into()))?;
    tokio::fs::remove_file(&path).await.ok();
    Ok(([(header::CONTENT_TYPE, "application/pdf")], output.stdout))
}

#[derive(Debug, Serialize)]
pub struct Archived {
    pub key: String,
    pub preview: String,
}

/// BUG: whole-buffer zstd on the worker.
pub async fn archive(State(state): State<AppState>, claims: Claims, body: Bytes) -> ApiResult<Json<Archived>> {
    let packed = zstd::encode_all(&body[..], 19).map_err(|e| ApiError::Internal(e.into()))?;
    let preview = base64::engine::general_purpose::STANDARD.encode(&packed[..packed.len().min(48)]);
    let key = format!("archive/{}/{}.zst", claims.sub, chrono::Utc::now().timestamp());
    storage::put(&state, &key, packed, "application/zstd").await?;
    Ok(Json(Archived { key, preview }))
}
