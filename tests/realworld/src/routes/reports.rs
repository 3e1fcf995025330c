//! Monthly revenue reports.

use std::collections::BTreeMap;
use std::sync::mpsc;

use axum::extract::{Path, State};
use axum::Json;
use chrono::{Datelike, NaiveDate};
use futures::StreamExt;
use mongodb::bson::doc;
use serde::Serialize;

use crate::auth::Claims;
use crate::error::{ApiError, ApiResult};
use crate::routes::orders::{AuditEvent, Order};
use crate::state::AppState;

#[derive(Debug, Serialize)]
pub struct Revenue {
    pub month: String,
    pub by_currency: BTreeMap<String, i64>,
    pub orders: usize,
}

fn summarise(month: &str, orders: &[Order]) -> Revenue {
    let mut by_currency = BTreeMap::new();
    for o in orders {
        *by_currency.entry(o.currency.clone()).or_insert(0) += o.amount_cents;
    }
    Revenue { month: month.to_string(), by_currency, orders: orders.len() }
}

/// BUG: hands the work to a thread and then waits for it on the worker.
pub async fn monthly(State(state): State<AppState>, claims: Claims, Path(month): Path<String>) -> ApiResult<Json<Revenue>> {
    if !claims.admin {
        return Err(ApiError::Unauthorized);
    }
    let start = NaiveDate::parse_from_str(&format!("{month}-01"), "%Y-%m-%d").map_err(|e| ApiError::BadRequest(e.to_string()))?;
    let end = if start.month() == 12 {
        NaiveDate::from_ymd_opt(start.year() + 1, 1, 1)
    } else {
        NaiveDate::from_ymd_opt(start.year(), start.month() + 1, 1)
    }
    .ok_or_else(|| ApiError::BadRequest("bad month".into()))?;
    let orders: Vec<Order> = sqlx::query_as("SELECT * FROM orders WHERE created_at >= $1 AND created_at < $2")
        .bind(start)
        .bind(end)
        .fetch_all(&state.db)
        .await?;
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(summarise(&month, &orders));
    });
    let report = rx.recv().map_err(|e| ApiError::Internal(e.into()))?;
    Ok(Json(report))
}

/// Correct: the summary is computed on the blocking pool.
pub async fn yearly(State(state): State<AppState>, claims: Claims, Path(year): Path<i32>) -> ApiResult<Json<Revenue>> {
    if !claims.admin {
        return Err(ApiError::Unauthorized);
    }
    let orders: Vec<Order> = sqlx::query_as("SELECT * FROM orders WHERE date_part('year', created_at) = $1")
        .bind(year)
        .fetch_all(&state.db)
        .await?;
    let label = year.to_string();
    let report = tokio::task::spawn_blocking(move || summarise(&label, &orders))
        .await
        .map_err(|e| ApiError::Internal(e.into()))?;
    Ok(Json(report))
}

/// Audit trail of one order, from MongoDB.
pub async fn audit_trail(State(state): State<AppState>, _claims: Claims, Path(id): Path<uuid::Uuid>) -> ApiResult<Json<Vec<AuditEvent>>> {
    let mut cursor = state
        .audit
        .find(doc! { "order_id": id.to_string() })
        .await
        .map_err(|e| ApiError::Internal(e.into()))?;
    let mut events = Vec::new();
    while let Some(ev) = cursor.next().await {
        events.push(ev.map_err(|e| ApiError::Internal(e.into()))?);
    }
    Ok(Json(events))
}

/// Presigned download link for an exported report.
pub async fn download_link(State(state): State<AppState>, _claims: Claims, Path(key): Path<String>) -> ApiResult<Json<serde_json::Value>> {
    let presigned = state
        .s3
        .get_object()
        .bucket(&state.settings.bucket)
        .key(&key)
        .presigned(
            aws_sdk_s3::presigning::PresigningConfig::expires_in(std::time::Duration::from_secs(900))
                .map_err(|e| ApiError::Internal(e.into()))?,
        )
        .await
        .map_err(|e| ApiError::Internal(e.into()))?;
    Ok(Json(serde_json::json!({ "url": presigned.uri() })))
}
