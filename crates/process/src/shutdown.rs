//! Shutdown on SIGTERM (how Kubernetes stops a pod) or Ctrl-C.

/// Completes on SIGTERM or Ctrl-C. Spawns the listener so the returned future is `Send + Sync`
/// and can be handed to controllers.
pub fn signal() -> impl std::future::Future<Output = ()> + Send + Sync + 'static {
    let (sender, receiver) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(async move {
        let ctrl_c = async {
            if tokio::signal::ctrl_c().await.is_err() {
                std::future::pending::<()>().await;
            }
        };
        let terminate = async {
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                Ok(mut signal) => {
                    signal.recv().await;
                }
                Err(_) => std::future::pending().await,
            }
        };
        tokio::select! {
            () = ctrl_c => {}
            () = terminate => {}
        }
        tracing::info!("shutdown requested");
        let _ = sender.send(());
    });
    async move {
        let _ = receiver.await;
    }
}
