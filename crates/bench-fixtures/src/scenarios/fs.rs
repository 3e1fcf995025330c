//! fs (NB01xx): `std::fs::read` of a file on a slow device against `tokio::fs::read`.
//!
//! Page-cache reads finish in microseconds, so a plain file cannot show what a cold disk or a
//! slow network mount does. The fixture gives each offender a named pipe (FIFO) whose writer, a
//! helper thread standing in for the device, answers one unit (50 ms) after the reader opened
//! it. `std::fs::read` then spends the unit in `open`/`read` on the worker, like a read from an
//! NFS mount; `tokio::fs::read` does the same call on the blocking pool.

use std::sync::Arc;

use super::category::Variant as V;
use super::category::{CategoryConfig, CategorySpec, Fixture, RunUnits};
#[cfg(unix)]
use super::category::{UnitFuture, Variant};

pub const SPEC: CategorySpec = CategorySpec {
    name: "fs",
    rule_prefix: "NB01",
    confirmation: "std::fs::read of a FIFO whose writer answers after 50 ms (a slow disk or network mount), in one task per worker vs tokio::fs::read",
    blocking_api: "std::fs::read (slow device)",
    alternative_api: "tokio::fs::read",
    cpu_bound: false,
    setup,
};

/// What the "device" returns for each read.
pub const PAYLOAD: &[u8] = b"listen = \"127.0.0.1:8080\"\nworkers = 4\n";

struct FsFixture;

fn setup(_: &CategoryConfig) -> Result<Box<dyn Fixture>, String> {
    if cfg!(unix) {
        Ok(Box::new(FsFixture))
    } else {
        Err("the fs confirmation needs Unix FIFOs".to_string())
    }
}

impl Fixture for FsFixture {
    fn start_run(&self, cfg: &CategoryConfig, variant: V) -> Result<Arc<dyn RunUnits>, String> {
        #[cfg(unix)]
        {
            unix::start(cfg, variant)
        }
        #[cfg(not(unix))]
        {
            let _ = (cfg, variant);
            Err("the fs confirmation needs Unix FIFOs".to_string())
        }
    }
}

#[cfg(unix)]
mod unix {
    use std::ffi::CString;
    use std::io::Write;
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::fs::OpenOptionsExt;
    use std::path::{Path, PathBuf};
    use std::sync::mpsc;
    use std::sync::{Arc, Mutex};
    use std::thread::JoinHandle;
    use std::time::{Duration, Instant};

    use super::super::category::{CategoryConfig, RunUnits, TempDir};
    use super::{UnitFuture, Variant, PAYLOAD};

    /// How long the device waits for a reader that announced itself to open the FIFO.
    const OPEN_WAIT: Duration = Duration::from_secs(10);

    pub(super) struct Units {
        _dir: TempDir,
        fifos: Vec<PathBuf>,
        requests: Mutex<Vec<mpsc::Sender<()>>>,
        devices: Mutex<Vec<JoinHandle<()>>>,
        variant: Variant,
    }

    /// Creates a FIFO at `path`.
    pub fn mkfifo(path: &Path) -> std::io::Result<()> {
        let c = CString::new(path.as_os_str().as_bytes())?;
        // SAFETY: `c` is a valid NUL-terminated path for the duration of the call.
        if unsafe { libc::mkfifo(c.as_ptr(), 0o600) } == 0 {
            Ok(())
        } else {
            Err(std::io::Error::last_os_error())
        }
    }

    /// The slow device behind one FIFO: for each announced read, opens the write end as soon as
    /// the reader has opened its end, waits `latency`, writes the payload and closes (EOF).
    fn device(path: PathBuf, requests: mpsc::Receiver<()>, latency: Duration, deadline: Instant) {
        while requests
            .recv_timeout(deadline.saturating_duration_since(Instant::now()))
            .is_ok()
        {
            let give_up = Instant::now() + OPEN_WAIT;
            let file = loop {
                // Non-blocking open for writing fails with ENXIO until a reader has the FIFO open.
                match std::fs::OpenOptions::new()
                    .write(true)
                    .custom_flags(libc::O_NONBLOCK)
                    .open(&path)
                {
                    Ok(f) => break Some(f),
                    Err(e) if e.raw_os_error() == Some(libc::ENXIO) && Instant::now() < give_up => {
                        std::thread::sleep(Duration::from_micros(200));
                    }
                    Err(_) => break None,
                }
            };
            if let Some(mut file) = file {
                std::thread::sleep(latency);
                let _ = file.write_all(PAYLOAD);
            }
        }
    }

    pub(super) fn start(
        cfg: &CategoryConfig,
        variant: Variant,
    ) -> Result<Arc<dyn RunUnits>, String> {
        let dir = TempDir::new("fifo").map_err(|e| format!("temp dir: {e}"))?;
        let deadline = Instant::now() + cfg.helper_deadline();
        let (mut fifos, mut senders, mut devices) = (Vec::new(), Vec::new(), Vec::new());
        for o in 0..cfg.offenders {
            let path = dir.path().join(format!("device-{o}"));
            mkfifo(&path).map_err(|e| format!("mkfifo: {e}"))?;
            let (tx, rx) = mpsc::channel();
            let (p, latency) = (path.clone(), cfg.unit);
            let handle = std::thread::Builder::new()
                .name(format!("nb-device-{o}"))
                .spawn(move || device(p, rx, latency, deadline))
                .map_err(|e| format!("device thread: {e}"))?;
            fifos.push(path);
            senders.push(tx);
            devices.push(handle);
        }
        Ok(Arc::new(Units {
            _dir: dir,
            fifos,
            requests: Mutex::new(senders),
            devices: Mutex::new(devices),
            variant,
        }))
    }

    impl Drop for Units {
        fn drop(&mut self) {
            // Closing the request channels ends the device loops.
            self.requests
                .get_mut()
                .unwrap_or_else(|e| e.into_inner())
                .clear();
            for h in self
                .devices
                .get_mut()
                .unwrap_or_else(|e| e.into_inner())
                .drain(..)
            {
                let _ = h.join();
            }
        }
    }

    impl RunUnits for Units {
        fn call(self: Arc<Self>, offender: usize, _: usize) -> UnitFuture {
            Box::pin(async move {
                let slot = offender % self.fifos.len();
                let path = self.fifos[slot].clone();
                self.requests.lock().unwrap_or_else(|e| e.into_inner())[slot]
                    .send(())
                    .map_err(|_| "device stopped".to_string())?;
                let data = match self.variant {
                    Variant::Blocking => std::fs::read(&path),
                    Variant::Alternative => tokio::fs::read(&path).await,
                }
                .map_err(|e| format!("read {}: {e}", path.display()))?;
                if data == PAYLOAD {
                    Ok(())
                } else {
                    Err(format!("device returned {} bytes", data.len()))
                }
            })
        }
    }
}
