//! Async code with nothing blocking in it: the analyzer reports no finding.

pub async fn double(x: u64) -> u64 {
    add(x, x).await
}

async fn add(a: u64, b: u64) -> u64 {
    a + b
}
