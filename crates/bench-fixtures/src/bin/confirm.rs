//! `confirm`: the standalone form of `cargo nonblock confirm`.
//!
//! ```text
//! confirm [CATEGORY|RULE_ID|seeds|DEMO|--all] [--workers 4] [--runs 10] [--plot DIR] [--markdown FILE] [--quick]
//! ```
//! Exit status: 0 when every confirmation held (blocking starved, alternative healthy) and every
//! seed point got its published verdict, 1 otherwise, 2 on usage or output errors.

use clap::Parser;

#[derive(Debug, Parser)]
#[command(
    name = "confirm",
    about = "Run flagged blocking patterns on a real multi-thread runtime and confirm the starvation they cause"
)]
struct Cli {
    #[command(flatten)]
    args: bench_fixtures::ConfirmArgs,
}

fn main() {
    let cli = Cli::parse();
    std::process::exit(i32::from(bench_fixtures::confirm_command(&cli.args)));
}
