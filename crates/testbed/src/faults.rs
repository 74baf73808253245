//! Fault injection: failing chosen requests, dropping watches, restarts and compaction.

use crate::status::ApiError;
use std::sync::Mutex;
use tokio::sync::watch;

/// How a matched request fails.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fault {
    /// 500 InternalError.
    InternalError,
    /// 429 TooManyRequests with `Retry-After` seconds.
    TooManyRequests {
        /// Seconds in the `Retry-After` header.
        retry_after: u64,
    },
    /// 409 Conflict, as for a stale resourceVersion.
    Conflict,
    /// No answer until the connection is closed (by a restart or by the client).
    Hang,
    /// 422 Invalid with this message, as a ValidatingAdmissionPolicy denies a request.
    Invalid(String),
}

/// Which requests a rule applies to; `None` fields match anything.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Matcher {
    /// Kubernetes verb (`get`, `create`, `patch`, ...).
    pub verb: Option<String>,
    /// Plural resource, optionally with `/subresource`.
    pub resource: Option<String>,
    /// Namespace.
    pub namespace: Option<String>,
    /// Object name.
    pub name: Option<String>,
}

impl Matcher {
    /// Matches every request.
    pub fn any() -> Self {
        Self::default()
    }

    /// Only this verb.
    pub fn verb(mut self, verb: &str) -> Self {
        self.verb = Some(verb.into());
        self
    }

    /// Only this resource (`configmaps`, `deployments/status`).
    pub fn resource(mut self, resource: &str) -> Self {
        self.resource = Some(resource.into());
        self
    }

    /// Only this namespace.
    pub fn namespace(mut self, namespace: &str) -> Self {
        self.namespace = Some(namespace.into());
        self
    }

    /// Only this object name.
    pub fn name(mut self, name: &str) -> Self {
        self.name = Some(name.into());
        self
    }

    fn matches(&self, r: &RequestFacts<'_>) -> bool {
        let eq = |want: &Option<String>, have: &str| want.as_deref().is_none_or(|w| w == have);
        eq(&self.verb, r.verb)
            && eq(&self.resource, r.resource)
            && eq(&self.namespace, r.namespace)
            && eq(&self.name, r.name)
    }
}

/// What a rule is matched against.
#[derive(Debug, Clone, Copy)]
pub struct RequestFacts<'a> {
    /// Verb.
    pub verb: &'a str,
    /// Resource (with `/subresource`).
    pub resource: &'a str,
    /// Namespace (empty when none).
    pub namespace: &'a str,
    /// Name (empty when none).
    pub name: &'a str,
}

struct Rule {
    matcher: Matcher,
    fault: Fault,
    remaining: usize,
}

/// The fault rules of one cluster and the signal that ends open watches.
pub struct Faults {
    rules: Mutex<Vec<Rule>>,
    watch_epoch: watch::Sender<u64>,
}

impl Default for Faults {
    fn default() -> Self {
        Self {
            rules: Mutex::new(Vec::new()),
            watch_epoch: watch::channel(0).0,
        }
    }
}

/// What the server must do with a request that matched a rule.
#[derive(Debug)]
pub enum Injected {
    /// Answer with this error.
    Fail(ApiError),
    /// Never answer.
    Hang,
}

impl Faults {
    /// Fails the next `count` requests matching `matcher` with `fault`.
    pub fn fail_next(&self, count: usize, matcher: Matcher, fault: Fault) {
        self.rules
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(Rule {
                matcher,
                fault,
                remaining: count,
            });
    }

    /// Removes every pending rule.
    pub fn clear(&self) {
        self.rules.lock().unwrap_or_else(|e| e.into_inner()).clear();
    }

    /// Ends every open watch; clients see the stream close and must re-watch.
    pub fn drop_watches(&self) {
        self.watch_epoch.send_modify(|e| *e += 1);
    }

    /// A receiver that changes when watches must end.
    pub fn watch_epoch(&self) -> watch::Receiver<u64> {
        self.watch_epoch.subscribe()
    }

    /// The fault for a request, consuming one use of the first matching rule.
    pub fn check(&self, facts: RequestFacts<'_>) -> Option<Injected> {
        let mut rules = self.rules.lock().unwrap_or_else(|e| e.into_inner());
        let i = rules
            .iter()
            .position(|r| r.remaining > 0 && r.matcher.matches(&facts))?;
        rules[i].remaining -= 1;
        let fault = rules[i].fault.clone();
        rules.retain(|r| r.remaining > 0);
        tracing::info!(
            verb = facts.verb,
            resource = facts.resource,
            name = facts.name,
            ?fault,
            "injecting fault"
        );
        Some(match fault {
            Fault::InternalError => Injected::Fail(ApiError::internal_error("injected fault")),
            Fault::TooManyRequests { retry_after } => {
                Injected::Fail(ApiError::too_many_requests(retry_after))
            }
            Fault::Conflict => {
                Injected::Fail(ApiError::conflict_modified(facts.resource, "", facts.name))
            }
            Fault::Hang => Injected::Hang,
            Fault::Invalid(message) => Injected::Fail(ApiError::new(422, "Invalid", message)),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts<'a>(verb: &'a str, resource: &'a str) -> RequestFacts<'a> {
        RequestFacts {
            verb,
            resource,
            namespace: "ns",
            name: "a",
        }
    }

    #[test]
    fn rules_fire_the_given_number_of_times() {
        let f = Faults::default();
        f.fail_next(
            2,
            Matcher::any().verb("create").resource("configmaps"),
            Fault::TooManyRequests { retry_after: 3 },
        );
        assert!(f.check(facts("get", "configmaps")).is_none());
        match f.check(facts("create", "configmaps")) {
            Some(Injected::Fail(e)) => assert_eq!((e.code, e.retry_after), (429, Some(3))),
            other => panic!("{other:?}"),
        }
        assert!(f.check(facts("create", "configmaps")).is_some());
        assert!(f.check(facts("create", "configmaps")).is_none());
    }

    #[test]
    fn an_invalid_fault_answers_422_with_its_message() {
        let f = Faults::default();
        let message = "ValidatingAdmissionPolicy 'p' with binding 'b' denied request: no";
        f.fail_next(1, Matcher::any(), Fault::Invalid(message.into()));
        match f.check(facts("patch", "installations")) {
            Some(Injected::Fail(e)) => {
                assert_eq!(
                    (e.code, e.reason, e.message.as_str()),
                    (422, "Invalid", message)
                )
            }
            other => panic!("{other:?}"),
        }
    }
}
