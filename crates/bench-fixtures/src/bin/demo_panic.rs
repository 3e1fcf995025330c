//! `demo_panic`: a fixed async load (500 tasks) and N tasks that block their worker.
//!
//! ```text
//! demo_panic --async-tasks 500 --blocking-tasks 3 --rounds 10   # one worker stays free: no failures
//! demo_panic --async-tasks 500 --blocking-tasks 4 --rounds 10   # all four workers blocked: timeouts
//! ```
//! Each request task runs `rounds` requests of 10 × `sleep(work/10)` under a `timeout`; each
//! blocker runs `rounds` × (`std::thread::sleep(blocking)`, `yield_now`). Add `--runs N` to repeat
//! on fresh runtimes and get a verdict over runs.

use std::time::Duration;

use bench_fixtures::probe::OpShape;
use bench_fixtures::report::describe_run;
use bench_fixtures::scenarios::seeds::{run_many, SeedSpec};
use bench_fixtures::Summary;
use clap::Parser;

#[derive(Debug, Parser)]
#[command(
    name = "demo_panic",
    about = "Adding one blocking task to a fixed async load"
)]
struct Args {
    /// Tokio worker threads
    #[arg(long, default_value_t = 4)]
    workers: usize,
    /// Async request tasks
    #[arg(long, default_value_t = 500)]
    async_tasks: usize,
    /// Tasks that call std::thread::sleep on a worker
    #[arg(long, default_value_t = 4)]
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
    #[arg(long, default_value_t = 10)]
    rounds: usize,
    /// Fresh runtimes to repeat the scenario on
    #[arg(long, default_value_t = 1)]
    runs: usize,
}

fn main() -> std::io::Result<()> {
    let a = Args::parse();
    let spec = SeedSpec {
        op: OpShape {
            step: Duration::from_millis(a.work_ms) / 10,
            steps: 10,
            timeout: Some(Duration::from_millis(a.timeout_ms)),
        },
        blocking: Duration::from_millis(a.blocking_ms),
        ..SeedSpec::demo_panic(a.workers, a.async_tasks, a.blocking_tasks, a.rounds)
    };
    println!("=== Blocking in async: failure reproduction ===");
    println!(
        "workers {} | async tasks {} × {} requests = {} ops | blocking tasks {} × {} ms | timeout {} ms | work {} ms",
        a.workers,
        a.async_tasks,
        a.rounds,
        spec.total_ops(),
        a.blocking_tasks,
        a.blocking_ms,
        a.timeout_ms,
        a.work_ms
    );
    let runs = run_many(spec, a.runs)?;
    for (i, o) in runs.iter().enumerate() {
        println!("run {:>2}: {}", i + 1, describe_run(o, a.workers));
    }
    let s = Summary::of(&runs, a.workers);
    println!(
        "verdict: {} | failures {} % | p99 {} ms",
        s.verdict_text(),
        s.failure_pct.show(1),
        s.p99_ms.show(1)
    );
    Ok(())
}
