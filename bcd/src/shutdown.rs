//! Waiting for the signal to stop: SIGTERM (how orchestrators stop a process) or Ctrl-C.

use std::future::Future;

/// Resolves when the process is asked to stop. The handlers are installed when this is called,
/// not when it is first awaited: a signal that comes in between (while `bcd` joins, say) is kept
/// and stops the process cleanly, instead of killing it by the signal's default action.
pub fn signal() -> impl Future<Output = ()> {
    #[cfg(unix)]
    let streams = {
        use tokio::signal::unix::{SignalKind, signal};
        (signal(SignalKind::terminate()).ok(), signal(SignalKind::interrupt()).ok())
    };
    async move {
        #[cfg(unix)]
        {
            let (terminate, interrupt) = streams;
            let received = |stream: Option<tokio::signal::unix::Signal>| async move {
                match stream {
                    Some(mut stream) => {
                        stream.recv().await;
                    }
                    None => std::future::pending::<()>().await,
                }
            };
            tokio::select! {
                () = received(terminate) => {},
                () = received(interrupt) => {},
            }
        }
        #[cfg(not(unix))]
        {
            let _ = tokio::signal::ctrl_c().await;
        }
        tracing::info!("asked to stop; finishing");
    }
}
