//! `sched_overhead`: the scheduling-overhead benchmark, with the seed's Sched:Busy view.
//!
//! Async tasks do 10 × `tokio::time::sleep(10 ms)` and record elapsed − 10 ms in an
//! hdrhistogram; blockers do 5 × `std::thread::sleep(50 ms)`. Reports p50, p99, max and the
//! p99:p50 ratio per blocker count, the per-task Sched:Busy ratio (time waiting to be polled
//! over time being polled, the tokio-console view of the seed), and per-worker busy time and park
//! counts from the stable `RuntimeMetrics`.
//!
//! ```text
//! sched_overhead --run-all --runs 10          # 50 and 500 tasks × 0–4 blockers
//! sched_overhead --async-tasks 500 --blocking-tasks 4
//! ```

use std::time::Duration;

use bench_fixtures::probe::OpShape;
use bench_fixtures::scenarios::seeds::{run_many, SeedSpec};
use bench_fixtures::verdict::{RunOutcome, Spread};
use bench_fixtures::Summary;
use clap::Parser;

#[derive(Debug, Parser)]
#[command(
    name = "sched_overhead",
    about = "Async task latency under varying blocking load"
)]
struct Args {
    /// Tokio worker threads
    #[arg(long, default_value_t = 4)]
    workers: usize,
    /// Async tasks that are measured (ignored with --run-all)
    #[arg(long, default_value_t = 200)]
    async_tasks: usize,
    /// Blocking tasks (ignored with --run-all)
    #[arg(long, default_value_t = 0)]
    blocking_tasks: usize,
    /// Each async sleep, ms
    #[arg(long, default_value_t = 10)]
    async_sleep_ms: u64,
    /// Each blocking sleep, ms
    #[arg(long, default_value_t = 50)]
    blocking_sleep_ms: u64,
    /// Sleeps per async task
    #[arg(long, default_value_t = 10)]
    iterations: usize,
    /// Blocking sleeps per blocker
    #[arg(long, default_value_t = 5)]
    blocking_iterations: usize,
    /// Run the seed's matrix: 50 and 500 async tasks × 0–4 blockers
    #[arg(long)]
    run_all: bool,
    /// Fresh runtimes per scenario
    #[arg(long, default_value_t = 1)]
    runs: usize,
}

fn busy_view(runs: &[RunOutcome]) -> String {
    // Per worker, median busy ms and parks over runs, workers sorted by busy time per run.
    let workers = runs
        .iter()
        .map(|r| r.workers.busy_ms.len())
        .max()
        .unwrap_or(0);
    let mut cells = Vec::new();
    for w in 0..workers {
        let busy = Spread::of(runs.iter().filter_map(|r| {
            let mut v = r.workers.busy_ms.clone();
            v.sort_by(|a, b| b.total_cmp(a));
            v.get(w).copied()
        }));
        cells.push(format!("{:.0}", busy.median));
    }
    cells.join("/")
}

fn main() -> std::io::Result<()> {
    let a = Args::parse();
    let custom = |tasks: usize, blockers: usize| SeedSpec {
        op: OpShape {
            step: Duration::from_millis(a.async_sleep_ms),
            steps: 1,
            timeout: None,
        },
        rounds: a.iterations,
        blocker_rounds: a.blocking_iterations,
        blocking: Duration::from_millis(a.blocking_sleep_ms),
        ..SeedSpec::overhead(a.workers, tasks, blockers)
    };
    let scenarios: Vec<(String, SeedSpec)> = if a.run_all {
        let mut v = vec![("baseline/no-block".to_string(), custom(500, 0))];
        for (name, tasks) in [("low-async", 50), ("high-async", 500)] {
            for b in 0..=a.workers {
                v.push((format!("{name}/{b}-blockers"), custom(tasks, b)));
            }
        }
        v
    } else {
        vec![(
            format!("custom(a={},b={})", a.async_tasks, a.blocking_tasks),
            custom(a.async_tasks, a.blocking_tasks),
        )]
    };
    println!(
        "{:<24} {:>6} {:>6} {:>6} {:>10} {:>14} {:>10} {:>8} {:>14} {:>11} {:>11} {:>22}",
        "Scenario",
        "Async",
        "Block",
        "runs",
        "p50 (ms)",
        "p99 (ms)",
        "max (ms)",
        "p99:p50",
        "verdict",
        "Sched:Busy",
        "polls/task",
        "worker busy ms (sorted)"
    );
    println!("{}", "-".repeat(158));
    for (label, spec) in scenarios {
        let runs = run_many(spec, a.runs)?;
        let s = Summary::of(&runs, a.workers);
        let max = Spread::of(runs.iter().map(|r| r.max_us as f64 / 1e3));
        println!(
            "{:<24} {:>6} {:>6} {:>6} {:>10} {:>14} {:>10} {:>8.1} {:>14} {:>11} {:>11} {:>22}",
            label,
            spec.async_tasks,
            spec.blockers,
            runs.len(),
            format!("{:.2}", s.p50_ms.median),
            s.p99_ms.show(1),
            format!("{:.1}", max.median),
            s.ratio.median,
            s.verdict_text(),
            format!("{:.0}:1", s.sched_busy.median),
            format!(
                "{:.0}",
                Spread::of(runs.iter().filter_map(|r| r.task_polls)).median
            ),
            busy_view(&runs)
        );
    }
    println!(
        "\nconfig: workers={}, async_sleep={} ms, blocking_sleep={} ms, iterations={}, blocking_iterations={}, runs={}",
        a.workers, a.async_sleep_ms, a.blocking_sleep_ms, a.iterations, a.blocking_iterations, a.runs
    );
    Ok(())
}
