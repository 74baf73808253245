//! Process plumbing shared by the `landscaper` and `landscaper-agent` binaries: logging
//! set-up, the shutdown signal, the process's Prometheus metrics (with the conventional
//! controller metrics), the HTTP server that answers the kubelet's probes and Prometheus'
//! scrapes, and the controllers' Kubernetes Events ([`events::Events`]). It knows nothing of
//! what a binary does; a binary says what its probes report through [`probes::Probes`] and
//! adds its own metrics to [`metrics`].

pub mod events;
pub mod logging;
pub mod metrics;
pub mod probes;
pub mod shutdown;
