//! The proxy end to end against a scripted OpenAI-compatible server on 127.0.0.1: what the
//! client gets, and what the server sees (how many chunks it sent before the proxy hung up).
//! The same flows against a real llama.cpp server are in `tests/proxy_e2e.py`.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::SeqCst};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full, StreamBody};
use hyper::body::{Frame, Incoming};
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use loopguard_proxy::Options;
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;

/// What the scripted server saw.
#[derive(Default)]
struct Seen {
    /// Chunks sent of the last looping stream, and whether its client went away.
    loop_chunks: AtomicU64,
    loop_dropped: AtomicBool,
    /// The last request body.
    last_body: std::sync::Mutex<Value>,
}

const NORMAL: &[&str] = &[
    "Rust",
    " is",
    " a",
    " systems",
    " language",
    " that",
    " gives",
    " memory",
    " safety",
    " without",
    " a",
    " garbage",
    " collector",
    ",",
    " through",
    " ownership",
    ".",
];

fn chunk(text: &str, finish: Option<&str>) -> Bytes {
    let c = json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 7,
                   "model": "scripted",
                   "choices": [{"index": 0, "delta": {"content": text}, "finish_reason": finish}]});
    Bytes::from(format!("data: {c}\n\n"))
}

async fn upstream_handler(
    seen: Arc<Seen>,
    req: Request<Incoming>,
) -> Result<Response<http_body_util::combinators::BoxBody<Bytes, std::io::Error>>, Infallible> {
    let path = req.uri().path().to_string();
    let body = req.into_body().collect().await.unwrap().to_bytes();
    if path == "/v1/models" {
        let b = Full::new(Bytes::from_static(b"{\"data\":[{\"id\":\"scripted\"}]}"))
            .map_err(|e| match e {})
            .boxed();
        return Ok(Response::builder()
            .header("content-type", "application/json")
            .header("x-upstream", "yes")
            .body(b)
            .unwrap());
    }
    let request: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    *seen.last_body.lock().unwrap() = request.clone();
    let prompt = request["messages"]
        .as_array()
        .and_then(|m| m.last())
        .and_then(|m| m["content"].as_str())
        .unwrap_or("")
        .to_string();
    let (tx, rx) = mpsc::channel::<Result<Bytes, std::io::Error>>(4);
    let seen2 = seen.clone();
    tokio::spawn(async move {
        if prompt.contains("LOOP") {
            seen2.loop_chunks.store(0, SeqCst);
            seen2.loop_dropped.store(false, SeqCst);
            for _ in 0..2000 {
                if tx
                    .send(Ok(chunk(" the cat sat on the mat.", None)))
                    .await
                    .is_err()
                {
                    seen2.loop_dropped.store(true, SeqCst);
                    return;
                }
                seen2.loop_chunks.fetch_add(1, SeqCst);
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
            let _ = tx.send(Ok(Bytes::from_static(b"data: [DONE]\n\n"))).await;
        } else if prompt.contains("BIG") {
            // `BIG_CHUNKS` chunks of 16 KiB, more than the sockets on the way can hold.
            seen2.loop_chunks.store(0, SeqCst);
            let filler = "x".repeat(16 << 10);
            for _ in 0..BIG_CHUNKS {
                if tx.send(Ok(chunk(&filler, None))).await.is_err() {
                    return;
                }
                seen2.loop_chunks.fetch_add(1, SeqCst);
            }
            let _ = tx.send(Ok(Bytes::from_static(b"data: [DONE]\n\n"))).await;
        } else if prompt.contains("BREAK") {
            for w in &NORMAL[..4] {
                let _ = tx.send(Ok(chunk(w, None))).await;
            }
            let _ = tx
                .send(Err(std::io::Error::other("the server fell over")))
                .await;
        } else if prompt.contains("MALFORMED") {
            let blob = vec![b'x'; 1 << 20];
            for _ in 0..10 {
                if tx.send(Ok(Bytes::from(blob.clone()))).await.is_err() {
                    return;
                }
            }
        } else {
            let echo = prompt.contains("ECHO");
            let words: Vec<String> = if echo {
                vec![prompt.clone()]
            } else {
                NORMAL.iter().map(|s| s.to_string()).collect()
            };
            for (i, w) in words.iter().enumerate() {
                let finish = (i + 1 == words.len()).then_some("stop");
                if tx.send(Ok(chunk(w, finish))).await.is_err() {
                    return;
                }
            }
            let usage = json!({"id": "chatcmpl-1", "choices": [],
                               "usage": {"prompt_tokens": 3, "completion_tokens": words.len()}});
            let _ = tx.send(Ok(Bytes::from(format!("data: {usage}\n\n")))).await;
            let _ = tx.send(Ok(Bytes::from_static(b"data: [DONE]\n\n"))).await;
        }
    });
    let stream = futures_util::stream::unfold(rx, |mut rx| async move {
        rx.recv().await.map(|r| (r.map(Frame::data), rx))
    });
    Ok(Response::builder()
        .header("content-type", "text/event-stream")
        .body(BodyExt::boxed(StreamBody::new(stream)))
        .unwrap())
}

/// The scripted server and a proxy in front of it.
async fn start(max_body: usize) -> (SocketAddr, SocketAddr, Arc<Seen>) {
    let seen = Arc::new(Seen::default());
    let up = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let up_addr = up.local_addr().unwrap();
    let s = seen.clone();
    tokio::spawn(async move {
        loop {
            let (stream, _) = up.accept().await.unwrap();
            let s = s.clone();
            tokio::spawn(async move {
                let svc = hyper::service::service_fn(move |r| upstream_handler(s.clone(), r));
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), svc)
                    .await;
            });
        }
    });
    let proxy_addr = spawn_proxy(&format!("http://{up_addr}"), max_body).await;
    (up_addr, proxy_addr, seen)
}

async fn spawn_proxy(upstream: &str, max_body: usize) -> SocketAddr {
    let mut opts = Options::new(upstream);
    opts.max_body = max_body;
    spawn_with(opts, std::future::pending()).await
}

async fn spawn_with(
    mut opts: Options,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    opts.log = false;
    opts.idle_timeout = Duration::from_secs(5);
    tokio::spawn(loopguard_proxy::serve(listener, opts, shutdown));
    addr
}

/// A streaming request opted out of the guards, on a raw connection the test reads (or
/// leaves unread, or closes) itself.
async fn post_raw_opted_out(proxy: SocketAddr, body: &str) -> TcpStream {
    let mut s = TcpStream::connect(proxy).await.unwrap();
    let head = format!(
        "POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\nx-loopguard: off\r\n\
         content-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    );
    s.write_all(head.as_bytes()).await.unwrap();
    s
}

fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .timeout(Duration::from_secs(20))
        .build()
        .unwrap()
}

fn chat(prompt: &str, stream: bool) -> Value {
    json!({"model": "scripted", "stream": stream, "max_tokens": 2000,
           "messages": [{"role": "user", "content": prompt}]})
}

async fn post(addr: SocketAddr, body: &Value) -> (u16, reqwest::header::HeaderMap, String) {
    let r = client()
        .post(format!("http://{addr}/v1/chat/completions"))
        .json(body)
        .send()
        .await
        .unwrap();
    let status = r.status().as_u16();
    let headers = r.headers().clone();
    (status, headers, r.text().await.unwrap())
}

/// The `data` of each event of an SSE body.
fn events(body: &str) -> Vec<String> {
    body.split("\n\n")
        .filter_map(|e| e.strip_prefix("data: "))
        .map(str::to_string)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_looping_stream_is_cut_with_the_verdict_and_the_upstream_dropped() {
    let (_, proxy, seen) = start(1 << 20).await;
    let (status, _, body) = post(proxy, &chat("LOOP please", true)).await;
    assert_eq!(status, 200);
    let ev = events(&body);
    assert_eq!(ev.last().unwrap(), "[DONE]");
    let closing: Value = serde_json::from_str(&ev[ev.len() - 2]).unwrap();
    assert_eq!(closing["choices"][0]["finish_reason"], "repetition");
    let lg = &closing["loopguard"];
    assert_eq!(lg["action"], "halt");
    assert!(lg["period"].as_u64().unwrap() > 0 && lg["repeats"].as_f64().unwrap() >= 2.0);
    assert!(lg["tokens_saved"].as_u64().unwrap() > 1900, "{lg}");
    // The server saw its client go away long before its 2,000 chunks.
    for _ in 0..200 {
        if seen.loop_dropped.load(SeqCst) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(
        seen.loop_dropped.load(SeqCst),
        "the upstream was not dropped"
    );
    assert!(
        seen.loop_chunks.load(SeqCst) < 200,
        "{}",
        seen.loop_chunks.load(SeqCst)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_normal_stream_comes_through_byte_for_byte() {
    let (up, proxy, _) = start(1 << 20).await;
    let direct = post(up, &chat("tell me about Rust", true)).await.2;
    let through = post(proxy, &chat("tell me about Rust", true)).await.2;
    assert_eq!(direct, through);
    // Other endpoints pass through, headers too.
    let r = client()
        .get(format!("http://{proxy}/v1/models"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.headers()["x-upstream"], "yes");
    assert_eq!(
        r.text().await.unwrap(),
        "{\"data\":[{\"id\":\"scripted\"}]}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn non_streaming_requests_are_streamed_upstream_and_answered_as_one_body() {
    let (_, proxy, seen) = start(1 << 20).await;
    let (status, headers, body) = post(proxy, &chat("tell me about Rust", false)).await;
    assert_eq!(status, 200);
    assert_eq!(headers["content-type"], "application/json");
    let v: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["object"], "chat.completion");
    assert_eq!(v["choices"][0]["message"]["content"], NORMAL.concat());
    assert_eq!(v["choices"][0]["finish_reason"], "stop");
    assert_eq!(v["usage"]["completion_tokens"], NORMAL.len());
    assert_eq!(seen.last_body.lock().unwrap()["stream"], true);

    let (_, _, body) = post(proxy, &chat("LOOP please", false)).await;
    let v: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["choices"][0]["finish_reason"], "repetition");
    assert_eq!(v["loopguard"]["kind"], "exact_loop", "{v}");
    assert!(v["choices"][0]["message"]["content"]
        .as_str()
        .unwrap()
        .starts_with(" the cat sat"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_concurrent_streams_get_their_own_outcomes() {
    let (_, proxy, _) = start(1 << 20).await;
    let a = chat("LOOP please", true);
    let b = chat("tell me about Rust", true);
    let (looped, normal) = tokio::join!(post(proxy, &a), post(proxy, &b));
    assert!(looped.2.contains("\"repetition\""));
    assert!(!normal.2.contains("repetition") && normal.2.contains("ownership"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_repeating_a_failing_call_gets_the_recovery_text() {
    let (_, proxy, seen) = start(1 << 20).await;
    let mut messages = vec![json!({"role": "user", "content": "Fix the build. ECHO"})];
    let mut last = None;
    for i in 0..4 {
        messages.push(
            json!({"role": "assistant", "content": null, "tool_calls": [{
            "id": format!("c{i}"), "type": "function",
            "function": {"name": "bash", "arguments": "{\"command\": \"javac Main.java\"}"}}]}),
        );
        messages.push(json!({"role": "tool", "tool_call_id": format!("c{i}"),
                             "content": "bash: javac: command not found ECHO"}));
        let req = json!({"model": "scripted", "messages": messages});
        last = Some(post(proxy, &req).await);
        if last.as_ref().unwrap().1.contains_key("x-loopguard-agent") {
            break;
        }
    }
    let (status, headers, _) = last.unwrap();
    assert_eq!(status, 200);
    let verdict = headers["x-loopguard-agent"].to_str().unwrap();
    assert!(
        verdict.starts_with("warn") || verdict.starts_with("block"),
        "{verdict}"
    );
    let sent = seen.last_body.lock().unwrap().clone();
    let tail = sent["messages"].as_array().unwrap().last().unwrap()["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(tail.contains("<loop-recovery>"), "{tail}");
    // The same history opted out goes upstream untouched.
    let r = client()
        .post(format!("http://{proxy}/v1/chat/completions"))
        .header("x-loopguard", "off")
        .json(&json!({"model": "scripted", "messages": messages}))
        .send()
        .await
        .unwrap();
    assert!(!r.headers().contains_key("x-loopguard-agent"));
    let _ = r.text().await;
    let sent = seen.last_body.lock().unwrap().clone();
    assert_eq!(sent["messages"], json!(messages));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn faults_are_answered_clearly() {
    let (_, proxy, _) = start(1 << 20).await;
    // The upstream breaks mid-stream: the client gets what came and an error event.
    let (_, _, body) = post(proxy, &chat("BREAK now", true)).await;
    assert!(body.contains("\"Rust\""), "{body}");
    assert!(body.contains("upstream_error"), "{body}");
    // An event that never ends.
    let (_, _, body) = post(proxy, &chat("MALFORMED", true)).await;
    assert!(body.contains("without a blank line"), "{body}");
    // A 100 MB body: read to its end and refused with 413.
    let big = "x".repeat(100 << 20);
    let (status, _, body) = post(proxy, &chat(&big, true)).await;
    assert_eq!(status, 413, "{body}");
    assert!(body.contains("--max-body"));
    // Upstream down.
    let dead = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let dead_addr = dead.local_addr().unwrap();
    drop(dead);
    let proxy2 = spawn_proxy(&format!("http://{dead_addr}"), 1 << 20).await;
    let (status, _, body) = post(proxy2, &chat("hello", true)).await;
    assert_eq!(status, 502, "{body}");
    assert!(body.contains("upstream_error"));
    // Metrics count what happened.
    let m = client()
        .get(format!("http://{proxy}/metrics"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(m.contains("loopguard_rejected_total 1"), "{m}");
    assert!(m.contains("loopguard_upstream_errors_total 2"), "{m}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_goes_away_takes_the_upstream_with_it() {
    let (_, proxy, seen) = start(1 << 20).await;
    // Opted out, the loop is not cut: only the client's leaving can end it.
    let body = chat("LOOP please", true).to_string();
    let mut s = post_raw_opted_out(proxy, &body).await;
    let mut buf = [0u8; 4096];
    let n = s.read(&mut buf).await.unwrap();
    assert!(n > 0);
    drop(s);
    for _ in 0..300 {
        if seen.loop_dropped.load(SeqCst) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(
        seen.loop_dropped.load(SeqCst),
        "the upstream kept streaming"
    );
    assert!(seen.loop_chunks.load(SeqCst) < 1500);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connections_past_the_limit_are_refused_and_shutdown_lets_requests_finish() {
    let (up, _, _) = start(1 << 20).await;
    let mut opts = Options::new(&format!("http://{up}"));
    opts.max_connections = 1;
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let proxy = spawn_with(opts, async move {
        let _ = stopped.await;
    })
    .await;
    // One connection holds the only slot while its (opted-out) loop streams.
    let body = chat("LOOP please", true).to_string();
    let mut held = post_raw_opted_out(proxy, &body).await;
    let mut buf = [0u8; 1024];
    assert!(held.read(&mut buf).await.unwrap() > 0);
    let (status, _, body) = post(proxy, &chat("tell me about Rust", true)).await;
    assert_eq!(status, 503, "{body}");
    assert!(body.contains("--max-connections"));
    // Shutdown: no new connections; the one in flight goes on streaming.
    stop.send(()).unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(client()
        .get(format!("http://{proxy}/metrics"))
        .send()
        .await
        .is_err());
    let mut more = 0;
    for _ in 0..5 {
        more += held.read(&mut buf).await.unwrap();
    }
    assert!(more > 0, "the request in flight was cut by the shutdown");
}

/// Chunks of 16 KiB the "BIG" upstream sends: 256 MiB, past what the kernel's buffers on the
/// two connections can hold (see `kernel_chunks`).
const BIG_CHUNKS: u64 = 16_000;

/// 16 KiB chunks the kernel may hold on the two loopback connections of a proxied stream
/// (client and upstream), whatever the proxy does: each side's send and receive buffers grow
/// up to `tcp_wmem` and `tcp_rmem`'s maxima (4 MiB and 6 to 32 MiB on common kernels).
fn kernel_chunks() -> u64 {
    let max = |path: &str, default: u64| {
        std::fs::read_to_string(path)
            .ok()
            .and_then(|s| s.split_whitespace().nth(2)?.parse().ok())
            .unwrap_or(default)
    };
    let per_connection =
        max("/proc/sys/net/ipv4/tcp_wmem", 4 << 20) + max("/proc/sys/net/ipv4/tcp_rmem", 32 << 20);
    2 * per_connection / (16 << 10)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_client_slows_the_upstream_instead_of_filling_memory() {
    let (_, proxy, seen) = start(1 << 20).await;
    let body = chat("BIG", true).to_string();
    let mut s = post_raw_opted_out(proxy, &body).await;
    // The client reads nothing for a while: the upstream must wait for it.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    // The proxy holds a few chunks of its own (a bounded channel); the rest of what went
    // out sits in the kernel's socket buffers, which autotuning may grow far (32 MiB a
    // receive buffer here): a proxy that buffered without bound would have taken all of it.
    let sent = seen.loop_chunks.load(SeqCst);
    let bound = (kernel_chunks() + 64).min(BIG_CHUNKS / 2);
    assert!(
        sent < bound,
        "{sent} chunks of 16 KiB went out to a client that read none (bound {bound})"
    );
    // Then it reads, slowly at first, and gets all of it.
    let mut total = 0usize;
    let mut buf = vec![0u8; 64 << 10];
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    let mut tail = Vec::new();
    loop {
        let n = tokio::time::timeout_at(deadline, s.read(&mut buf))
            .await
            .expect("the stream did not end")
            .unwrap();
        if n == 0 {
            break;
        }
        total += n;
        tail.extend_from_slice(&buf[..n]);
        if tail.len() > 256 {
            tail.drain(..tail.len() - 256);
        }
        if String::from_utf8_lossy(&tail).contains("data: [DONE]") {
            break;
        }
        if total < (1 << 20) {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }
    assert!(total as u64 > BIG_CHUNKS * (16 << 10), "{total} bytes");
    assert_eq!(seen.loop_chunks.load(SeqCst), BIG_CHUNKS);
}
