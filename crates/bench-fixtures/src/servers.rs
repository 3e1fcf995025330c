//! A slow HTTP/1.1 server on 127.0.0.1, the far end of the net and http-blocking confirmations and
//! of the cross-runtime seed.
//!
//! It runs on its *own* single-threaded runtime in its own thread, so the runtime under test is
//! never the one serving: a starved runtime cannot slow the server down and blur the measurement.
//! Each connection reads a request head, waits `delay` (the "slow backend"), answers with a small
//! body and closes; a keep-alive server ([`SlowServer::start_keep_alive`]) answers request after
//! request on the same connection instead, as the object store behind a pooled HTTP client does.
//! The server binds an ephemeral port, stops when dropped, and in any case stops by itself after
//! `max_connections` connections or `lifetime`.

use std::io;
use std::net::{Ipv4Addr, SocketAddr, TcpListener as StdListener};
use std::thread::JoinHandle;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::oneshot;

/// The body every response carries.
pub const BODY: &str = "slow but fine\n";

/// A running slow server.
#[derive(Debug)]
pub struct SlowServer {
    addr: SocketAddr,
    stop: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl SlowServer {
    /// Binds 127.0.0.1:0 and starts serving, one request per connection.
    pub fn start(
        delay: Duration,
        max_connections: usize,
        lifetime: Duration,
    ) -> io::Result<SlowServer> {
        SlowServer::start_with(delay, max_connections, lifetime, false)
    }

    /// Binds 127.0.0.1:0 and starts serving with HTTP/1.1 keep-alive: every connection answers
    /// requests (each after `delay`) until the client closes it or stays idle for 10 s.
    pub fn start_keep_alive(
        delay: Duration,
        max_connections: usize,
        lifetime: Duration,
    ) -> io::Result<SlowServer> {
        SlowServer::start_with(delay, max_connections, lifetime, true)
    }

    fn start_with(
        delay: Duration,
        max_connections: usize,
        lifetime: Duration,
        keep_alive: bool,
    ) -> io::Result<SlowServer> {
        let listener = StdListener::bind((Ipv4Addr::LOCALHOST, 0))?;
        listener.set_nonblocking(true)?;
        let addr = listener.local_addr()?;
        let (stop_tx, stop_rx) = oneshot::channel();
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let thread = std::thread::Builder::new()
            .name("nb-slow-server".into())
            .spawn(move || {
                let shape = Serve {
                    delay,
                    max_connections,
                    lifetime,
                    keep_alive,
                };
                rt.block_on(serve(listener, shape, stop_rx));
                rt.shutdown_timeout(Duration::from_secs(1));
            })?;
        Ok(SlowServer {
            addr,
            stop: Some(stop_tx),
            thread: Some(thread),
        })
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    pub fn url(&self) -> String {
        format!("http://{}/", self.addr)
    }
}

impl Drop for SlowServer {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// How a server answers and when it stops.
#[derive(Debug, Clone, Copy)]
struct Serve {
    delay: Duration,
    max_connections: usize,
    lifetime: Duration,
    keep_alive: bool,
}

async fn serve(listener: StdListener, shape: Serve, mut stop: oneshot::Receiver<()>) {
    let Serve {
        delay,
        max_connections,
        lifetime,
        keep_alive,
    } = shape;
    let Ok(listener) = TcpListener::from_std(listener) else {
        return;
    };
    let deadline = tokio::time::sleep(lifetime);
    tokio::pin!(deadline);
    let mut handlers = tokio::task::JoinSet::new();
    let mut served = 0;
    while served < max_connections {
        tokio::select! {
            _ = &mut stop => return,
            _ = &mut deadline => break,
            accepted = listener.accept() => {
                if let Ok((stream, _)) = accepted {
                    served += 1;
                    handlers.spawn(answer(stream, delay, keep_alive));
                }
            }
        }
    }
    // Out of connections or time: stop listening, let the requests in flight finish (bounded).
    drop(listener);
    let drain = async { while handlers.join_next().await.is_some() {} };
    tokio::select! {
        _ = &mut stop => {}
        _ = tokio::time::timeout(delay + Duration::from_secs(10), drain) => {}
    }
}

async fn answer(mut stream: TcpStream, delay: Duration, keep_alive: bool) {
    let mut pending = Vec::with_capacity(512);
    let mut buf = [0u8; 1024];
    loop {
        // A request head ends at the first blank line; pipelined bytes after it stay pending.
        let read_head = async {
            loop {
                if let Some(end) = pending.windows(4).position(|w| w == b"\r\n\r\n") {
                    pending.drain(..end + 4);
                    return true;
                }
                if pending.len() >= 16 * 1024 {
                    return false;
                }
                match stream.read(&mut buf).await {
                    Ok(0) | Err(_) => return false,
                    Ok(n) => pending.extend_from_slice(&buf[..n]),
                }
            }
        };
        match tokio::time::timeout(Duration::from_secs(10), read_head).await {
            Ok(true) => {}
            _ => return,
        }
        tokio::time::sleep(delay).await;
        let response = format!(
            "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: {}\r\n\r\n{BODY}",
            BODY.len(),
            if keep_alive { "keep-alive" } else { "close" }
        );
        if stream.write_all(response.as_bytes()).await.is_err() || !keep_alive {
            break;
        }
    }
    let _ = stream.shutdown().await;
}

/// A minimal HTTP/1.1 GET for `addr`, as raw bytes (what the net confirmation writes by hand).
pub fn raw_request(addr: SocketAddr) -> String {
    format!("GET / HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};
    use std::time::Instant;

    #[test]
    fn answers_after_the_delay_and_stops_when_dropped() {
        let server =
            SlowServer::start(Duration::from_millis(20), 10, Duration::from_secs(30)).unwrap();
        let addr = server.addr();
        assert!(addr.ip().is_loopback());
        let start = Instant::now();
        let mut s = std::net::TcpStream::connect(addr).unwrap();
        s.write_all(raw_request(addr).as_bytes()).unwrap();
        let mut response = String::new();
        s.read_to_string(&mut response).unwrap();
        assert!(start.elapsed() >= Duration::from_millis(20));
        assert!(response.starts_with("HTTP/1.1 200 OK"), "{response}");
        assert!(response.ends_with(BODY));
        drop(server);
        // The listener is gone: a new connection is refused.
        assert!(std::net::TcpStream::connect(addr).is_err());
    }

    #[test]
    fn stops_by_itself_after_max_connections() {
        let server = SlowServer::start(Duration::ZERO, 1, Duration::from_secs(30)).unwrap();
        let addr = server.addr();
        let mut s = std::net::TcpStream::connect(addr).unwrap();
        s.write_all(raw_request(addr).as_bytes()).unwrap();
        let mut response = String::new();
        s.read_to_string(&mut response).unwrap();
        assert!(
            response.ends_with(BODY),
            "the last request is answered: {response}"
        );
        // The server stops listening by itself: new connections are refused (bounded wait).
        let refused = (0..500).any(|_| {
            std::thread::sleep(Duration::from_millis(10));
            std::net::TcpStream::connect(addr).is_err()
        });
        assert!(refused);
        drop(server);
    }
}
