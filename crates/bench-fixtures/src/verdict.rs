//! From noisy runs to a robust verdict.
//!
//! A single run is fragile: the timer has 1 ms resolution, p99 moves in steps of the blocking
//! duration, and the scheduler sometimes puts two blockers on one worker. So each run gets a
//! verdict from two independent signals, and a scenario's verdict is the majority over fresh
//! runtimes, reported together with how many runs disagreed and the spread of the numbers.
//!
//! * **failure fraction** — operations whose `tokio::time::timeout` expired. Starved at ≥ 1 %.
//! * **p99 : p50 of the scheduling overhead** — the seeds' bimodality signal (1.2 : 1 healthy,
//!   108 : 1 starved). Starved at ≥ 20 : 1. The median is floored at 1 ms, the timer's
//!   resolution: a sub-millisecond median says nothing about the runtime and would turn a 2 ms p99
//!   into a false alarm. 20 : 1 (a p99 of 20 ms or more) sits between what a *free* worker pool
//!   shows when the OS is short of CPUs — 4 workers plus 4 CPU-bound `spawn_blocking` threads
//!   on 2 CPUs reach a p99 of 5–15 ms with no worker ever blocked — and what a blocked pool
//!   shows, one blocking call (≥ 40 ms here) or more. The probe should flag the executor, not
//!   the operating system.
//! * **the median itself ≥ 20 ms** — part of the delay signal: when starvation is sustained
//!   (more blockers than workers, or 100 concurrent blocking handlers) *every* step is late, the
//!   whole distribution shifts, and p99 : p50 falls back towards 1 : 1. The ratio detects the
//!   bimodal cliff the seeds describe; the median detects the collapse beyond it.

use std::fmt;

use crate::probe::Tally;
use crate::runtime::{LongPoll, Placement, WorkerMetrics};

/// Failure fraction at or above which a run is starved.
pub const FAILURE_STARVED: f64 = 0.01;
/// p99 : p50 overhead ratio at or above which a run is starved.
pub const RATIO_STARVED: f64 = 20.0;
/// Floor applied to p50 before taking the ratio (the timer's resolution), µs.
pub const P50_FLOOR_US: u64 = 1_000;
/// A median overhead at or above which a run is starved (sustained starvation), µs.
pub const MEDIAN_STARVED_US: u64 = 20_000;

/// Percentiles of the scheduling overhead kept per run, for the delay-profile plots.
pub const PROFILE_PCTS: [f64; 5] = [50.0, 90.0, 99.0, 99.9, 100.0];

/// The verdict of one run or of a scenario.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Verdict {
    Healthy,
    Starved,
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Verdict::Healthy => "healthy",
            Verdict::Starved => "starved",
        })
    }
}

/// Which of the two signals a published number speaks about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Signal {
    /// The failure fraction (the demos publish failure percentages).
    Failures,
    /// Scheduling delay: the p99 : p50 tail ratio, or the median itself (the overhead benchmark
    /// publishes p50 and p99).
    Tail,
}

impl fmt::Display for Signal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Signal::Failures => "failures",
            Signal::Tail => "delay",
        })
    }
}

/// What one run on one fresh runtime measured.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunOutcome {
    /// Probe (or request) operations, and how many exceeded their timeout.
    pub ops: u64,
    pub failed: u64,
    /// Scheduling overhead per step, µs.
    pub p50_us: u64,
    pub p99_us: u64,
    pub max_us: u64,
    /// Overhead at each of [`PROFILE_PCTS`], µs.
    pub profile_us: Vec<u64>,
    /// Where the blocking polls landed (`None` when nothing blocked a worker for ≥ 1 ms).
    pub placement: Option<Placement>,
    /// Stable `RuntimeMetrics` per worker over the run.
    pub workers: WorkerMetrics,
    /// Median over probe tasks of (time waiting to be polled) : (time inside poll).
    pub sched_busy: Option<f64>,
    /// Median polls per probe task (with `sched_busy`, the seed's per-task Sched / Busy / Polls
    /// view; per-worker poll counts need `tokio_unstable`).
    pub task_polls: Option<f64>,
    /// Wall time of the run, ms.
    pub wall_ms: f64,
    /// Figures of the run that only one scenario measures, by name (the pool-starvation seed's
    /// total time, a `tokio::fs::read`'s latency, the share of requests served by a connection
    /// of the other runtime): what the seed tables set beside the seeds' own numbers.
    pub figures: Vec<(&'static str, f64)>,
}

impl RunOutcome {
    /// What every scenario measures the same way: the probes' tally, where the long polls landed
    /// on `workers` workers, the runtime's worker metrics and the wall time. The per-task
    /// scheduling ratios (`sched_busy`, `task_polls`) are left to the scenarios that take them.
    pub fn measured(
        total: &Tally,
        long_polls: &[LongPoll],
        workers: usize,
        metrics: WorkerMetrics,
        wall_ms: f64,
    ) -> RunOutcome {
        let dist = total.distribution();
        RunOutcome {
            ops: total.ops,
            failed: total.timed_out,
            p50_us: dist.percentile_us(50.0),
            p99_us: dist.percentile_us(99.0),
            max_us: dist.percentile_us(100.0),
            profile_us: dist.profile_us(),
            placement: (!long_polls.is_empty())
                .then(|| Placement::from_long_polls(long_polls, workers)),
            workers: metrics,
            sched_busy: None,
            task_polls: None,
            wall_ms,
            figures: Vec::new(),
        }
    }

    /// The figure called `name`, if the scenario measured it in this run.
    pub fn figure(&self, name: &str) -> Option<f64> {
        self.figures.iter().find(|(n, _)| *n == name).map(|f| f.1)
    }

    pub fn failure_fraction(&self) -> f64 {
        if self.ops == 0 {
            0.0
        } else {
            self.failed as f64 / self.ops as f64
        }
    }

    /// p99 : max(p50, 1 ms).
    pub fn ratio(&self) -> f64 {
        self.p99_us as f64 / self.p50_us.max(P50_FLOOR_US) as f64
    }

    /// The verdict of one signal alone.
    pub fn verdict_by(&self, signal: Signal) -> Verdict {
        let starved = match signal {
            Signal::Failures => self.failure_fraction() >= FAILURE_STARVED,
            Signal::Tail => self.ratio() >= RATIO_STARVED || self.p50_us >= MEDIAN_STARVED_US,
        };
        if starved {
            Verdict::Starved
        } else {
            Verdict::Healthy
        }
    }

    /// Starved when either signal says so.
    pub fn verdict(&self) -> Verdict {
        if self.verdict_by(Signal::Failures) == Verdict::Starved
            || self.verdict_by(Signal::Tail) == Verdict::Starved
        {
            Verdict::Starved
        } else {
            Verdict::Healthy
        }
    }
}

/// Median and range of one quantity over runs.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Spread {
    pub median: f64,
    pub min: f64,
    pub max: f64,
    /// Number of values.
    pub n: usize,
}

impl Spread {
    /// Median (mean of the middle two for even counts), min and max. NaNs are ignored.
    pub fn of(values: impl IntoIterator<Item = f64>) -> Spread {
        let mut v: Vec<f64> = values.into_iter().filter(|x| !x.is_nan()).collect();
        if v.is_empty() {
            return Spread::default();
        }
        v.sort_by(f64::total_cmp);
        let n = v.len();
        let median = if n % 2 == 1 {
            v[n / 2]
        } else {
            (v[n / 2 - 1] + v[n / 2]) / 2.0
        };
        Spread {
            median,
            min: v[0],
            max: v[n - 1],
            n,
        }
    }

    /// `median [min–max]` with the given number of decimals (just the median for one value).
    pub fn show(&self, decimals: usize) -> String {
        if self.n == 0 {
            return "–".to_string();
        }
        if self.n == 1 || self.min == self.max {
            return format!("{:.*}", decimals, self.median);
        }
        format!(
            "{:.*} [{:.*}–{:.*}]",
            decimals, self.median, decimals, self.min, decimals, self.max
        )
    }
}

/// The runs of one scenario, reduced.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Summary {
    pub runs: usize,
    pub starved_runs: usize,
    /// Runs starved by each signal alone.
    pub starved_by_failures: usize,
    pub starved_by_tail: usize,
    /// Failure percentage (0–100).
    pub failure_pct: Spread,
    pub p50_ms: Spread,
    pub p99_ms: Spread,
    pub ratio: Spread,
    /// Most workers blocked at once (runs with no blocking poll count as 0).
    pub peak_blocked: Spread,
    /// Runs in which every worker was blocked at the same time for some interval.
    pub saturated_runs: usize,
    pub sched_busy: Spread,
}

impl Summary {
    pub fn of(runs: &[RunOutcome], workers: usize) -> Summary {
        Summary {
            runs: runs.len(),
            starved_runs: runs
                .iter()
                .filter(|r| r.verdict() == Verdict::Starved)
                .count(),
            starved_by_failures: runs
                .iter()
                .filter(|r| r.verdict_by(Signal::Failures) == Verdict::Starved)
                .count(),
            starved_by_tail: runs
                .iter()
                .filter(|r| r.verdict_by(Signal::Tail) == Verdict::Starved)
                .count(),
            failure_pct: Spread::of(runs.iter().map(|r| r.failure_fraction() * 100.0)),
            p50_ms: Spread::of(runs.iter().map(|r| r.p50_us as f64 / 1e3)),
            p99_ms: Spread::of(runs.iter().map(|r| r.p99_us as f64 / 1e3)),
            ratio: Spread::of(runs.iter().map(RunOutcome::ratio)),
            peak_blocked: Spread::of(
                runs.iter()
                    .map(|r| r.placement.as_ref().map_or(0.0, |p| p.peak_blocked as f64)),
            ),
            saturated_runs: runs
                .iter()
                .filter(|r| {
                    r.placement
                        .as_ref()
                        .is_some_and(|p| p.peak_blocked >= workers && p.saturated_ms > 0.0)
                })
                .count(),
            sched_busy: Spread::of(runs.iter().filter_map(|r| r.sched_busy)),
        }
    }

    /// Fraction of runs that were starved.
    pub fn starved_fraction(&self) -> f64 {
        if self.runs == 0 {
            0.0
        } else {
            self.starved_runs as f64 / self.runs as f64
        }
    }

    /// Majority verdict; a tie counts as starved (half the runs starving is not healthy).
    pub fn verdict(&self) -> Verdict {
        majority(self.starved_runs, self.runs)
    }

    /// Majority verdict of one signal alone.
    pub fn verdict_by(&self, signal: Signal) -> Verdict {
        let starved = match signal {
            Signal::Failures => self.starved_by_failures,
            Signal::Tail => self.starved_by_tail,
        };
        majority(starved, self.runs)
    }

    /// `starved 9/10` or `healthy 0/10` (the count is always of starved runs).
    pub fn verdict_text(&self) -> String {
        format!("{} {}/{}", self.verdict(), self.starved_runs, self.runs)
    }
}

fn majority(starved: usize, runs: usize) -> Verdict {
    if runs > 0 && starved * 2 >= runs {
        Verdict::Starved
    } else {
        Verdict::Healthy
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(ops: u64, failed: u64, p50_us: u64, p99_us: u64) -> RunOutcome {
        RunOutcome {
            ops,
            failed,
            p50_us,
            p99_us,
            ..RunOutcome::default()
        }
    }

    #[test]
    fn seed_numbers_classify_as_the_seeds_describe() {
        // 3 blockers: p50 1310 µs, p99 1.5 ms, no failures.
        assert_eq!(run(5000, 0, 1310, 1500).verdict(), Verdict::Healthy);
        // 4 blockers: p50 1300 µs, p99 140 ms.
        assert_eq!(run(5000, 0, 1300, 140_000).verdict(), Verdict::Starved);
        // 34 % failures alone is enough.
        assert_eq!(run(5000, 1700, 1300, 1500).verdict(), Verdict::Starved);
    }

    #[test]
    fn the_signals_can_disagree() {
        // A short stall of every worker: no timeout expires, but the tail shows it.
        let r = run(200, 0, 1000, 45_000);
        assert_eq!(r.verdict_by(Signal::Failures), Verdict::Healthy);
        assert_eq!(r.verdict_by(Signal::Tail), Verdict::Starved);
        assert_eq!(r.verdict(), Verdict::Starved);
    }

    #[test]
    fn a_shifted_median_is_starved_even_with_a_small_ratio() {
        // Six blockers on four workers: every step late, p99:p50 only 2.5.
        let r = run(2000, 0, 37_000, 93_000);
        assert!(r.ratio() < RATIO_STARVED);
        assert_eq!(r.verdict_by(Signal::Tail), Verdict::Starved);
        assert_eq!(run(2000, 0, 19_999, 30_000).verdict(), Verdict::Healthy);
    }

    #[test]
    fn sub_millisecond_median_is_floored() {
        let r = run(100, 0, 50, 2_000);
        assert_eq!(r.ratio(), 2.0);
        assert_eq!(r.verdict(), Verdict::Healthy);
    }

    #[test]
    fn thresholds_are_inclusive() {
        assert_eq!(run(100, 1, 1000, 1000).verdict(), Verdict::Starved);
        assert_eq!(run(1000, 9, 1000, 19_999).verdict(), Verdict::Healthy);
        assert_eq!(run(1000, 0, 1000, 20_000).verdict(), Verdict::Starved);
        assert_eq!(run(0, 0, 0, 0).verdict(), Verdict::Healthy);
    }

    #[test]
    fn spread_median_and_range() {
        let s = Spread::of([3.0, 1.0, 2.0, 10.0]);
        assert_eq!((s.median, s.min, s.max, s.n), (2.5, 1.0, 10.0, 4));
        assert_eq!(s.show(1), "2.5 [1.0–10.0]");
        assert_eq!(Spread::of([4.0]).show(0), "4");
        assert_eq!(Spread::of([]).show(0), "–");
        assert_eq!(Spread::of([f64::NAN, 1.0]).n, 1);
    }

    #[test]
    fn summary_takes_the_majority_and_counts_disagreement() {
        let runs = [
            run(100, 50, 1000, 90_000),
            run(100, 40, 1000, 90_000),
            run(100, 0, 1000, 1_200),
        ];
        let s = Summary::of(&runs, 4);
        assert_eq!(s.verdict(), Verdict::Starved);
        assert_eq!(s.verdict_text(), "starved 2/3");
        assert!((s.starved_fraction() - 2.0 / 3.0).abs() < 1e-12);
        assert_eq!(s.failure_pct.median, 40.0);
        assert_eq!(s.starved_by_failures, 2);
        assert_eq!(s.starved_by_tail, 2);
        assert_eq!(s.verdict_by(Signal::Failures), Verdict::Starved);
        let healthy = Summary::of(&runs[2..], 4);
        assert_eq!(healthy.verdict_text(), "healthy 0/1");
        assert_eq!(Summary::of(&[], 4).verdict(), Verdict::Healthy);
    }
}
