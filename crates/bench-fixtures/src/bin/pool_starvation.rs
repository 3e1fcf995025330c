//! `pool_starvation`: seed 002's program in Tokio terms: N tasks that each wait, four ways.
//!
//! ```text
//! pool_starvation --tasks 1000 --wait-ms 1000     # the article's size: ~1 s awaited, minutes blocking
//! pool_starvation --tasks 600 --wait-ms 30        # the CI size
//! ```
//! Each way of waiting runs on a fresh runtime: `tokio::time::sleep`, `spawn_blocking(||
//! thread::sleep)` with the default blocking pool and with `--max-blocking-threads`, and
//! `thread::sleep` on the workers. Prints the total time of each, its ratio to the awaited one, and
//! the latency of an unrelated `tokio::fs::read` issued every half wait meanwhile.

use std::time::Duration;

use bench_fixtures::report::describe_run;
use bench_fixtures::scenarios::pool::{figure, run_pool, PoolSpec, WaitMode};
use bench_fixtures::scenarios::seeds::SMALL_BLOCKING_POOL;
use bench_fixtures::verdict::Spread;
use clap::Parser;

#[derive(Debug, Parser)]
#[command(
    name = "pool_starvation",
    about = "1000 tasks that wait: awaited, offloaded to the blocking pool, or blocking the workers"
)]
struct Args {
    /// Tokio worker threads
    #[arg(long, default_value_t = 4)]
    workers: usize,
    /// Tasks that each wait once
    #[arg(long, default_value_t = 1000)]
    tasks: usize,
    /// How long each task waits, ms
    #[arg(long, default_value_t = 1000)]
    wait_ms: u64,
    /// The small blocking pool's size
    #[arg(long, default_value_t = SMALL_BLOCKING_POOL)]
    max_blocking_threads: usize,
    /// Fresh runtimes per way of waiting
    #[arg(long, default_value_t = 1)]
    runs: usize,
}

fn main() -> std::io::Result<()> {
    let a = Args::parse();
    let modes = [
        WaitMode::AsyncSleep,
        WaitMode::SpawnBlocking { max_threads: None },
        WaitMode::SpawnBlocking {
            max_threads: Some(a.max_blocking_threads),
        },
        WaitMode::ThreadSleep,
    ];
    println!(
        "=== Thread-pool starvation: {} tasks × {} ms ===",
        a.tasks, a.wait_ms
    );
    let mut async_total = None;
    for mode in modes {
        let spec = PoolSpec {
            workers: a.workers,
            tasks: a.tasks,
            wait: Duration::from_millis(a.wait_ms),
            mode,
        };
        let runs = (0..a.runs.max(1))
            .map(|_| run_pool(spec))
            .collect::<std::io::Result<Vec<_>>>()?;
        let of = |name| Spread::of(runs.iter().filter_map(|o| o.figure(name)));
        let total = of(figure::TOTAL_MS);
        let base = *async_total.get_or_insert(total.median);
        println!(
            "{:<32} total {} ms ({:.1}× the awaited run) | fs::read meanwhile {} ms (max {}) | timer probe p99 {} ms",
            mode.describe(),
            total.show(0),
            total.median / base.max(1e-9),
            of(figure::FS_READ_MS).show(2),
            of(figure::FS_READ_MAX_MS).show(1),
            of(figure::PROBE_P99_MS).show(1),
        );
        for o in &runs {
            println!("    {}", describe_run(o, a.workers));
        }
    }
    Ok(())
}
