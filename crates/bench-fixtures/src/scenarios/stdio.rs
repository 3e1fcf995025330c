//! stdio (NB09xx): `std::io::stdin().read_line` against `tokio::io::stdin()`.
//!
//! Feasible only by borrowing the process's standard input: for the duration of a run, file
//! descriptor 0 is replaced by a pipe that a helper thread feeds with one line every
//! unit / offenders (12.5 ms for 4 offenders, so each offender waits about one unit per line),
//! and restored afterwards. Runs hold a process-wide lock so two can never share the pipe.
//! Exactly as many lines are written as the offenders read, so nothing is left in std's stdin
//! buffer for the host program. Unix only.

use std::sync::{Arc, Mutex};

use super::category::{CategoryConfig, CategorySpec, Fixture, RunUnits, Variant};

pub const SPEC: CategorySpec = CategorySpec {
    name: "stdio",
    rule_prefix: "NB09",
    confirmation: "std::io::stdin().read_line on a pipe (swapped in as fd 0) that delivers one line per reader every 50 ms, one reader per worker vs tokio::io::stdin()",
    blocking_api: "std::io::Stdin::read_line",
    alternative_api: "tokio::io::stdin() read_line",
    cpu_bound: false,
    setup,
};

/// Held for the whole of a stdio run: fd 0 is process-wide.
static STDIN_LOCK: Mutex<()> = Mutex::new(());

struct StdioFixture;

fn setup(_: &CategoryConfig) -> Result<Box<dyn Fixture>, String> {
    if cfg!(unix) {
        Ok(Box::new(StdioFixture))
    } else {
        Err("the stdio confirmation swaps file descriptor 0 and needs Unix".to_string())
    }
}

impl Fixture for StdioFixture {
    fn start_run(
        &self,
        cfg: &CategoryConfig,
        variant: Variant,
    ) -> Result<Arc<dyn RunUnits>, String> {
        #[cfg(unix)]
        {
            unix::start(cfg, variant)
        }
        #[cfg(not(unix))]
        {
            let _ = (cfg, variant);
            Err("the stdio confirmation needs Unix".to_string())
        }
    }

    fn exclusive(&self) -> Option<&'static Mutex<()>> {
        Some(&STDIN_LOCK)
    }
}

#[cfg(unix)]
mod unix {
    use std::fs::File;
    use std::io::Write;
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::mpsc;
    use std::sync::{Arc, Mutex};
    use std::thread::JoinHandle;
    use std::time::{Duration, Instant};

    use tokio::io::AsyncBufReadExt;

    use super::super::category::{CategoryConfig, RunUnits, UnitFuture, Variant};

    /// fd 0 swapped for a pipe; restores the original on drop.
    pub struct StdinSwap {
        saved: Option<OwnedFd>,
    }

    impl StdinSwap {
        /// Makes `read_end` the process's standard input.
        pub fn install(read_end: OwnedFd) -> std::io::Result<StdinSwap> {
            // SAFETY: dup/dup2 on descriptors we own or on fd 0; results are checked.
            let saved = match unsafe { libc::dup(0) } {
                -1 => None, // stdin was closed; restore by closing again
                fd => Some(unsafe { OwnedFd::from_raw_fd(fd) }),
            };
            if unsafe { libc::dup2(read_end.as_raw_fd(), 0) } == -1 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(StdinSwap { saved })
        }
    }

    impl Drop for StdinSwap {
        fn drop(&mut self) {
            // SAFETY: restoring fd 0 from a descriptor we own, or closing our pipe's copy.
            unsafe {
                match &self.saved {
                    Some(fd) => libc::dup2(fd.as_raw_fd(), 0),
                    None => libc::close(0),
                };
            }
        }
    }

    /// A pipe as (read end, write end).
    pub fn pipe() -> std::io::Result<(OwnedFd, File)> {
        let mut fds = [0; 2];
        // SAFETY: `fds` has room for the two descriptors pipe(2) writes.
        if unsafe { libc::pipe(fds.as_mut_ptr()) } == -1 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: both descriptors were just created and are owned by nobody else.
        let (read_end, write_end) =
            unsafe { (OwnedFd::from_raw_fd(fds[0]), File::from_raw_fd(fds[1])) };
        // Close-on-exec, so a child spawned meanwhile (the process confirmation runs `sleep`)
        // cannot keep the write end open and delay EOF.
        for fd in [read_end.as_raw_fd(), write_end.as_raw_fd()] {
            // SAFETY: fcntl on a descriptor we own.
            if unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) } == -1 {
                return Err(std::io::Error::last_os_error());
            }
        }
        Ok((read_end, write_end))
    }

    type AsyncStdin = tokio::io::BufReader<tokio::io::Stdin>;

    pub(super) struct Units {
        go: mpsc::Sender<()>,
        stop: Arc<AtomicBool>,
        started: AtomicBool,
        feeder: Mutex<Option<JoinHandle<()>>>,
        async_stdin: tokio::sync::Mutex<Option<AsyncStdin>>,
        variant: Variant,
        // Declared last: dropped after the feeder has been joined.
        _swap: StdinSwap,
    }

    /// Writes `lines` lines, one per `interval`, once told to start; closes the pipe at the end.
    fn feeder(
        mut out: File,
        go: mpsc::Receiver<()>,
        stop: Arc<AtomicBool>,
        lines: usize,
        interval: Duration,
        deadline: Instant,
    ) {
        if go
            .recv_timeout(deadline.saturating_duration_since(Instant::now()))
            .is_err()
        {
            return;
        }
        for i in 0..lines {
            std::thread::sleep(interval);
            if stop.load(Ordering::Acquire) {
                return;
            }
            if out.write_all(format!("request {i}\n").as_bytes()).is_err() {
                return;
            }
        }
    }

    pub(super) fn start(
        cfg: &CategoryConfig,
        variant: Variant,
    ) -> Result<Arc<dyn RunUnits>, String> {
        let (read_end, write_end) = pipe().map_err(|e| format!("pipe: {e}"))?;
        let swap = StdinSwap::install(read_end).map_err(|e| format!("dup2: {e}"))?;
        let lines = cfg.offenders * cfg.rounds;
        let interval = cfg.unit / cfg.offenders.max(1) as u32;
        let deadline = Instant::now() + cfg.helper_deadline();
        let (go_tx, go_rx) = mpsc::channel();
        let stop = Arc::new(AtomicBool::new(false));
        let feeder_stop = stop.clone();
        let handle = std::thread::Builder::new()
            .name("nb-stdin-feeder".into())
            .spawn(move || feeder(write_end, go_rx, feeder_stop, lines, interval, deadline))
            .map_err(|e| format!("feeder thread: {e}"))?;
        Ok(Arc::new(Units {
            go: go_tx,
            stop,
            started: AtomicBool::new(false),
            feeder: Mutex::new(Some(handle)),
            async_stdin: tokio::sync::Mutex::new(None),
            variant,
            _swap: swap,
        }))
    }

    impl Drop for Units {
        fn drop(&mut self) {
            if let Some(h) = self
                .feeder
                .get_mut()
                .unwrap_or_else(|e| e.into_inner())
                .take()
            {
                // Stop a feeder that is still writing, or still waiting for the start signal.
                self.stop.store(true, Ordering::Release);
                let _ = self.go.send(());
                let _ = h.join();
            }
        }
    }

    impl RunUnits for Units {
        fn call(self: Arc<Self>, _: usize, _: usize) -> UnitFuture {
            Box::pin(async move {
                if !self.started.swap(true, Ordering::AcqRel) {
                    let _ = self.go.send(());
                }
                let mut line = String::new();
                let n = match self.variant {
                    Variant::Blocking => std::io::stdin().read_line(&mut line),
                    Variant::Alternative => {
                        let mut guard = self.async_stdin.lock().await;
                        let reader = guard
                            .get_or_insert_with(|| tokio::io::BufReader::new(tokio::io::stdin()));
                        reader.read_line(&mut line).await
                    }
                }
                .map_err(|e| format!("stdin: {e}"))?;
                if n == 0 || !line.starts_with("request ") {
                    return Err(format!("unexpected stdin line {line:?}"));
                }
                Ok(())
            })
        }
    }
}
