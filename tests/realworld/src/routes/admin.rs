use std::net::{TcpStream, ToSocketAddrs};
use std::time::Duration;

use axum::extract::{Path, State};
use axum::Json;
use serde::Serialize;
use uuid::Uuid;

use crate::auth::Claims;
use crate::error::{ApiError, ApiResult};
use crate::settings::Settings;
use crate::state::AppState;

#[derive(Debug, Serialize)]
pub struct Health {
    pub db: bool,
    pub redis: bool,
    pub payments_resolves: bool,
}

/// BUG: re-reads the configuration files synchronously inside the handler.
pub async fn reload_config(State(state): State<AppState>, claims: Claims) -> ApiResult<Json<serde_json::Value>> {
    if !claims.admin {
        return Err(ApiError::Unauthorized);
    }
    let fresh = Settings::load().map_err(|e| ApiError::Internal(e.into()))?;
    let flags = crate::settings::read_flags("config/flags.toml").await?;
    *state.flags.write() = flags;
    tracing::info!(log = %fresh.log, "configuration reloaded");
    Ok(Json(serde_json::json!({ "reloaded": true, "log": fresh.log })))
}

/// Correct: the same reload with the file reads on the blocking pool.
pub async fn reload_config_offloaded(State(state): State<AppState>, claims: Claims) -> ApiResult<Json<serde_json::Value>> {
    if !claims.admin {
        return Err(ApiError::Unauthorized);
    }
    let fresh = tokio::task::spawn_blocking(Settings::load)
        .await
        .map_err(|e| ApiError::Internal(e.into()))?
        .map_err(|e| ApiError::Internal(e.into()))?;
    let flags = crate::settings::read_flags("config/flags.toml").await?;
    *state.flags.write() = flags;
    Ok(Json(serde_json::json!({ "reloaded": true, "log": fresh.log })))
}

/// Correct: pg_dump through tokio::process, output written with tokio::fs.
pub async fn backup(State(state): State<AppState>, claims: Claims) -> ApiResult<Json<serde_json::Value>> {
    if !claims.admin {
        return Err(ApiError::Unauthorized);
    }
    let out = tokio::process::Command::new("pg_dump")
        .arg("--format=custom")
        .arg(&state.settings.database_url)
        .output()
        .await
        .map_err(|e| ApiError::Internal(e.into()))?;
    let path = format!("/var/backups/orders-{}.dump", chrono::Utc::now().format("%Y%m%dT%H%M%S"));
    tokio::fs::create_dir_all("/var/backups").await.map_err(|e| ApiError::Internal(e.into()))?;
    tokio::fs::write(&path, &out.stdout).await.map_err(|e| ApiError::Internal(e.into()))?;
    Ok(Json(serde_json::json!({ "path": path, "bytes": out.stdout.len() })))
}

/// BUG: shells out synchronously for the build's git revision.
pub async fn version() -> Json<serde_json::Value> {
    let rev = std::process::Command::new("git")
        .args(["rev-parse", "--short", "HEAD"])
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default();
    Json(serde_json::json!({ "version": env!("CARGO_PKG_VERSION"), "rev": rev }))
}

/// Correct: async DNS, async pings.
pub async fn health(State(state): State<AppState>) -> Json<Health> {
    let db = sqlx::query("SELECT 1").execute(&state.db).await.is_ok();
    let mut redis = state.redis.clone();
    let redis_ok = redis::cmd("PING").query_async::<String>(&mut redis).await.is_ok();
    let host = url::Url::parse(&state.settings.payments_url)
        .ok()
        .and_then(|u| u.host_str().map(|h| format!("{h}:443")));
    let payments_resolves = match host {
        Some(h) => tokio::net::lookup_host(h).await.map(|mut a| a.next().is_some()).unwrap_or(false),
        None => false,
    };
    Json(Health { db, redis: redis_ok, payments_resolves })
}

/// BUG: blocking DNS resolution and a blocking TCP connect to check the SMTP relay.
pub async fn dependencies(State(state): State<AppState>) -> Json<serde_json::Value> {
    let smtp = (state.settings.smtp_host.as_str(), 25)
        .to_socket_addrs()
        .ok()
        .and_then(|mut a| a.next())
        .map(|addr| TcpStream::connect_timeout(&addr, Duration::from_secs(2)).is_ok())
        .unwrap_or(false);
    let mongo = state.audit.estimated_document_count().await.is_ok();
    Json(serde_json::json!({ "smtp": smtp, "mongo": mongo }))
}

/// BUG: resends through the synchronous SMTP transport.
pub async fn resend_receipt(State(state): State<AppState>, claims: Claims, Path(id): Path<Uuid>) -> ApiResult<()> {
    if !claims.admin {
        return Err(ApiError::Unauthorized);
    }
    let order: crate::routes::orders::Order = sqlx::query_as("SELECT * FROM orders WHERE id = $1")
        .bind(id)
        .fetch_one(&state.db)
        .await?;
    crate::mail::send_receipt_sync(&state.settings.smtp_host, &order)
}
