use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::state::AppState;

/// Request counters. A std Mutex: the critical sections are a map update and never await.
#[derive(Default)]
pub struct Metrics {
    counters: Mutex<BTreeMap<&'static str, u64>>,
}

impl Metrics {
    pub fn incr(&self, name: &'static str) {
        *self.counters.lock().unwrap().entry(name).or_insert(0) += 1;
    }

    pub fn render(&self) -> String {
        let counters = self.counters.lock().unwrap();
        counters.iter().map(|(k, v)| format!("{k} {v}\n")).collect()
    }
}

/// Pushes the counters to the metrics gateway every 30 s.
pub async fn report_loop(state: AppState, shutdown: CancellationToken) {
    let mut tick = tokio::time::interval(Duration::from_secs(30));
    loop {
        tokio::select! {
            _ = tick.tick() => {}
            _ = shutdown.cancelled() => return,
        }
        let body = state.metrics.render();
        if let Err(e) = state.http.post(format!("{}/push", state.settings.webhook_url)).body(body).send().await {
            tracing::warn!(error = %e, "metrics push failed");
        }
    }
}

/// Wraps a future and records how long it took to complete.
pub struct Timed<F> {
    inner: std::pin::Pin<Box<F>>,
    started: std::time::Instant,
    name: &'static str,
}

impl<F> Timed<F> {
    pub fn new(name: &'static str, inner: F) -> Self {
        Self { inner: Box::pin(inner), started: std::time::Instant::now(), name }
    }
}

impl<F: std::future::Future> std::future::Future for Timed<F> {
    type Output = F::Output;

    fn poll(mut self: std::pin::Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> std::task::Poll<F::Output> {
        let name = self.name;
        let started = self.started;
        match self.inner.as_mut().poll(cx) {
            std::task::Poll::Ready(out) => {
                tracing::debug!(name, elapsed_ms = started.elapsed().as_millis() as u64, "completed");
                std::task::Poll::Ready(out)
            }
            std::task::Poll::Pending => std::task::Poll::Pending,
        }
    }
}

/// Request-counting middleware.
pub async fn track(
    axum::extract::State(metrics): axum::extract::State<std::sync::Arc<Metrics>>,
    req: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    metrics.incr("http.requests");
    Timed::new("http.request", next.run(req)).await
}
