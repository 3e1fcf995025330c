//! Seed 004, CeresDB: CPU-heavy work in async tasks on one runtime delays I/O on *another*.
//!
//! The article's minimal program (jiacai2050/tokio-debug): an "io" and a "cpu" runtime of two
//! workers each, one reqwest client shared by both, ten io tasks and ten cpu tasks spawned 10 ms
//! apart from plain threads; every task GETs a URL from a server that answers after 50 ms, and
//! the cpu tasks then block their worker for 200 ms. I/O requests that should take 50 ms took up
//! to a second. The shared state is the client's connection pool: hyper runs each connection as
//! a task on the runtime that *opened* it, so a pooled connection opened by a cpu task is driven
//! by the cpu runtime, and an io task that reuses it waits for a cpu worker to come free, twice
//! (to send, and to read the answer).
//!
//! This module reproduces that mechanism without the HTTP stack: a keep-alive HTTP/1.1 client pool
//! ([`Pool`]) whose connections are each driven by a task spawned, like hyper's, on the runtime
//! that opened them, keeping at most `pool_idle` idle connections (reqwest's
//! `pool_max_idle_per_host`; 0 is the article's workaround). The cpu tasks do real computation
//! (parsing a JSON document, the article's `expensive_cpu_task`) for `cpu_work` of their thread's
//! CPU time, either inline (the bug), in `spawn_blocking`, or on a dedicated runtime (CeresDB's
//! fix, [`Isolation`]). The io runtime has the usual four workers; the server is on 127.0.0.1 and
//! every loop is bounded.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::{mpsc, oneshot};

use crate::probe::Tally;
use crate::runtime::{runtime_builder, PollLog, Watched, WorkerMetrics, SHUTDOWN_TIMEOUT};
use crate::scenarios::cpu;
use crate::scenarios::seeds::LONG_POLL;
use crate::servers::SlowServer;
use crate::verdict::{RunOutcome, Spread};

/// Where the cpu tasks do their computation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Isolation {
    /// Inline in the async task on the cpu runtime: the article's bug.
    Inline,
    /// Inline, with a pool that keeps no idle connection: the article's workaround
    /// (`pool_max_idle_per_host(0)`), which stops the sharing instead of the blocking.
    NoPoolReuse,
    /// In `spawn_blocking`: the cpu runtime's workers stay free.
    SpawnBlocking,
    /// On a dedicated runtime (`cpu_heavy.spawn(..).await`): CeresDB's fix.
    DedicatedRuntime,
}

impl Isolation {
    pub fn name(self) -> &'static str {
        match self {
            Isolation::Inline => "inline",
            Isolation::NoPoolReuse => "no_pool_reuse",
            Isolation::SpawnBlocking => "spawn_blocking",
            Isolation::DedicatedRuntime => "dedicated_runtime",
        }
    }

    pub fn describe(self) -> &'static str {
        match self {
            Isolation::Inline => "CPU inline on the cpu runtime",
            Isolation::NoPoolReuse => "CPU inline, pool_max_idle_per_host(0)",
            Isolation::SpawnBlocking => "CPU in spawn_blocking",
            Isolation::DedicatedRuntime => "CPU on a dedicated runtime",
        }
    }
}

/// One cross-runtime run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CrossRuntimeSpec {
    /// Workers of the io runtime (the runtime under test).
    pub io_workers: usize,
    /// Workers of the cpu runtime, and of the dedicated runtime of [`Isolation::DedicatedRuntime`].
    pub cpu_workers: usize,
    pub io_tasks: usize,
    /// Sequential requests per io task.
    pub io_requests: usize,
    pub cpu_tasks: usize,
    /// CPU time each cpu task computes for (between its two requests).
    pub cpu_work: Duration,
    /// How long the server takes to answer: what every request should cost.
    pub delay: Duration,
    /// Gap between two spawns of the same kind (the article's 10 ms).
    pub stagger: Duration,
    /// Idle connections the pool keeps (the article: 4).
    pub pool_idle: usize,
    pub isolation: Isolation,
}

/// The figures a cross-runtime run records ([`RunOutcome::figures`]).
pub mod figure {
    /// Latency of the io runtime's requests, ms: the median and the slowest (each io task makes
    /// one request, as in the article, so a run's p99 is its slowest).
    pub const IO_P50_MS: &str = "io_p50_ms";
    pub const IO_MAX_MS: &str = "io_max_ms";
    /// Share of the io requests served by a connection the cpu runtime drives, %.
    pub const VIA_CPU_PCT: &str = "via_cpu_pct";
}

impl CrossRuntimeSpec {
    /// The article's program: 2 + 2 workers (here 4 io workers), 10 io and 10 cpu tasks spawned
    /// 10 ms apart, 50 ms requests, 200 ms of CPU per cpu task, 4 idle connections; each io task
    /// makes `io_requests` requests (the article: one) so a run has enough samples for a p99.
    pub fn article(io_workers: usize, isolation: Isolation) -> CrossRuntimeSpec {
        CrossRuntimeSpec {
            io_workers,
            cpu_workers: 2,
            io_tasks: 10,
            io_requests: 1,
            cpu_tasks: 10,
            cpu_work: Duration::from_millis(200),
            delay: Duration::from_millis(50),
            stagger: Duration::from_millis(10),
            pool_idle: if isolation == Isolation::NoPoolReuse {
                0
            } else {
                4
            },
            isolation,
        }
    }

    /// A request slower than this (twice the server's delay) counts as a failure.
    pub fn budget(&self) -> Duration {
        self.delay * 2
    }

    /// A lower bound on a run: the CPU work spread over the cpu workers.
    pub fn estimated_wall(&self) -> Duration {
        self.cpu_work * self.cpu_tasks.div_ceil(self.cpu_workers.max(1)) as u32 + self.delay * 2
    }
}

/// One request of the pool's client, answered by the connection's driver.
struct Job {
    path: String,
    reply: oneshot::Sender<std::io::Result<()>>,
}

/// A pooled keep-alive connection: a handle to its driver task.
struct Conn {
    jobs: mpsc::Sender<Job>,
    /// Whether the driver runs on the cpu runtime (it was opened by a cpu task).
    on_cpu_runtime: bool,
}

/// A keep-alive connection pool shared by both runtimes, shaped like hyper's: a connection is a
/// task on the runtime that opened it, requests reach it through a channel, idle connections are
/// reused most-recent-first and at most `max_idle` are kept.
pub struct Pool {
    addr: std::net::SocketAddr,
    idle: Mutex<Vec<Conn>>,
    max_idle: usize,
}

/// What one request cost and which runtime drove its connection.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Served {
    pub latency: Duration,
    pub on_cpu_runtime: bool,
}

/// The name of the cpu runtime's threads; a connection opened on one is driven by that runtime.
const CPU_THREADS: &str = "nb-cpu";

impl Pool {
    pub fn new(addr: std::net::SocketAddr, max_idle: usize) -> Arc<Pool> {
        Arc::new(Pool {
            addr,
            idle: Mutex::new(Vec::new()),
            max_idle,
        })
    }

    /// GETs `path` on a pooled connection (or a new one) and returns the connection afterwards.
    pub async fn get(&self, path: &str) -> std::io::Result<Served> {
        let start = Instant::now();
        let pooled = self.idle.lock().unwrap_or_else(|e| e.into_inner()).pop();
        let conn = match pooled {
            Some(c) => c,
            None => self.connect().await?,
        };
        let (reply, answered) = oneshot::channel();
        let job = Job {
            path: path.to_string(),
            reply,
        };
        conn.jobs
            .send(job)
            .await
            .map_err(|_| std::io::Error::other("connection closed"))?;
        answered
            .await
            .map_err(|_| std::io::Error::other("connection dropped the request"))??;
        let served = Served {
            latency: start.elapsed(),
            on_cpu_runtime: conn.on_cpu_runtime,
        };
        let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
        if idle.len() < self.max_idle {
            idle.push(conn);
        }
        Ok(served)
    }

    /// Opens a connection and spawns its driver on the *current* runtime, as hyper does.
    async fn connect(&self) -> std::io::Result<Conn> {
        let stream = TcpStream::connect(self.addr).await?;
        stream.set_nodelay(true)?;
        let (jobs, queue) = mpsc::channel(1);
        tokio::spawn(drive(stream, queue));
        let on_cpu_runtime = std::thread::current().name() == Some(CPU_THREADS);
        Ok(Conn {
            jobs,
            on_cpu_runtime,
        })
    }
}

/// The connection task: sends each request and reads its answer. Ends when the pool drops the
/// connection (the channel closes) or the socket fails.
async fn drive(mut stream: TcpStream, mut queue: mpsc::Receiver<Job>) {
    let mut buf = Vec::with_capacity(1024);
    while let Some(job) = queue.recv().await {
        let result = exchange(&mut stream, &job.path, &mut buf).await;
        let failed = result.is_err();
        let _ = job.reply.send(result);
        if failed {
            return;
        }
    }
}

/// One HTTP/1.1 request and its `Content-Length` answer on a keep-alive connection.
async fn exchange(stream: &mut TcpStream, path: &str, buf: &mut Vec<u8>) -> std::io::Result<()> {
    let request = format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
    stream.write_all(request.as_bytes()).await?;
    buf.clear();
    let mut chunk = [0u8; 1024];
    let head_end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        if buf.len() > 16 * 1024 {
            return Err(std::io::Error::other("response head too long"));
        }
        let n = stream.read(&mut chunk).await?;
        if n == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).to_ascii_lowercase();
    let length: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse().ok())
        .ok_or_else(|| std::io::Error::other("response without content-length"))?;
    while buf.len() < head_end + length {
        let n = stream.read(&mut chunk).await?;
        if n == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        buf.extend_from_slice(&chunk[..n]);
    }
    Ok(())
}

/// The CPU time the calling thread has used (Linux `CLOCK_THREAD_CPUTIME_ID`), so a unit of CPU
/// work is the same amount of computation whether or not its thread shares a CPU.
fn thread_cpu_time() -> Option<Duration> {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec we own.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    (rc == 0).then(|| Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32))
}

/// The article's `expensive_cpu_task`: parses `doc` until this thread has computed for `work`
/// (wall time where the thread clock is unavailable). Returns the number of parses.
pub fn expensive_cpu_task(doc: &[u8], work: Duration) -> Result<usize, String> {
    let wall = Instant::now();
    let cpu0 = thread_cpu_time();
    let mut parses = 0;
    loop {
        cpu::parse(doc)?;
        parses += 1;
        let used = match (cpu0, thread_cpu_time()) {
            (Some(a), Some(b)) => b.saturating_sub(a),
            _ => wall.elapsed(),
        };
        if used >= work {
            return Ok(parses);
        }
    }
}

/// Size of the document the cpu tasks parse: a few milliseconds per parse, so the work is fine
/// grained.
const DOCUMENT_BYTES: usize = 256 << 10;

/// Runs `spec` once: three fresh runtimes at most (io, cpu, dedicated) and a keep-alive server.
pub fn run_cross_runtime(spec: CrossRuntimeSpec) -> std::io::Result<RunOutcome> {
    let requests = spec.io_tasks * spec.io_requests + spec.cpu_tasks * 2;
    let lifetime = spec.estimated_wall() * 4 + Duration::from_secs(60);
    let server = SlowServer::start_keep_alive(spec.delay, requests + 64, lifetime)?;
    let pool = Pool::new(server.addr(), spec.pool_idle);
    let doc: Arc<Vec<u8>> = Arc::new(cpu::document(DOCUMENT_BYTES));

    let io = runtime_builder(spec.io_workers)
        .thread_name("nb-io")
        .build()?;
    let cpu_rt = runtime_builder(spec.cpu_workers)
        .thread_name(CPU_THREADS)
        .build()?;
    let dedicated = match spec.isolation {
        Isolation::DedicatedRuntime => Some(
            runtime_builder(spec.cpu_workers)
                .thread_name("nb-cpu-heavy")
                .build()?,
        ),
        _ => None,
    };
    let heavy = dedicated.as_ref().map(|rt| rt.handle().clone());
    let log = PollLog::new(LONG_POLL);
    let before = WorkerMetrics::read(cpu_rt.handle());

    // Two plain threads spawn the tasks, 10 ms apart (the article's shape). The io tasks come
    // once the first cpu tasks have made their first request and gone on to compute: the moment
    // the article's io-5 and io-6 happened to be spawned at, made the rule rather than luck (the
    // pool's most recently returned connections are then the cpu runtime's).
    let go = Arc::new(std::sync::Barrier::new(3));
    let computing = Arc::new(AtomicUsize::new(0));
    let io_spawner = {
        let (go, pool, handle) = (go.clone(), pool.clone(), io.handle().clone());
        let computing = computing.clone();
        let first = spec.cpu_tasks.min(spec.cpu_workers);
        std::thread::Builder::new()
            .name("nb-io-spawner".into())
            .spawn(move || {
                go.wait();
                let waiting = Instant::now();
                while computing.load(Ordering::SeqCst) < first
                    && waiting.elapsed() < Duration::from_secs(10)
                {
                    std::thread::sleep(Duration::from_micros(200));
                }
                (0..spec.io_tasks)
                    .map(|i| {
                        if i > 0 {
                            std::thread::sleep(spec.stagger);
                        }
                        let pool = pool.clone();
                        handle.spawn(async move {
                            let mut served = Vec::with_capacity(spec.io_requests);
                            for r in 0..spec.io_requests {
                                served.push(pool.get(&format!("/io-{i}-{r}")).await?);
                            }
                            Ok::<_, std::io::Error>(served)
                        })
                    })
                    .collect::<Vec<_>>()
            })?
    };
    let cpu_spawner = {
        let (go, pool, handle, log) = (
            go.clone(),
            pool.clone(),
            cpu_rt.handle().clone(),
            log.clone(),
        );
        let computing = computing.clone();
        let doc = doc.clone();
        std::thread::Builder::new()
            .name("nb-cpu-spawner".into())
            .spawn(move || {
                go.wait();
                (0..spec.cpu_tasks)
                    .map(|i| {
                        if i > 0 {
                            std::thread::sleep(spec.stagger);
                        }
                        let (pool, doc, heavy) = (pool.clone(), doc.clone(), heavy.clone());
                        let computing = computing.clone();
                        handle.spawn(Watched::new(i, log.clone(), async move {
                            pool.get(&format!("/cpu-{i}/read")).await?;
                            computing.fetch_add(1, Ordering::SeqCst);
                            let work = spec.cpu_work;
                            let parsed = match spec.isolation {
                                // The bug: the cpu runtime's worker computes, and every
                                // connection task queued on it waits.
                                Isolation::Inline | Isolation::NoPoolReuse => {
                                    expensive_cpu_task(&doc, work)
                                }
                                Isolation::SpawnBlocking => {
                                    tokio::task::spawn_blocking(move || {
                                        expensive_cpu_task(&doc, work)
                                    })
                                    .await
                                    .unwrap_or_else(|e| Err(e.to_string()))
                                }
                                Isolation::DedicatedRuntime => match heavy {
                                    Some(heavy) => heavy
                                        .spawn(async move { expensive_cpu_task(&doc, work) })
                                        .await
                                        .unwrap_or_else(|e| Err(e.to_string())),
                                    None => Err("no dedicated runtime".to_string()),
                                },
                            };
                            parsed.map_err(std::io::Error::other)?;
                            pool.get(&format!("/cpu-{i}/write")).await?;
                            Ok::<_, std::io::Error>(())
                        }))
                    })
                    .collect::<Vec<_>>()
            })?
    };
    let start = Instant::now();
    go.wait();
    let panicked = |_| std::io::Error::other("spawner thread panicked");
    let io_tasks = io_spawner.join().map_err(panicked)?;
    let cpu_tasks = cpu_spawner.join().map_err(panicked)?;

    // Wait on both, from this thread (a worker of neither runtime), with a bound.
    let bound = lifetime;
    let io_done = io.block_on(async {
        tokio::time::timeout(bound, async {
            let mut all = Vec::new();
            for t in io_tasks {
                all.extend(t.await.map_err(std::io::Error::other)??);
            }
            Ok::<_, std::io::Error>(all)
        })
        .await
    });
    let cpu_done = cpu_rt.block_on(async {
        tokio::time::timeout(bound, async {
            for t in cpu_tasks {
                t.await.map_err(std::io::Error::other)?.0?;
            }
            Ok::<_, std::io::Error>(())
        })
        .await
    });
    let wall_ms = start.elapsed().as_secs_f64() * 1e3;
    let cpu_workers = WorkerMetrics::read(cpu_rt.handle()).since(&before);
    io.shutdown_timeout(SHUTDOWN_TIMEOUT);
    cpu_rt.shutdown_timeout(SHUTDOWN_TIMEOUT);
    if let Some(rt) = dedicated {
        rt.shutdown_timeout(SHUTDOWN_TIMEOUT);
    }
    drop(server);
    let served = io_done.map_err(|_| std::io::Error::other("io tasks did not finish"))??;
    cpu_done.map_err(|_| std::io::Error::other("cpu tasks did not finish"))??;

    let mut tally = Tally::with_capacity(served.len());
    for s in &served {
        tally.ops += 1;
        if s.latency > spec.budget() {
            tally.timed_out += 1;
        }
        tally.record(s.latency.saturating_sub(spec.delay));
    }
    let mut outcome = RunOutcome::measured(
        &tally,
        &log.long_polls(),
        spec.cpu_workers,
        cpu_workers,
        wall_ms,
    );
    let ms = |d: &Duration| d.as_secs_f64() * 1e3;
    let latency = Spread::of(served.iter().map(|s| ms(&s.latency)));
    let via_cpu = served.iter().filter(|s| s.on_cpu_runtime).count();
    outcome.figures = vec![
        (figure::IO_P50_MS, latency.median),
        (figure::IO_MAX_MS, latency.max),
        (
            figure::VIA_CPU_PCT,
            via_cpu as f64 * 100.0 / served.len().max(1) as f64,
        ),
    ];
    Ok(outcome)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs `n` sequential requests from a task of a runtime whose threads are named like the
    /// cpu runtime's, through a pool keeping `max_idle` connections, against a keep-alive server
    /// that accepts a single connection.
    fn requests(n: usize, max_idle: usize) -> Vec<std::io::Result<Served>> {
        let server =
            SlowServer::start_keep_alive(Duration::ZERO, 1, Duration::from_secs(30)).unwrap();
        let pool = Pool::new(server.addr(), max_idle);
        let rt = runtime_builder(1).thread_name(CPU_THREADS).build().unwrap();
        let task = rt.spawn(async move {
            let mut out = Vec::new();
            for i in 0..n {
                out.push(pool.get(&format!("/r{i}")).await);
            }
            out
        });
        let out = rt.block_on(task).unwrap();
        rt.shutdown_timeout(SHUTDOWN_TIMEOUT);
        out
    }

    #[test]
    fn a_pooled_connection_is_reused_and_driven_by_the_runtime_that_opened_it() {
        let served = requests(3, 4);
        assert_eq!(served.len(), 3);
        for s in &served {
            let s = s
                .as_ref()
                .expect("one keep-alive connection serves all three");
            assert!(s.on_cpu_runtime);
        }
    }

    #[test]
    fn without_idle_connections_every_request_opens_a_new_one() {
        let served = requests(2, 0);
        assert!(served[0].is_ok());
        // The server accepted its one connection and stopped listening: a second one fails.
        assert!(served[1].is_err());
    }

    #[test]
    fn cpu_work_is_counted_in_the_threads_cpu_time() {
        let doc = cpu::document(16 << 10);
        assert!(expensive_cpu_task(&doc, Duration::ZERO).unwrap() >= 1);
        assert!(thread_cpu_time().is_some());
        let article = CrossRuntimeSpec::article(4, Isolation::NoPoolReuse);
        assert_eq!(article.pool_idle, 0);
        assert_eq!(article.budget(), Duration::from_millis(100));
    }
}
