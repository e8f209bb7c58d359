//! loopguard as an HTTP proxy in front of any OpenAI-compatible server (vLLM, llama.cpp,
//! SGLang, a hosted API), for users who cannot link a sampler or change their agent.
//!
//! - Responses of `POST …/chat/completions` and `…/completions` go through stream guards, one
//!   per choice and part (content, reasoning, tool-call arguments), as the deltas arrive. A
//!   halt ends the choice with `finish_reason: "repetition"` and a `loopguard` object (kind,
//!   period, copies, onset, tokens saved), sends `[DONE]` and drops the upstream connection,
//!   so that the server stops generating. A non-streaming request is sent upstream as a
//!   streaming one, so that it can be cut, and answered as one JSON body.
//! - Requests' `messages` are an agent's history: an agent guard per conversation reads the
//!   calls and results it has not seen; on a warning the `<loop-recovery>` block is added to
//!   the forwarded request (and named in the `x-loopguard-agent` header), on a halt the
//!   request is answered with a 409 error naming the loop.
//! - Everything else passes through byte for byte.
//!
//! `loopguard proxy --upstream URL` runs it (the CLI's configuration file applies).

mod assemble;
mod choices;
mod conversation;
mod metrics;
mod server;
mod sse;

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};
use loopguard::{AgentConfig, StreamConfig};
use tokio::net::TcpListener;
use tokio::sync::Semaphore;

pub use server::{AGENT_VERDICT, CONVERSATION, OPT_OUT};

/// Configurations for requests that name one model.
#[derive(Clone)]
pub struct ModelOverride {
    pub model: String,
    pub stream: StreamConfig,
    pub agent: AgentConfig,
}

/// Everything the proxy is told.
#[derive(Clone)]
pub struct Options {
    /// Base URL of the server, e.g. `http://127.0.0.1:8000` (the request's path is appended).
    pub upstream: String,
    pub listen: SocketAddr,
    pub stream: StreamConfig,
    pub agent: AgentConfig,
    pub models: Vec<ModelOverride>,
    /// The `finish_reason` of a halted choice.
    pub finish_reason: String,
    /// Largest request body read, in bytes; a larger one is answered 413.
    pub max_body: usize,
    /// Connections served at once; more are answered 503.
    pub max_connections: usize,
    /// Connecting to the upstream, and waiting for its next bytes.
    pub connect_timeout: Duration,
    pub idle_timeout: Duration,
    /// Agent conversations held (least recently used evicted).
    pub conversations: usize,
    /// One JSON line per request on standard error.
    pub log: bool,
}

impl Options {
    /// The defaults, for `upstream`.
    pub fn new(upstream: &str) -> Options {
        Options {
            upstream: upstream.to_string(),
            listen: SocketAddr::from(([127, 0, 0, 1], 8089)),
            stream: StreamConfig::default(),
            agent: AgentConfig::default(),
            models: Vec::new(),
            finish_reason: "repetition".to_string(),
            max_body: 32 << 20,
            max_connections: 256,
            connect_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(300),
            conversations: 4096,
            log: true,
        }
    }

    /// Checks what the types do not: a URL the client can use, limits above zero.
    pub fn check(&self) -> Result<(), String> {
        let u = &self.upstream;
        if !(u.starts_with("http://") || u.starts_with("https://"))
            || reqwest::Url::parse(u).is_err()
        {
            return Err(format!("--upstream {u:?}: not an http:// or https:// URL"));
        }
        for (name, v) in [
            ("--max-body", self.max_body),
            ("--max-connections", self.max_connections),
            ("--conversations", self.conversations),
        ] {
            if v == 0 {
                return Err(format!("{name} 0: must be at least 1"));
            }
        }
        if self.finish_reason.is_empty() {
            return Err("--finish-reason: must not be empty".into());
        }
        Ok(())
    }
}

/// Serves on `listener` until `shutdown` completes, then lets requests in flight finish (up
/// to 30 seconds).
pub async fn serve(
    listener: TcpListener,
    opts: Options,
    shutdown: impl Future<Output = ()>,
) -> Result<(), String> {
    opts.check()?;
    let slots = Arc::new(Semaphore::new(opts.max_connections));
    let state = Arc::new(server::State::new(opts)?);
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    tokio::pin!(shutdown);
    loop {
        let (stream, _) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(a) => a,
                Err(e) => {
                    eprintln!("loopguard proxy: accept: {e}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            _ = &mut shutdown => break,
        };
        let slot = slots.clone().try_acquire_owned().ok();
        let state = state.clone();
        let service = service_fn(move |req| {
            let state = state.clone();
            let full = slot.is_none();
            async move {
                if full {
                    state
                        .metrics
                        .rejected
                        .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    return Ok::<_, std::convert::Infallible>(busy());
                }
                Ok(server::handle(state, req).await)
            }
        });
        let conn = http1::Builder::new()
            .timer(TokioTimer::new())
            .header_read_timeout(Duration::from_secs(30))
            .serve_connection(TokioIo::new(stream), service);
        let conn = graceful.watch(conn);
        tokio::spawn(async move {
            let _ = conn.await;
        });
    }
    // New connections are refused from here on; those in flight finish.
    drop(listener);
    tokio::select! {
        _ = graceful.shutdown() => {}
        _ = tokio::time::sleep(server::SHUTDOWN_GRACE) => {}
    }
    Ok(())
}

fn busy() -> hyper::Response<server::Body> {
    use http_body_util::BodyExt;
    let body = serde_json::json!({"error": {
        "message": "the proxy is serving its most connections (--max-connections)",
        "type": "overloaded", "code": 503}});
    let mut r = hyper::Response::new(
        http_body_util::Full::new(bytes::Bytes::from(body.to_string())).boxed(),
    );
    *r.status_mut() = hyper::StatusCode::SERVICE_UNAVAILABLE;
    r
}

/// Runs the proxy until Ctrl-C or SIGTERM.
pub fn run(opts: Options) -> Result<(), String> {
    opts.check()?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("the runtime: {e}"))?;
    rt.block_on(async move {
        let listener = TcpListener::bind(opts.listen)
            .await
            .map_err(|e| format!("--listen {}: {e}", opts.listen))?;
        eprintln!(
            "loopguard proxy: listening on http://{}, forwarding to {}",
            listener.local_addr().map_err(|e| e.to_string())?,
            opts.upstream
        );
        serve(listener, opts, shutdown_signal()).await
    })
}

async fn shutdown_signal() {
    #[cfg(unix)]
    {
        let mut term =
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                Ok(s) => s,
                Err(_) => {
                    let _ = tokio::signal::ctrl_c().await;
                    return;
                }
            };
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
    eprintln!("loopguard proxy: shutting down; requests in flight may finish");
}
