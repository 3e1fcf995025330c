//! A trivial library whose only purpose is its dependency graph: `scripts/corpus.sh` analyses every
//! crate in that graph as if it were the analysed root. The code below touches a few of the
//! dependencies so the workspace itself is a realistic (small) analysis input too.

use serde::{Deserialize, Serialize};

/// A derive-heavy type: serde, strum and thiserror expand in the compiler, never in the analysis.
#[derive(Debug, Serialize, Deserialize, strum::Display, strum::EnumString)]
pub enum Mode {
    Fast,
    Careful,
}

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("parse failed: {0}")]
    Parse(String),
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

/// A nom parser (macro- and generic-heavy dependency).
pub fn number(input: &str) -> nom::IResult<&str, &str> {
    nom::character::complete::digit1(input)
}

/// Async code that reaches a blocking API through a dependency-free helper: one finding.
pub async fn load_mode(path: &str) -> Result<Mode, Error> {
    let text = read_config(path)?;
    text.trim().parse().map_err(|_| Error::Parse(text))
}

fn read_config(path: &str) -> Result<String, Error> {
    Ok(std::fs::read_to_string(path)?)
}

/// Offloaded correctly: no finding.
pub async fn load_mode_offloaded(path: String) -> Result<Mode, Error> {
    let text = tokio::task::spawn_blocking(move || read_config(&path))
        .await
        .map_err(|e| Error::Parse(e.to_string()))??;
    text.trim().parse().map_err(|_| Error::Parse(text))
}
