//! Pushes the dev corpus token ids through a default guard, for a profiler or an instruction
//! count: `REPS=3 valgrind --tool=callgrind target/release/examples/profile_tokens [FILE]`, then
//! subtract a run with `REPS=0` (loading only) and divide by the symbols it prints. `TEXT=16`
//! pushes the text alone in 16-byte chunks instead; `PIECES=1` pushes ids with their pieces;
//! `CABI=1` pushes the ids through `lg_stream_push_token`; `POOL=256` runs a pool of 256
//! sequences; `PIECES=1 SPEC=4` pushes ids with pieces as speculative decoding does (a
//! checkpoint, four drafts, the rejected ones rolled back, the verifier's token).
use loopguard::{StreamConfig, StreamGuard};

fn main() {
    let path = std::env::args()
        .nth(1)
        .unwrap_or("../shared/corpus/smollm2-dev.jsonl".into());
    let reps: usize = std::env::var("REPS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(50);
    let rows: Vec<serde_json::Value> = std::fs::read_to_string(path)
        .expect("read corpus")
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let streams: Vec<Vec<u32>> = rows
        .iter()
        .filter_map(|v| {
            Some(
                v["token_ids"]
                    .as_array()?
                    .iter()
                    .map(|x| x.as_u64().unwrap_or(0) as u32)
                    .collect(),
            )
        })
        .collect();
    // SET="field=value,field=value" changes the default settings (to time one detector alone).
    let mut settings = loopguard::StreamSettings::default();
    for kv in std::env::var("SET")
        .unwrap_or_default()
        .split(',')
        .filter(|s| !s.is_empty())
    {
        let (k, v) = kv.split_once('=').expect("SET=field=value,...");
        settings.set(k, v).expect("valid setting");
    }
    let config = StreamConfig::new(&settings).expect("valid settings");
    let t = std::time::Instant::now();
    if let Some(n) = std::env::var("POOL")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
    {
        // POOL=N: an `lg_pool` of N sequences advanced one token each per `lg_pool_push`, as a
        // batched server does (the C ABI, called as C would).
        use loopguard::ffi::*;
        let c = lg_stream_config::default();
        let mut pool = std::ptr::null_mut();
        assert_eq!(unsafe { lg_pool_new(&c, n, &mut pool) }, lg_status::LG_OK);
        let mut slots = vec![0u64; n];
        for s in slots.iter_mut() {
            assert_eq!(unsafe { lg_pool_add(pool, s) }, lg_status::LG_OK);
        }
        let mut rest: Vec<&[u32]> = (0..n).map(|k| &streams[k % streams.len()][..]).collect();
        let mut which: Vec<usize> = (0..n).collect();
        let (mut tokens, mut actions) = (vec![0u32; n], vec![0u8; n]);
        let (mut acc, steps) = (0u64, reps * 100);
        let t = std::time::Instant::now();
        for _ in 0..steps {
            for k in 0..n {
                if rest[k].is_empty() {
                    which[k] += n;
                    rest[k] = &streams[which[k] % streams.len()][..];
                    unsafe { lg_pool_reset(pool, slots[k]) };
                }
                tokens[k] = rest[k][0];
                rest[k] = &rest[k][1..];
            }
            let st = unsafe {
                lg_pool_push(
                    pool,
                    slots.as_ptr(),
                    tokens.as_ptr(),
                    n,
                    actions.as_mut_ptr(),
                )
            };
            assert_eq!(st, lg_status::LG_OK);
            acc += actions.iter().map(|&a| a as u64).sum::<u64>();
        }
        let per = t.elapsed().as_secs_f64() * 1e9 / (steps * n) as f64;
        unsafe { lg_pool_free(pool) };
        println!(
            "pool of {n}: {} sequence-tokens, {per:.2} ns each ({acc})",
            steps * n
        );
        return;
    }
    if std::env::var("CABI").is_ok() {
        // CABI=1: the ids through `lg_stream_push_token` at default settings, as C calls it.
        use loopguard::ffi::*;
        let c = lg_stream_config::default();
        let mut h = std::ptr::null_mut();
        assert_eq!(unsafe { lg_stream_new(&c, &mut h) }, lg_status::LG_OK);
        let (mut acc, mut symbols) = (0u64, 0u64);
        for _ in 0..reps {
            for s in &streams {
                unsafe { lg_stream_reset(h) };
                for &id in s {
                    let mut a = lg_action::LG_ACTION_CONTINUE;
                    unsafe { lg_stream_push_token(h, id, std::ptr::null(), 0, &mut a) };
                    acc += a as u64;
                }
                symbols += s.len() as u64;
            }
        }
        unsafe { lg_stream_free(h) };
        println!(
            "tokens pushed: {symbols} (halts and warnings: {acc}), {:.2} ns/token",
            t.elapsed().as_secs_f64() * 1e9 / symbols.max(1) as f64
        );
        return;
    }
    let mut g = StreamGuard::new(&config);
    if let Some(n) = std::env::var("TEXT")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
    {
        // TEXT=N: the text of each stream pushed alone, in chunks of N bytes.
        let texts: Vec<&[u8]> = rows
            .iter()
            .filter_map(|v| Some(v["text"].as_str()?.as_bytes()))
            .collect();
        drive(&mut g, reps, &texts, "byte", t, |g, text| {
            let acc = text.chunks(n.max(1)).map(|c| g.push_text(c).action as u64);
            (acc.sum(), text.len() as u64)
        });
    } else if std::env::var("PIECES").is_ok() {
        // PIECES=1: ids with their text pieces, as a server with a detokenizer pushes them.
        let streams: Vec<Vec<(u32, &[u8])>> = rows
            .iter()
            .filter_map(|v| {
                let ids = v["token_ids"].as_array()?.iter();
                let pieces = v["pieces"].as_array()?.iter();
                Some(
                    ids.zip(pieces)
                        .map(|(i, p)| {
                            let piece = p.as_str().unwrap_or("").as_bytes();
                            (i.as_u64().unwrap_or(0) as u32, piece)
                        })
                        .collect(),
                )
            })
            .collect();
        let spec: usize = std::env::var("SPEC")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        if spec > 0 {
            // Each step drafts `spec` tokens, of which the first `accepted` (0..=spec, in a
            // fixed pattern averaging spec / 2) are right; the rest are rolled back and the
            // verifier's token follows. Counted per accepted token.
            let mut step = 0usize;
            drive(&mut g, reps, &streams, "token", t, |g, s| {
                let (mut acc, mut at) = (0u64, 0usize);
                while at < s.len() {
                    step += 1;
                    let accepted = (step * 7 % (spec + 1)).min(s.len() - at);
                    g.checkpoint();
                    for j in 0..spec {
                        let (id, p) = s
                            .get(at + j)
                            .filter(|_| j < accepted)
                            .unwrap_or(&(7, b" x"));
                        g.push_token(*id, Some(p));
                    }
                    acc += g.rollback(spec - accepted).expect("drafts held").action as u64;
                    g.commit();
                    at += accepted;
                    if let Some(&(id, p)) = s.get(at) {
                        acc += g.push_token(id, Some(p)).action as u64;
                        at += 1;
                    }
                }
                (acc, s.len() as u64)
            });
            return;
        }
        drive(&mut g, reps, &streams, "token", t, |g, s| {
            let acc = s
                .iter()
                .map(|&(id, p)| g.push_token(id, Some(p)).action as u64);
            (acc.sum(), s.len() as u64)
        });
    } else {
        // The default: ids alone. The loop stays in `main`, with the guard a local, as it
        // was when the README's instruction counts were first taken.
        let (mut acc, mut symbols) = (0u64, 0u64);
        for _ in 0..reps {
            for s in &streams {
                g.reset();
                for &id in s {
                    acc += g.push_token(id, None).action as u64;
                }
                symbols += g.stats().symbols;
            }
        }
        let secs = t.elapsed().as_secs_f64();
        println!(
            "symbols pushed: {symbols} (halts and warnings: {acc}), {:.2} ns/symbol",
            secs * 1e9 / symbols.max(1) as f64
        );
    }
}

/// Feeds every stream `reps` times to `g`, reset before each, with `feed` (which returns the
/// sum of the actions and the units it pushed), then prints the units and the time per unit.
fn drive<T>(
    g: &mut StreamGuard,
    reps: usize,
    streams: &[T],
    unit: &str,
    t: std::time::Instant,
    mut feed: impl FnMut(&mut StreamGuard, &T) -> (u64, u64),
) {
    let (mut acc, mut units) = (0u64, 0u64);
    for _ in 0..reps {
        for s in streams {
            g.reset();
            let (a, n) = feed(g, s);
            acc += a;
            units += n;
        }
    }
    let secs = t.elapsed().as_secs_f64();
    println!(
        "{unit}s pushed: {units} (halts and warnings: {acc}), {:.2} ns/{unit}",
        secs * 1e9 / units.max(1) as f64
    );
}
