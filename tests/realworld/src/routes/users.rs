use argon2::{Argon2, PasswordHasher, PasswordVerifier};
use axum::extract::{Query, State};
use axum::Json;
use once_cell::sync::Lazy;
use regex::Regex;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::auth::{self, Claims};
use crate::error::{ApiError, ApiResult};
use crate::state::AppState;

static EMAIL: Lazy<Regex> = Lazy::new(|| Regex::new(r"^[^@\s]+@[^@\s]+\.[a-z]{2,}$").unwrap());

#[derive(Debug, Deserialize)]
pub struct Credentials {
    pub email: String,
    pub password: String,
}

#[derive(Debug, Serialize)]
pub struct TokenResponse {
    pub token: String,
}

#[derive(Debug, Serialize, sqlx::FromRow)]
pub struct User {
    pub id: Uuid,
    pub email: String,
}

#[derive(Debug, Deserialize)]
pub struct SearchParams {
    pub pattern: String,
}

/// BUG: Argon2 with default parameters takes tens of milliseconds of CPU, inline on the worker.
pub async fn register(State(state): State<AppState>, Json(creds): Json<Credentials>) -> ApiResult<Json<User>> {
    if !EMAIL.is_match(&creds.email) {
        return Err(ApiError::BadRequest("invalid email".into()));
    }
    let hash = Argon2::default()
        .hash_password(creds.password.as_bytes())
        .map_err(|e| ApiError::Internal(anyhow::anyhow!("hash: {e}")))?
        .to_string();
    let user: User = sqlx::query_as("INSERT INTO users (id, email, password_hash) VALUES ($1, $2, $3) RETURNING id, email")
        .bind(Uuid::new_v4())
        .bind(&creds.email)
        .bind(&hash)
        .fetch_one(&state.db)
        .await?;
    Ok(Json(user))
}

/// Correct: verification runs on the blocking pool.
pub async fn login(State(state): State<AppState>, Json(creds): Json<Credentials>) -> ApiResult<Json<TokenResponse>> {
    let row: Option<(Uuid, String, bool)> = sqlx::query_as("SELECT id, password_hash, admin FROM users WHERE email = $1")
        .bind(&creds.email)
        .fetch_optional(&state.db)
        .await?;
    let (id, stored, admin) = row.ok_or(ApiError::Unauthorized)?;
    let password = creds.password.clone();
    let ok = tokio::task::spawn_blocking(move || Argon2::default().verify_password(password.as_bytes(), stored.as_str()).is_ok())
        .await
        .map_err(|e| ApiError::Internal(e.into()))?;
    if !ok {
        return Err(ApiError::Unauthorized);
    }
    let token = auth::issue(&state.settings.jwt_secret, &creds.email, admin)?;
    state.sessions.insert(token.clone(), id);
    Ok(Json(TokenResponse { token }))
}

pub async fn me(claims: Claims) -> Json<Claims> {
    Json(claims)
}

/// BUG: compiles a caller-supplied pattern on every request.
pub async fn search(State(state): State<AppState>, _claims: Claims, Query(q): Query<SearchParams>) -> ApiResult<Json<Vec<User>>> {
    let re = Regex::new(&q.pattern).map_err(|e| ApiError::BadRequest(e.to_string()))?;
    let users: Vec<User> = sqlx::query_as("SELECT id, email FROM users ORDER BY email LIMIT 5000")
        .fetch_all(&state.db)
        .await?;
    Ok(Json(users.into_iter().filter(|u| re.is_match(&u.email)).collect()))
}
