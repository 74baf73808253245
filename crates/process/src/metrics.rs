//! Prometheus metrics: one registry per process (as controller-runtime's `metrics.Registry`),
//! served as `/metrics` by the probe server in the Prometheus text format; the conventional
//! controller metrics, recorded by [`instrument`] around any reconcile function; and
//! [`ObjectCount`], a gauge counted at scrape time from the caches a binary already keeps.
//!
//! The registry is process-wide so that any module can add its metrics once, at first use,
//! without a handle threaded through every constructor. Where several instances of a controller
//! run in one process (tests, dev mode), their reconciles add up and their caches are counted
//! once per object.

use std::collections::{BTreeMap, HashMap};
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, LazyLock, Mutex, MutexGuard};
use std::time::Instant;

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeLabelSet, EncodeMetric};
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::{ConstGauge, Gauge};
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::{Metric, Registry, Unit};

/// The `Content-Type` of what [`encode`] returns.
pub const CONTENT_TYPE: &str = prometheus_client::encoding::prometheus_text::CONTENT_TYPE;

static REGISTRY: LazyLock<Mutex<Registry>> = LazyLock::new(|| Mutex::new(Registry::default()));

fn registry() -> MutexGuard<'static, Registry> {
    // A panic while registering leaves the registry usable: it holds no invariant of its own.
    REGISTRY
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Adds `metric` to the process's registry as `name` (counters get `_total` appended).
pub fn register(name: &str, help: &str, metric: impl Metric) {
    registry().register(name, help, metric);
}

/// Adds `metric` to the process's registry as `name` in `unit` (appended to the name).
pub fn register_with_unit(name: &str, help: &str, unit: Unit, metric: impl Metric) {
    registry().register_with_unit(name, help, unit, metric);
}

/// Adds a collector, asked for its metrics at every scrape.
pub fn register_collector(collector: impl Collector) {
    registry().register_collector(Box::new(collector));
}

/// Every metric of the process in the Prometheus text format (version 0.0.4).
pub fn encode() -> String {
    let mut text = String::new();
    // Writing into a String does not fail.
    let _ = prometheus_client::encoding::prometheus_text::encode(&mut text, &registry());
    text
}

/// The label of metrics per controller.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ControllerLabel {
    controller: String,
}

/// The labels of `controller_runtime_reconcile_total`.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ReconcileLabels {
    controller: String,
    result: String,
}

/// Upper bounds of the reconcile time buckets, in seconds (controller-runtime's).
const RECONCILE_BUCKETS: [f64; 25] = [
    0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9,
    1.0, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 60.0,
];

/// The controller metrics controller-runtime exports, under its names.
struct ReconcileMetrics {
    total: Family<ReconcileLabels, Counter>,
    errors: Family<ControllerLabel, Counter>,
    time: Family<ControllerLabel, Histogram>,
    active: Family<ControllerLabel, Gauge>,
}

static RECONCILES: LazyLock<ReconcileMetrics> = LazyLock::new(|| {
    let metrics = ReconcileMetrics {
        total: Family::default(),
        errors: Family::default(),
        time: Family::new_with_constructor(|| Histogram::new(RECONCILE_BUCKETS)),
        active: Family::default(),
    };
    register(
        "controller_runtime_reconcile",
        "Total number of reconciliations per controller and result (success, error)",
        metrics.total.clone(),
    );
    register(
        "controller_runtime_reconcile_errors",
        "Total number of reconciliation errors per controller",
        metrics.errors.clone(),
    );
    register_with_unit(
        "controller_runtime_reconcile_time",
        "Length of time per reconciliation per controller",
        Unit::Seconds,
        metrics.time.clone(),
    );
    register(
        "controller_runtime_active_workers",
        "Number of reconciles running now per controller",
        metrics.active.clone(),
    );
    metrics
});

/// Counts a running reconcile until dropped (a reconcile cancelled at shutdown ends too).
struct Active(ControllerLabel);

impl Drop for Active {
    fn drop(&mut self) {
        RECONCILES.active.get_or_create(&self.0).dec();
    }
}

/// A reconcile future, boxed so that its type can be named by the controller runtime.
pub type Reconciling<T, E> = Pin<Box<dyn Future<Output = Result<T, E>> + Send>>;

/// Wraps `reconcile` so that each call is counted (`controller_runtime_reconcile_total` by
/// result, `controller_runtime_reconcile_errors_total`), timed
/// (`controller_runtime_reconcile_time_seconds`) and shown while it runs
/// (`controller_runtime_active_workers`), all labelled `controller`.
pub fn instrument<K, C, T, E, F, Fut>(
    controller: &str,
    reconcile: F,
) -> impl FnMut(Arc<K>, Arc<C>) -> Reconciling<T, E> + use<K, C, T, E, F, Fut>
where
    F: Fn(Arc<K>, Arc<C>) -> Fut,
    Fut: Future<Output = Result<T, E>> + Send + 'static,
{
    let label = ControllerLabel {
        controller: controller.to_owned(),
    };
    // Every series exists from the start, at zero, so rates and alerts see the first error.
    for result in ["success", "error"] {
        let _ = RECONCILES.total.get_or_create_owned(&ReconcileLabels {
            controller: label.controller.clone(),
            result: result.to_owned(),
        });
    }
    let _ = RECONCILES.errors.get_or_create_owned(&label);
    let _ = RECONCILES.active.get_or_create_owned(&label);
    move |object, context| {
        let label = label.clone();
        let running = reconcile(object, context);
        Box::pin(async move {
            RECONCILES.active.get_or_create(&label).inc();
            let active = Active(label.clone());
            let started = Instant::now();
            let result = running.await;
            drop(active);
            RECONCILES
                .time
                .get_or_create(&label)
                .observe(started.elapsed().as_secs_f64());
            let outcome = if result.is_ok() { "success" } else { "error" };
            RECONCILES
                .total
                .get_or_create(&ReconcileLabels {
                    controller: label.controller.clone(),
                    result: outcome.to_owned(),
                })
                .inc();
            if result.is_err() {
                RECONCILES.errors.get_or_create(&label).inc();
            }
            result
        })
    }
}

/// What one source of an [`ObjectCount`] reports at a scrape: each object's identity and the
/// label values it is counted under.
type Source = Box<dyn Fn() -> Vec<(String, Vec<String>)> + Send + Sync>;

/// A gauge family counted at scrape time: objects from one or more sources (caches), each
/// object once however many sources hold it, by the values of the family's labels.
#[derive(Clone)]
pub struct ObjectCount {
    inner: Arc<ObjectCountInner>,
}

struct ObjectCountInner {
    name: &'static str,
    help: &'static str,
    labels: &'static [&'static str],
    sources: Mutex<BTreeMap<u64, Source>>,
    next: AtomicU64,
}

impl std::fmt::Debug for ObjectCount {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ObjectCount")
            .field("name", &self.inner.name)
            .finish_non_exhaustive()
    }
}

/// Keeps a source of an [`ObjectCount`] counted until dropped.
#[must_use = "the source is counted only while this is kept"]
pub struct Counted {
    count: ObjectCount,
    id: u64,
}

impl Drop for Counted {
    fn drop(&mut self) {
        self.count.sources().remove(&self.id);
    }
}

impl ObjectCount {
    /// A gauge family `name` with the label names `labels`, registered in the process's
    /// registry. Call it once per name (a `LazyLock` does).
    pub fn register(
        name: &'static str,
        help: &'static str,
        labels: &'static [&'static str],
    ) -> Self {
        let count = Self {
            inner: Arc::new(ObjectCountInner {
                name,
                help,
                labels,
                sources: Mutex::new(BTreeMap::new()),
                next: AtomicU64::new(0),
            }),
        };
        register_collector(count.clone());
        count
    }

    fn sources(&self) -> MutexGuard<'_, BTreeMap<u64, Source>> {
        self.inner
            .sources
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Counts what `source` reports (object identity, label values in the order of the
    /// family's labels) at every scrape, while the returned guard is kept.
    pub fn count(
        &self,
        source: impl Fn() -> Vec<(String, Vec<String>)> + Send + Sync + 'static,
    ) -> Counted {
        let id = self.inner.next.fetch_add(1, Ordering::Relaxed);
        self.sources().insert(id, Box::new(source));
        Counted {
            count: self.clone(),
            id,
        }
    }

    /// The number of objects per label values, each object once.
    pub fn counts(&self) -> BTreeMap<Vec<String>, i64> {
        let mut objects: HashMap<String, Vec<String>> = HashMap::new();
        for source in self.sources().values() {
            objects.extend(source());
        }
        let mut counts = BTreeMap::new();
        for values in objects.into_values() {
            *counts.entry(values).or_insert(0) += 1;
        }
        counts
    }
}

/// Label names and values of one series of an [`ObjectCount`].
struct Series<'a> {
    names: &'static [&'static str],
    values: &'a [String],
}

impl EncodeLabelSet for Series<'_> {
    fn encode(
        &self,
        encoder: &mut prometheus_client::encoding::LabelSetEncoder,
    ) -> Result<(), std::fmt::Error> {
        use prometheus_client::encoding::EncodeLabel;
        for (name, value) in self.names.iter().zip(self.values) {
            (*name, value.as_str()).encode(encoder.encode_label())?;
        }
        Ok(())
    }
}

impl Collector for ObjectCount {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let counts = self.counts();
        let gauge = ConstGauge::new(0i64);
        let mut family = encoder.encode_descriptor(
            self.inner.name,
            self.inner.help,
            None,
            gauge.metric_type(),
        )?;
        for (values, count) in &counts {
            let series = Series {
                names: self.inner.labels,
                values,
            };
            ConstGauge::new(*count).encode(family.encode_family(&series)?)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug)]
    struct Failed;

    #[tokio::test]
    async fn reconciles_are_counted_by_result_and_timed() {
        let reconcile = instrument("metrics-test", |fail: Arc<bool>, _: Arc<()>| async move {
            if *fail { Err(Failed) } else { Ok(()) }
        });
        let mut reconcile = reconcile;
        assert!(reconcile(Arc::new(false), Arc::new(())).await.is_ok());
        assert!(reconcile(Arc::new(false), Arc::new(())).await.is_ok());
        assert!(reconcile(Arc::new(true), Arc::new(())).await.is_err());
        let text = encode();
        for line in [
            "controller_runtime_reconcile_total{controller=\"metrics-test\",result=\"success\"} 2",
            "controller_runtime_reconcile_total{controller=\"metrics-test\",result=\"error\"} 1",
            "controller_runtime_reconcile_errors_total{controller=\"metrics-test\"} 1",
            "controller_runtime_reconcile_time_seconds_count{controller=\"metrics-test\"} 3",
            "controller_runtime_active_workers{controller=\"metrics-test\"} 0",
        ] {
            assert!(text.lines().any(|l| l == line), "{line} missing in\n{text}");
        }
    }

    #[test]
    fn objects_in_several_sources_count_once() {
        static COUNT: LazyLock<ObjectCount> = LazyLock::new(|| {
            ObjectCount::register("metrics_test_objects", "Objects by phase", &["phase"])
        });
        let one = |name: &str, phase: &str| (name.to_owned(), vec![phase.to_owned()]);
        let first = COUNT.count(move || vec![one("a", "Succeeded"), one("b", "Failed")]);
        let second = COUNT.count(move || vec![one("a", "Succeeded"), one("c", "Succeeded")]);
        let text = encode();
        assert!(
            text.contains("metrics_test_objects{phase=\"Succeeded\"} 2\n"),
            "{text}"
        );
        assert!(text.contains("metrics_test_objects{phase=\"Failed\"} 1\n"));
        drop(first);
        drop(second);
        assert!(COUNT.counts().is_empty());
    }
}
