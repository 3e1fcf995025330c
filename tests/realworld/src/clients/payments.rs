use std::time::Duration;

use serde::{Deserialize, Serialize};
use uuid::Uuid;

#[derive(Debug, Serialize)]
pub struct ChargeRequest<'a> {
    pub order_id: Uuid,
    pub amount_cents: i64,
    pub currency: &'a str,
    pub customer: &'a str,
}

#[derive(Debug, Deserialize)]
pub struct ChargeResponse {
    pub charge_id: String,
    pub status: String,
}

#[derive(Clone)]
pub struct PaymentsClient {
    http: reqwest::Client,
    base: String,
}

impl PaymentsClient {
    pub fn new(http: reqwest::Client, base: String) -> Self {
        Self { http, base }
    }

    pub async fn charge(&self, req: &ChargeRequest<'_>) -> anyhow::Result<ChargeResponse> {
        let mut attempt = 0;
        loop {
            let res = self
                .http
                .post(format!("{}/v1/charges", self.base))
                .header("Idempotency-Key", req.order_id.to_string())
                .json(req)
                .send()
                .await;
            match res {
                Ok(resp) if resp.status().is_success() => return Ok(resp.json().await?),
                Ok(resp) if resp.status().is_server_error() && attempt < 3 => {}
                Ok(resp) => anyhow::bail!("payment rejected: {}", resp.status()),
                Err(e) if attempt < 3 => tracing::warn!(error = %e, attempt, "payment call failed"),
                Err(e) => return Err(e.into()),
            }
            attempt += 1;
            backoff(attempt);
        }
    }
}

/// Exponential backoff between retries. BUG: sleeps the worker thread.
fn backoff(attempt: u32) {
    std::thread::sleep(Duration::from_millis(100 * 2u64.pow(attempt)));
}
