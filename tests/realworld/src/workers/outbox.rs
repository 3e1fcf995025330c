//! Transactional outbox: events written next to orders are published to a Redis stream.

use std::fs::OpenOptions;
use std::io::Write;
use std::time::Duration;

use tokio_util::sync::CancellationToken;
use uuid::Uuid;

use crate::state::AppState;

const DEAD_LETTER: &str = "/var/lib/orders/dead-letter.jsonl";

pub async fn run(state: AppState, shutdown: CancellationToken) {
    loop {
        tokio::select! {
            _ = tokio::time::sleep(Duration::from_secs(2)) => {}
            _ = shutdown.cancelled() => return,
        }
        if let Err(e) = drain_once(&state).await {
            tracing::warn!(error = %e, "outbox drain failed");
        }
    }
}

async fn drain_once(state: &AppState) -> anyhow::Result<usize> {
    let mut client = state.reporting.get().await?;
    let tx = client.transaction().await?;
    let rows = tx
        .query("SELECT id, topic, payload FROM outbox ORDER BY id LIMIT 100 FOR UPDATE SKIP LOCKED", &[])
        .await?;
    let mut redis = state.redis.clone();
    let mut published = 0;
    for row in &rows {
        let id: Uuid = row.get("id");
        let topic: String = row.get("topic");
        let payload: serde_json::Value = row.get("payload");
        let result = redis::cmd("XADD")
            .arg(&topic)
            .arg("*")
            .arg("payload")
            .arg(payload.to_string())
            .query_async::<String>(&mut redis)
            .await;
        match result {
            Ok(_) => published += 1,
            Err(e) => dead_letter(id, &topic, &payload, &e.to_string())?,
        }
        tx.execute("DELETE FROM outbox WHERE id = $1", &[&id]).await?;
    }
    tx.commit().await?;
    Ok(published)
}

/// BUG: appends to a local file with std::fs from the async drain loop.
fn dead_letter(id: Uuid, topic: &str, payload: &serde_json::Value, error: &str) -> anyhow::Result<()> {
    let mut file = OpenOptions::new().create(true).append(true).open(DEAD_LETTER)?;
    let line = serde_json::json!({ "id": id, "topic": topic, "payload": payload, "error": error });
    writeln!(file, "{line}")?;
    Ok(())
}
