//! Waiting for a future from synchronous code (a template function): a future that is ready
//! at once (a cache hit, a local file) is answered directly; one that must wait for the
//! network blocks the thread, which a multi-threaded Tokio runtime allows.

/// The output of `future`; an error when it must wait and no multi-threaded runtime runs.
pub fn block_on<F: std::future::Future>(future: F) -> Result<F::Output, String> {
    let mut future = std::pin::pin!(future);
    let mut context = std::task::Context::from_waker(std::task::Waker::noop());
    if let std::task::Poll::Ready(output) = future.as_mut().poll(&mut context) {
        return Ok(output);
    }
    match tokio::runtime::Handle::try_current() {
        Ok(handle) if handle.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread => {
            Ok(tokio::task::block_in_place(|| handle.block_on(future)))
        }
        _ => Err("a lookup that waits for the network needs a multi-threaded Tokio runtime".into()),
    }
}
