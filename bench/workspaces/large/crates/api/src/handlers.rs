use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use chrono::Utc;
use serde::{Deserialize, Serialize};
use std::time::Duration;
use uuid::Uuid;

use crate::auth;
use crate::AppState;

pub struct ApiError(StatusCode, String);

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (self.0, Json(serde_json::json!({ "error": self.1 }))).into_response()
    }
}

impl From<storage::StorageError> for ApiError {
    fn from(e: storage::StorageError) -> Self {
        match e {
            storage::StorageError::NotFound(what) => ApiError(StatusCode::NOT_FOUND, what),
            other => ApiError(StatusCode::INTERNAL_SERVER_ERROR, other.to_string()),
        }
    }
}

impl From<clients::ClientError> for ApiError {
    fn from(e: clients::ClientError) -> Self {
        ApiError(StatusCode::BAD_GATEWAY, e.to_string())
    }
}

impl From<anyhow::Error> for ApiError {
    fn from(e: anyhow::Error) -> Self {
        ApiError(StatusCode::INTERNAL_SERVER_ERROR, e.to_string())
    }
}

type ApiResult<T> = Result<T, ApiError>;

fn user_from_headers(state: &AppState, headers: &HeaderMap) -> ApiResult<Uuid> {
    let token = headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .ok_or_else(|| ApiError(StatusCode::UNAUTHORIZED, "missing token".into()))?;
    let claims = auth::verify_token(&state.settings.jwt_secret, token)
        .map_err(|e| ApiError(StatusCode::UNAUTHORIZED, e.to_string()))?;
    Ok(claims.sub)
}

pub async fn health(State(state): State<AppState>) -> ApiResult<&'static str> {
    state.storage.db.health().await?;
    Ok("ok")
}

#[derive(Deserialize)]
pub struct Credentials {
    email: String,
    password: String,
    display_name: Option<String>,
}

#[derive(Serialize)]
pub struct TokenReply {
    token: String,
}

pub async fn signup(State(state): State<AppState>, Json(c): Json<Credentials>) -> ApiResult<Json<TokenReply>> {
    let password = c.password.clone();
    let hash = tokio::task::spawn_blocking(move || auth::hash_password(&password))
        .await
        .map_err(|e| ApiError(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))??;
    let name = c.display_name.unwrap_or_else(|| c.email.clone());
    let user = state.storage.db.insert_user(&c.email, &name, &hash).await?;
    let token = auth::issue_token(&state.settings.jwt_secret, user.id)?;
    Ok(Json(TokenReply { token }))
}

pub async fn login(State(state): State<AppState>, Json(c): Json<Credentials>) -> ApiResult<Json<TokenReply>> {
    let hits = state.storage.cache.hit(&format!("login:{}", c.email), 60).await?;
    if hits > 10 {
        // Mistake: back-off with a blocking sleep on the worker thread.
        std::thread::sleep(Duration::from_millis(250));
    }
    let user = state
        .storage
        .db
        .user_by_email(&c.email)
        .await?
        .ok_or_else(|| ApiError(StatusCode::UNAUTHORIZED, "bad credentials".into()))?;
    if !auth::verify_password(&c.password, &user.password_hash) {
        return Err(ApiError(StatusCode::UNAUTHORIZED, "bad credentials".into()));
    }
    state.sessions.insert(
        user.id.to_string(),
        auth::Session { user_id: user.id, expires_at: Utc::now() + chrono::Duration::hours(12) },
    );
    let token = auth::issue_token(&state.settings.jwt_secret, user.id)?;
    Ok(Json(TokenReply { token }))
}

pub async fn get_user(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(id): Path<Uuid>,
) -> ApiResult<Json<storage::db::User>> {
    let _caller = user_from_headers(&state, &headers)?;
    let key = format!("user:{id}");
    if let Some(user) = state.storage.cache.get_json::<storage::db::User>(&key).await? {
        return Ok(Json(user));
    }
    let user = state.storage.db.user_by_id(id).await?;
    state.storage.cache.put_json(&key, &user, 300).await?;
    Ok(Json(user))
}

pub async fn list_orders(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(id): Path<Uuid>,
) -> ApiResult<String> {
    let _caller = user_from_headers(&state, &headers)?;
    let db = state.storage.db.clone();
    let body = state
        .storage
        .memo
        .get_or_insert_with(format!("orders:{id}"), move || async move {
            match db.orders_for(id, 50).await {
                Ok(orders) => serde_json::to_string(&orders).unwrap_or_default(),
                Err(e) => serde_json::json!({ "error": e.to_string() }).to_string(),
            }
        })
        .await;
    Ok((*body).clone())
}

#[derive(Deserialize)]
pub struct NewOrder {
    items: serde_json::Value,
    total_cents: i64,
    currency: String,
}

pub async fn create_order(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(id): Path<Uuid>,
    Json(new): Json<NewOrder>,
) -> ApiResult<Json<serde_json::Value>> {
    let _caller = user_from_headers(&state, &headers)?;
    let order = storage::db::Order {
        id: Uuid::new_v4(),
        user_id: id,
        total_cents: new.total_cents,
        items: new.items,
        created_at: Utc::now(),
    };
    let key = order.id.to_string();
    let charge = state
        .payments
        .charge(&clients::payments::ChargeRequest {
            customer: &id.to_string(),
            amount_cents: order.total_cents,
            currency: &new.currency,
            idempotency_key: &key,
        })
        .await?;
    if let Err(e) = state.storage.db.insert_order(&order).await {
        state.payments.refund(&charge.id).await?;
        return Err(e.into());
    }
    state.storage.memo.evict(&format!("orders:{id}")).await;
    Ok(Json(serde_json::json!({ "order": order.id, "charge": charge.id, "status": charge.status })))
}

pub async fn upload_blob(State(state): State<AppState>, body: Bytes) -> ApiResult<Json<Uuid>> {
    let id = state.storage.blobs.put(body).await?;
    Ok(Json(id))
}

pub async fn get_blob(State(state): State<AppState>, Path(id): Path<Uuid>) -> ApiResult<Bytes> {
    Ok(state.storage.blobs.get(id).await?)
}

pub async fn delete_blob(State(state): State<AppState>, Path(id): Path<Uuid>) -> ApiResult<StatusCode> {
    state.storage.blobs.delete(id).await?;
    Ok(StatusCode::NO_CONTENT)
}

pub async fn where_am_i(State(state): State<AppState>, headers: HeaderMap) -> ApiResult<Json<serde_json::Value>> {
    let ip = headers
        .get("x-forwarded-for")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("127.0.0.1")
        .to_owned();
    let loc = match clients::geo::locate_async(&state.http, &ip).await {
        Ok(loc) => loc,
        Err(_) => clients::geo::locate(&ip).await?,
    };
    Ok(Json(serde_json::json!({ "country": loc.country, "city": loc.city })))
}
