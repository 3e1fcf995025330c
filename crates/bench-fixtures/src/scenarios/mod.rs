//! Scenarios: the seed articles' demos ([`seeds`]) and one confirmation workload per rule category
//! ([`category`] and the per-category modules).

pub mod block_on;
pub mod category;
pub mod cpu;
pub mod cross_runtime;
pub mod db_sync;
pub mod ffi;
pub mod fs;
pub mod http_blocking;
pub mod inject;
pub mod net;
pub mod pool;
pub mod process;
pub mod seeds;
pub mod sleep;
pub mod stdio;
pub mod sync_prims;

use crate::verdict::{RunOutcome, Signal, Spread, Summary, Verdict};

/// A number the seed articles published for a scenario, and the verdict it implies for the
/// signal it is about (a failure percentage says nothing about the tail, and vice versa).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Published {
    /// As published, e.g. `"0 % failures"` or `"p99 140 ms (108:1)"`.
    pub text: &'static str,
    pub signal: Signal,
    pub expect: Verdict,
}

/// All runs of one scenario and their reduction.
#[derive(Debug, Clone, PartialEq)]
pub struct ScenarioResult {
    /// Stable identifier, e.g. `seed/demo_panic/blockers=4` or `category/fs/blocking`.
    pub id: String,
    /// The group the table and plots bucket by: a seed sweep name or `category`.
    pub group: String,
    /// Short row label, e.g. `4 blockers` or `fs: std::fs::read (blocking)`.
    pub label: String,
    /// The swept quantity (blockers, tasks, concurrency), for plots; 0 for categories.
    pub x: f64,
    /// The plot series the point belongs to (`500 tasks` in the overhead sweep), or empty.
    pub series: String,
    pub runs: Vec<RunOutcome>,
    pub summary: Summary,
    pub published: Option<Published>,
    /// Set when the scenario could not run (missing `sleep` binary, no FIFO support, ...).
    pub error: Option<String>,
    /// Workers of the runtime whose blocked workers the placement counts (the cpu runtime in the
    /// cross-runtime seed, the runtime under test everywhere else).
    pub workers: usize,
}

impl ScenarioResult {
    /// Reduces `runs` into a result.
    pub fn new(
        id: String,
        group: &str,
        label: String,
        x: f64,
        runs: Vec<RunOutcome>,
        workers: usize,
        published: Option<Published>,
    ) -> ScenarioResult {
        let summary = Summary::of(&runs, workers);
        ScenarioResult {
            id,
            group: group.to_string(),
            label,
            x,
            series: String::new(),
            runs,
            summary,
            published,
            error: None,
            workers,
        }
    }

    /// A scenario that failed to run.
    pub fn failed(id: String, group: &str, label: String, error: String) -> ScenarioResult {
        ScenarioResult {
            id,
            group: group.to_string(),
            label,
            x: 0.0,
            series: String::new(),
            runs: Vec::new(),
            summary: Summary::default(),
            published: None,
            error: Some(error),
            workers: 0,
        }
    }

    /// A scenario-specific figure ([`RunOutcome::figures`]) over the runs that measured it.
    pub fn figure(&self, name: &str) -> Spread {
        Spread::of(self.runs.iter().filter_map(|r| r.figure(name)))
    }

    /// Whether the measured verdict of the published number's signal matches the published one
    /// (`None` without a published number or when the scenario did not run).
    pub fn matches_published(&self) -> Option<bool> {
        if self.error.is_some() || self.runs.is_empty() {
            return None;
        }
        self.published
            .map(|p| p.expect == self.summary.verdict_by(p.signal))
    }
}
