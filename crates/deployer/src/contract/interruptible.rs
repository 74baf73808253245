//! Requests to a target cluster that end with the job sending them. Steps check the job's
//! [`Interrupt`] between requests; this layer of the target clients also ends a request the
//! cluster never answers when the item's timeout runs out or the job is aborted, instead of
//! letting it wait for the client's read timeout (minutes) past the item's timeout.
//!
//! A request ended this way fails with the interrupt's error, which
//! [`Error::from_kube`](crate::error::Error::from_kube) passes on, so the job ends as it would
//! at its next check. Requests sent after the job had to stop record its failure (a Helm release
//! marked failed, an uninstall's last state); they get [`AFTER_STOP`] rather than none.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use http::{Request, Response};
use tower_layer::Layer;
use tower_service::Service;

use super::interrupt::Interrupt;
use crate::error::Error;

/// How long a request sent after its job had to stop may take.
pub const AFTER_STOP: Duration = Duration::from_secs(30);

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The layer for target clients (`kube::client::ClientBuilder::with_layer`).
#[derive(Debug, Clone, Copy)]
pub struct InterruptibleLayer {
    /// How long a request sent after its job had to stop may take.
    pub after_stop: Duration,
}

impl Default for InterruptibleLayer {
    fn default() -> Self {
        Self {
            after_stop: AFTER_STOP,
        }
    }
}

impl<S> Layer<S> for InterruptibleLayer {
    type Service = Interruptible<S>;

    fn layer(&self, inner: S) -> Self::Service {
        Interruptible {
            inner,
            after_stop: self.after_stop,
        }
    }
}

/// A client service whose requests end with the job that sends them.
#[derive(Debug, Clone)]
pub struct Interruptible<S> {
    inner: S,
    after_stop: Duration,
}

impl<S, B, R> Service<Request<B>> for Interruptible<S>
where
    S: Service<Request<B>, Response = Response<R>>,
    S::Error: Into<BoxError>,
    S::Future: Send + 'static,
{
    type Response = Response<R>;
    type Error = BoxError;
    type Future = Pin<Box<dyn Future<Output = Result<Response<R>, BoxError>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        self.inner.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        let method = request.method().clone();
        let uri = request.uri().clone();
        let response = self.inner.call(request);
        let after_stop = self.after_stop;
        // The job is known where the answer is awaited: kube's client calls its services on a
        // task of its own, and only the returned future runs in the task of the job.
        Box::pin(async move {
            let Some(interrupt) = Interrupt::current() else {
                return response.await.map_err(Into::into);
            };
            let operation = format!("{method} {}", uri.path());
            if interrupt.must_stop() {
                return match tokio::time::timeout(after_stop, response).await {
                    Ok(answer) => answer.map_err(Into::into),
                    Err(_) => Err(Box::new(Error::transient(
                        operation,
                        "NoAnswer",
                        format!(
                            "no answer within {} after the job had to stop",
                            landscaper_api::format_go_duration(after_stop)
                        ),
                    )) as BoxError),
                };
            }
            tokio::select! {
                answer = response => answer.map_err(Into::into),
                stop = interrupt.stopped(&operation) => Err(Box::new(stop) as BoxError),
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::convert::Infallible;
    use std::future::{Ready, ready};
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::time::Instant;

    /// A service that never answers.
    #[derive(Clone)]
    struct Silent;

    impl Service<Request<()>> for Silent {
        type Response = Response<()>;
        type Error = Infallible;
        type Future = std::future::Pending<Result<Response<()>, Infallible>>;

        fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
            Poll::Ready(Ok(()))
        }

        fn call(&mut self, _: Request<()>) -> Self::Future {
            std::future::pending()
        }
    }

    /// A service that answers at once.
    #[derive(Clone)]
    struct Prompt;

    impl Service<Request<()>> for Prompt {
        type Response = Response<()>;
        type Error = Infallible;
        type Future = Ready<Result<Response<()>, Infallible>>;

        fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
            Poll::Ready(Ok(()))
        }

        fn call(&mut self, _: Request<()>) -> Self::Future {
            ready(Ok(Response::new(())))
        }
    }

    fn request() -> Request<()> {
        Request::get("/api/v1/namespaces/default/configmaps/x")
            .body(())
            .unwrap()
    }

    fn ending_in(after: Duration) -> Interrupt {
        Interrupt::new(
            Some(Instant::now() + after),
            Duration::from_secs(2),
            Arc::new(|| false),
        )
    }

    #[tokio::test]
    async fn an_unanswered_request_of_a_job_ends_with_the_job() {
        let interrupt = ending_in(Duration::from_millis(300));
        let answer = interrupt
            .scope(InterruptibleLayer::default().layer(Silent).call(request()))
            .await;
        let error = answer.unwrap_err().downcast::<Error>().unwrap();
        assert_eq!(error.reason, "ProgressingTimeout");
        assert_eq!(
            error.operation,
            "GET /api/v1/namespaces/default/configmaps/x"
        );
    }

    #[tokio::test]
    async fn an_unanswered_request_of_a_job_ends_when_the_job_is_aborted() {
        let flag = Arc::new(AtomicBool::new(false));
        let aborted = flag.clone();
        let interrupt = Interrupt::new(
            None,
            Duration::ZERO,
            Arc::new(move || aborted.load(Ordering::SeqCst)),
        );
        let request = InterruptibleLayer::default().layer(Silent).call(request());
        let answer = tokio::spawn(async move { interrupt.scope(request).await });
        // Abort once the request waits for its answer (one sent after the abort would get
        // `AFTER_STOP`).
        tokio::time::sleep(Duration::from_millis(100)).await;
        flag.store(true, Ordering::SeqCst);
        let error = answer
            .await
            .unwrap()
            .unwrap_err()
            .downcast::<Error>()
            .unwrap();
        assert_eq!(error.reason, "Aborted");
    }

    #[tokio::test]
    async fn a_request_sent_after_the_job_stopped_gets_its_own_time() {
        let interrupt = ending_in(Duration::ZERO);
        let layer = InterruptibleLayer {
            after_stop: Duration::from_millis(300),
        };
        let prompt = interrupt.scope(layer.layer(Prompt).call(request())).await;
        assert!(prompt.is_ok(), "a prompt answer after the stop is kept");
        let silent = interrupt.scope(layer.layer(Silent).call(request())).await;
        let error = silent.unwrap_err().downcast::<Error>().unwrap();
        assert_eq!(error.reason, "NoAnswer");
        assert!(error.message.contains("300ms"), "{}", error.message);
    }

    #[tokio::test]
    async fn requests_outside_a_job_are_not_bounded() {
        let answer = tokio::time::timeout(
            Duration::from_millis(300),
            InterruptibleLayer::default().layer(Silent).call(request()),
        )
        .await;
        assert!(answer.is_err(), "still waiting when the test gave up");
    }
}
