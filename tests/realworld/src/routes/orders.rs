use std::io::Write;

use axum::extract::{Path, Query, State};
use axum::http::header;
use axum::response::IntoResponse;
use axum::Json;
use chrono::{DateTime, Utc};
use flate2::write::GzEncoder;
use flate2::Compression;
use futures::TryStreamExt;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::auth::Claims;
use crate::clients::inventory::ReserveRequest;
use crate::clients::payments::ChargeRequest;
use crate::clients::{fx, webhook};
use crate::error::{ApiError, ApiResult};
use crate::state::AppState;

#[derive(Debug, Clone, Serialize, Deserialize, sqlx::FromRow)]
pub struct Order {
    pub id: Uuid,
    pub customer: String,
    pub sku: String,
    pub quantity: i32,
    pub amount_cents: i64,
    pub currency: String,
    pub status: String,
    pub created_at: DateTime<Utc>,
}

#[derive(Debug, Deserialize)]
pub struct NewOrder {
    pub sku: String,
    pub quantity: u32,
    pub amount_cents: i64,
    pub currency: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct AuditEvent {
    pub order_id: Uuid,
    pub actor: String,
    pub action: String,
    pub at: DateTime<Utc>,
}

#[derive(Debug, Deserialize)]
pub struct ListParams {
    pub customer: Option<String>,
    pub limit: Option<i64>,
}

#[tracing::instrument(skip(state, body))]
pub async fn create_order(
    State(state): State<AppState>,
    claims: Claims,
    Json(body): Json<NewOrder>,
) -> ApiResult<Json<Order>> {
    crate::routes::ratelimit::check(&state, &claims.sub)?;
    state.metrics.incr("orders.create");

    let id = Uuid::new_v4();
    let mut inventory = state.inventory.clone();
    let reply = inventory
        .reserve(ReserveRequest { sku: body.sku.clone(), quantity: body.quantity, order_id: id.to_string() })
        .await
        .map_err(|s| ApiError::Internal(anyhow::anyhow!("inventory: {s}")))?;
    if !reply.reserved {
        return Err(ApiError::BadRequest(format!("only {} available", reply.available)));
    }

    let flags = state.flags.read().clone();
    let amount = if flags.legacy_rates && body.currency != "EUR" {
        let rate = fx::fetch_rate_blocking(&state.settings.fx_url, &body.currency)?;
        (body.amount_cents as f64 * rate) as i64
    } else if flags.fx_conversion {
        fx::convert(body.amount_cents, &body.currency)
    } else {
        body.amount_cents
    };

    let charge = state
        .payments
        .charge(&ChargeRequest { order_id: id, amount_cents: amount, currency: &body.currency, customer: &claims.sub })
        .await?;

    let order: Order = sqlx::query_as(
        "INSERT INTO orders (id, customer, sku, quantity, amount_cents, currency, status, created_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, now()) RETURNING *",
    )
    .bind(id)
    .bind(&claims.sub)
    .bind(&body.sku)
    .bind(body.quantity as i32)
    .bind(amount)
    .bind(&body.currency)
    .bind(&charge.status)
    .fetch_one(&state.db)
    .await?;

    state
        .audit
        .insert_one(AuditEvent { order_id: id, actor: claims.sub.clone(), action: "create".into(), at: Utc::now() })
        .await
        .map_err(|e| ApiError::Internal(e.into()))?;

    let mut redis = state.redis.clone();
    let event = serde_json::to_string(&order).map_err(|e| ApiError::Internal(e.into()))?;
    redis::cmd("PUBLISH")
        .arg("orders.created")
        .arg(&event)
        .query_async::<()>(&mut redis)
        .await
        .map_err(|e| ApiError::Internal(e.into()))?;
    let webhook_url = state.settings.webhook_url.clone();
    tokio::spawn(async move {
        if let Err(e) = webhook::notify(&webhook_url, event.into_bytes().into()).await {
            tracing::warn!(error = %e, "fulfilment webhook failed");
        }
    });

    state.order_cache.insert(id, order.clone()).await;
    if flags.send_receipts {
        crate::mail::send_receipt(&state, &order).await?;
    }
    Ok(Json(order))
}

pub async fn get_order(State(state): State<AppState>, _claims: Claims, Path(id): Path<Uuid>) -> ApiResult<Json<Order>> {
    if let Some(order) = state.order_cache.get(&id).await {
        return Ok(Json(order));
    }
    let order: Order = sqlx::query_as("SELECT * FROM orders WHERE id = $1")
        .bind(id)
        .fetch_optional(&state.db)
        .await?
        .ok_or(ApiError::NotFound)?;
    state.order_cache.insert(id, order.clone()).await;
    Ok(Json(order))
}

/// Reporting reads go to the replica through deadpool + tokio-postgres.
pub async fn list_orders(
    State(state): State<AppState>,
    _claims: Claims,
    Query(params): Query<ListParams>,
) -> ApiResult<Json<Vec<Order>>> {
    let client = state.reporting.get().await.map_err(|e| ApiError::Internal(e.into()))?;
    let limit = params.limit.unwrap_or(100).min(1000);
    let rows = match &params.customer {
        Some(c) => client
            .query("SELECT * FROM orders WHERE customer = $1 ORDER BY created_at DESC LIMIT $2", &[c, &limit])
            .await,
        None => client.query("SELECT * FROM orders ORDER BY created_at DESC LIMIT $1", &[&limit]).await,
    }
    .map_err(|e| ApiError::Internal(e.into()))?;
    let orders = rows
        .iter()
        .map(|r| Order {
            id: r.get("id"),
            customer: r.get("customer"),
            sku: r.get("sku"),
            quantity: r.get("quantity"),
            amount_cents: r.get("amount_cents"),
            currency: r.get("currency"),
            status: r.get("status"),
            created_at: r.get("created_at"),
        })
        .collect();
    Ok(Json(orders))
}

/// Exports every order as gzipped JSON lines. BUG: serialises and compresses the whole table on
/// the worker.
pub async fn export_orders(State(state): State<AppState>, claims: Claims) -> ApiResult<impl IntoResponse> {
    if !claims.admin {
        return Err(ApiError::Unauthorized);
    }
    let orders: Vec<Order> = sqlx::query_as("SELECT * FROM orders ORDER BY created_at")
        .fetch(&state.db)
        .try_collect()
        .await?;
    let mut encoder = GzEncoder::new(Vec::new(), Compression::default());
    for order in &orders {
        let line = serde_json::to_vec(order).map_err(|e| ApiError::Internal(e.into()))?;
        encoder.write_all(&line).map_err(|e| ApiError::Internal(e.into()))?;
        encoder.write_all(b"\n").map_err(|e| ApiError::Internal(e.into()))?;
    }
    let gz = encoder.finish().map_err(|e| ApiError::Internal(e.into()))?;
    Ok(([(header::CONTENT_ENCODING, "gzip"), (header::CONTENT_TYPE, "application/x-ndjson")], gz))
}
