//! The seed articles' workloads, re-implemented from their descriptions.
//!
//! Seeds 000 and 001 share one engine, [`run_seed`]: a fresh `new_multi_thread().worker_threads(N)`
//! runtime, *request* tasks that each run `rounds` probe operations, optional *blocker* tasks that
//! call `std::thread::sleep` and `yield_now` in a loop, and a `tokio::sync::Barrier` that releases
//! everything at once (the seeds' worst case: blocking calls overlap maximally at the start).
//!
//! | demo | requests | blocking |
//! |---|---|---|
//! | `demo_panic` | 500 tasks × 10 rounds of (10 × sleep 1 ms, 100 ms timeout) | N tasks × 10 × sleep 80 ms |
//! | `demo_load_ramp` | 50 … 20 000 tasks × 5 rounds | 3 tasks × 5 × sleep 80 ms |
//! | `demo_per_request` | 10 … 2000 tasks × 20 requests; 30 % first block 50 ms | inside the request |
//! | overhead benchmark | 50 or 500 tasks × 10 × sleep 10 ms, no timeout | N tasks × 5 × sleep 50 ms |
//!
//! Seeds 002–004 measure other things and have engines of their own, run through the same points,
//! fresh runtimes and verdicts ([`Workload`]): [`pool`] (1000 waits awaited, offloaded or
//! blocking), [`inject`] (start latency of remote vs local spawns) and [`cross_runtime`] (CPU work
//! on one runtime delaying I/O on another).

use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::Barrier;

use crate::probe::{run_op, OpShape, Tally};
use crate::runtime::{on_fresh_runtime, PollLog, Watched, WorkerMetrics};
use crate::scenarios::cross_runtime::{self, CrossRuntimeSpec, Isolation};
use crate::scenarios::inject::{self, InjectSpec, SpawnPath};
use crate::scenarios::pool::{self, PoolSpec, WaitMode};
use crate::scenarios::{Published, ScenarioResult};
use crate::verdict::{RunOutcome, Signal, Spread, Verdict};

/// Polls at least this long count as "blocking the worker" in [`Placement`]. The fixtures'
/// blocking calls last tens of milliseconds; ordinary polls take microseconds. On a loaded
/// 2-core machine the OS can preempt a worker in the middle of an ordinary poll for a few
/// milliseconds, which is why the threshold is not lower, and why placement only looks at the
/// tasks that are meant to block.
pub const LONG_POLL: Duration = Duration::from_millis(10);

/// One seed workload, fully parameterised.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SeedSpec {
    pub workers: usize,
    /// Request tasks (the victims that are measured).
    pub async_tasks: usize,
    /// Operations per request task.
    pub rounds: usize,
    pub op: OpShape,
    /// Dedicated blocker tasks and how many blocking calls each makes.
    pub blockers: usize,
    pub blocker_rounds: usize,
    /// Duration of each `std::thread::sleep`.
    pub blocking: Duration,
    /// `demo_per_request`: the fraction of requests that make the blocking call themselves, just
    /// before their timed async work.
    pub per_request: Option<f64>,
}

impl SeedSpec {
    /// `demo_panic --async-tasks 500 --blocking-tasks N --rounds 10`.
    pub fn demo_panic(workers: usize, async_tasks: usize, blockers: usize, rounds: usize) -> Self {
        SeedSpec {
            workers,
            async_tasks,
            rounds,
            op: OpShape::DEMO_REQUEST,
            blockers,
            blocker_rounds: rounds,
            blocking: Duration::from_millis(80),
            per_request: None,
        }
    }

    /// `demo_load_ramp --async-tasks N`: three 80 ms blockers, 5 rounds.
    pub fn load_ramp(workers: usize, async_tasks: usize) -> Self {
        SeedSpec {
            workers,
            async_tasks,
            rounds: 5,
            op: OpShape::DEMO_REQUEST,
            blockers: 3,
            blocker_rounds: 5,
            blocking: Duration::from_millis(80),
            per_request: None,
        }
    }

    /// `demo_per_request --concurrent-requests N`: 20 requests per task, 30 % block for 50 ms.
    pub fn per_request(workers: usize, concurrency: usize, requests_per_task: usize) -> Self {
        SeedSpec {
            workers,
            async_tasks: concurrency,
            rounds: requests_per_task,
            op: OpShape::DEMO_REQUEST,
            blockers: 0,
            blocker_rounds: 0,
            blocking: Duration::from_millis(50),
            per_request: Some(0.3),
        }
    }

    /// The scheduling-overhead benchmark: 10 × `sleep(10 ms)` per task, blockers 5 × 50 ms.
    pub fn overhead(workers: usize, async_tasks: usize, blockers: usize) -> Self {
        SeedSpec {
            workers,
            async_tasks,
            rounds: 10,
            op: OpShape::OVERHEAD_SLEEP,
            blockers,
            blocker_rounds: 5,
            blocking: Duration::from_millis(50),
            per_request: None,
        }
    }

    /// Total requests (operations) the spec issues.
    pub fn total_ops(&self) -> usize {
        self.async_tasks * self.rounds
    }

    /// A lower bound on one run's wall time: total blocking spread over the workers (the run can
    /// not finish before every blocking call has been served by some worker).
    pub fn estimated_wall(&self) -> Duration {
        let blocking_calls = match self.per_request {
            Some(p) => (self.total_ops() as f64 * p).ceil() as u32,
            None => (self.blockers * self.blocker_rounds) as u32,
        };
        let per_worker = self.blocking * blocking_calls / self.workers.max(1) as u32;
        let op_time = (self.op.step * self.op.steps as u32) * self.rounds as u32;
        per_worker.max(op_time)
    }
}

/// Whether request `id` takes the blocking path in `demo_per_request`: a golden-ratio sequence,
/// deterministic and evenly spread (the seed used the same construction), so exactly ≈ `p` of any
/// run of consecutive ids block and the pattern is identical from run to run.
pub fn hits_blocking_path(id: usize, p: f64) -> bool {
    const PHI_FRAC: f64 = 0.618_033_988_749_894_8;
    (id as f64 * PHI_FRAC).fract() < p
}

/// Runs `spec` once on a fresh runtime.
pub fn run_seed(spec: SeedSpec) -> std::io::Result<RunOutcome> {
    on_fresh_runtime(spec.workers, move || seed_body(spec))?
}

/// Runs `spec` `runs` times, each on a fresh runtime.
pub fn run_many(spec: SeedSpec, runs: usize) -> std::io::Result<Vec<RunOutcome>> {
    (0..runs.max(1)).map(|_| run_seed(spec)).collect()
}

async fn seed_body(spec: SeedSpec) -> std::io::Result<RunOutcome> {
    let handle = tokio::runtime::Handle::current();
    let log = PollLog::new(LONG_POLL);
    let barrier = Arc::new(Barrier::new(spec.async_tasks + spec.blockers + 1));
    let before = WorkerMetrics::read(&handle);

    let mut requests = Vec::with_capacity(spec.async_tasks);
    for i in 0..spec.async_tasks {
        let barrier = barrier.clone();
        requests.push(tokio::spawn(Watched::new(
            spec.blockers + i,
            log.clone(),
            async move {
                barrier.wait().await;
                let mut tally = Tally::with_capacity(spec.rounds * spec.op.steps);
                for round in 0..spec.rounds {
                    if let Some(p) = spec.per_request {
                        if hits_blocking_path(i * spec.rounds + round, p) {
                            // The anti-pattern: a synchronous call inside the async handler.
                            std::thread::sleep(spec.blocking);
                        }
                    }
                    run_op(spec.op, &mut tally).await;
                }
                tally
            },
        )));
    }
    let mut blockers = Vec::with_capacity(spec.blockers);
    for b in 0..spec.blockers {
        let barrier = barrier.clone();
        blockers.push(tokio::spawn(Watched::new(b, log.clone(), async move {
            barrier.wait().await;
            for _ in 0..spec.blocker_rounds {
                // The anti-pattern: the worker's poll loop stops for the whole sleep.
                std::thread::sleep(spec.blocking);
                tokio::task::yield_now().await;
            }
        })));
    }

    let start = Instant::now();
    barrier.wait().await;

    let mut total = Tally::with_capacity(spec.total_ops() * spec.op.steps);
    let mut sched_busy = Vec::with_capacity(spec.async_tasks);
    let mut polls = Vec::with_capacity(spec.async_tasks);
    for h in requests {
        let (tally, timing) = h.await.map_err(std::io::Error::other)?;
        total.merge(&tally);
        polls.push(timing.polls as f64);
        if !timing.busy.is_zero() {
            sched_busy.push(tally.sched.as_secs_f64() / timing.busy.as_secs_f64());
        }
    }
    for h in blockers {
        h.await.map_err(std::io::Error::other)?;
    }
    let wall_ms = start.elapsed().as_secs_f64() * 1e3;
    let workers = WorkerMetrics::read(&handle).since(&before);
    // Placement is about the blockers: dedicated blocker tasks (ids below `blockers`) or, in
    // the per-request demo, the request tasks that block themselves.
    let long_polls: Vec<_> = log
        .long_polls()
        .into_iter()
        .filter(|p| spec.per_request.is_some() || p.task < spec.blockers)
        .collect();

    Ok(RunOutcome {
        sched_busy: (!sched_busy.is_empty()).then(|| Spread::of(sched_busy).median),
        task_polls: (!polls.is_empty()).then(|| Spread::of(polls).median),
        ..RunOutcome::measured(&total, &long_polls, spec.workers, workers, wall_ms)
    })
}

/// The seed sweeps: the four demos of seeds 000/001, then one sweep per later seed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SeedSweep {
    /// `demo_panic`: failures against blockers (0–6) at 500 async tasks.
    DemoPanic,
    /// `demo_load_ramp`: failures against async tasks with 3 blockers.
    LoadRamp,
    /// `demo_per_request`: failures against concurrent requests.
    PerRequest,
    /// Overhead benchmark: p50/p99 against blockers at 50 and 500 async tasks.
    Overhead,
    /// Seed 002: 1000 waits awaited, offloaded to a default or small blocking pool, or blocking
    /// the workers; total time and an unrelated `tokio::fs::read`'s latency.
    PoolStarvation,
    /// Seed 003: start latency of a burst spawned from outside the runtime vs from a worker,
    /// against blocked workers, idle and busy.
    InjectQueue,
    /// Seed 004: I/O latency on the io runtime while the cpu runtime computes, and the fixes.
    CrossRuntime,
}

impl SeedSweep {
    pub const ALL: [SeedSweep; 7] = [
        SeedSweep::DemoPanic,
        SeedSweep::LoadRamp,
        SeedSweep::PerRequest,
        SeedSweep::Overhead,
        SeedSweep::PoolStarvation,
        SeedSweep::InjectQueue,
        SeedSweep::CrossRuntime,
    ];

    /// The name used as a `confirm` target and as the table group.
    pub fn name(self) -> &'static str {
        match self {
            SeedSweep::DemoPanic => "demo_panic",
            SeedSweep::LoadRamp => "demo_load_ramp",
            SeedSweep::PerRequest => "demo_per_request",
            SeedSweep::Overhead => "sched_overhead",
            SeedSweep::PoolStarvation => "pool_starvation",
            SeedSweep::InjectQueue => "inject_queue",
            SeedSweep::CrossRuntime => "cross_runtime",
        }
    }

    /// The seed article a sweep reproduces (the file name's prefix in the seeds' folder).
    pub fn seed(self) -> &'static str {
        match self {
            SeedSweep::DemoPanic | SeedSweep::LoadRamp | SeedSweep::PerRequest => "001",
            SeedSweep::Overhead => "000",
            SeedSweep::PoolStarvation => "002",
            SeedSweep::InjectQueue => "003",
            SeedSweep::CrossRuntime => "004",
        }
    }

    pub fn from_name(name: &str) -> Option<SeedSweep> {
        let name = name.replace('-', "_");
        SeedSweep::ALL
            .into_iter()
            .find(|s| s.name() == name || s.name().strip_prefix("demo_") == Some(name.as_str()))
    }

    /// The points of the sweep. `quick` gives the CI-sized version: fewer, cheaper points that
    /// stay far from the threshold.
    pub fn points(self, workers: usize, quick: bool) -> Vec<SeedPoint> {
        match self {
            SeedSweep::DemoPanic => {
                let (tasks, rounds, blockers): (usize, usize, Vec<usize>) = if quick {
                    (200, 4, vec![1, workers + 2])
                } else {
                    (500, 10, (0..=workers + 2).collect())
                };
                blockers
                    .into_iter()
                    .map(|b| SeedPoint {
                        sweep: self,
                        x: b,
                        label: format!(
                            "{b} blocker{}, {tasks} tasks",
                            if b == 1 { "" } else { "s" }
                        ),
                        workload: Workload::Starvation(SeedSpec::demo_panic(
                            workers, tasks, b, rounds,
                        )),
                        published: match (workers, b) {
                            (4, 3) => Some(Published {
                                text: "0 % failures",
                                signal: Signal::Failures,
                                expect: Verdict::Healthy,
                            }),
                            (4, 4) => Some(Published {
                                text: "34 % failures",
                                signal: Signal::Failures,
                                expect: Verdict::Starved,
                            }),
                            _ => None,
                        },
                    })
                    .collect()
            }
            SeedSweep::LoadRamp => {
                let levels: Vec<usize> = if quick {
                    vec![50]
                } else {
                    vec![50, 100, 500, 1000, 2000, 5000, 10_000, 20_000]
                };
                levels
                    .into_iter()
                    .map(|n| SeedPoint {
                        sweep: self,
                        x: n,
                        label: format!("{n} tasks, 3 blockers"),
                        workload: Workload::Starvation(SeedSpec::load_ramp(workers, n)),
                        published: if workers != 4 {
                            None
                        } else {
                            match n {
                                50 | 100 | 500 | 1000 | 2000 | 5000 => Some(Published {
                                    text: "0.0 % failures",
                                    signal: Signal::Failures,
                                    expect: Verdict::Healthy,
                                }),
                                10_000 => Some(Published {
                                    text: "0.5 % failures",
                                    signal: Signal::Failures,
                                    expect: Verdict::Healthy,
                                }),
                                20_000 => Some(Published {
                                    text: "96.3 % failures",
                                    signal: Signal::Failures,
                                    expect: Verdict::Starved,
                                }),
                                _ => None,
                            }
                        },
                    })
                    .collect()
            }
            SeedSweep::PerRequest => {
                let (levels, rpt): (Vec<usize>, usize) = if quick {
                    (vec![10, 100], 4)
                } else {
                    (vec![10, 15, 20, 30, 50, 100, 200, 500, 1000, 2000], 20)
                };
                levels
                    .into_iter()
                    .map(|c| SeedPoint {
                        sweep: self,
                        x: c,
                        label: format!("{c} concurrent"),
                        workload: Workload::Starvation(SeedSpec::per_request(workers, c, rpt)),
                        published: match (workers, c) {
                            (4, 10) | (4, 15) => Some(Published {
                                text: "0 % failures",
                                signal: Signal::Failures,
                                expect: Verdict::Healthy,
                            }),
                            (4, 50) => Some(Published {
                                text: "93–94 % failures",
                                signal: Signal::Failures,
                                expect: Verdict::Starved,
                            }),
                            _ => None,
                        },
                    })
                    .collect()
            }
            SeedSweep::Overhead => {
                let (loads, blockers): (Vec<usize>, Vec<usize>) = if quick {
                    (vec![200], vec![1, workers + 2])
                } else {
                    (vec![50, 500], (0..=workers).collect())
                };
                let mut points = Vec::new();
                for &tasks in &loads {
                    for &b in &blockers {
                        points.push(SeedPoint {
                            sweep: self,
                            x: b,
                            label: format!(
                                "{b} blocker{}, {tasks} tasks",
                                if b == 1 { "" } else { "s" }
                            ),
                            workload: Workload::Starvation(SeedSpec::overhead(workers, tasks, b)),
                            published: match (workers, tasks, b) {
                                (4, 500, 3) => Some(Published {
                                    text: "p50 1.31 ms, p99 1.5 ms (1.2:1)",
                                    signal: Signal::Tail,
                                    expect: Verdict::Healthy,
                                }),
                                (4, 500, 4) => Some(Published {
                                    text: "p50 1.30 ms, p99 140 ms (108:1)",
                                    signal: Signal::Tail,
                                    expect: Verdict::Starved,
                                }),
                                _ => None,
                            },
                        });
                    }
                }
                points
            }
            SeedSweep::PoolStarvation => pool_points(workers, quick),
            SeedSweep::InjectQueue => inject_points(workers, quick),
            SeedSweep::CrossRuntime => cross_runtime_points(workers, quick),
        }
    }
}

/// Seed 002's points: the same tasks and wait, waited four ways, at the article's size (1000
/// tasks of 1 s; the per-point budget gives the long blocking points a single run). Quick: 600
/// tasks of 30 ms, which scales every total down by the same factor (a total only depends on how
/// many waits each pool serves at once) and still exceeds the default blocking pool's 512 threads.
/// The small pool has 20 threads: the article's ~50 s for 1000 one-second waits is what a pool of
/// about 20 threads gives.
fn pool_points(workers: usize, quick: bool) -> Vec<SeedPoint> {
    let (tasks, wait) = if quick {
        (600, Duration::from_millis(30))
    } else {
        (1000, Duration::from_secs(1))
    };
    let async_figure = Published {
        text: "async: ~1 s for 1000 × 1 s",
        signal: Signal::Failures,
        expect: Verdict::Healthy,
    };
    let blocking_figure = Published {
        text: "blocking: ~50 s for 1000 × 1 s",
        signal: Signal::Failures,
        expect: Verdict::Starved,
    };
    [
        (WaitMode::AsyncSleep, Some(async_figure)),
        (WaitMode::SpawnBlocking { max_threads: None }, None),
        (
            WaitMode::SpawnBlocking {
                max_threads: Some(SMALL_BLOCKING_POOL),
            },
            Some(blocking_figure),
        ),
        (WaitMode::ThreadSleep, Some(blocking_figure)),
    ]
    .into_iter()
    .enumerate()
    .map(|(i, (mode, published))| SeedPoint {
        sweep: SeedSweep::PoolStarvation,
        x: i,
        label: mode.describe(),
        workload: Workload::Pool(PoolSpec {
            workers,
            tasks,
            wait,
            mode,
        }),
        published: (workers == 4).then_some(published).flatten(),
    })
    .collect()
}

/// The small blocking pool of seed 002 (see [`pool_points`]).
pub const SMALL_BLOCKING_POOL: usize = 20;

/// Seed 003's points: bursts of 200 tasks (below the 256-slot local queue) against 0–`workers`
/// blocked workers, idle and busy, from both paths; and bursts of 1000 on an unblocked runtime,
/// the size of the seed's `spawn_many_remote_*` benchmarks (a local burst that large overflows
/// into the inject queue too). Quick: idle with none or all workers blocked, and busy with two
/// blocked, the configuration furthest from the threshold in both directions.
fn inject_points(workers: usize, quick: bool) -> Vec<SeedPoint> {
    let mut shapes: Vec<(usize, bool, usize)> = Vec::new();
    if quick {
        shapes.extend([
            (0, false, 200),
            (workers, false, 200),
            (2.min(workers), true, 200),
        ]);
    } else {
        shapes.extend((0..=workers).map(|b| (b, false, 200)));
        shapes.extend((0..workers).map(|b| (b, true, 200)));
        shapes.extend([(0, false, 1000), (0, true, 1000)]);
    }
    let mut points = Vec::new();
    for (blocked, busy, burst) in shapes {
        for path in [SpawnPath::Remote, SpawnPath::Local] {
            points.push(SeedPoint {
                sweep: SeedSweep::InjectQueue,
                x: blocked,
                label: format!(
                    "{blocked} blocked, {}, {} ×{burst}",
                    if busy { "busy" } else { "idle" },
                    path.name()
                ),
                workload: Workload::Inject(InjectSpec {
                    workers,
                    blocked,
                    blocking: Duration::from_millis(50),
                    busy,
                    burst,
                    path,
                }),
                published: None,
            });
        }
    }
    points
}

/// Seed 004's points: the article's program with the CPU work inline, the article's workaround
/// and the two fixes. Quick: a shorter program (fewer, shorter cpu tasks), inline and the fixes.
fn cross_runtime_points(workers: usize, quick: bool) -> Vec<SeedPoint> {
    let isolations: &[Isolation] = if quick {
        &[
            Isolation::Inline,
            Isolation::SpawnBlocking,
            Isolation::DedicatedRuntime,
        ]
    } else {
        &[
            Isolation::Inline,
            Isolation::NoPoolReuse,
            Isolation::SpawnBlocking,
            Isolation::DedicatedRuntime,
        ]
    };
    isolations
        .iter()
        .enumerate()
        .map(|(i, &isolation)| {
            let article = CrossRuntimeSpec::article(workers, isolation);
            let spec = if quick {
                CrossRuntimeSpec {
                    cpu_work: Duration::from_millis(100),
                    ..article
                }
            } else {
                article
            };
            let published = match isolation {
                Isolation::Inline => Some(Published {
                    text: "io-5: 1.016 s for a 50 ms request",
                    signal: Signal::Failures,
                    expect: Verdict::Starved,
                }),
                Isolation::NoPoolReuse => Some(Published {
                    text: "pool_max_idle_per_host(0): solved",
                    signal: Signal::Failures,
                    expect: Verdict::Healthy,
                }),
                Isolation::DedicatedRuntime => Some(Published {
                    text: "dedicated runtime (CeresDB's fix): ~50 ms",
                    signal: Signal::Failures,
                    expect: Verdict::Healthy,
                }),
                Isolation::SpawnBlocking => None,
            };
            SeedPoint {
                sweep: SeedSweep::CrossRuntime,
                x: i,
                label: isolation.describe().to_string(),
                workload: Workload::CrossRuntime(spec),
                published,
            }
        })
        .collect()
}

/// What one seed point runs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Workload {
    /// Seeds 000/001: requests, blockers and timeouts ([`run_seed`]).
    Starvation(SeedSpec),
    /// Seed 002 ([`pool::run_pool`]).
    Pool(PoolSpec),
    /// Seed 003 ([`inject::run_inject`]).
    Inject(InjectSpec),
    /// Seed 004 ([`cross_runtime::run_cross_runtime`]).
    CrossRuntime(CrossRuntimeSpec),
}

impl Workload {
    /// One run on fresh runtimes.
    pub fn run_once(&self) -> std::io::Result<RunOutcome> {
        match *self {
            Workload::Starvation(spec) => run_seed(spec),
            Workload::Pool(spec) => pool::run_pool(spec),
            Workload::Inject(spec) => inject::run_inject(spec),
            Workload::CrossRuntime(spec) => cross_runtime::run_cross_runtime(spec),
        }
    }

    /// A lower bound on one run's wall time, for the per-point budget.
    pub fn estimated_wall(&self) -> Duration {
        match self {
            Workload::Starvation(spec) => spec.estimated_wall(),
            Workload::Pool(spec) => spec.estimated_wall(),
            Workload::Inject(spec) => spec.estimated_wall(),
            Workload::CrossRuntime(spec) => spec.estimated_wall(),
        }
    }

    /// The workers of the runtime whose blocked workers the placement counts.
    pub fn placement_workers(&self) -> usize {
        match self {
            Workload::Starvation(spec) => spec.workers,
            Workload::Pool(spec) => spec.workers,
            Workload::Inject(spec) => spec.workers,
            Workload::CrossRuntime(spec) => spec.cpu_workers,
        }
    }
}

/// One point of a seed sweep.
#[derive(Debug, Clone, PartialEq)]
pub struct SeedPoint {
    pub sweep: SeedSweep,
    /// The swept value (blockers, tasks or concurrency; the variant's index where a sweep
    /// compares variants).
    pub x: usize,
    pub label: String,
    pub workload: Workload,
    pub published: Option<Published>,
}

impl SeedPoint {
    /// Stable scenario id, e.g. `seed/demo_panic/500t/4b`.
    pub fn id(&self) -> String {
        let name = self.sweep.name();
        match &self.workload {
            Workload::Starvation(s) => match self.sweep {
                SeedSweep::LoadRamp => format!("seed/{name}/{}t", s.async_tasks),
                SeedSweep::PerRequest => format!("seed/{name}/{}c", s.async_tasks),
                _ => format!("seed/{name}/{}t/{}b", s.async_tasks, s.blockers),
            },
            Workload::Pool(s) => format!(
                "seed/{name}/{}t/{}ms/{}",
                s.tasks,
                s.wait.as_millis(),
                s.mode.name()
            ),
            Workload::Inject(s) => format!(
                "seed/{name}/{}t/{}b/{}/{}",
                s.burst,
                s.blocked,
                if s.busy { "busy" } else { "idle" },
                s.path.name()
            ),
            Workload::CrossRuntime(s) => format!("seed/{name}/{}", s.isolation.name()),
        }
    }

    /// How many of `runs` to do at this point so that one point never takes much more than
    /// `budget` of wall time (the high-concurrency per-request points are minutes per run
    /// otherwise). Always at least one.
    pub fn runs_within(&self, runs: usize, budget: Duration) -> usize {
        let one = self.workload.estimated_wall().max(Duration::from_millis(1));
        let fit = (budget.as_secs_f64() / one.as_secs_f64()).floor() as usize;
        fit.clamp(1, runs.max(1))
    }

    /// Runs the point `runs` times on fresh runtimes.
    pub fn run(&self, runs: usize, progress: &mut dyn FnMut(&str)) -> ScenarioResult {
        let mut outcomes = Vec::with_capacity(runs);
        for i in 0..runs {
            progress(&format!("{} run {}/{}", self.id(), i + 1, runs));
            match self.workload.run_once() {
                Ok(o) => outcomes.push(o),
                Err(e) => {
                    return ScenarioResult::failed(
                        self.id(),
                        self.sweep.name(),
                        self.label.clone(),
                        e.to_string(),
                    )
                }
            }
        }
        let mut result = ScenarioResult::new(
            self.id(),
            self.sweep.name(),
            self.label.clone(),
            self.x as f64,
            outcomes,
            self.workload.placement_workers(),
            self.published,
        );
        result.series = self.series();
        result
    }

    /// The plot series: the async-task count where a sweep has several; the spawn path and load
    /// for the inject queue.
    pub fn series(&self) -> String {
        match &self.workload {
            Workload::Starvation(s) => match self.sweep {
                SeedSweep::LoadRamp => "3 blockers".to_string(),
                SeedSweep::PerRequest => "30 % of requests block".to_string(),
                _ => format!("{} tasks", s.async_tasks),
            },
            Workload::Pool(s) => format!("{} tasks × {} ms", s.tasks, s.wait.as_millis()),
            Workload::Inject(s) => format!(
                "{}, {}, {} tasks",
                s.path.name(),
                if s.busy { "busy" } else { "idle" },
                s.burst
            ),
            Workload::CrossRuntime(s) => {
                format!("{} ms requests", s.delay.as_millis())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn golden_ratio_selection_hits_about_thirty_percent() {
        let hits = (0..10_000).filter(|&i| hits_blocking_path(i, 0.3)).count();
        assert!((2_950..=3_050).contains(&hits), "{hits}");
        // Consecutive windows of 20 requests (one task's requests) are close to 30 % too.
        for start in [0, 20, 400, 9_980] {
            let n = (start..start + 20)
                .filter(|&i| hits_blocking_path(i, 0.3))
                .count();
            assert!((4..=8).contains(&n), "window {start}: {n}");
        }
    }

    #[test]
    fn sweeps_cover_the_published_points() {
        for sweep in SeedSweep::ALL {
            let pts = sweep.points(4, false);
            // Seed 003 publishes benchmark times, not an outcome a verdict could match: its
            // figures are set beside ours in the document's later-seeds table instead.
            if sweep != SeedSweep::InjectQueue {
                assert!(pts.iter().any(|p| p.published.is_some()), "{sweep:?}");
            }
            for quick in [false, true] {
                let pts = sweep.points(4, quick);
                assert!(!pts.is_empty(), "{sweep:?}");
                assert!(pts.iter().all(|p| p.workload.placement_workers() > 0));
            }
            let mut ids: Vec<_> = pts.iter().map(SeedPoint::id).collect();
            ids.sort();
            ids.dedup();
            assert_eq!(ids.len(), pts.len(), "ids unique in {sweep:?}");
        }
        assert_eq!(SeedSweep::from_name("load-ramp"), Some(SeedSweep::LoadRamp));
        assert_eq!(
            SeedSweep::from_name("sched_overhead"),
            Some(SeedSweep::Overhead)
        );
        assert_eq!(SeedSweep::from_name("nope"), None);
    }

    #[test]
    fn run_budget_caps_the_expensive_per_request_points() {
        let pts = SeedSweep::PerRequest.points(4, false);
        let budget = Duration::from_secs(40);
        let at = |c: usize| {
            pts.iter()
                .find(|p| p.x == c)
                .unwrap()
                .runs_within(10, budget)
        };
        assert_eq!(at(10), 10);
        assert_eq!(at(50), 10);
        assert_eq!(at(2000), 1);
    }

    #[test]
    fn one_seed_run_reports_ops_and_placement() {
        let spec = SeedSpec {
            workers: 2,
            async_tasks: 20,
            rounds: 2,
            op: OpShape::DEMO_REQUEST,
            blockers: 1,
            blocker_rounds: 1,
            blocking: Duration::from_millis(20),
            per_request: None,
        };
        let out = run_seed(spec).unwrap();
        assert_eq!(out.ops, 40);
        let placement = out.placement.expect("the blocker's poll is long");
        assert_eq!(placement.per_task.len(), 1);
        assert_eq!(placement.per_task[0].0, 0, "task 0 is the blocker");
        assert_eq!(out.workers.busy_ms.len(), 2);
        assert!(out.sched_busy.is_some());
    }
}
