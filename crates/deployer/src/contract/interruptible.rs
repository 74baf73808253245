//! Requests to a target cluster that end with the job sending them. Steps check the job's
//! [`Interrupt`] between requests; this layer of the target clients also ends a request the
//! cluster never answers, or whose answer stalls, when the item's timeout runs out or the job
//! is aborted, instead of letting it wait for the client's read timeout (minutes) past the
//! item's timeout.
//!
//! A request ended this way fails with the interrupt's error, which
//! [`Error::from_kube`](crate::error::Error::from_kube) passes on, so the job ends as it would
//! at its next check. Requests sent after the job had to stop record its failure (a Helm release
//! marked failed, an uninstall's last state); they get [`AFTER_STOP`] rather than none.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use http::{Method, Request, Response, Uri};
use http_body::{Body, Frame, SizeHint};
use tower_layer::Layer;
use tower_service::Service;

use super::interrupt::Interrupt;
use crate::error::Error;

/// How long a request sent after its job had to stop may take.
pub const AFTER_STOP: Duration = Duration::from_secs(30);

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// Resolves, with the error to end a request with, once the request must end.
type Stop = Pin<Box<dyn Future<Output = Error> + Send>>;

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
    type Response = Response<InterruptibleBody<R>>;
    type Error = BoxError;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, BoxError>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        self.inner.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        let request_line = (request.method().clone(), request.uri().clone());
        let response = self.inner.call(request);
        let after_stop = self.after_stop;
        // The job is known where the answer is awaited: kube's client calls its services on a
        // task of its own, and only the returned future runs in the task of the job.
        Box::pin(async move {
            let Some(mut stop) = stop_of(Interrupt::current(), request_line, after_stop) else {
                let answer = response.await.map_err(Into::into)?;
                return Ok(answer.map(|inner| InterruptibleBody { inner, stop: None }));
            };
            tokio::select! {
                answer = response => {
                    let answer = answer.map_err(Into::into)?;
                    Ok(answer.map(|inner| InterruptibleBody { inner, stop: Some(stop) }))
                }
                error = &mut stop => Err(Box::new(error) as BoxError),
            }
        })
    }
}

/// When a request (`method`, `uri`) of the job `interrupt` must end: when the job must stop,
/// or `after_stop` from now when it already had to. Requests outside a job are not bounded
/// here. The request is named only in the error, once there is one.
fn stop_of(
    interrupt: Option<Interrupt>,
    (method, uri): (Method, Uri),
    after_stop: Duration,
) -> Option<Stop> {
    let interrupt = interrupt?;
    let operation = move || format!("{method} {}", uri.path());
    if interrupt.must_stop() {
        return Some(Box::pin(async move {
            tokio::time::sleep(after_stop).await;
            Error::transient(
                operation(),
                "NoAnswer",
                format!(
                    "no answer within {} after the job had to stop",
                    landscaper_api::format_go_duration(after_stop)
                ),
            )
        }));
    }
    Some(Box::pin(async move {
        interrupt.stopped("").await.with_operation(operation())
    }))
}

/// An answer's body that ends with the job too, should the cluster stall in the middle of it.
pub struct InterruptibleBody<R> {
    inner: R,
    stop: Option<Stop>,
}

impl<R> std::fmt::Debug for InterruptibleBody<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InterruptibleBody")
            .field("bounded", &self.stop.is_some())
            .finish_non_exhaustive()
    }
}

impl<R> Body for InterruptibleBody<R>
where
    R: Body + Unpin,
    R::Error: Into<BoxError>,
{
    type Data = R::Data;
    type Error = BoxError;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<R::Data>, BoxError>>> {
        let this = self.get_mut();
        if let Poll::Ready(frame) = Pin::new(&mut this.inner).poll_frame(cx) {
            return Poll::Ready(frame.map(|f| f.map_err(Into::into)));
        }
        match this.stop.as_mut().map(|stop| stop.as_mut().poll(cx)) {
            Some(Poll::Ready(error)) => {
                this.stop = None;
                Poll::Ready(Some(Err(Box::new(error))))
            }
            _ => Poll::Pending,
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::convert::Infallible;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::time::Instant;

    /// A cluster as a service: it never answers, answers at once, or answers and then stalls
    /// in the middle of the body.
    #[derive(Clone, Copy)]
    enum Cluster {
        Silent,
        Prompt,
        Stalling,
    }

    /// An answer's body: whole at once, or never ending.
    enum TestBody {
        Whole(Option<&'static [u8]>),
        Stalled,
    }

    impl Body for TestBody {
        type Data = &'static [u8];
        type Error = Infallible;

        fn poll_frame(
            self: Pin<&mut Self>,
            _: &mut Context<'_>,
        ) -> Poll<Option<Result<Frame<&'static [u8]>, Infallible>>> {
            match self.get_mut() {
                TestBody::Whole(data) => Poll::Ready(data.take().map(|d| Ok(Frame::data(d)))),
                TestBody::Stalled => Poll::Pending,
            }
        }
    }

    impl Service<Request<()>> for Cluster {
        type Response = Response<TestBody>;
        type Error = Infallible;
        type Future = Pin<Box<dyn Future<Output = Result<Response<TestBody>, Infallible>> + Send>>;

        fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
            Poll::Ready(Ok(()))
        }

        fn call(&mut self, _: Request<()>) -> Self::Future {
            let cluster = *self;
            Box::pin(async move {
                match cluster {
                    Cluster::Silent => std::future::pending().await,
                    Cluster::Prompt => Ok(Response::new(TestBody::Whole(Some(b"{}")))),
                    Cluster::Stalling => Ok(Response::new(TestBody::Stalled)),
                }
            })
        }
    }

    /// Sends a request to `cluster` through the layer; the answer is awaited by the caller.
    fn send(
        layer: InterruptibleLayer,
        cluster: Cluster,
    ) -> <Interruptible<Cluster> as Service<Request<()>>>::Future {
        let request = Request::get("/api/v1/namespaces/default/configmaps/x")
            .body(())
            .unwrap();
        layer.layer(cluster).call(request)
    }

    async fn next_frame(
        body: &mut InterruptibleBody<TestBody>,
    ) -> Option<Result<Frame<&'static [u8]>, BoxError>> {
        std::future::poll_fn(|cx| Pin::new(&mut *body).poll_frame(cx)).await
    }

    fn ending_in(after: Duration) -> Interrupt {
        Interrupt::new(
            Some(Instant::now() + after),
            Duration::from_secs(2),
            Arc::new(|| false),
        )
    }

    /// `work`'s output, failing the test if the layer lets it run on.
    async fn within<F: Future>(work: F) -> F::Output {
        tokio::time::timeout(Duration::from_secs(10), work)
            .await
            .expect("ended by the layer within 10s")
    }

    fn stopped_with(error: BoxError) -> Error {
        *error.downcast::<Error>().expect("the interrupt's error")
    }

    #[tokio::test]
    async fn an_unanswered_request_of_a_job_ends_with_the_job() {
        let interrupt = ending_in(Duration::from_millis(300));
        let answer = send(InterruptibleLayer::default(), Cluster::Silent);
        let error = stopped_with(within(interrupt.scope(answer)).await.unwrap_err());
        assert_eq!(error.reason, "ProgressingTimeout");
        assert_eq!(
            error.operation,
            "GET /api/v1/namespaces/default/configmaps/x"
        );
    }

    #[tokio::test]
    async fn an_answer_that_stalls_midway_ends_with_the_job() {
        let interrupt = ending_in(Duration::from_millis(300));
        let answer = send(InterruptibleLayer::default(), Cluster::Stalling);
        let frame = within(interrupt.scope(async {
            let mut body = answer.await.expect("headers in time").into_body();
            next_frame(&mut body).await
        }))
        .await;
        let error = stopped_with(frame.expect("a frame").unwrap_err());
        assert_eq!(error.reason, "ProgressingTimeout");
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
        let answer = send(InterruptibleLayer::default(), Cluster::Silent);
        let answer = tokio::spawn(async move { interrupt.scope(answer).await });
        // Abort once the request waits for its answer (one sent after the abort would get
        // `AFTER_STOP`).
        tokio::time::sleep(Duration::from_millis(100)).await;
        flag.store(true, Ordering::SeqCst);
        let error = stopped_with(within(answer).await.unwrap().unwrap_err());
        assert_eq!(error.reason, "Aborted");
    }

    #[tokio::test]
    async fn a_request_sent_after_the_job_stopped_gets_its_own_time() {
        let interrupt = ending_in(Duration::ZERO);
        let layer = InterruptibleLayer {
            after_stop: Duration::from_millis(300),
        };
        let frame = interrupt
            .scope(async {
                let mut body = send(layer, Cluster::Prompt).await.unwrap().into_body();
                next_frame(&mut body).await
            })
            .await;
        let data = frame.expect("a frame").unwrap().into_data().unwrap();
        assert_eq!(data, b"{}", "a prompt answer after the stop is kept whole");
        let silent = within(interrupt.scope(send(layer, Cluster::Silent))).await;
        let error = stopped_with(silent.unwrap_err());
        assert_eq!(error.reason, "NoAnswer");
        assert!(error.message.contains("300ms"), "{}", error.message);
    }

    #[tokio::test]
    async fn requests_outside_a_job_are_not_bounded() {
        let answer = tokio::time::timeout(
            Duration::from_millis(300),
            send(InterruptibleLayer::default(), Cluster::Silent),
        )
        .await;
        assert!(answer.is_err(), "still waiting when the test gave up");
    }
}
