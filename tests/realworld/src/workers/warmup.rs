//! Cache warm-up from the last snapshot written at shutdown.

use std::fs::File;
use std::io::BufReader;
use std::time::{Duration, Instant};

use crate::routes::orders::Order;
use crate::state::AppState;

const SNAPSHOT: &str = "/var/lib/orders/cache-snapshot.json";

/// BUG: reads and parses a possibly large snapshot on the worker.
pub async fn warm(state: &AppState) -> anyhow::Result<usize> {
    let started = Instant::now();
    let orders: Vec<Order> = serde_json::from_reader(BufReader::new(File::open(SNAPSHOT)?))?;
    let n = orders.len();
    for order in orders {
        state.order_cache.insert(order.id, order).await;
    }
    tracing::info!(n, elapsed = ?started.elapsed(), "cache warmed");
    Ok(n)
}

/// Correct: writes the snapshot on the blocking pool.
pub async fn snapshot(state: &AppState) -> anyhow::Result<()> {
    let orders: Vec<Order> = state.order_cache.iter().map(|(_, o)| o).collect();
    tokio::task::spawn_blocking(move || -> anyhow::Result<()> {
        let file = File::create(SNAPSHOT)?;
        serde_json::to_writer(std::io::BufWriter::new(file), &orders)?;
        Ok(())
    })
    .await??;
    tokio::time::sleep(Duration::from_millis(1)).await;
    Ok(())
}
