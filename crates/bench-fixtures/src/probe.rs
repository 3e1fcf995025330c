//! The scheduling-delay probe: unrelated async tasks that only sleep on the runtime's timer and
//! measure how late they were polled.
//!
//! A `tokio::time::sleep(step)` that returns after `step + overhead` measures exactly what
//! starvation costs a task that did nothing wrong: the timer fires on time, then the task waits for
//! a free worker. Overheads go into an hdrhistogram (µs, 3 significant digits) so p50/p99 are exact
//! enough at both 1 ms and 1 s. An *operation* is several steps under `tokio::time::timeout`, the
//! seeds' failure definition: a 100 ms budget for 10 ms of work, exceeded only when scheduling
//! delay eats the margin.

use std::time::{Duration, Instant};

use hdrhistogram::Histogram;

/// The shape of one probe operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpShape {
    /// Length of each `tokio::time::sleep`.
    pub step: Duration,
    /// Sleeps per operation.
    pub steps: usize,
    /// Budget for the whole operation; `None` measures delay only (the overhead benchmark).
    pub timeout: Option<Duration>,
}

impl OpShape {
    /// The demos' request: 10 × `sleep(1 ms)` under a 100 ms `timeout`.
    pub const DEMO_REQUEST: OpShape = OpShape {
        step: Duration::from_millis(1),
        steps: 10,
        timeout: Some(Duration::from_millis(100)),
    };

    /// The overhead benchmark's probe: one `sleep(10 ms)` per operation, no timeout.
    pub const OVERHEAD_SLEEP: OpShape = OpShape {
        step: Duration::from_millis(10),
        steps: 1,
        timeout: None,
    };
}

/// What one probe task (or a whole run, after [`Tally::merge`]) observed.
///
/// Samples are kept as plain `u32` microseconds and only turned into a histogram once per run
/// ([`Tally::distribution`]). A histogram per task would be wrong here: at 3 significant digits
/// over 1 µs–60 s each one is ~130 KiB, and with 20 000 request tasks the page faults and cache
/// misses of touching 20 000 of them on the worker would slow the very runtime being measured.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Tally {
    samples_us: Vec<u32>,
    /// Operations started and operations whose timeout expired.
    pub ops: u64,
    pub timed_out: u64,
    /// Sum of per-step overheads: the task's time spent waiting to be polled, for Sched:Busy.
    pub sched: Duration,
}

impl Tally {
    pub fn new() -> Tally {
        Tally::default()
    }

    /// A tally with room for `samples` steps, so recording never reallocates mid-run.
    pub fn with_capacity(samples: usize) -> Tally {
        Tally {
            samples_us: Vec::with_capacity(samples),
            ..Tally::default()
        }
    }

    /// Adds one step's overhead.
    pub fn record(&mut self, overhead: Duration) {
        self.samples_us
            .push(u32::try_from(overhead.as_micros()).unwrap_or(u32::MAX));
        self.sched += overhead;
    }

    /// Folds another tally into this one.
    pub fn merge(&mut self, other: &Tally) {
        self.samples_us.extend_from_slice(&other.samples_us);
        self.ops += other.ops;
        self.timed_out += other.timed_out;
        self.sched += other.sched;
    }

    /// Number of recorded steps.
    pub fn samples(&self) -> usize {
        self.samples_us.len()
    }

    /// The overhead distribution (hdrhistogram: µs, 1 µs – 60 s, 3 significant digits, the seed
    /// benchmark's bounds).
    pub fn distribution(&self) -> Distribution {
        let mut hist = Histogram::new_with_bounds(1, 60_000_000, 3)
            .expect("static histogram bounds are valid");
        for &us in &self.samples_us {
            hist.saturating_record(u64::from(us).max(1));
        }
        Distribution { hist }
    }
}

/// A run's overhead distribution.
#[derive(Debug, Clone)]
pub struct Distribution {
    hist: Histogram<u64>,
}

impl Distribution {
    /// Overhead at a percentile, µs (0 when nothing was recorded).
    pub fn percentile_us(&self, pct: f64) -> u64 {
        if self.hist.is_empty() {
            0
        } else {
            self.hist.value_at_percentile(pct)
        }
    }

    /// Overhead at each of [`crate::verdict::PROFILE_PCTS`], µs.
    pub fn profile_us(&self) -> Vec<u64> {
        crate::verdict::PROFILE_PCTS
            .iter()
            .map(|&p| self.percentile_us(p))
            .collect()
    }
}

/// Runs one operation of `shape`, recording into `tally`. Returns whether it met its timeout.
pub async fn run_op(shape: OpShape, tally: &mut Tally) -> bool {
    tally.ops += 1;
    let steps = async {
        for _ in 0..shape.steps {
            let t0 = Instant::now();
            tokio::time::sleep(shape.step).await;
            tally.record(t0.elapsed().saturating_sub(shape.step));
        }
    };
    let ok = match shape.timeout {
        Some(budget) => tokio::time::timeout(budget, steps).await.is_ok(),
        None => {
            steps.await;
            true
        }
    };
    if !ok {
        tally.timed_out += 1;
    }
    ok
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tally_merges_counts_and_samples() {
        let mut a = Tally::new();
        a.record(Duration::from_micros(1_000));
        a.ops = 1;
        let mut b = Tally::new();
        b.record(Duration::from_micros(100_000));
        b.ops = 2;
        b.timed_out = 1;
        a.merge(&b);
        assert_eq!(a.ops, 3);
        assert_eq!(a.timed_out, 1);
        assert_eq!(a.samples(), 2);
        let d = a.distribution();
        assert!(d.percentile_us(99.0) >= 99_000);
        assert!((990..=1_010).contains(&d.percentile_us(50.0)));
        assert_eq!(a.sched, Duration::from_micros(101_000));
    }

    #[test]
    fn a_zero_overhead_is_recorded_not_dropped() {
        let mut t = Tally::new();
        t.record(Duration::ZERO);
        assert_eq!(t.samples(), 1);
        assert_eq!(t.distribution().percentile_us(50.0), 1);
        assert_eq!(Tally::new().distribution().percentile_us(50.0), 0);
        assert_eq!(Tally::new().distribution().profile_us(), vec![0; 5]);
    }

    #[test]
    fn an_operation_times_out_when_its_budget_is_too_small() {
        let rt = crate::runtime::build_runtime(1).unwrap();
        let mut tally = Tally::new();
        let shape = OpShape {
            step: Duration::from_millis(5),
            steps: 4,
            timeout: Some(Duration::from_millis(2)),
        };
        let ok = rt.block_on(run_op(shape, &mut tally));
        assert!(!ok);
        assert_eq!((tally.ops, tally.timed_out), (1, 1));
    }
}
