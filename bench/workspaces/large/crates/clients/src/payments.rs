use serde::{Deserialize, Serialize};
use std::time::Duration;
use tracing::instrument;

use crate::{ClientError, Result};

#[derive(Debug, Serialize)]
pub struct ChargeRequest<'a> {
    pub customer: &'a str,
    pub amount_cents: i64,
    pub currency: &'a str,
    pub idempotency_key: &'a str,
}

#[derive(Debug, Deserialize)]
pub struct Charge {
    pub id: String,
    pub status: String,
}

#[derive(Clone)]
pub struct PaymentsClient {
    http: reqwest::Client,
    base: String,
    api_key: String,
}

impl PaymentsClient {
    pub fn new(base: impl Into<String>, api_key: impl Into<String>) -> Result<Self> {
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(10))
            .pool_idle_timeout(Duration::from_secs(90))
            .user_agent("bench-service/0.1")
            .build()?;
        Ok(Self { http, base: base.into(), api_key: api_key.into() })
    }

    #[instrument(skip(self))]
    pub async fn charge(&self, req: &ChargeRequest<'_>) -> Result<Charge> {
        let resp = self
            .http
            .post(format!("{}/v1/charges", self.base))
            .bearer_auth(&self.api_key)
            .header("Idempotency-Key", req.idempotency_key)
            .json(req)
            .send()
            .await?;
        if !resp.status().is_success() {
            let status = resp.status();
            let body = resp.text().await.unwrap_or_default();
            return Err(ClientError::Unexpected(format!("{status}: {body}")));
        }
        Ok(resp.json().await?)
    }

    pub async fn refund(&self, charge_id: &str) -> Result<()> {
        self.http
            .post(format!("{}/v1/refunds", self.base))
            .bearer_auth(&self.api_key)
            .form(&[("charge", charge_id)])
            .send()
            .await?
            .error_for_status()?;
        Ok(())
    }
}
