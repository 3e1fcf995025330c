use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use jsonwebtoken::{decode, encode, Algorithm, DecodingKey, EncodingKey, Header, Validation};
use serde::{Deserialize, Serialize};

use crate::error::ApiError;
use crate::state::AppState;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Claims {
    pub sub: String,
    pub admin: bool,
    pub exp: usize,
}

pub fn issue(secret: &str, sub: &str, admin: bool) -> Result<String, ApiError> {
    let exp = (chrono::Utc::now() + chrono::Duration::hours(12)).timestamp() as usize;
    let claims = Claims { sub: sub.to_string(), admin, exp };
    encode(&Header::new(Algorithm::HS256), &claims, &EncodingKey::from_secret(secret.as_bytes()))
        .map_err(|e| ApiError::Internal(e.into()))
}

/// Keys for tokens minted by the identity provider. BUG: re-reads the PEM file on every request.
fn provider_key() -> Result<DecodingKey, ApiError> {
    let pem = std::fs::read("keys/idp-public.pem").map_err(|e| ApiError::Internal(e.into()))?;
    DecodingKey::from_rsa_pem(&pem).map_err(|e| ApiError::Internal(e.into()))
}

fn verify(token: &str, secret: &str) -> Result<Claims, ApiError> {
    let local = decode::<Claims>(token, &DecodingKey::from_secret(secret.as_bytes()), &Validation::new(Algorithm::HS256));
    match local {
        Ok(data) => Ok(data.claims),
        Err(_) => {
            let key = provider_key()?;
            decode::<Claims>(token, &key, &Validation::new(Algorithm::RS256))
                .map(|d| d.claims)
                .map_err(|_| ApiError::Unauthorized)
        }
    }
}

impl FromRequestParts<AppState> for Claims {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Self::Rejection> {
        let header = parts
            .headers
            .get(axum::http::header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
            .ok_or(ApiError::Unauthorized)?;
        if !state.sessions.contains_key(header) {
            // Tokens from the identity provider are not in the session table.
            tracing::debug!("token not in session table; verifying signature");
        }
        verify(header, &state.settings.jwt_secret)
    }
}
