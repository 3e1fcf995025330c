//! Request handlers. Each request names a user id; the reply is the user as JSON.

use std::sync::Arc;
use std::time::Duration;

use storage::{display_name, User, UserStore};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::native;

pub async fn serve(mut socket: TcpStream, store: Arc<UserStore>) {
    let mut buf = [0u8; 64];
    let n = socket.read(&mut buf).await.unwrap_or(0); // ok: tokio's AsyncReadExt::read
    let id: u64 = String::from_utf8_lossy(&buf[..n]).trim().parse().unwrap_or(0);
    let reply = match get_user(&store, id).await { // reached: NB0101 NB0201 NB1101
        Some(user) => render(&user), // expect: NB1101
        None => "not found".to_string(),
    };
    socket.write_all(reply.as_bytes()).await.ok(); // ok: tokio's AsyncWriteExt::write_all
}

/// Looks a user up, retrying a flaky disk once.
async fn get_user(store: &UserStore, id: u64) -> Option<User> {
    for attempt in 0..2 {
        if let Some(user) = store.load(id) { // expect: NB0101 NB1101 via=storage
            return Some(user);
        }
        if attempt == 0 {
            std::thread::sleep(Duration::from_millis(50)); // expect: NB0201
        }
    }
    None
}

/// The right way: the blocking store call runs on the blocking pool.
pub async fn get_user_offloaded(store: Arc<UserStore>, id: u64) -> Option<User> {
    tokio::task::spawn_blocking(move || store.load(id)).await.ok().flatten() // ok: offloaded
}

fn render(user: &User) -> String {
    format!("{}\n{}", display_name(user), serde_json::to_string(user).unwrap_or_default())
}

pub async fn update_user(store: Arc<UserStore>, user: User) -> std::io::Result<()> {
    let checksum = native::checksum(user.name.as_bytes()); // expect: NB1001
    let _ = checksum;
    store.save(&user) // expect: NB0101 NB1101 via=storage
}

/// Resolves the upstream host on every call: a DNS lookup on the worker.
pub async fn upstream_addr(host: &str) -> Option<std::net::SocketAddr> {
    use std::net::ToSocketAddrs;
    (host, 443).to_socket_addrs().ok()?.next() // expect: NB0301
}

pub async fn upstream_addr_async(host: &str) -> Option<std::net::SocketAddr> {
    tokio::net::lookup_host((host, 443)).await.ok()?.next() // ok: tokio DNS
}

pub async fn reply_json(user: &User) -> String {
    let body = render(user); // expect: NB1101
    tokio::time::sleep(Duration::from_millis(1)).await; // ok: async sleep
    body
}

pub async fn audit_log(line: &str) -> std::io::Result<()> {
    tokio::fs::write("audit.log", line).await // ok: tokio::fs offloads internally
}
