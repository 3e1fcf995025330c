use serde::Deserialize;

use crate::Result;

#[derive(Debug, Deserialize)]
pub struct Location {
    pub country: String,
    pub city: Option<String>,
}

/// Mistake: the blocking reqwest client is called from async code (it also panics inside a
/// Tokio runtime, but only at run time).
pub async fn locate(ip: &str) -> Result<Location> {
    let url = format!("https://geo.example.invalid/v1/{ip}");
    let loc = reqwest::blocking::get(url)?.json::<Location>()?;
    Ok(loc)
}

/// Correct: async client.
pub async fn locate_async(client: &reqwest::Client, ip: &str) -> Result<Location> {
    let url = format!("https://geo.example.invalid/v1/{ip}");
    Ok(client.get(url).send().await?.json().await?)
}
