//! sync-prims (NB07xx): a contended `std::sync::Mutex::lock` against `tokio::sync::Mutex::lock`.
//!
//! A background thread (a "cache refresher") takes the lock and holds it for one unit (50 ms),
//! releases it for 200 µs, and takes it again, bumping a generation counter each time it has
//! taken it. Each offender unit locks the cache once, after the refresher has started a hold it
//! has not yet waited for: without that, an offender that comes back within the 200 µs gap
//! would get the free lock again and again and finish its rounds without ever waiting, and the
//! run would measure luck. With the std mutex the worker sleeps in the futex until the refresher
//! lets go; with the tokio mutex the task waits in the mutex's queue and the worker runs other
//! tasks (the refresher then uses `blocking_lock`, which is right for a plain thread).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::category::{CategoryConfig, CategorySpec, Fixture, RunUnits, UnitFuture, Variant};

pub const SPEC: CategorySpec = CategorySpec {
    name: "sync-prims",
    rule_prefix: "NB07",
    confirmation: "std::sync::Mutex::lock on a mutex a thread holds 50 ms at a time, in one task per worker vs tokio::sync::Mutex::lock().await",
    blocking_api: "std::sync::Mutex::lock (contended)",
    alternative_api: "tokio::sync::Mutex::lock().await",
    cpu_bound: false,
    setup,
};

/// How long the refresher leaves the lock free between holds.
const GAP: Duration = Duration::from_micros(200);

#[derive(Clone)]
enum Lock {
    Std(Arc<Mutex<u64>>),
    Tokio(Arc<tokio::sync::Mutex<u64>>),
}

struct SyncFixture;

struct Units {
    lock: Lock,
    /// Holds the refresher has started (bumped right after it acquires the lock).
    generation: Arc<AtomicU64>,
    /// Per offender, the generation its last unit waited for.
    seen: Vec<AtomicU64>,
    stop: Arc<AtomicBool>,
    holder: Mutex<Option<JoinHandle<()>>>,
}

/// How long an offender waits for the refresher to start its next hold before giving up.
const NEXT_HOLD_WAIT: Duration = Duration::from_secs(2);

fn setup(_: &CategoryConfig) -> Result<Box<dyn Fixture>, String> {
    Ok(Box::new(SyncFixture))
}

/// The refresher: hold for `hold`, release for [`GAP`], until stopped or the deadline.
fn refresher(
    lock: Lock,
    generation: Arc<AtomicU64>,
    hold: Duration,
    stop: Arc<AtomicBool>,
    deadline: Instant,
) {
    while !stop.load(Ordering::Acquire) && Instant::now() < deadline {
        match &lock {
            Lock::Std(m) => {
                let mut guard = m.lock().unwrap_or_else(|e| e.into_inner());
                generation.fetch_add(1, Ordering::AcqRel);
                std::thread::sleep(hold);
                *guard += 1;
            }
            Lock::Tokio(m) => {
                let mut guard = m.blocking_lock();
                generation.fetch_add(1, Ordering::AcqRel);
                std::thread::sleep(hold);
                *guard += 1;
            }
        }
        std::thread::sleep(GAP);
    }
}

impl Fixture for SyncFixture {
    fn start_run(
        &self,
        cfg: &CategoryConfig,
        variant: Variant,
    ) -> Result<Arc<dyn RunUnits>, String> {
        let lock = match variant {
            Variant::Blocking => Lock::Std(Arc::new(Mutex::new(0))),
            Variant::Alternative => Lock::Tokio(Arc::new(tokio::sync::Mutex::new(0))),
        };
        let stop = Arc::new(AtomicBool::new(false));
        let generation = Arc::new(AtomicU64::new(0));
        let (l, g, s, hold) = (lock.clone(), generation.clone(), stop.clone(), cfg.unit);
        let deadline = Instant::now() + cfg.helper_deadline();
        let holder = std::thread::Builder::new()
            .name("nb-refresher".into())
            .spawn(move || refresher(l, g, hold, s, deadline))
            .map_err(|e| format!("refresher thread: {e}"))?;
        Ok(Arc::new(Units {
            lock,
            generation,
            seen: (0..cfg.offenders).map(|_| AtomicU64::new(0)).collect(),
            stop,
            holder: Mutex::new(Some(holder)),
        }))
    }
}

impl Drop for Units {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
        if let Some(h) = self
            .holder
            .get_mut()
            .unwrap_or_else(|e| e.into_inner())
            .take()
        {
            let _ = h.join();
        }
    }
}

impl Units {
    /// Whether the refresher has started a hold that offender `o` has not waited for yet.
    fn new_hold(&self, o: usize) -> bool {
        self.generation.load(Ordering::Acquire) > self.seen[o].load(Ordering::Acquire)
    }
}

impl RunUnits for Units {
    fn call(self: Arc<Self>, offender: usize, _: usize) -> UnitFuture {
        Box::pin(async move {
            let o = offender % self.seen.len();
            // Wait (at most the 200 µs gap, normally) for the refresher's next hold.
            let start = Instant::now();
            while !self.new_hold(o) {
                if start.elapsed() > NEXT_HOLD_WAIT {
                    return Err("the refresher stopped".to_string());
                }
                match &self.lock {
                    Lock::Std(_) => std::thread::yield_now(),
                    Lock::Tokio(_) => tokio::task::yield_now().await,
                }
            }
            match &self.lock {
                Lock::Std(m) => {
                    let guard = m.lock().map_err(|_| "poisoned".to_string())?;
                    std::hint::black_box(*guard);
                }
                Lock::Tokio(m) => {
                    let guard = m.lock().await;
                    std::hint::black_box(*guard);
                }
            }
            self.seen[o].store(self.generation.load(Ordering::Acquire), Ordering::Release);
            Ok(())
        })
    }
}
