//! Extension hooks: functions called at fixed points of the reconcile flow that can abort it
//! or ask for a requeue, with the seed's rules for combining several hook results.

use crate::error::Error;
use futures::future::BoxFuture;
use landscaper_api::core::{DeployItem, Target};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

/// The points of the reconcile flow where hooks run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum HookType {
    /// At the very start; item and target are not known yet.
    Start,
    /// While deciding responsibility; a result overrides the decision.
    DuringResponsibilityCheck,
    /// After the deployer was found responsible.
    AfterResponsibilityCheck,
    /// After the contract decided whether work is due; `abort_reconcile: false` forces work.
    ShouldReconcile,
    /// Before any of abort, force-reconcile, delete or reconcile.
    BeforeAnyReconcile,
    /// Before an abort.
    BeforeAbort,
    /// Before a force-reconcile.
    BeforeForceReconcile,
    /// Before a delete.
    BeforeDelete,
    /// Before a reconcile.
    BeforeReconcile,
    /// After the deployer's work returned.
    End,
}

impl HookType {
    /// Whether `abort_reconcile` of several results is ANDed (instead of ORed) for this type,
    /// because `false` there means "continue" and must win only when every hook agrees.
    pub fn ands_abort(self) -> bool {
        matches!(
            self,
            Self::DuringResponsibilityCheck | Self::ShouldReconcile
        )
    }
}

/// What a hook asks of the reconcile flow.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HookResult {
    /// Stop the flow after this hook point.
    pub abort_reconcile: bool,
    /// Requeue the item at once.
    pub requeue: bool,
    /// Requeue the item after this delay (zero: no delayed requeue).
    pub requeue_after: Duration,
}

impl HookResult {
    /// A result that only asks for a requeue after `delay`.
    pub fn requeue_after(delay: Duration) -> Self {
        Self {
            requeue_after: delay,
            ..Self::default()
        }
    }
}

/// Combines the results of the hooks of one point. `None` results are ignored; no result at
/// all is `None`; a single result is taken as is.
pub fn aggregate(results: &[Option<HookResult>], hook_type: HookType) -> Option<HookResult> {
    let present: Vec<HookResult> = results.iter().flatten().copied().collect();
    match present.as_slice() {
        [] => None,
        [one] => Some(*one),
        many => {
            let abort = if hook_type.ands_abort() {
                many.iter().all(|r| r.abort_reconcile)
            } else {
                many.iter().any(|r| r.abort_reconcile)
            };
            Some(combine(many, abort))
        }
    }
}

/// Folds the result of a hook point into the running result of the reconcile (default rules:
/// abort ORed).
pub fn accumulate(running: HookResult, next: Option<HookResult>) -> HookResult {
    match next {
        None => running,
        Some(next) => combine(
            &[running, next],
            running.abort_reconcile || next.abort_reconcile,
        ),
    }
}

fn combine(results: &[HookResult], abort: bool) -> HookResult {
    let requeue = results.iter().any(|r| r.requeue);
    let requeue_after = if requeue {
        Duration::ZERO
    } else {
        results
            .iter()
            .map(|r| r.requeue_after)
            .filter(|d| !d.is_zero())
            .min()
            .unwrap_or(Duration::ZERO)
    };
    HookResult {
        abort_reconcile: abort,
        requeue,
        requeue_after,
    }
}

/// What a hook is called with.
#[derive(Debug, Clone)]
pub struct HookCall {
    /// The hook point.
    pub hook_type: HookType,
    /// The item (none for `Start`).
    pub item: Option<Arc<DeployItem>>,
    /// The item's target (none for `Start` and for items without a target).
    pub target: Option<Arc<Target>>,
}

/// A hook function: `Ok(None)` leaves the flow alone.
pub type Hook =
    Arc<dyn Fn(HookCall) -> BoxFuture<'static, Result<Option<HookResult>, Error>> + Send + Sync>;

/// A hook together with the points it is meant for.
#[derive(Clone)]
pub struct HookSetup {
    /// The hook.
    pub hook: Hook,
    /// The points to register it at.
    pub hook_types: Vec<HookType>,
}

/// The hooks of a deployer, by hook point, in registration order.
#[derive(Clone, Default)]
pub struct Hooks {
    by_type: BTreeMap<HookType, Vec<Hook>>,
}

impl std::fmt::Debug for Hooks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let counts: BTreeMap<_, _> = self.by_type.iter().map(|(k, v)| (*k, v.len())).collect();
        f.debug_struct("Hooks")
            .field("registered", &counts)
            .finish()
    }
}

impl Hooks {
    /// No hooks.
    pub fn new() -> Self {
        Self::default()
    }

    /// Registers `hook` at every given point; without points it is not registered.
    pub fn register(&mut self, hook: Hook, hook_types: &[HookType]) -> &mut Self {
        for t in hook_types {
            self.by_type.entry(*t).or_default().push(hook.clone());
        }
        self
    }

    /// Registers a hook setup at the points it names.
    pub fn register_setup(&mut self, setup: HookSetup) -> &mut Self {
        let types = setup.hook_types.clone();
        self.register(setup.hook, &types)
    }

    /// How many hooks are registered at `hook_type`.
    pub fn count(&self, hook_type: HookType) -> usize {
        self.by_type.get(&hook_type).map_or(0, Vec::len)
    }

    /// Runs the hooks of one point in registration order and aggregates their results; the
    /// first error stops the point.
    pub async fn execute(
        &self,
        hook_type: HookType,
        item: Option<&Arc<DeployItem>>,
        target: Option<&Arc<Target>>,
    ) -> Result<Option<HookResult>, Error> {
        let Some(hooks) = self.by_type.get(&hook_type) else {
            return Ok(None);
        };
        let mut results = Vec::with_capacity(hooks.len());
        for hook in hooks {
            let call = HookCall {
                hook_type,
                item: item.cloned(),
                target: target.cloned(),
            };
            results.push(hook(call).await?);
        }
        Ok(aggregate(&results, hook_type))
    }
}

/// Wraps a plain function as a [`Hook`].
pub fn hook_fn<F>(f: F) -> Hook
where
    F: Fn(&HookCall) -> Result<Option<HookResult>, Error> + Send + Sync + 'static,
{
    Arc::new(move |call: HookCall| {
        let out = f(&call);
        Box::pin(async move { out })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    fn r(abort: bool, requeue: bool, after_secs: u64) -> Option<HookResult> {
        Some(HookResult {
            abort_reconcile: abort,
            requeue,
            requeue_after: Duration::from_secs(after_secs),
        })
    }

    #[test]
    fn no_results_aggregate_to_none() {
        assert_eq!(aggregate(&[], HookType::End), None);
        assert_eq!(aggregate(&[None, None], HookType::BeforeReconcile), None);
    }

    #[test]
    fn a_single_result_is_copied_even_among_nones() {
        let one = r(true, false, 7);
        assert_eq!(
            aggregate(&[None, one, None], HookType::ShouldReconcile),
            one
        );
        assert_eq!(aggregate(&[one], HookType::Start), one);
    }

    #[test]
    fn abort_is_ored_for_ordinary_points() {
        for t in [
            HookType::Start,
            HookType::AfterResponsibilityCheck,
            HookType::BeforeAnyReconcile,
            HookType::BeforeAbort,
            HookType::BeforeForceReconcile,
            HookType::BeforeDelete,
            HookType::BeforeReconcile,
            HookType::End,
        ] {
            let got = aggregate(&[r(false, false, 0), r(true, false, 0)], t).unwrap();
            assert!(got.abort_reconcile, "{t:?}");
            let got = aggregate(&[r(false, false, 0), r(false, false, 0)], t).unwrap();
            assert!(!got.abort_reconcile, "{t:?}");
        }
    }

    #[test]
    fn abort_is_anded_for_responsibility_and_should_reconcile() {
        for t in [
            HookType::DuringResponsibilityCheck,
            HookType::ShouldReconcile,
        ] {
            let got = aggregate(&[r(false, false, 0), r(true, false, 0)], t).unwrap();
            assert!(!got.abort_reconcile, "{t:?}");
            let got = aggregate(&[r(true, false, 0), r(true, false, 0)], t).unwrap();
            assert!(got.abort_reconcile, "{t:?}");
        }
    }

    #[test]
    fn requeue_is_ored() {
        let got = aggregate(&[r(false, false, 0), r(false, true, 0)], HookType::End).unwrap();
        assert!(got.requeue);
        let got = aggregate(&[r(false, false, 0), r(false, false, 0)], HookType::End).unwrap();
        assert!(!got.requeue);
    }

    #[test]
    fn smallest_positive_requeue_after_wins() {
        let got = aggregate(
            &[r(false, false, 30), r(false, false, 0), r(false, false, 10)],
            HookType::End,
        )
        .unwrap();
        assert_eq!(got.requeue_after, Duration::from_secs(10));
    }

    #[test]
    fn requeue_forces_requeue_after_to_zero() {
        let got = aggregate(&[r(false, false, 30), r(false, true, 0)], HookType::End).unwrap();
        assert!(got.requeue);
        assert_eq!(got.requeue_after, Duration::ZERO);
    }

    #[test]
    fn accumulate_ors_abort_and_keeps_the_running_result_for_none() {
        let running = HookResult::requeue_after(Duration::from_secs(5));
        assert_eq!(accumulate(running, None), running);
        let got = accumulate(running, r(true, false, 3));
        assert!(got.abort_reconcile);
        assert_eq!(got.requeue_after, Duration::from_secs(3));
    }

    #[tokio::test]
    async fn hooks_run_in_order_at_their_points_and_setups_register_every_point() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let mut hooks = Hooks::new();
        let s = seen.clone();
        hooks.register(
            hook_fn(move |c| {
                s.lock().unwrap().push(("a", c.hook_type));
                Ok(None)
            }),
            &[HookType::Start, HookType::End],
        );
        let s = seen.clone();
        hooks.register_setup(HookSetup {
            hook: hook_fn(move |c| {
                s.lock().unwrap().push(("b", c.hook_type));
                Ok(Some(HookResult::requeue_after(Duration::from_secs(1))))
            }),
            hook_types: vec![HookType::End],
        });
        hooks.register(hook_fn(|_| Ok(None)), &[]);
        assert_eq!(hooks.count(HookType::Start), 1);
        assert_eq!(hooks.count(HookType::End), 2);
        assert_eq!(hooks.count(HookType::BeforeDelete), 0);

        assert_eq!(hooks.execute(HookType::Start, None, None).await, Ok(None));
        let end = hooks.execute(HookType::End, None, None).await.unwrap();
        assert_eq!(end, Some(HookResult::requeue_after(Duration::from_secs(1))));
        assert_eq!(
            *seen.lock().unwrap(),
            vec![
                ("a", HookType::Start),
                ("a", HookType::End),
                ("b", HookType::End)
            ]
        );
    }

    #[tokio::test]
    async fn a_failing_hook_stops_its_point() {
        let mut hooks = Hooks::new();
        hooks.register(
            hook_fn(|_| Err(Error::transient("Hook", "Broken", "the hook failed"))),
            &[HookType::BeforeReconcile],
        );
        let err = hooks
            .execute(HookType::BeforeReconcile, None, None)
            .await
            .unwrap_err();
        assert_eq!(err.reason, "Broken");
    }
}
