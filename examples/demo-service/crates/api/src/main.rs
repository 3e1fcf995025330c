//! The service's entry point: configuration, then the request loop.

mod config;
mod handlers;
mod native;

use std::sync::Arc;

use storage::UserStore;

#[tokio::main]
async fn main() {
    let settings = config::load(); // expect: NB0101 via=dotenvy kind=block_on
    let store = Arc::new(UserStore::open(&settings.data_dir));
    let listener = tokio::net::TcpListener::bind(&settings.listen).await.unwrap(); // ok: tokio::net is async
    loop {
        let (socket, _) = listener.accept().await.unwrap(); // ok: tokio accept is async
        let store = store.clone();
        tokio::spawn(async move {
            handlers::serve(socket, store).await; // reached: NB0101 NB0201 NB1101
        });
    }
}
