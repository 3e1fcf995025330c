//! `demo_per_request`: 30 % of requests make a 50 ms blocking call inside the handler.
//!
//! ```text
//! demo_per_request --run-all                   # 10 … 2000 concurrent requests
//! demo_per_request --concurrent-requests 50
//! ```
//! At low concurrency the blocking calls rarely overlap; as concurrency grows they land on all
//! workers at once. Which requests block is deterministic (a golden-ratio sequence), identical
//! in every run. High levels take long: at 2000 concurrent requests a run is ~150 s.

use std::time::Duration;

use bench_fixtures::probe::OpShape;
use bench_fixtures::scenarios::seeds::{hits_blocking_path, run_many, SeedSpec};
use bench_fixtures::Summary;
use clap::Parser;

#[derive(Debug, Parser)]
#[command(
    name = "demo_per_request",
    about = "Blocking in the request path, scaling with traffic"
)]
struct Args {
    /// Tokio worker threads
    #[arg(long, default_value_t = 4)]
    workers: usize,
    /// Concurrent request tasks (ignored with --run-all)
    #[arg(long, default_value_t = 50)]
    concurrent_requests: usize,
    /// Timeout of the async part of each request, ms
    #[arg(long, default_value_t = 100)]
    timeout_ms: u64,
    /// Async work of each request (10 sleeps), ms
    #[arg(long, default_value_t = 10)]
    async_work_ms: u64,
    /// Length of the blocking call, ms
    #[arg(long, default_value_t = 50)]
    blocking_call_ms: u64,
    /// Fraction of requests that take the blocking path
    #[arg(long, default_value_t = 0.3)]
    blocking_probability: f64,
    /// Sequential requests per task
    #[arg(long, default_value_t = 20)]
    requests_per_task: usize,
    /// Run every level: 10, 15, 20, 30, 50, 100, 200, 500, 1000, 2000
    #[arg(long)]
    run_all: bool,
    /// Fresh runtimes per level
    #[arg(long, default_value_t = 1)]
    runs: usize,
}

const LEVELS: [usize; 10] = [10, 15, 20, 30, 50, 100, 200, 500, 1000, 2000];

fn main() -> std::io::Result<()> {
    let a = Args::parse();
    let levels: Vec<usize> = if a.run_all {
        LEVELS.to_vec()
    } else {
        vec![a.concurrent_requests]
    };
    println!("=== Per-request blocking: traffic ramp ===");
    println!(
        "workers {} | {:.0} % of requests block {} ms | async work {} ms | timeout {} ms | {} requests per task | {} run(s) per level",
        a.workers,
        a.blocking_probability * 100.0,
        a.blocking_call_ms,
        a.async_work_ms,
        a.timeout_ms,
        a.requests_per_task,
        a.runs
    );
    println!(
        "{:<11} {:>10} {:>12} {:>11} {:>16} {:>16} {:>12}",
        "Concurrent",
        "Total ops",
        "Block calls",
        "Timed out",
        "Failure %",
        "verdict",
        "max blocked"
    );
    println!("{}", "-".repeat(94));
    for c in levels {
        let spec = SeedSpec {
            op: OpShape {
                step: Duration::from_millis(a.async_work_ms) / 10,
                steps: 10,
                timeout: Some(Duration::from_millis(a.timeout_ms)),
            },
            blocking: Duration::from_millis(a.blocking_call_ms),
            per_request: Some(a.blocking_probability),
            ..SeedSpec::per_request(a.workers, c, a.requests_per_task)
        };
        let block_calls = (0..spec.total_ops())
            .filter(|&i| hits_blocking_path(i, a.blocking_probability))
            .count();
        let runs = run_many(spec, a.runs)?;
        let s = Summary::of(&runs, a.workers);
        let failed: u64 = runs.iter().map(|r| r.failed).sum::<u64>() / runs.len() as u64;
        println!(
            "{:<11} {:>10} {:>12} {:>11} {:>16} {:>16} {:>12}",
            c,
            spec.total_ops(),
            block_calls,
            failed,
            s.failure_pct.show(1),
            s.verdict_text(),
            s.peak_blocked.show(0)
        );
    }
    Ok(())
}
