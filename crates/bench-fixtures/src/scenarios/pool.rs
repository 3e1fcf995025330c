//! Seed 002, .NET thread-pool starvation, in Tokio terms: offloading is not free.
//!
//! The article's program starts 1000 tasks that each wait one second, once awaiting the delay
//! (`await Task.Delay`, ~1 s in total) and once blocking a pool thread on it
//! (`Task.Delay(..).Wait()`, ~50 s: the pool grows by a thread or two a second). Tokio has two
//! pools where .NET has one: the fixed set of workers and the blocking pool that `spawn_blocking`
//! grows on demand up to `max_blocking_threads` (512 by default). So the same 1000 waits run here
//! four ways ([`WaitMode`]): awaited (`tokio::time::sleep`), offloaded (`spawn_blocking(||
//! thread::sleep)`) into the default pool and into a small one, and blocking the workers
//! themselves (`thread::sleep` in the task).
//!
//! Measured per run: the total time until the last wait finished; each wait's *lateness* (when it
//! finished, minus the wait; a wait a whole wait late counts as a failure: it finished in a later
//! "wave"); the latency of an unrelated `tokio::fs::read` of a small file issued every
//! half wait while the waits run (itself a `spawn_blocking`, so it queues behind the waits in a
//! saturated pool: the second-order effect); and the demos' timer probe (10 × `sleep(1 ms)`), which
//! says whether the *workers* stayed free.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use tokio::sync::Barrier;

use crate::probe::{run_op, OpShape, Tally};
use crate::runtime::{on_runtime, runtime_builder, PollLog, Watched, WorkerMetrics};
use crate::scenarios::category::TempDir;
use crate::scenarios::seeds::LONG_POLL;
use crate::verdict::{RunOutcome, Spread};

/// How each of the tasks waits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum WaitMode {
    /// `tokio::time::sleep(wait).await`: the article's `await Task.Delay`.
    AsyncSleep,
    /// `spawn_blocking(|| thread::sleep(wait)).await` on a runtime whose blocking pool is capped
    /// at `max_threads` (`None`: tokio's default, 512).
    SpawnBlocking { max_threads: Option<usize> },
    /// `thread::sleep(wait)` inside the task: the article's `.Wait()` on a pool thread, where the
    /// pool is the runtime's fixed set of workers.
    ThreadSleep,
}

impl WaitMode {
    /// Short name for ids and plot labels.
    pub fn name(self) -> String {
        match self {
            WaitMode::AsyncSleep => "sleep".into(),
            WaitMode::SpawnBlocking { max_threads: None } => "spawn_blocking".into(),
            WaitMode::SpawnBlocking {
                max_threads: Some(n),
            } => format!("spawn_blocking-{n}"),
            WaitMode::ThreadSleep => "thread_sleep".into(),
        }
    }

    /// What the tasks call, for the table and the plot.
    pub fn describe(self) -> String {
        match self {
            WaitMode::AsyncSleep => "tokio::time::sleep".into(),
            WaitMode::SpawnBlocking { max_threads: None } => "spawn_blocking, default pool".into(),
            WaitMode::SpawnBlocking {
                max_threads: Some(n),
            } => format!("spawn_blocking, {n} threads"),
            WaitMode::ThreadSleep => "thread::sleep on the workers".into(),
        }
    }
}

/// One pool-starvation run, fully parameterised (CI runs it scaled down; the article's size is
/// 1000 tasks × 1 s).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PoolSpec {
    pub workers: usize,
    /// Tasks that each wait once.
    pub tasks: usize,
    /// How long each waits.
    pub wait: Duration,
    pub mode: WaitMode,
}

/// The figures a pool run records ([`RunOutcome::figures`]).
pub mod figure {
    /// Time until the last task finished its wait, ms.
    pub const TOTAL_MS: &str = "total_ms";
    /// Median and maximum latency of the unrelated `tokio::fs::read`s issued during the run, ms.
    pub const FS_READ_MS: &str = "fs_read_ms";
    pub const FS_READ_MAX_MS: &str = "fs_read_max_ms";
    /// p99 scheduling overhead of the timer probe (are the workers free?), ms.
    pub const PROBE_P99_MS: &str = "probe_p99_ms";
}

/// Timer-probe tasks running beside the waits: enough to see a blocked worker, few enough to
/// cost nothing next to 1000 tasks.
const PROBE_TASKS: usize = 8;

impl PoolSpec {
    /// A wait that ended this late (or later) is a failure: a whole wait late, it can only have
    /// run in a later wave than the first, or its thread was held for as long. A later wave can
    /// never end sooner, so the blocking variants fail by construction, and an awaited wait has a
    /// whole wait of slack for a loaded machine.
    pub fn deadline(&self) -> Duration {
        self.wait * 2
    }

    /// The time the waits need at least: the number of waves the pool serving them needs.
    pub fn estimated_wall(&self) -> Duration {
        let servers = match self.mode {
            WaitMode::AsyncSleep => self.tasks,
            WaitMode::SpawnBlocking { max_threads } => max_threads.unwrap_or(512),
            WaitMode::ThreadSleep => self.workers,
        }
        .max(1);
        self.wait * self.tasks.div_ceil(servers) as u32
    }
}

/// Runs `spec` once on a fresh runtime (with the blocking pool capped as the mode says).
pub fn run_pool(spec: PoolSpec) -> std::io::Result<RunOutcome> {
    let dir = TempDir::new("pool")?;
    let file = dir.path().join("config.toml");
    std::fs::write(&file, b"[service]\nname = \"unrelated\"\n")?;
    let mut builder = runtime_builder(spec.workers);
    if let WaitMode::SpawnBlocking {
        max_threads: Some(n),
    } = spec.mode
    {
        builder.max_blocking_threads(n.max(1));
    }
    on_runtime(builder.build()?, move || pool_body(spec, file))
}

async fn pool_body(spec: PoolSpec, file: std::path::PathBuf) -> std::io::Result<RunOutcome> {
    let handle = tokio::runtime::Handle::current();
    let log = PollLog::new(LONG_POLL);
    let barrier = Arc::new(Barrier::new(spec.tasks + 1));
    let before = WorkerMetrics::read(&handle);
    // Set just before the barrier releases the waits: each measures from the same instant.
    let start = Arc::new(OnceLock::<Instant>::new());

    let mut waiters = Vec::with_capacity(spec.tasks);
    for i in 0..spec.tasks {
        let barrier = barrier.clone();
        let start = start.clone();
        waiters.push(tokio::spawn(Watched::new(i, log.clone(), async move {
            barrier.wait().await;
            match spec.mode {
                WaitMode::AsyncSleep => tokio::time::sleep(spec.wait).await,
                WaitMode::SpawnBlocking { .. } => {
                    let wait = spec.wait;
                    tokio::task::spawn_blocking(move || std::thread::sleep(wait))
                        .await
                        .map_err(std::io::Error::other)?;
                }
                // The anti-pattern: the worker's poll loop stops for the whole wait.
                WaitMode::ThreadSleep => std::thread::sleep(spec.wait),
            }
            let started = start.get().copied().unwrap_or_else(Instant::now);
            Ok::<_, std::io::Error>(started.elapsed())
        })));
    }

    let done = Arc::new(AtomicBool::new(false));
    let mut probes = Vec::with_capacity(PROBE_TASKS);
    for _ in 0..PROBE_TASKS {
        let done = done.clone();
        probes.push(tokio::spawn(async move {
            let mut tally = Tally::new();
            while !done.load(Ordering::Relaxed) {
                run_op(OpShape::DEMO_REQUEST, &mut tally).await;
            }
            tally
        }));
    }

    let t0 = *start.get_or_init(Instant::now);
    barrier.wait().await;
    let reads = tokio::spawn(read_while_waiting(file, spec.wait / 2, done.clone()));

    let mut lateness = Tally::with_capacity(spec.tasks);
    for h in waiters {
        let (finished, _) = h.await.map_err(std::io::Error::other)?;
        let late = finished?.saturating_sub(spec.wait);
        lateness.ops += 1;
        if late + spec.wait >= spec.deadline() {
            lateness.timed_out += 1;
        }
        lateness.record(late);
    }
    let total = t0.elapsed();
    done.store(true, Ordering::Relaxed);
    let reads = reads.await.map_err(std::io::Error::other)??;
    let mut probe = Tally::new();
    for p in probes {
        probe.merge(&p.await.map_err(std::io::Error::other)?);
    }
    let workers = WorkerMetrics::read(&handle).since(&before);
    let long_polls = log.long_polls();

    let mut outcome = RunOutcome::measured(
        &lateness,
        &long_polls,
        spec.workers,
        workers,
        total.as_secs_f64() * 1e3,
    );
    let reads_ms = Spread::of(reads.iter().map(|d| d.as_secs_f64() * 1e3));
    outcome.figures = vec![
        (figure::TOTAL_MS, total.as_secs_f64() * 1e3),
        (figure::FS_READ_MS, reads_ms.median),
        (figure::FS_READ_MAX_MS, reads_ms.max),
        (
            figure::PROBE_P99_MS,
            probe.distribution().percentile_us(99.0) as f64 / 1e3,
        ),
    ];
    Ok(outcome)
}

/// Issues an unrelated `tokio::fs::read` of `file` every `every` until `done`, each in a task of
/// its own (so a read stuck in the blocking pool's queue does not hold back the next), and returns
/// their latencies, each measured from the tick it was due at: a read the starved reader could
/// only issue late was late by that much too. At least one read is made.
async fn read_while_waiting(
    file: std::path::PathBuf,
    every: Duration,
    done: Arc<AtomicBool>,
) -> std::io::Result<Vec<Duration>> {
    let mut reads = Vec::new();
    let mut ticker = tokio::time::interval(every.max(Duration::from_millis(1)));
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    ticker.tick().await;
    loop {
        let due = ticker.tick().await.into_std();
        let file = file.clone();
        reads.push(tokio::spawn(async move {
            tokio::fs::read(&file).await.map(|_| due.elapsed())
        }));
        if done.load(Ordering::Relaxed) {
            break;
        }
    }
    let mut out = Vec::with_capacity(reads.len());
    for r in reads {
        out.push(r.await.map_err(std::io::Error::other)??);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_estimate_counts_the_waves_of_each_pool() {
        let spec = |mode| PoolSpec {
            workers: 4,
            tasks: 1000,
            wait: Duration::from_secs(1),
            mode,
        };
        let secs = |mode| spec(mode).estimated_wall().as_secs();
        assert_eq!(secs(WaitMode::AsyncSleep), 1);
        assert_eq!(secs(WaitMode::SpawnBlocking { max_threads: None }), 2);
        assert_eq!(
            secs(WaitMode::SpawnBlocking {
                max_threads: Some(20)
            }),
            50
        );
        assert_eq!(secs(WaitMode::ThreadSleep), 250);
        assert_eq!(
            spec(WaitMode::AsyncSleep).deadline(),
            Duration::from_millis(2000)
        );
    }

    #[test]
    fn a_small_pool_serialises_waits_and_queues_an_unrelated_read() {
        let spec = PoolSpec {
            workers: 2,
            tasks: 8,
            wait: Duration::from_millis(20),
            mode: WaitMode::SpawnBlocking {
                max_threads: Some(2),
            },
        };
        let out = run_pool(spec).unwrap();
        assert_eq!(out.ops, 8);
        // Four waves of two: at least the six waits after the first wave are late.
        assert!(out.failed >= 6, "{out:?}");
        assert!(out.figure(figure::TOTAL_MS).unwrap() >= 80.0);
        assert!(out.figure(figure::FS_READ_MS).is_some());
        assert!(out.placement.is_none(), "no worker was blocked");
    }
}
