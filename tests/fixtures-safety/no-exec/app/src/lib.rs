#[evil_macro::mark]
pub async fn handler() {
    let _ = std::fs::read("x");
}
