//! The runtime under test, and the bookkeeping that says which worker ran what.
//!
//! Every scenario runs on a *fresh* `new_multi_thread()` runtime so that one run's queue state,
//! stolen tasks or timer wheel never leaks into the next. Each runtime thread gets a small index in
//! `on_thread_start`; [`Watched`] records, for every poll that holds its thread for longer than a
//! threshold, which thread that was and when. That answers the question single runs cannot: did
//! the four blockers really occupy four workers, or did the scheduler put two on one worker and
//! leave one free? ([`Placement`].)

use std::cell::Cell;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

thread_local! {
    static THREAD_INDEX: Cell<Option<usize>> = const { Cell::new(None) };
}

/// How long the harness waits for blocking-pool threads when a runtime is dropped. Bounded so a
/// stuck helper can never hang a confirmation run.
pub const SHUTDOWN_TIMEOUT: Duration = Duration::from_secs(5);

/// Builds the runtime the seeds describe: `Builder::new_multi_thread().worker_threads(workers)`
/// with all drivers enabled. Threads are numbered in start order (workers start at build time, so
/// they normally take the first indices; blocking-pool threads come later).
pub fn build_runtime(workers: usize) -> std::io::Result<tokio::runtime::Runtime> {
    runtime_builder(workers).build()
}

/// The builder behind [`build_runtime`], for scenarios that change one more setting (a small
/// `max_blocking_threads`, a thread name per runtime when several run side by side).
pub fn runtime_builder(workers: usize) -> tokio::runtime::Builder {
    let counter = Arc::new(AtomicUsize::new(0));
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    builder
        .worker_threads(workers.max(1))
        .enable_all()
        .thread_name("nb-fixture")
        .on_thread_start(move || {
            let index = counter.fetch_add(1, Ordering::Relaxed);
            THREAD_INDEX.with(|cell| cell.set(Some(index)));
        });
    builder
}

/// The index `build_runtime` gave the current thread, or `None` off the runtime's threads.
pub fn thread_index() -> Option<usize> {
    THREAD_INDEX.with(Cell::get)
}

/// Per-worker counters read from `tokio::runtime::RuntimeMetrics`, using only the stable subset
/// (busy duration and park counts; per-worker poll counts need `tokio_unstable`, so polls are
/// counted by [`PollLog`] instead).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct WorkerMetrics {
    /// `worker_total_busy_duration` per worker, in milliseconds. A worker stuck in a blocking
    /// call counts as busy: this is where a blocker shows up.
    pub busy_ms: Vec<f64>,
    /// `worker_park_count` per worker. A worker that never parks was never idle.
    pub parks: Vec<u64>,
}

impl WorkerMetrics {
    /// Reads the stable per-worker metrics of the runtime behind `handle`.
    pub fn read(handle: &tokio::runtime::Handle) -> WorkerMetrics {
        let metrics = handle.metrics();
        let workers = metrics.num_workers();
        WorkerMetrics {
            busy_ms: (0..workers)
                .map(|w| metrics.worker_total_busy_duration(w).as_secs_f64() * 1e3)
                .collect(),
            parks: (0..workers).map(|w| metrics.worker_park_count(w)).collect(),
        }
    }

    /// The difference `self - earlier`, so a run's numbers exclude runtime start-up.
    pub fn since(&self, earlier: &WorkerMetrics) -> WorkerMetrics {
        WorkerMetrics {
            busy_ms: self
                .busy_ms
                .iter()
                .zip(earlier.busy_ms.iter().chain(std::iter::repeat(&0.0)))
                .map(|(a, b)| (a - b).max(0.0))
                .collect(),
            parks: self
                .parks
                .iter()
                .zip(earlier.parks.iter().chain(std::iter::repeat(&0)))
                .map(|(a, b)| a.saturating_sub(*b))
                .collect(),
        }
    }
}

/// One poll that held a runtime thread for at least [`PollLog::threshold`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LongPoll {
    /// Which watched task (the caller's numbering: blocker or offender id).
    pub task: usize,
    /// The runtime thread index ([`thread_index`]); `None` if polled off the runtime.
    pub thread: Option<usize>,
    /// Start and end of the poll in microseconds since the log's origin.
    pub start_us: u64,
    pub end_us: u64,
}

/// Shared record of the long polls of one run.
///
/// Nothing shared is touched on an ordinary poll (no counters, no locks): the wrapper runs on
/// every poll of every measured task, and shared writes at a million polls per second would
/// slow the runtime under test. Per-task busy time and poll counts live in the task's own
/// [`Watched`].
#[derive(Debug)]
pub struct PollLog {
    origin: Instant,
    threshold: Duration,
    long_polls: Mutex<Vec<LongPoll>>,
}

impl PollLog {
    /// A log that keeps polls of at least `threshold` (1 ms is far above a normal poll and far
    /// below any blocking call the fixtures make).
    pub fn new(threshold: Duration) -> Arc<PollLog> {
        Arc::new(PollLog {
            origin: Instant::now(),
            threshold,
            long_polls: Mutex::new(Vec::new()),
        })
    }

    /// The long polls recorded so far, in start order.
    pub fn long_polls(&self) -> Vec<LongPoll> {
        let mut polls = self
            .long_polls
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        polls.sort_by_key(|p| (p.start_us, p.end_us, p.task));
        polls
    }

    fn record(&self, task: usize, start: Instant, took: Duration) {
        if took >= self.threshold {
            let start_us = start.saturating_duration_since(self.origin).as_micros() as u64;
            let poll = LongPoll {
                task,
                thread: thread_index(),
                start_us,
                end_us: start_us + took.as_micros() as u64,
            };
            self.long_polls
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(poll);
        }
    }
}

/// Time a watched task spent inside `poll` and how often it was polled.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TaskTiming {
    pub busy: Duration,
    pub polls: u64,
}

/// A future wrapper that measures every poll of the inner future: total busy time and count for
/// the task's own Sched:Busy figure, and long polls (a blocking call holding the worker) into the
/// shared [`PollLog`].
pub struct Watched<F> {
    inner: Pin<Box<F>>,
    task: usize,
    log: Arc<PollLog>,
    timing: TaskTiming,
}

impl<F: Future> Watched<F> {
    pub fn new(task: usize, log: Arc<PollLog>, inner: F) -> Watched<F> {
        Watched {
            inner: Box::pin(inner),
            task,
            log,
            timing: TaskTiming::default(),
        }
    }
}

impl<F: Future> Future for Watched<F> {
    type Output = (F::Output, TaskTiming);

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        // `Watched` is Unpin (the inner future is boxed), so plain field access is fine.
        let this = self.get_mut();
        let start = Instant::now();
        let result = this.inner.as_mut().poll(cx);
        let took = start.elapsed();
        this.timing.busy += took;
        this.timing.polls += 1;
        this.log.record(this.task, start, took);
        result.map(|out| (out, this.timing))
    }
}

/// Where the blocking polls of one run landed.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Placement {
    /// Distinct runtime threads that executed at least one long poll.
    pub distinct_workers: usize,
    /// The largest number of long polls in progress at the same instant, i.e. the most workers
    /// blocked at once (a worker runs one poll at a time, so overlaps are on distinct workers).
    pub peak_blocked: usize,
    /// Total time during which at least `workers` polls were blocking: no worker left to poll.
    pub saturated_ms: f64,
    /// For each watched task with long polls, the thread indices it blocked on, in order.
    pub per_task: Vec<(usize, Vec<usize>)>,
}

impl Placement {
    /// Sweeps the long polls of a run. `workers` is the runtime's worker count.
    pub fn from_long_polls(polls: &[LongPoll], workers: usize) -> Placement {
        let mut threads: Vec<usize> = polls.iter().filter_map(|p| p.thread).collect();
        threads.sort_unstable();
        threads.dedup();

        // Events: +1 at start, -1 at end; ends sort before starts at the same instant so
        // back-to-back polls on one worker never count as two.
        let mut events: Vec<(u64, i64)> = polls
            .iter()
            .flat_map(|p| [(p.start_us, 1), (p.end_us, -1)])
            .collect();
        events.sort_unstable();
        let (mut level, mut peak, mut saturated_us, mut since) = (0i64, 0i64, 0u64, 0u64);
        for (at, delta) in events {
            if level >= workers as i64 {
                saturated_us += at - since;
            }
            level += delta;
            since = at;
            peak = peak.max(level);
        }

        let mut per_task: Vec<(usize, Vec<usize>)> = Vec::new();
        for poll in polls {
            let Some(thread) = poll.thread else { continue };
            match per_task.iter_mut().find(|(task, _)| *task == poll.task) {
                Some((_, list)) => {
                    if list.last() != Some(&thread) {
                        list.push(thread);
                    }
                }
                None => per_task.push((poll.task, vec![thread])),
            }
        }
        per_task.sort_by_key(|(task, _)| *task);

        Placement {
            distinct_workers: threads.len(),
            peak_blocked: peak.max(0) as usize,
            saturated_ms: saturated_us as f64 / 1e3,
            per_task,
        }
    }

    /// Compact text: each task's first worker, e.g. `w0 w1 w2 w2` (two blockers shared w2).
    pub fn first_workers(&self) -> String {
        self.per_task
            .iter()
            .filter_map(|(_, list)| list.first())
            .map(|w| format!("w{w}"))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// Runs `make()` on a fresh runtime with `workers` workers and shuts it down with a bounded wait.
pub fn on_fresh_runtime<T, Fut>(workers: usize, make: impl FnOnce() -> Fut) -> std::io::Result<T>
where
    Fut: Future<Output = T>,
{
    Ok(on_runtime(build_runtime(workers)?, make))
}

/// Runs `make()` on `rt` (a fresh runtime built by the caller) and shuts it down with a bounded
/// wait.
pub fn on_runtime<T, Fut>(rt: tokio::runtime::Runtime, make: impl FnOnce() -> Fut) -> T
where
    Fut: Future<Output = T>,
{
    let out = rt.block_on(make());
    rt.shutdown_timeout(SHUTDOWN_TIMEOUT);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn poll(task: usize, thread: usize, start_us: u64, end_us: u64) -> LongPoll {
        LongPoll {
            task,
            thread: Some(thread),
            start_us,
            end_us,
        }
    }

    #[test]
    fn placement_counts_overlap_and_saturation() {
        // Four blockers on four workers, overlapping between 10 and 50.
        let polls = [
            poll(0, 0, 0, 50),
            poll(1, 1, 0, 50),
            poll(2, 2, 5, 60),
            poll(3, 3, 10, 60),
        ];
        let p = Placement::from_long_polls(&polls, 4);
        assert_eq!(p.distinct_workers, 4);
        assert_eq!(p.peak_blocked, 4);
        assert!((p.saturated_ms - 0.040).abs() < 1e-9, "{p:?}");
        assert_eq!(p.first_workers(), "w0 w1 w2 w3");
    }

    #[test]
    fn placement_sees_two_blockers_sharing_a_worker() {
        // Blockers 2 and 3 ran back to back on worker 2: never more than three blocked at once.
        let polls = [
            poll(0, 0, 0, 80),
            poll(1, 1, 0, 80),
            poll(2, 2, 0, 80),
            poll(3, 2, 80, 160),
        ];
        let p = Placement::from_long_polls(&polls, 4);
        assert_eq!(p.distinct_workers, 3);
        assert_eq!(p.peak_blocked, 3);
        assert_eq!(p.saturated_ms, 0.0);
        assert_eq!(p.first_workers(), "w0 w1 w2 w2");
    }

    #[test]
    fn watched_records_long_polls_on_the_worker_that_ran_them() {
        let log = PollLog::new(Duration::from_millis(5));
        let log2 = log.clone();
        let (placement, timing) = on_fresh_runtime(2, || async move {
            let task = tokio::spawn(Watched::new(7, log2, async {
                std::thread::sleep(Duration::from_millis(20));
                tokio::task::yield_now().await;
            }));
            let ((), timing) = task.await.unwrap();
            (Placement::from_long_polls(&log.long_polls(), 2), timing)
        })
        .unwrap();
        assert_eq!(placement.distinct_workers, 1);
        assert_eq!(placement.per_task.len(), 1);
        assert_eq!(placement.per_task[0].0, 7);
        assert!(timing.polls >= 2);
        assert!(timing.busy >= Duration::from_millis(20));
    }

    #[test]
    fn worker_metrics_difference_never_goes_negative() {
        let a = WorkerMetrics {
            busy_ms: vec![5.0, 1.0],
            parks: vec![3, 1],
        };
        let b = WorkerMetrics {
            busy_ms: vec![7.0, 1.0],
            parks: vec![4, 1],
        };
        let d = b.since(&a);
        assert_eq!(d.busy_ms, vec![2.0, 0.0]);
        assert_eq!(d.parks, vec![1, 0]);
    }
}
