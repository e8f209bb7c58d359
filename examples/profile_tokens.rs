//! Pushes the dev corpus token ids through a default guard, for a profiler or an instruction
//! count: `REPS=3 valgrind --tool=callgrind target/release/examples/profile_tokens [FILE]`, then
//! subtract a run with `REPS=0` (loading only) and divide by the symbols it prints.
use loopguard::{StreamConfig, StreamGuard};

fn main() {
    let path = std::env::args()
        .nth(1)
        .unwrap_or("../shared/corpus/smollm2-dev.jsonl".into());
    let reps: usize = std::env::var("REPS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(50);
    let streams: Vec<Vec<u32>> = std::fs::read_to_string(path)
        .expect("read corpus")
        .lines()
        .filter_map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).ok()?;
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
        // POOL=N: N guards advanced one token each in turn, as a batched server does.
        let mut guards: Vec<StreamGuard> = (0..n).map(|_| StreamGuard::new(&config)).collect();
        let mut rest: Vec<&[u32]> = (0..n).map(|k| &streams[k % streams.len()][..]).collect();
        let mut which: Vec<usize> = (0..n).collect();
        let (mut acc, steps) = (0u64, reps * 100);
        let t = std::time::Instant::now();
        for _ in 0..steps {
            for k in 0..n {
                if rest[k].is_empty() {
                    which[k] += n;
                    rest[k] = &streams[which[k] % streams.len()][..];
                    guards[k].reset();
                }
                acc += guards[k].push_token(rest[k][0], None).action as u64;
                rest[k] = &rest[k][1..];
            }
        }
        let per = t.elapsed().as_secs_f64() * 1e9 / (steps * n) as f64;
        println!(
            "pool of {n}: {} sequence-tokens, {per:.2} ns each ({acc})",
            steps * n
        );
        return;
    }
    let mut g = StreamGuard::new(&config);
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
