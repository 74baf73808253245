//! One reconcile of an item: the hook points in their order, responsibility, and the
//! contract's decision of what to do; the job itself is [`super::job`]'s.

use super::context::Context;
use crate::contract::decision::{self, Work};
use crate::contract::status::StatusWriter;
use crate::deployer::Deployer;
use crate::error::Error;
use crate::hooks::{HookResult, HookType, accumulate};
use crate::responsibility;
use kube::runtime::controller::Action;
use kube::runtime::reflector::ObjectRef;
use landscaper_api::core::{DeployItem, Target};
use std::sync::Arc;
use std::time::Duration;

pub(super) fn delay_of(r: HookResult) -> Option<Duration> {
    if r.requeue {
        Some(Duration::ZERO)
    } else if !r.requeue_after.is_zero() {
        Some(r.requeue_after)
    } else {
        None
    }
}

pub(super) fn action_of(r: HookResult) -> Action {
    action_after(delay_of(r))
}

pub(super) fn action_after(delay: Option<Duration>) -> Action {
    delay.map_or_else(Action::await_change, Action::requeue)
}

/// The sooner of two optional requeue delays.
pub(super) fn sooner(a: Option<Duration>, b: Option<Duration>) -> Option<Duration> {
    match (a, b) {
        (Some(x), Some(y)) => Some(x.min(y)),
        (x, y) => x.or(y),
    }
}

impl<D: Deployer> Context<D> {
    pub(super) async fn responsibility(
        &self,
        item: &DeployItem,
    ) -> Result<(bool, Option<Arc<Target>>), Error> {
        if responsibility::excluded(&self.config.excluded_namespaces, item) {
            return Ok((false, None));
        }
        let no_selectors = self.config.target_selectors.is_empty();
        let Some(r) = &item.spec.target else {
            // With selectors, only a target can make an item ours.
            return Ok((no_selectors, None));
        };
        let ns = r
            .namespace
            .as_deref()
            .or(item.metadata.namespace.as_deref())
            .unwrap_or_default();
        let target = match self.targets.get(&ObjectRef::new(&r.name).within(ns)) {
            Some(t) => t,
            // The store may lag behind the watch that triggered us; ask the API.
            None => match kube::Api::<Target>::namespaced(self.ls.clone(), ns)
                .get_opt(&r.name)
                .await
            {
                Ok(Some(t)) => Arc::new(t),
                Ok(None) => return Ok((no_selectors, None)),
                Err(e) => {
                    return Err(Error::from_kube(
                        "ResponsibilityCheck",
                        &format!("Target {ns}/{}", r.name),
                        &e,
                    ));
                }
            },
        };
        match responsibility::matches_any(&self.config.target_selectors, &target) {
            Ok(m) => Ok((m, Some(target))),
            Err(e) => {
                tracing::warn!(error = %e, "a target selector of this deployer is invalid");
                Ok((false, Some(target)))
            }
        }
    }

    pub(super) async fn hook(
        &self,
        t: HookType,
        item: &Arc<DeployItem>,
        target: Option<&Arc<Target>>,
    ) -> Result<Option<HookResult>, Error> {
        self.hooks.execute(t, Some(item), target).await
    }

    pub(super) async fn flow(&self, item: Arc<DeployItem>) -> Result<Action, Error> {
        let key = ObjectRef::from_obj(item.as_ref());
        let mut run = accumulate(
            HookResult::default(),
            self.hooks.execute(HookType::Start, None, None).await?,
        );
        if run.abort_reconcile {
            return Ok(action_of(run));
        }
        let (mut responsible, target) = self.responsibility(&item).await?;
        let during = self
            .hook(HookType::DuringResponsibilityCheck, &item, target.as_ref())
            .await?;
        if during.is_some() {
            run = accumulate(run, during);
            responsible = !run.abort_reconcile;
        }
        if !responsible {
            return Ok(action_of(run));
        }
        run = accumulate(
            run,
            self.hook(HookType::AfterResponsibilityCheck, &item, target.as_ref())
                .await?,
        );
        if run.abort_reconcile {
            return Ok(action_of(run));
        }

        let decision = decision::decide(&item);
        // A job the default logic starts is picked up before ShouldReconcile, so the hooks
        // from there on see, and leave, an item that shows it was picked up.
        let mut current = item.clone();
        let mut picked_up = None;
        if let Some(work) = decision.work {
            if self.stale(&key, &item, &decision) {
                return Ok(Action::await_change());
            }
            if work != Work::Abort {
                if let Some(left) = self.retry_not_due(&key, &item, target.as_ref()) {
                    return Ok(Action::requeue(left));
                }
                if !decision.resume {
                    let (whole, job_id) = self.pickup(&key, &item, &decision, work).await?;
                    current = Arc::new(whole);
                    picked_up = Some(job_id);
                }
            }
        }
        let should = self
            .hook(HookType::ShouldReconcile, &current, target.as_ref())
            .await?;
        run = accumulate(run, should);
        let deleting = item.metadata.deletion_timestamp.is_some();
        let (work, quiet) = match decision.work {
            Some(w) => (w, false),
            // A hook may ask for a reconcile, never for one of an item being deleted (its
            // failed deletion waits for a requested retry).
            None if !deleting && should.is_some_and(|s| !s.abort_reconcile) => {
                (Work::Reconcile { force: false }, true)
            }
            None => {
                if decision.remove_operation {
                    StatusWriter::new(self.ls.clone(), &item)
                        .metadata(&item, false, true)
                        .await?;
                }
                run.abort_reconcile = false;
                return Ok(action_of(run));
            }
        };
        if quiet {
            if self.stale(&key, &item, &decision) {
                return Ok(Action::await_change());
            }
            if let Some(left) = self.retry_not_due(&key, &item, target.as_ref()) {
                return Ok(Action::requeue(left));
            }
        }
        // The default logic decided; ShouldReconcile's vote cannot stop it any more.
        run.abort_reconcile = false;
        run = accumulate(
            run,
            self.hook(HookType::BeforeAnyReconcile, &current, target.as_ref())
                .await?,
        );
        if run.abort_reconcile {
            return Ok(action_of(run));
        }
        let before = match work {
            Work::Abort => HookType::BeforeAbort,
            Work::Reconcile { force: true } => HookType::BeforeForceReconcile,
            Work::Delete => HookType::BeforeDelete,
            Work::Reconcile { force: false } => HookType::BeforeReconcile,
        };
        run = accumulate(run, self.hook(before, &current, target.as_ref()).await?);
        if run.abort_reconcile {
            return Ok(action_of(run));
        }
        let retry = self
            .run_job(
                &key,
                current.clone(),
                target.clone(),
                &decision,
                work,
                quiet,
                picked_up,
            )
            .await?;
        run = accumulate(run, self.hook(HookType::End, &item, target.as_ref()).await?);
        Ok(action_after(sooner(delay_of(run), retry)))
    }
}
