//! Paths are argument-insensitive. A non-blocking API built on a blocking one with a zero timeout
//! or a "return when stalled" closure is reported as the blocking one: `subprocess::Job::poll`
//! calls `Process::wait_timeout(Duration::ZERO)`, whose fallback loop calls `thread::sleep`;
//! `LocalPool::run_until_stalled` runs the same executor loop as `run`, which parks only when the
//! closure asks it to wait; `recv_timeout(Duration::ZERO)` polls a channel without waiting (issue
//! 5: "never `try_*` or `recv_timeout(0)`"). Needed: constant propagation of `Duration::ZERO` and
//! closure results into the callee, or argument conditions on API patterns in the rule database
//! (`recv_timeout` only when the timeout is not a zero constant). duct's `Handle::try_wait` passes
//! `WaitMode::NonBlocking` down to `WaitMode::maybe_wait_on_child`, whose `Blocking` arm waits:
//! since tuple-variant patterns type their payloads (`HandleInner::Child(c)`), the path is
//! followed and the arm chosen by the constant is not known.

pub async fn poll_job(job: &subprocess::Job) {
    job.poll(); // ok(NB0603, NB0201): poll never waits for the child
}

pub async fn stalled(pool: &mut futures::executor::LocalPool) {
    pool.run_until_stalled(); // ok(NB0801, NB0201): only polls what is ready, never parks
}

pub async fn zero_timeout(rx: &std::sync::mpsc::Receiver<u8>, crx: &crossbeam_channel::Receiver<u8>) {
    let a = rx.recv_timeout(std::time::Duration::ZERO); // ok(NB0701): a zero timeout polls without waiting
    let b = crx.recv_timeout(std::time::Duration::ZERO); // ok(NB0703): a zero timeout polls without waiting
}

pub async fn duct_try_wait(h: duct::Handle) {
    h.try_wait(); // ok(NB0602, NB0601, NB0101): try_wait polls without waiting
}
