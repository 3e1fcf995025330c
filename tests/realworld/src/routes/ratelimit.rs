//! Per-customer rate limiting. Written against the synchronous redis API before the service went
//! async; BUG: every request opens a blocking connection and waits for two round trips.

use crate::error::{ApiError, ApiResult};
use crate::state::AppState;

const LIMIT_PER_MINUTE: i64 = 120;

pub fn check(state: &AppState, customer: &str) -> ApiResult<()> {
    let mut con = state.redis_client.get_connection().map_err(|e| ApiError::Internal(e.into()))?;
    let key = format!("ratelimit:{customer}:{}", chrono::Utc::now().format("%Y%m%d%H%M"));
    let (count,): (i64,) = redis::pipe()
        .atomic()
        .incr(&key, 1)
        .expire(&key, 60)
        .ignore()
        .query(&mut con)
        .map_err(|e| ApiError::Internal(e.into()))?;
    if count > LIMIT_PER_MINUTE {
        return Err(ApiError::BadRequest("rate limit exceeded".into()));
    }
    Ok(())
}
