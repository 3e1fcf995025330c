//! Seed 003, the inject queue: how long a task spawned from *outside* the runtime waits to start,
//! next to one spawned by a task on a worker.
//!
//! `Handle::spawn` from a plain thread pushes the task into the runtime's inject queue (one
//! mutex-protected MPSC queue for all workers). An idle worker is woken for it and takes a batch;
//! a *busy* worker, one whose local queue never runs dry, looks at the inject queue only once per
//! global-queue interval (tuned to about 200 µs of polls, 2–127 ticks) and then takes exactly one
//! task (tokio 1.54's `next_task`, the seed's baseline). A task spawned on a worker goes to that
//! worker's own queue (its LIFO slot first) and runs within the worker's next few polls.
//!
//! One run: a fresh runtime; optionally every worker kept busy the way the seed's
//! `spawn_many_remote_busy2` benchmark does (one chain per worker of tasks that spin 10 µs and
//! spawn their successor); `blocked` tasks that each hold a worker in `std::thread::sleep`; then
//! an *event* on a plain thread asks for a burst of tasks. [`SpawnPath::Remote`]: the thread
//! spawns them all with `Handle::spawn`. [`SpawnPath::Local`]: the thread wakes one task on the
//! runtime (that wake goes through the inject queue too), which spawns them with `tokio::spawn`.
//! The start latency of each burst task is measured from the event, so both paths are charged for
//! everything between "work arrived" and "work started".

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::Notify;

use crate::probe::Tally;
use crate::runtime::{on_fresh_runtime, PollLog, Watched, WorkerMetrics};
use crate::scenarios::seeds::LONG_POLL;
use crate::verdict::RunOutcome;

/// Where the burst is spawned from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SpawnPath {
    /// `Handle::spawn` from a plain thread: the inject queue.
    Remote,
    /// `tokio::spawn` from a task on a worker (woken from the plain thread).
    Local,
}

impl SpawnPath {
    pub fn name(self) -> &'static str {
        match self {
            SpawnPath::Remote => "remote",
            SpawnPath::Local => "local",
        }
    }
}

/// One inject-queue run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InjectSpec {
    pub workers: usize,
    /// Workers held in `std::thread::sleep(blocking)` when the burst arrives.
    pub blocked: usize,
    pub blocking: Duration,
    /// Keep every worker busy with spawn chains (the seed's `busy2`).
    pub busy: bool,
    /// Tasks in the burst. Below the local queue's 256 slots a local burst stays local; above,
    /// tokio moves half the local queue to the inject queue on overflow.
    pub burst: usize,
    pub path: SpawnPath,
}

/// The figures an inject run records ([`RunOutcome::figures`]).
pub mod figure {
    /// Time from the event until the last burst task started, ms (the seed's benchmarks time a
    /// whole burst).
    pub const BURST_MS: &str = "burst_ms";
}

/// How long a busy chain's task spins (the seed's `STALL_DUR`).
const STALL: Duration = Duration::from_micros(10);

impl InjectSpec {
    /// A lower bound on a run: the blockers' sleep when any worker is blocked.
    pub fn estimated_wall(&self) -> Duration {
        if self.blocked > 0 {
            self.blocking
        } else {
            Duration::from_millis(10)
        }
    }
}

/// Runs `spec` once on a fresh runtime.
pub fn run_inject(spec: InjectSpec) -> std::io::Result<RunOutcome> {
    on_fresh_runtime(spec.workers, move || inject_body(spec))?
}

/// Spins for the stall and spawns its successor until `running` is cleared: a worker that runs
/// this never finds its local queue empty.
fn busy_chain(running: Arc<AtomicBool>) {
    tokio::spawn(async move {
        if running.load(Ordering::Relaxed) {
            let t = Instant::now();
            while t.elapsed() < STALL {
                std::thread::yield_now();
            }
            busy_chain(running);
        }
    });
}

/// Start latencies of one burst: slot `i` holds task `i`'s latency in µs + 1 (0: not started).
struct Burst {
    latency_us: Vec<AtomicU64>,
    left: AtomicUsize,
    all_started: Notify,
}

impl Burst {
    fn new(n: usize) -> Arc<Burst> {
        Arc::new(Burst {
            latency_us: (0..n).map(|_| AtomicU64::new(0)).collect(),
            left: AtomicUsize::new(n),
            all_started: Notify::new(),
        })
    }

    /// The body of burst task `i`: records when it first ran.
    fn task(self: &Arc<Self>, i: usize, event: Instant) -> impl std::future::Future<Output = ()> {
        let burst = self.clone();
        async move {
            let us = event.elapsed().as_micros() as u64;
            burst.latency_us[i].store(us + 1, Ordering::Relaxed);
            if burst.left.fetch_sub(1, Ordering::AcqRel) == 1 {
                burst.all_started.notify_one();
            }
        }
    }
}

async fn inject_body(spec: InjectSpec) -> std::io::Result<RunOutcome> {
    let handle = tokio::runtime::Handle::current();
    let log = PollLog::new(LONG_POLL);
    let running = Arc::new(AtomicBool::new(true));
    if spec.busy {
        for _ in 0..spec.workers {
            let running = running.clone();
            tokio::spawn(async move { busy_chain(running) });
        }
        // Let the chains spread over the workers before anything is measured.
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let before = WorkerMetrics::read(&handle);
    let burst = Burst::new(spec.burst);

    // The local path's spawner: parked until the event wakes it.
    let (event_tx, event_rx) = tokio::sync::oneshot::channel::<Instant>();
    let spawner = {
        let burst = burst.clone();
        let n = spec.burst;
        tokio::spawn(async move {
            if let Ok(event) = event_rx.await {
                for i in 0..n {
                    tokio::spawn(burst.task(i, event));
                }
            }
        })
    };

    let blocking_now = Arc::new(AtomicUsize::new(0));
    let mut blockers = Vec::with_capacity(spec.blocked);
    for b in 0..spec.blocked {
        let blocking_now = blocking_now.clone();
        blockers.push(tokio::spawn(Watched::new(b, log.clone(), async move {
            blocking_now.fetch_add(1, Ordering::SeqCst);
            // The anti-pattern: the worker's poll loop stops for the whole sleep.
            std::thread::sleep(spec.blocking);
        })));
    }

    // The event, on a plain thread: once every blocker holds its worker (bounded: two blockers
    // queued on one worker never both start), ask for the burst.
    let trigger = {
        let burst = burst.clone();
        let blocking_now = blocking_now.clone();
        let handle = handle.clone();
        std::thread::Builder::new()
            .name("nb-event".into())
            .spawn(move || {
                let waiting = Instant::now();
                while blocking_now.load(Ordering::SeqCst) < spec.blocked
                    && waiting.elapsed() < spec.blocking / 2
                {
                    std::thread::yield_now();
                }
                let event = Instant::now();
                match spec.path {
                    SpawnPath::Remote => {
                        drop(event_tx);
                        for i in 0..spec.burst {
                            handle.spawn(burst.task(i, event));
                        }
                    }
                    SpawnPath::Local => {
                        let _ = event_tx.send(event);
                    }
                }
                event
            })?
    };

    let bound = spec.blocking * 2 + Duration::from_secs(10);
    let started = tokio::time::timeout(bound, burst.all_started.notified())
        .await
        .is_ok();
    running.store(false, Ordering::Relaxed);
    let event = trigger
        .join()
        .map_err(|_| std::io::Error::other("event thread panicked"))?;
    let wall_ms = event.elapsed().as_secs_f64() * 1e3;
    spawner.await.map_err(std::io::Error::other)?;
    for b in blockers {
        b.await.map_err(std::io::Error::other)?;
    }
    if !started {
        return Err(std::io::Error::other(format!(
            "burst did not start within {bound:?}"
        )));
    }
    let workers = WorkerMetrics::read(&handle).since(&before);

    let mut tally = Tally::with_capacity(spec.burst);
    let mut last_us = 0;
    for slot in &burst.latency_us {
        let us = slot.load(Ordering::Relaxed).saturating_sub(1);
        last_us = last_us.max(us);
        tally.ops += 1;
        tally.record(Duration::from_micros(us));
    }
    let mut outcome =
        RunOutcome::measured(&tally, &log.long_polls(), spec.workers, workers, wall_ms);
    outcome.figures = vec![(figure::BURST_MS, last_us as f64 / 1e3)];
    Ok(outcome)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_burst_task_is_measured_on_both_paths() {
        for path in [SpawnPath::Remote, SpawnPath::Local] {
            let spec = InjectSpec {
                workers: 2,
                blocked: 1,
                blocking: Duration::from_millis(20),
                busy: false,
                burst: 50,
                path,
            };
            let out = run_inject(spec).unwrap();
            assert_eq!(out.ops, 50, "{path:?}");
            let burst = out.figure(figure::BURST_MS).unwrap();
            assert!(burst * 1e3 >= out.max_us as f64 * 0.99, "{path:?}: {out:?}");
            let placement = out.placement.expect("the blocker's poll is long");
            assert_eq!(placement.per_task.len(), 1);
        }
    }
}
