//! A crate with one module that does not parse: the rest is still analysed.

mod broken;

pub async fn handler() -> String {
    std::fs::read_to_string("config.toml").unwrap_or_default()
}
