//! Stopping long work: the item's progressing timeout and the `abort` operation, checked
//! between steps and while waiting, and carried along with a job's work ([`Interrupt::scope`])
//! so that its requests to the target cluster end with it.

use crate::error::Error;
use std::fmt;
use std::sync::Arc;
use std::time::{Duration, Instant};

tokio::task_local! {
    /// The interrupt of the job whose work runs in this task.
    static JOB: Interrupt;
}

/// The longest single sleep, so an abort or timeout is noticed promptly while waiting.
const SLICE: Duration = Duration::from_millis(200);

/// Tells long work when to stop.
#[derive(Clone)]
pub struct Interrupt {
    deadline: Option<Instant>,
    timeout: Duration,
    aborted: Arc<dyn Fn() -> bool + Send + Sync>,
}

impl fmt::Debug for Interrupt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Interrupt")
            .field("deadline", &self.deadline)
            .finish()
    }
}

impl Interrupt {
    /// Never interrupts.
    pub fn never() -> Self {
        Self {
            deadline: None,
            timeout: Duration::ZERO,
            aborted: Arc::new(|| false),
        }
    }

    /// Interrupts at `deadline` (the end of a `timeout`) or when `aborted` says so.
    pub fn new(
        deadline: Option<Instant>,
        timeout: Duration,
        aborted: Arc<dyn Fn() -> bool + Send + Sync>,
    ) -> Self {
        Self {
            deadline,
            timeout,
            aborted,
        }
    }

    /// Runs `work` as the work of this interrupt's job: requests it sends through a target
    /// client end when the job must stop (see `contract::interruptible`).
    pub async fn scope<F: Future>(&self, work: F) -> F::Output {
        JOB.scope(self.clone(), work).await
    }

    /// The interrupt of the job whose work is running, if any.
    pub fn current() -> Option<Interrupt> {
        JOB.try_with(Interrupt::clone).ok()
    }

    /// Whether work must stop now.
    pub fn must_stop(&self) -> bool {
        (self.aborted)() || self.timed_out()
    }

    /// How long until the deadline, if there is one; zero once it has passed.
    pub fn remaining(&self) -> Option<Duration> {
        self.deadline
            .map(|d| d.saturating_duration_since(Instant::now()))
    }

    fn timed_out(&self) -> bool {
        self.deadline.is_some_and(|d| Instant::now() >= d)
    }

    /// An error when work must stop now.
    pub fn check(&self, operation: &str) -> Result<(), Error> {
        if (self.aborted)() {
            return Err(Error::aborted(operation));
        }
        if self.timed_out() {
            return Err(Error::timeout(
                operation,
                format!(
                    "the deploy item did not finish within its timeout of {}",
                    landscaper_api::format_go_duration(self.timeout)
                ),
            ));
        }
        Ok(())
    }

    /// Sleeps for `duration`, ending early with an error on abort or timeout.
    pub async fn sleep(&self, duration: Duration, operation: &str) -> Result<(), Error> {
        let end = Instant::now() + duration;
        loop {
            self.check(operation)?;
            let now = Instant::now();
            if now >= end {
                return Ok(());
            }
            tokio::time::sleep((end - now).min(SLICE)).await;
        }
    }

    /// Runs `work`, ending it early with an error on abort or timeout: for work that may wait
    /// on a cluster that never answers.
    pub async fn bound<T>(
        &self,
        work: impl Future<Output = Result<T, Error>>,
        operation: &str,
    ) -> Result<T, Error> {
        tokio::select! {
            result = work => result,
            stop = self.stopped(operation) => Err(stop),
        }
    }

    /// The error, once work must stop.
    pub(crate) async fn stopped(&self, operation: &str) -> Error {
        loop {
            if let Err(stop) = self.check(operation) {
                return stop;
            }
            tokio::time::sleep(SLICE).await;
        }
    }
}

/// Exponential backoff for polling: starts at `initial`, doubles, capped at `max`.
#[derive(Debug, Clone, Copy)]
pub struct Backoff {
    next: Duration,
    max: Duration,
}

impl Backoff {
    /// A backoff from `initial` up to `max`.
    pub fn new(initial: Duration, max: Duration) -> Self {
        Self { next: initial, max }
    }

    /// The next delay.
    pub fn next_delay(&mut self) -> Duration {
        let d = self.next;
        self.next = (self.next * 2).min(self.max);
        d
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, Ordering};

    #[tokio::test]
    async fn an_abort_ends_a_sleep_early() {
        let flag = Arc::new(AtomicBool::new(false));
        let f = flag.clone();
        let interrupt = Interrupt::new(
            None,
            Duration::ZERO,
            Arc::new(move || f.load(Ordering::SeqCst)),
        );
        let sleeper =
            tokio::spawn(async move { interrupt.sleep(Duration::from_secs(60), "Wait").await });
        flag.store(true, Ordering::SeqCst);
        let err = sleeper.await.unwrap().unwrap_err();
        assert_eq!(err.reason, "Aborted");
    }

    #[test]
    fn a_passed_deadline_is_a_timeout_error() {
        let interrupt = Interrupt::new(
            Some(Instant::now()),
            Duration::from_secs(600),
            Arc::new(|| false),
        );
        let err = interrupt.check("Wait").unwrap_err();
        assert_eq!(err.codes, vec![landscaper_api::core::ErrorCode::Timeout]);
        assert!(err.message.contains("10m0s"), "{}", err.message);
        assert!(Interrupt::never().check("Wait").is_ok());
        assert_eq!(interrupt.remaining(), Some(Duration::ZERO));
        assert_eq!(Interrupt::never().remaining(), None);
    }

    #[test]
    fn backoff_doubles_up_to_its_cap() {
        let mut b = Backoff::new(Duration::from_millis(100), Duration::from_millis(300));
        let got: Vec<_> = (0..4).map(|_| b.next_delay().as_millis()).collect();
        assert_eq!(got, vec![100, 200, 300, 300]);
    }
}
