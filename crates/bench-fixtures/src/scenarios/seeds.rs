//! The seed articles' workloads, re-implemented from their descriptions (seeds 000 and 001).
//!
//! All four share one engine, [`run_seed`]: a fresh `new_multi_thread().worker_threads(N)`
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

use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::Barrier;

use crate::probe::{run_op, OpShape, Tally};
use crate::runtime::{on_fresh_runtime, PollLog, Watched, WorkerMetrics};
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

/// The four seed sweeps.
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
}

impl SeedSweep {
    pub const ALL: [SeedSweep; 4] = [
        SeedSweep::DemoPanic,
        SeedSweep::LoadRamp,
        SeedSweep::PerRequest,
        SeedSweep::Overhead,
    ];

    /// The name used as a `confirm` target and as the table group.
    pub fn name(self) -> &'static str {
        match self {
            SeedSweep::DemoPanic => "demo_panic",
            SeedSweep::LoadRamp => "demo_load_ramp",
            SeedSweep::PerRequest => "demo_per_request",
            SeedSweep::Overhead => "sched_overhead",
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
                        spec: SeedSpec::demo_panic(workers, tasks, b, rounds),
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
                        spec: SeedSpec::load_ramp(workers, n),
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
                        spec: SeedSpec::per_request(workers, c, rpt),
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
                            spec: SeedSpec::overhead(workers, tasks, b),
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
        }
    }
}

/// One point of a seed sweep.
#[derive(Debug, Clone, PartialEq)]
pub struct SeedPoint {
    pub sweep: SeedSweep,
    /// The swept value (blockers, tasks or concurrency).
    pub x: usize,
    pub label: String,
    pub spec: SeedSpec,
    pub published: Option<Published>,
}

impl SeedPoint {
    /// Stable scenario id, e.g. `seed/demo_panic/500t/4b`.
    pub fn id(&self) -> String {
        let s = &self.spec;
        match self.sweep {
            SeedSweep::DemoPanic | SeedSweep::Overhead => {
                format!(
                    "seed/{}/{}t/{}b",
                    self.sweep.name(),
                    s.async_tasks,
                    s.blockers
                )
            }
            SeedSweep::LoadRamp => format!("seed/{}/{}t", self.sweep.name(), s.async_tasks),
            SeedSweep::PerRequest => format!("seed/{}/{}c", self.sweep.name(), s.async_tasks),
        }
    }

    /// How many of `runs` to do at this point so that one point never takes much more than
    /// `budget` of wall time (the high-concurrency per-request points are minutes per run
    /// otherwise). Always at least one.
    pub fn runs_within(&self, runs: usize, budget: Duration) -> usize {
        let one = self.spec.estimated_wall().max(Duration::from_millis(1));
        let fit = (budget.as_secs_f64() / one.as_secs_f64()).floor() as usize;
        fit.clamp(1, runs.max(1))
    }

    /// Runs the point `runs` times on fresh runtimes.
    pub fn run(&self, runs: usize, progress: &mut dyn FnMut(&str)) -> ScenarioResult {
        let mut outcomes = Vec::with_capacity(runs);
        for i in 0..runs {
            progress(&format!("{} run {}/{}", self.id(), i + 1, runs));
            match run_seed(self.spec) {
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
            self.spec.workers,
            self.published,
        );
        result.series = self.series();
        result
    }

    /// The plot series: the async-task count where a sweep has several.
    pub fn series(&self) -> String {
        match self.sweep {
            SeedSweep::Overhead | SeedSweep::DemoPanic => {
                format!("{} tasks", self.spec.async_tasks)
            }
            SeedSweep::LoadRamp => "3 blockers".to_string(),
            SeedSweep::PerRequest => "30 % of requests block".to_string(),
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
            assert!(pts.iter().any(|p| p.published.is_some()), "{sweep:?}");
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
