//! `demo_load_ramp`: fixed blocking (3 tasks × 80 ms) against a growing async load.
//!
//! ```text
//! demo_load_ramp --run-all            # 50 … 20 000 async tasks
//! demo_load_ramp --async-tasks 5000   # one level
//! ```
//! With 3 of 4 workers blocked, one free worker must cycle through every task within the
//! timeout; past some load it cannot.

use std::time::Duration;

use bench_fixtures::probe::OpShape;
use bench_fixtures::scenarios::seeds::{run_many, SeedSpec};
use bench_fixtures::Summary;
use clap::Parser;

#[derive(Debug, Parser)]
#[command(
    name = "demo_load_ramp",
    about = "Fixed blocking, increasing async load"
)]
struct Args {
    /// Tokio worker threads
    #[arg(long, default_value_t = 4)]
    workers: usize,
    /// Async tasks (ignored with --run-all)
    #[arg(long, default_value_t = 100)]
    async_tasks: usize,
    /// Blocking tasks (fixed across levels)
    #[arg(long, default_value_t = 3)]
    blocking_tasks: usize,
    /// Timeout of each request, ms
    #[arg(long, default_value_t = 100)]
    timeout_ms: u64,
    /// Async work of each request (10 sleeps), ms
    #[arg(long, default_value_t = 10)]
    work_ms: u64,
    /// Length of each blocking call, ms
    #[arg(long, default_value_t = 80)]
    blocking_ms: u64,
    /// Requests per task, and blocking calls per blocker
    #[arg(long, default_value_t = 5)]
    rounds: usize,
    /// Run every level: 50, 100, 500, 1000, 2000, 5000, 10 000, 20 000
    #[arg(long)]
    run_all: bool,
    /// Fresh runtimes per level
    #[arg(long, default_value_t = 1)]
    runs: usize,
}

const LEVELS: [usize; 8] = [50, 100, 500, 1000, 2000, 5000, 10_000, 20_000];

fn main() -> std::io::Result<()> {
    let a = Args::parse();
    let levels: Vec<usize> = if a.run_all {
        LEVELS.to_vec()
    } else {
        vec![a.async_tasks]
    };
    println!("=== Load ramp: fixed blocking, increasing async load ===");
    println!(
        "workers {} | blocking tasks {} × {} ms (free workers: {}) | timeout {} ms | work {} ms | {} rounds | {} run(s) per level",
        a.workers,
        a.blocking_tasks,
        a.blocking_ms,
        a.workers.saturating_sub(a.blocking_tasks),
        a.timeout_ms,
        a.work_ms,
        a.rounds,
        a.runs
    );
    println!(
        "{:<12} {:>10} {:>12} {:>12} {:>16} {:>16}",
        "Async tasks", "Total ops", "Timed out", "Failure %", "verdict", "max blocked"
    );
    println!("{}", "-".repeat(82));
    for n in levels {
        let spec = SeedSpec {
            async_tasks: n,
            rounds: a.rounds,
            blockers: a.blocking_tasks,
            blocker_rounds: a.rounds,
            blocking: Duration::from_millis(a.blocking_ms),
            op: OpShape {
                step: Duration::from_millis(a.work_ms) / 10,
                steps: 10,
                timeout: Some(Duration::from_millis(a.timeout_ms)),
            },
            ..SeedSpec::load_ramp(a.workers, n)
        };
        let runs = run_many(spec, a.runs)?;
        let s = Summary::of(&runs, a.workers);
        let failed: u64 = runs.iter().map(|r| r.failed).sum::<u64>() / runs.len() as u64;
        println!(
            "{:<12} {:>10} {:>12} {:>12} {:>16} {:>16}",
            n,
            spec.total_ops(),
            failed,
            s.failure_pct.show(1),
            s.verdict_text(),
            s.peak_blocked.show(0)
        );
    }
    Ok(())
}
