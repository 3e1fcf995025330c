pub mod outbox;
pub mod warmup;
