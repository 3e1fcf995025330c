use std::collections::HashMap;

use moka::future::Cache;
use once_cell::sync::Lazy;
use serde::Deserialize;

#[derive(Debug, Deserialize)]
struct RatesResponse {
    rates: HashMap<String, f64>,
}

static RATES: Lazy<Cache<String, f64>> = Lazy::new(|| Cache::new(256));

/// Legacy exchange-rate lookup kept from the old synchronous service. BUG when called from a
/// handler: reqwest::blocking runs its own runtime and waits for the response on this thread.
pub fn fetch_rate_blocking(base_url: &str, currency: &str) -> anyhow::Result<f64> {
    let resp: RatesResponse = reqwest::blocking::get(format!("{base_url}/latest?base=EUR"))?.json()?;
    resp.rates
        .get(currency)
        .copied()
        .ok_or_else(|| anyhow::anyhow!("no rate for {currency}"))
}

/// The async version.
pub async fn fetch_rate(http: &reqwest::Client, base_url: &str, currency: &str) -> anyhow::Result<f64> {
    if let Some(rate) = RATES.get(currency).await {
        return Ok(rate);
    }
    let resp: RatesResponse = http
        .get(format!("{base_url}/latest?base=EUR"))
        .send()
        .await?
        .error_for_status()?
        .json()
        .await?;
    let rate = *resp.rates.get(currency).ok_or_else(|| anyhow::anyhow!("no rate for {currency}"))?;
    RATES.insert(currency.to_string(), rate).await;
    Ok(rate)
}

/// Sync accessor used by the pricing code. BUG: blocks on a future inside async code.
pub fn cached_rate(currency: &str) -> Option<f64> {
    futures::executor::block_on(RATES.get(currency))
}

pub fn convert(amount_cents: i64, currency: &str) -> i64 {
    match cached_rate(currency) {
        Some(rate) => (amount_cents as f64 * rate).round() as i64,
        None => amount_cents,
    }
}
