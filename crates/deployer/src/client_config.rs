//! How the project's Kubernetes clients wait for answers. kube 5 leaves a request's reads
//! unbounded, so a request on a connection that died without a reset (a network partition, a
//! stalled API server) would never end, and with it the reconcile, the registration loop or the
//! shutdown waiting for them. Every client the binaries build bounds its reads.

use std::time::Duration;

/// How long a request waits for the next bytes of its answer: kube's default before version 5.
/// Watches are not cut short by it: the API server ends kube's watches after 290 s, and kube's
/// watcher takes one silent for 295 s for a dead connection too.
pub const READ_TIMEOUT: Duration = Duration::from_secs(295);

/// `config` with reads bounded by [`READ_TIMEOUT`].
pub fn with_bounded_reads(config: kube::Config) -> kube::Config {
    with_read_timeout(config, READ_TIMEOUT)
}

/// `config` with reads bounded by `timeout`, counted from each request's write rather than
/// from when its pooled connection went idle.
pub fn with_read_timeout(mut config: kube::Config, timeout: Duration) -> kube::Config {
    config.read_timeout = Some(timeout);
    config.reset_reader_on_write = true;
    config
}
