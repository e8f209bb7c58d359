//! The HTTP side: routes, forwarding, streaming, limits and logs.

use std::convert::Infallible;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use futures_util::StreamExt;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full, StreamBody};
use hyper::body::{Frame, Incoming};
use hyper::header::{HeaderMap, HeaderName, HeaderValue, CONTENT_LENGTH, CONTENT_TYPE};
use hyper::{Method, Request, Response, StatusCode};
use loopguard::{Action, AgentConfig, StreamConfig};
use serde_json::{json, Value};
use tokio::sync::mpsc;

use crate::assemble::Assembler;
use crate::choices::{Endpoint, Halt, Outcome, ResponseGuard};
use crate::conversation::Conversations;
use crate::metrics::Metrics;
use crate::sse::Splitter;
use crate::Options;

pub type Body = BoxBody<Bytes, Infallible>;

/// A request may turn the guards off with `x-loopguard: off`.
pub const OPT_OUT: &str = "x-loopguard";
/// Names an agent's conversation; without it the first messages do.
pub const CONVERSATION: &str = "x-loopguard-conversation";
/// Set on responses whose request history the agent guard acted on.
pub const AGENT_VERDICT: &str = "x-loopguard-agent";

pub struct State {
    pub opts: Options,
    pub client: reqwest::Client,
    pub metrics: Metrics,
    pub conversations: Mutex<Conversations>,
    /// The default stream config with each per-model profile applied (by profile name), for
    /// requests whose `model` a profile matches; empty when the default config names a model.
    profiled: Vec<(&'static str, StreamConfig)>,
}

impl State {
    pub fn new(opts: Options) -> Result<State, String> {
        let client = reqwest::Client::builder()
            .connect_timeout(opts.connect_timeout)
            .read_timeout(opts.idle_timeout)
            .build()
            .map_err(|e| format!("the HTTP client: {e}"))?;
        let conversations = Mutex::new(Conversations::new(opts.conversations));
        let mut profiled = Vec::new();
        if opts.stream.settings().model.is_empty() {
            for p in loopguard::PROFILES {
                let mut s = opts.stream.settings().clone();
                s.model = p.matches[0].to_string();
                let c = StreamConfig::new(&s).map_err(|e| format!("profile {}: {e}", p.name))?;
                profiled.push((p.name, c));
            }
        }
        Ok(State {
            opts,
            client,
            metrics: Metrics::default(),
            conversations,
            profiled,
        })
    }

    /// The configurations for a request's `model`: its override; else the defaults, with the
    /// model's profile (`loopguard::PROFILES`) when one matches its name.
    fn configs(&self, model: Option<&str>) -> (&StreamConfig, &AgentConfig) {
        if let Some(o) = model.and_then(|m| self.opts.models.iter().find(|o| o.model == m)) {
            return (&o.stream, &o.agent);
        }
        let profiled = model
            .and_then(loopguard::profile_for)
            .and_then(|p| self.profiled.iter().find(|(name, _)| *name == p.name));
        match profiled {
            Some((_, c)) => (c, &self.opts.agent),
            None => (&self.opts.stream, &self.opts.agent),
        }
    }
}

fn full(bytes: impl Into<Bytes>) -> Body {
    Full::new(bytes.into()).boxed()
}

/// An OpenAI-style error body, which client libraries surface with its message.
fn error(status: StatusCode, kind: &str, message: &str) -> Response<Body> {
    let body = json!({"error": {"message": message, "type": kind, "code": status.as_u16()}});
    let mut r = Response::new(full(body.to_string()));
    *r.status_mut() = status;
    r.headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    r
}

/// Headers that belong to one connection, not to the message.
fn hop_by_hop(name: &HeaderName) -> bool {
    matches!(
        name.as_str(),
        "connection"
            | "keep-alive"
            | "proxy-authenticate"
            | "proxy-authorization"
            | "te"
            | "trailer"
            | "transfer-encoding"
            | "upgrade"
            | "host"
            | "content-length"
    )
}

/// One request, start to end.
pub async fn handle(state: Arc<State>, req: Request<Incoming>) -> Response<Body> {
    let start = Instant::now();
    state.metrics.requests.fetch_add(1, Relaxed);
    let method = req.method().clone();
    let path = req.uri().path().to_string();
    let mut log = json!({"method": method.as_str(), "path": path});
    let response = route(&state, req, &mut log).await;
    if state.opts.log {
        log["status"] = json!(response.status().as_u16());
        log["ms"] = json!(start.elapsed().as_millis() as u64);
        eprintln!("{log}");
    }
    response
}

async fn route(state: &Arc<State>, req: Request<Incoming>, log: &mut Value) -> Response<Body> {
    let (parts, body) = req.into_parts();
    let path = parts.uri.path();
    if parts.method == Method::GET && path == "/metrics" {
        let n = state.conversations.lock().expect("conversations").len();
        let mut r = Response::new(full(state.metrics.render(n)));
        r.headers_mut().insert(
            CONTENT_TYPE,
            HeaderValue::from_static("text/plain; version=0.0.4"),
        );
        return r;
    }
    // The body, at most `max_body` bytes. A longer one is read to its end and dropped (so
    // that the client, still sending, sees the answer), then refused.
    let body = match read_body(body, state.opts.max_body).await {
        Ok(b) => b,
        Err(r) => {
            if r.status() == StatusCode::PAYLOAD_TOO_LARGE {
                state.metrics.rejected.fetch_add(1, Relaxed);
            }
            return r;
        }
    };
    let endpoint = match (parts.method == Method::POST, path) {
        (true, p) if p.ends_with("/chat/completions") => Some(Endpoint::Chat),
        (true, p) if p.ends_with("/completions") => Some(Endpoint::Completions),
        _ => None,
    };
    let opted_out = parts
        .headers
        .get(OPT_OUT)
        .is_some_and(|v| v.as_bytes().eq_ignore_ascii_case(b"off"));
    let request: Option<Value> = endpoint
        .filter(|_| !opted_out)
        .and_then(|_| serde_json::from_slice(&body).ok())
        .filter(Value::is_object);
    let (Some(endpoint), Some(mut request)) = (endpoint, request) else {
        state.metrics.passed_through.fetch_add(1, Relaxed);
        return pass_through(state, &parts, body).await;
    };
    state.metrics.guarded.fetch_add(1, Relaxed);
    let model = request["model"].as_str().map(str::to_string);
    log["model"] = json!(model);
    let (stream_config, agent_config) = state.configs(model.as_deref());
    let (stream_config, agent_config) = (stream_config.clone(), agent_config.clone());

    // The agent guard on the history.
    let mut agent_header = None;
    if endpoint == Endpoint::Chat {
        if let Some(messages) = request["messages"].as_array() {
            let key = parts
                .headers
                .get(CONVERSATION)
                .and_then(|v| v.to_str().ok());
            let t = Instant::now();
            let judgement = state.conversations.lock().expect("conversations").judge(
                &agent_config,
                key,
                messages,
            );
            state
                .metrics
                .guard_nanos
                .fetch_add(t.elapsed().as_nanos() as u64, Relaxed);
            if let Some(j) = judgement {
                let v = &j.verdict;
                state.metrics.agent(v.action.as_str());
                let summary = format!(
                    "{} {} count={}",
                    v.action.as_str(),
                    v.kind.as_str(),
                    v.count
                );
                log["agent"] = json!(summary);
                if v.action == Action::Halt {
                    let mut r = error(
                        StatusCode::CONFLICT,
                        "loop_detected",
                        &format!("loopguard halted this agent: {}", j.recovery),
                    );
                    if let Ok(h) = HeaderValue::from_str(&summary) {
                        r.headers_mut().insert(AGENT_VERDICT, h);
                    }
                    return r;
                }
                inject_recovery(&mut request, &j.recovery);
                agent_header = HeaderValue::from_str(&summary).ok();
            }
        }
    }

    let client_streams = request["stream"].as_bool() == Some(true);
    log["stream"] = json!(client_streams);
    if !client_streams {
        request["stream"] = json!(true);
        // Usage comes in a last chunk only when asked for.
        if request.get("stream_options").is_none() {
            request["stream_options"] = json!({"include_usage": true});
        }
    }
    let upstream = match send(state, &parts, Bytes::from(request.to_string()), true).await {
        Ok(r) => r,
        Err(r) => return r,
    };
    let event_stream = upstream
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/event-stream"));
    if !upstream.status().is_success() || !event_stream {
        // An error or an unexpected answer goes back as it came.
        let mut r = relay(upstream);
        if let Some(h) = agent_header {
            r.headers_mut().insert(AGENT_VERDICT, h);
        }
        return r;
    }
    let guard = ResponseGuard::new(endpoint, stream_config, &request, &state.opts.finish_reason);
    let mut r = if client_streams {
        stream_response(state.clone(), upstream, guard)
    } else {
        assembled_response(state, upstream, guard, endpoint, log).await
    };
    if let Some(h) = agent_header {
        r.headers_mut().insert(AGENT_VERDICT, h);
    }
    r
}

/// Bytes of an over-long body read and dropped before the 413, and for how long: past them
/// the connection is closed instead.
const DRAIN_MAX: u64 = 1 << 30;
const DRAIN_TIME: Duration = Duration::from_secs(30);

async fn read_body(mut body: Incoming, max: usize) -> Result<Bytes, Response<Body>> {
    let mut buf = bytes::BytesMut::new();
    let mut total = 0u64;
    let deadline = tokio::time::Instant::now() + DRAIN_TIME;
    loop {
        let frame = tokio::time::timeout_at(deadline, body.frame()).await;
        let frame = match frame {
            Err(_) => break,
            Ok(None) => break,
            Ok(Some(Err(e))) => {
                return Err(error(
                    StatusCode::BAD_REQUEST,
                    "invalid_request",
                    &format!("reading the request body: {e}"),
                ))
            }
            Ok(Some(Ok(f))) => f,
        };
        if let Ok(data) = frame.into_data() {
            total += data.len() as u64;
            if total <= max as u64 {
                buf.extend_from_slice(&data);
            } else {
                buf.clear();
                if total > DRAIN_MAX {
                    break;
                }
            }
        }
    }
    if total > max as u64 {
        return Err(error(
            StatusCode::PAYLOAD_TOO_LARGE,
            "request_too_large",
            &format!("the request body is over the proxy's limit of {max} bytes (--max-body)"),
        ));
    }
    Ok(buf.freeze())
}

/// Adds the recovery block to the request: to the last message when it is a tool result or
/// the user's (its text grows), otherwise as a user message of its own.
fn inject_recovery(request: &mut Value, recovery: &str) {
    let Some(messages) = request["messages"].as_array_mut() else {
        return;
    };
    if let Some(last) = messages.last_mut() {
        let role = last["role"].as_str().unwrap_or("");
        if matches!(role, "tool" | "user") {
            if let Some(text) = last["content"].as_str() {
                last["content"] = json!(format!("{text}\n\n{recovery}"));
                return;
            }
        }
    }
    messages.push(json!({"role": "user", "content": recovery}));
}

/// Sends the request upstream with the client's headers; an error response when it cannot.
async fn send(
    state: &State,
    parts: &hyper::http::request::Parts,
    body: Bytes,
    guarded: bool,
) -> Result<reqwest::Response, Response<Body>> {
    let url = format!(
        "{}{}",
        state.opts.upstream.trim_end_matches('/'),
        parts.uri.path_and_query().map_or("/", |p| p.as_str())
    );
    let mut headers = HeaderMap::new();
    for (k, v) in &parts.headers {
        // A guarded response is read, so it must come uncompressed.
        if hop_by_hop(k) || k == OPT_OUT || (guarded && k == "accept-encoding") {
            continue;
        }
        headers.append(k.clone(), v.clone());
    }
    if guarded {
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    }
    let method = reqwest::Method::from_bytes(parts.method.as_str().as_bytes())
        .map_err(|e| error(StatusCode::BAD_REQUEST, "invalid_request", &e.to_string()))?;
    state
        .client
        .request(method, &url)
        .headers(headers)
        .body(body)
        .send()
        .await
        .map_err(|e| {
            state.metrics.upstream_errors.fetch_add(1, Relaxed);
            let status = if e.is_timeout() {
                StatusCode::GATEWAY_TIMEOUT
            } else {
                StatusCode::BAD_GATEWAY
            };
            error(
                status,
                "upstream_error",
                &format!("the upstream {url}: {e}"),
            )
        })
}

async fn pass_through(
    state: &State,
    parts: &hyper::http::request::Parts,
    body: Bytes,
) -> Response<Body> {
    match send(state, parts, body, false).await {
        Ok(r) => relay(r),
        Err(r) => r,
    }
}

/// The upstream's response as it came: status, headers and body bytes, streamed.
fn relay(upstream: reqwest::Response) -> Response<Body> {
    let mut builder = Response::builder().status(upstream.status().as_u16());
    for (k, v) in upstream.headers() {
        if !hop_by_hop(k) || k == CONTENT_LENGTH {
            builder = builder.header(k.as_str(), v.as_bytes());
        }
    }
    let (tx, rx) = mpsc::channel::<Bytes>(16);
    tokio::spawn(async move {
        let mut s = upstream.bytes_stream();
        loop {
            tokio::select! {
                next = s.next() => match next {
                    Some(Ok(b)) => if tx.send(b).await.is_err() { break },
                    _ => break,
                },
                _ = tx.closed() => break,
            }
        }
    });
    builder
        .body(channel_body(rx))
        .unwrap_or_else(|e| error(StatusCode::BAD_GATEWAY, "upstream_error", &e.to_string()))
}

fn channel_body(rx: mpsc::Receiver<Bytes>) -> Body {
    let stream = futures_util::stream::unfold(rx, |mut rx| async move {
        rx.recv()
            .await
            .map(|b| (Ok::<_, Infallible>(Frame::data(b)), rx))
    });
    BodyExt::boxed(StreamBody::new(stream))
}

/// One SSE event carrying `json`.
fn event(json: &Value) -> Bytes {
    Bytes::from(format!("data: {json}\n\n"))
}

/// Counts a halt in the metrics.
fn count_halt(state: &State, h: &Halt) {
    state.metrics.halt(h.verdict.kind.as_str());
    if let Some(t) = h.tokens_left {
        state.metrics.tokens_saved.fetch_add(t, Relaxed);
    }
}

/// One event through the response's guard, counted and timed in the metrics.
fn guarded_event(state: &State, guard: &mut ResponseGuard, data: &str) -> Outcome {
    let t = Instant::now();
    let outcome = guard.on_event(data);
    let m = &state.metrics;
    m.guard_nanos
        .fetch_add(t.elapsed().as_nanos() as u64, Relaxed);
    m.chunks.fetch_add(1, Relaxed);
    outcome
}

/// The events of an upstream stream through the guard, to the client as they come.
fn stream_response(
    state: Arc<State>,
    upstream: reqwest::Response,
    mut guard: ResponseGuard,
) -> Response<Body> {
    let mut builder = Response::builder().status(upstream.status().as_u16());
    for (k, v) in upstream.headers() {
        if !hop_by_hop(k) {
            builder = builder.header(k.as_str(), v.as_bytes());
        }
    }
    let (tx, rx) = mpsc::channel::<Bytes>(64);
    tokio::spawn(async move {
        let mut s = upstream.bytes_stream();
        let mut split = Splitter::default();
        'read: loop {
            let chunk = tokio::select! {
                next = s.next() => next,
                _ = tx.closed() => break,
            };
            let bytes = match chunk {
                Some(Ok(b)) => b,
                Some(Err(e)) => {
                    state.metrics.upstream_errors.fetch_add(1, Relaxed);
                    let msg = format!("the upstream stream broke: {e}");
                    let _ = tx
                        .send(event(
                            &json!({"error": {"message": msg, "type": "upstream_error"}}),
                        ))
                        .await;
                    break;
                }
                None => {
                    if let Some(e) = split.finish() {
                        let _ = tx.send(Bytes::from(e.raw)).await;
                    }
                    break;
                }
            };
            let events = match split.push(&bytes) {
                Ok(e) => e,
                Err(msg) => {
                    state.metrics.upstream_errors.fetch_add(1, Relaxed);
                    let _ = tx
                        .send(event(
                            &json!({"error": {"message": msg, "type": "upstream_error"}}),
                        ))
                        .await;
                    break;
                }
            };
            for e in events {
                let outcome = guarded_event(&state, &mut guard, &e.data);
                let out: Vec<Bytes> = match outcome {
                    Outcome::Forward => vec![Bytes::from(e.raw)],
                    Outcome::Replace(None) => Vec::new(),
                    Outcome::Replace(Some(j)) => vec![Bytes::from(format!("data: {j}\n\n"))],
                    Outcome::Halted { halts, done } => {
                        let mut out = vec![Bytes::from(e.raw)];
                        for h in &halts {
                            count_halt(&state, h);
                            out.push(event(&guard.closing_chunk(h)));
                        }
                        if done {
                            out.push(Bytes::from_static(b"data: [DONE]\n\n"));
                            for b in out {
                                let _ = tx.send(b).await;
                            }
                            // Dropping the upstream response closes its connection: the
                            // server stops generating.
                            break 'read;
                        }
                        out
                    }
                };
                for b in out {
                    if tx.send(b).await.is_err() {
                        break 'read;
                    }
                }
            }
        }
    });
    builder
        .body(channel_body(rx))
        .unwrap_or_else(|e| error(StatusCode::BAD_GATEWAY, "upstream_error", &e.to_string()))
}

/// The events of an upstream stream through the guard, answered as one JSON body.
async fn assembled_response(
    state: &State,
    upstream: reqwest::Response,
    mut guard: ResponseGuard,
    endpoint: Endpoint,
    log: &mut Value,
) -> Response<Body> {
    let mut s = upstream.bytes_stream();
    let mut split = Splitter::default();
    let mut asm = Assembler::new(endpoint);
    'read: loop {
        let bytes = match s.next().await {
            Some(Ok(b)) => b,
            Some(Err(e)) => {
                state.metrics.upstream_errors.fetch_add(1, Relaxed);
                return error(
                    StatusCode::BAD_GATEWAY,
                    "upstream_error",
                    &format!("the upstream stream broke: {e}"),
                );
            }
            None => break,
        };
        let events = match split.push(&bytes) {
            Ok(e) => e,
            Err(msg) => {
                state.metrics.upstream_errors.fetch_add(1, Relaxed);
                return error(StatusCode::BAD_GATEWAY, "upstream_error", &msg);
            }
        };
        for e in events {
            let outcome = guarded_event(state, &mut guard, &e.data);
            let chunk: Option<Value> = serde_json::from_str(e.data.trim()).ok();
            match outcome {
                Outcome::Forward => {
                    if let Some(c) = &chunk {
                        if c.get("error").is_some() && c.get("choices").is_none() {
                            let msg = c["error"]["message"].as_str().unwrap_or("an error");
                            return error(StatusCode::BAD_GATEWAY, "upstream_error", msg);
                        }
                        asm.add(c);
                    }
                }
                Outcome::Replace(Some(j)) => {
                    if let Ok(c) = serde_json::from_str::<Value>(&j) {
                        asm.add(&c);
                    }
                }
                Outcome::Replace(None) => {}
                Outcome::Halted { halts, done } => {
                    if let Some(c) = &chunk {
                        asm.add(c);
                    }
                    for h in &halts {
                        count_halt(state, h);
                        log["halt"] = json!(h.verdict.kind.as_str());
                        asm.add(&guard.closing_chunk(h));
                    }
                    if done {
                        break 'read;
                    }
                }
            }
        }
    }
    drop(s);
    let mut r = Response::new(full(asm.finish().to_string()));
    r.headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    r
}

/// How long in-flight requests may run on after a shutdown signal.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(30);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ModelOverride;

    /// A request's `model` picks its override first, then its family's profile, then the
    /// defaults.
    #[test]
    fn a_requests_model_selects_its_override_or_profile() {
        let mut opts = Options::new("http://127.0.0.1:9");
        opts.models.push(ModelOverride {
            model: "gemma-3-custom".into(),
            stream: StreamConfig::default(),
            agent: AgentConfig::default(),
        });
        let state = State::new(opts).unwrap();
        let profile = |m: Option<&str>| state.configs(m).0.profile().map(|p| p.name);
        assert_eq!(
            profile(Some("HuggingFaceTB/SmolLM2-135M-Instruct")),
            Some("smollm2")
        );
        assert_eq!(profile(Some("google/gemma-3-270m-it")), Some("gemma3"));
        assert_eq!(profile(Some("gemma-3-custom")), None, "the override wins");
        assert_eq!(profile(Some("llama-3")), None);
        assert_eq!(profile(None), None);
        assert_eq!(state.configs(Some("SmolLM2")).0.settings().halt_span, 32);
    }
}
