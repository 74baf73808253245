//! Process plumbing shared by the `landscaper` and `landscaper-agent` binaries: logging
//! set-up, the shutdown signal, and the HTTP server that answers the kubelet's probes. It
//! knows nothing of what a binary does; a binary says what its probes report through
//! [`probes::Probes`].

pub mod logging;
pub mod probes;
pub mod shutdown;
