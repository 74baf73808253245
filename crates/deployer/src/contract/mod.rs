//! The deployer contract with the landscaper: which work is due (job IDs, phases, operation
//! annotations, deletion), how long it may take and how it is stopped, and the status and
//! metadata writes that report it.

pub mod decision;
pub mod interrupt;
pub mod interruptible;
pub mod status;

use std::sync::atomic::{AtomicU64, Ordering};

/// A new job ID for a job the deployer starts itself (operation annotations on items
/// without a pending job); unique within the process and across restarts.
pub fn new_job_id() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!(
        "{nanos:x}-{:x}-{:x}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn minted_job_ids_differ() {
        assert_ne!(super::new_job_id(), super::new_job_id());
    }
}
