//! The confirmation harness every rule category shares.
//!
//! One run: a fresh runtime with `workers` workers; `offenders` tasks (one per worker by default,
//! as in a burst of requests that all reach the flagged handler) each perform `rounds` *units* of
//! the category's real API, with a `yield_now` between units; `probe_tasks` unrelated tasks run
//! probe operations (10 × `sleep(1 ms)` under a 100 ms timeout) for as long as the offenders are
//! busy. A `Barrier` releases everything together. The same run is made twice per repetition: with
//! the blocking API called directly in the async task ([`Variant::Blocking`]) and with the right way
//! to do the same work ([`Variant::Alternative`]: the async API, or `spawn_blocking`).
//!
//! Each category supplies a [`Fixture`] (built once per scenario: a server, a database, a
//! document) whose [`Fixture::start_run`] returns the per-run [`RunUnits`] (helper threads that stop
//! when it is dropped). Everything is bounded in count and time: servers and helper threads have
//! deadlines, and the runtime is shut down with a timeout.

use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::Barrier;

use crate::probe::{run_op, OpShape, Tally};
use crate::runtime::{on_fresh_runtime, PollLog, Watched, WorkerMetrics};
use crate::scenarios::seeds::LONG_POLL;
use crate::scenarios::{self, ScenarioResult};
use crate::verdict::RunOutcome;

/// Which way the offenders do their work.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Variant {
    /// The flagged API, called directly inside the async task.
    Blocking,
    /// The same work done the right way: the async API, or `spawn_blocking`.
    Alternative,
}

impl Variant {
    pub const BOTH: [Variant; 2] = [Variant::Blocking, Variant::Alternative];

    pub fn name(self) -> &'static str {
        match self {
            Variant::Blocking => "blocking",
            Variant::Alternative => "alternative",
        }
    }
}

/// Size of one category run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CategoryConfig {
    pub workers: usize,
    /// Offender tasks; defaults to `workers` (the saturation point).
    pub offenders: usize,
    /// Units per offender.
    pub rounds: usize,
    /// Target length of one unit of blocking work (a call, or a loop of calls, of the real API).
    pub unit: Duration,
    pub probe_tasks: usize,
    pub probe: OpShape,
}

impl CategoryConfig {
    /// The full confirmation: 6 units of 50 ms per offender, 64 probe tasks.
    pub fn full(workers: usize) -> CategoryConfig {
        CategoryConfig {
            workers,
            offenders: workers,
            rounds: 6,
            unit: Duration::from_millis(50),
            probe_tasks: 64,
            probe: OpShape::DEMO_REQUEST,
        }
    }

    /// The CI-sized confirmation: 4 units per offender, 32 probe tasks, and two offenders more
    /// than workers. The extra offenders keep the blocking variant far from the threshold: with
    /// exactly one offender per worker, a run in which the scheduler queues two offenders on one
    /// worker leaves another worker free and can come out healthy.
    pub fn quick(workers: usize) -> CategoryConfig {
        CategoryConfig {
            offenders: workers + 2,
            rounds: 4,
            probe_tasks: 32,
            ..CategoryConfig::full(workers)
        }
    }

    /// A bound on how long helper threads and servers may live for one run.
    pub fn helper_deadline(&self) -> Duration {
        self.unit * (self.rounds * self.offenders) as u32 + Duration::from_secs(30)
    }
}

/// A unit of category work, already specialised to a variant.
pub type UnitFuture = Pin<Box<dyn Future<Output = Result<(), String>> + Send>>;

/// Per-scenario state of a category (server, database, document).
pub trait Fixture: Send + Sync {
    /// Starts one run's helpers and returns the unit factory for `variant`.
    fn start_run(
        &self,
        cfg: &CategoryConfig,
        variant: Variant,
    ) -> Result<Arc<dyn RunUnits>, String>;

    /// A process-wide lock to hold for the whole run, for fixtures that borrow process state
    /// (stdio swaps file descriptor 0).
    fn exclusive(&self) -> Option<&'static Mutex<()>> {
        None
    }
}

/// The per-run unit factory.
pub trait RunUnits: Send + Sync {
    /// One unit of work by offender `offender` (its `round`-th).
    fn call(self: Arc<Self>, offender: usize, round: usize) -> UnitFuture;
}

/// A fixture with no setup and no per-run state: every unit is `work(variant, unit)`. Categories
/// whose API needs nothing but the unit's duration (thread sleep, `usleep`) use it.
pub struct Stateless(pub fn(Variant, Duration) -> UnitFuture);

struct StatelessUnits {
    work: fn(Variant, Duration) -> UnitFuture,
    unit: Duration,
    variant: Variant,
}

impl Fixture for Stateless {
    fn start_run(
        &self,
        cfg: &CategoryConfig,
        variant: Variant,
    ) -> Result<Arc<dyn RunUnits>, String> {
        Ok(Arc::new(StatelessUnits {
            work: self.0,
            unit: cfg.unit,
            variant,
        }))
    }
}

impl RunUnits for StatelessUnits {
    fn call(self: Arc<Self>, _: usize, _: usize) -> UnitFuture {
        (self.work)(self.variant, self.unit)
    }
}

/// A rule category and its confirmation workload.
pub struct CategorySpec {
    /// The rule database's category name.
    pub name: &'static str,
    /// The rule-id prefix of the category (`NB01` for fs).
    pub rule_prefix: &'static str,
    /// One-line description of the confirmation, printed by `explain`.
    pub confirmation: &'static str,
    /// The flagged API the blocking variant calls, and what the alternative uses.
    pub blocking_api: &'static str,
    pub alternative_api: &'static str,
    /// The work is computation, not waiting: its alternative still needs CPUs, so on a machine
    /// with fewer CPUs than busy threads the probe's delay floor rises even though no worker is
    /// ever blocked.
    pub cpu_bound: bool,
    /// Builds the fixture.
    pub setup: fn(&CategoryConfig) -> Result<Box<dyn Fixture>, String>,
}

impl std::fmt::Debug for CategorySpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CategorySpec")
            .field("name", &self.name)
            .field("rule_prefix", &self.rule_prefix)
            .finish_non_exhaustive()
    }
}

/// Every category of the rule database, in rule-id order.
pub static CATEGORIES: [CategorySpec; 11] = [
    scenarios::fs::SPEC,
    scenarios::sleep::SPEC,
    scenarios::net::SPEC,
    scenarios::http_blocking::SPEC,
    scenarios::db_sync::SPEC,
    scenarios::process::SPEC,
    scenarios::sync_prims::SPEC,
    scenarios::block_on::SPEC,
    scenarios::stdio::SPEC,
    scenarios::ffi::SPEC,
    scenarios::cpu::SPEC,
];

/// Looks a category up by name (`fs`, `http-blocking`; `_` accepted for `-`).
pub fn category(name: &str) -> Option<&'static CategorySpec> {
    let name = name.trim().to_ascii_lowercase().replace('_', "-");
    CATEGORIES.iter().find(|c| c.name == name)
}

/// Looks a category up by rule id: its first four characters (`NB0101` → `NB01` → fs).
pub fn category_of_rule(rule_id: &str) -> Option<&'static CategorySpec> {
    let prefix = rule_id.get(..4)?.to_ascii_uppercase();
    CATEGORIES.iter().find(|c| c.rule_prefix == prefix)
}

/// Runs one variant once.
pub fn run_once(
    fixture: &dyn Fixture,
    cfg: &CategoryConfig,
    variant: Variant,
) -> Result<RunOutcome, String> {
    let _exclusive = fixture
        .exclusive()
        .map(|m| m.lock().unwrap_or_else(|e| e.into_inner()));
    let units = fixture.start_run(cfg, variant)?;
    let cfg = *cfg;
    let outcome = on_fresh_runtime(cfg.workers, move || run_body(units, cfg))
        .map_err(|e| format!("runtime: {e}"))?;
    outcome
}

/// Upper bound on probe operations per task, so a probe can never loop unboundedly.
const MAX_PROBE_OPS: u64 = 100_000;

async fn run_body(units: Arc<dyn RunUnits>, cfg: CategoryConfig) -> Result<RunOutcome, String> {
    let handle = tokio::runtime::Handle::current();
    let log = PollLog::new(LONG_POLL);
    let barrier = Arc::new(Barrier::new(cfg.offenders + cfg.probe_tasks + 1));
    let done = Arc::new(AtomicBool::new(false));
    let before = WorkerMetrics::read(&handle);

    let mut probes = Vec::with_capacity(cfg.probe_tasks);
    for p in 0..cfg.probe_tasks {
        let (barrier, done) = (barrier.clone(), done.clone());
        probes.push(tokio::spawn(Watched::new(
            cfg.offenders + p,
            log.clone(),
            async move {
                barrier.wait().await;
                let mut tally = Tally::new();
                while !done.load(Ordering::Acquire) && tally.ops < MAX_PROBE_OPS {
                    run_op(cfg.probe, &mut tally).await;
                }
                tally
            },
        )));
    }
    let mut offenders = Vec::with_capacity(cfg.offenders);
    for o in 0..cfg.offenders {
        let (barrier, units) = (barrier.clone(), units.clone());
        offenders.push(tokio::spawn(Watched::new(o, log.clone(), async move {
            barrier.wait().await;
            for round in 0..cfg.rounds {
                units.clone().call(o, round).await?;
                tokio::task::yield_now().await;
            }
            Ok::<(), String>(())
        })));
    }

    let start = Instant::now();
    barrier.wait().await;
    let mut first_error = None;
    for h in offenders {
        match h.await {
            Ok((Ok(()), _)) => {}
            Ok((Err(e), _)) => {
                first_error.get_or_insert(e);
            }
            Err(e) => {
                first_error.get_or_insert(format!("offender task: {e}"));
            }
        }
    }
    done.store(true, Ordering::Release);
    let wall_ms = start.elapsed().as_secs_f64() * 1e3;

    let mut total = Tally::new();
    for h in probes {
        let (tally, _) = h.await.map_err(|e| format!("probe task: {e}"))?;
        total.merge(&tally);
    }
    if let Some(e) = first_error {
        return Err(e);
    }
    // Placement is about the offenders (ids below `offenders`), not probes the OS preempted.
    let long_polls: Vec<_> = log
        .long_polls()
        .into_iter()
        .filter(|p| p.task < cfg.offenders)
        .collect();
    Ok(RunOutcome::measured(
        &total,
        &long_polls,
        cfg.workers,
        WorkerMetrics::read(&handle).since(&before),
        wall_ms,
    ))
}

/// Runs both variants of a category `runs` times each, alternating variants so slow drifts of the
/// machine's load hit both equally. Returns one result per variant (blocking first).
pub fn run_category(
    spec: &CategorySpec,
    cfg: &CategoryConfig,
    runs: usize,
    progress: &mut dyn FnMut(&str),
) -> Vec<ScenarioResult> {
    let id = |v: Variant| format!("category/{}/{}", spec.name, v.name());
    let label = |v: Variant| match v {
        Variant::Blocking => format!("{}: {}", spec.name, spec.blocking_api),
        Variant::Alternative => format!("{}: {}", spec.name, spec.alternative_api),
    };
    let fixture = match (spec.setup)(cfg) {
        Ok(f) => f,
        Err(e) => {
            return Variant::BOTH
                .iter()
                .map(|&v| ScenarioResult::failed(id(v), "category", label(v), e.clone()))
                .collect()
        }
    };
    let mut outcomes: [Vec<RunOutcome>; 2] = [Vec::new(), Vec::new()];
    let mut errors: [Option<String>; 2] = [None, None];
    for run in 0..runs {
        for (slot, &variant) in Variant::BOTH.iter().enumerate() {
            if errors[slot].is_some() {
                continue;
            }
            progress(&format!("{} run {}/{}", id(variant), run + 1, runs));
            match run_once(fixture.as_ref(), cfg, variant) {
                Ok(o) => outcomes[slot].push(o),
                Err(e) => errors[slot] = Some(e),
            }
        }
    }
    Variant::BOTH
        .iter()
        .enumerate()
        .map(|(slot, &v)| match errors[slot].take() {
            Some(e) => ScenarioResult::failed(id(v), "category", label(v), e),
            None => ScenarioResult::new(
                id(v),
                "category",
                label(v),
                0.0,
                std::mem::take(&mut outcomes[slot]),
                cfg.workers,
                None,
            ),
        })
        .collect()
}

/// A unit that repeats `call` until `unit` has elapsed (at least once): the shape of a loop over
/// files, rows or documents inside one handler. Returns the number of calls.
pub fn repeat_for<E: std::fmt::Display>(
    unit: Duration,
    mut call: impl FnMut() -> Result<(), E>,
) -> Result<usize, String> {
    let start = Instant::now();
    let mut n = 0;
    loop {
        call().map_err(|e| e.to_string())?;
        n += 1;
        if start.elapsed() >= unit {
            return Ok(n);
        }
    }
}

/// Runs `work` on the blocking pool and flattens the join error.
pub async fn offload<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, String> + Send + 'static,
) -> Result<T, String> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| format!("spawn_blocking: {e}"))?
}

/// A temporary directory removed on drop (fixtures keep their files, FIFOs and databases here).
#[derive(Debug)]
pub struct TempDir {
    path: PathBuf,
}

impl TempDir {
    pub fn new(prefix: &str) -> std::io::Result<TempDir> {
        static COUNTER: AtomicUsize = AtomicUsize::new(0);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let path = std::env::temp_dir().join(format!(
            "nb-{prefix}-{}-{nanos}-{}",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&path)?;
        Ok(TempDir { path })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_category_has_a_distinct_rule_prefix_and_description() {
        let mut prefixes: Vec<_> = CATEGORIES.iter().map(|c| c.rule_prefix).collect();
        prefixes.dedup();
        assert_eq!(prefixes.len(), 11);
        for (i, c) in CATEGORIES.iter().enumerate() {
            assert_eq!(c.rule_prefix, format!("NB{:02}", i + 1), "{}", c.name);
            assert!(!c.confirmation.is_empty());
            assert_eq!(category(c.name).map(|s| s.name), Some(c.name));
        }
    }

    #[test]
    fn rule_ids_and_names_resolve() {
        assert_eq!(category_of_rule("NB0101").unwrap().name, "fs");
        assert_eq!(category_of_rule("nb0402").unwrap().name, "http-blocking");
        assert_eq!(category_of_rule("NB1101").unwrap().name, "cpu");
        assert!(category_of_rule("NB99").is_none());
        assert!(category_of_rule("NB").is_none());
        assert_eq!(category("sync_prims").unwrap().rule_prefix, "NB07");
        assert!(category("gpu").is_none());
    }

    #[test]
    fn repeat_for_calls_at_least_once_and_until_the_unit_elapsed() {
        let n = repeat_for(Duration::ZERO, || Ok::<(), String>(())).unwrap();
        assert_eq!(n, 1);
        // It never returns before the unit has elapsed (a lower bound, so no flaky timing).
        let start = Instant::now();
        let n = repeat_for(Duration::from_millis(5), || {
            std::thread::sleep(Duration::from_millis(2));
            Ok::<(), String>(())
        })
        .unwrap();
        assert!(start.elapsed() >= Duration::from_millis(5));
        assert!(n >= 1);
        let err = repeat_for(Duration::ZERO, || Err::<(), _>("boom")).unwrap_err();
        assert_eq!(err, "boom");
    }

    #[test]
    fn temp_dir_is_removed_on_drop() {
        let dir = TempDir::new("test").unwrap();
        let path = dir.path().to_path_buf();
        std::fs::write(path.join("x"), b"1").unwrap();
        drop(dir);
        assert!(!path.exists());
    }
}
