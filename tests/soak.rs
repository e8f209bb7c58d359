//! Soak: long runs through the C ABI with the process's resident memory sampled as they go. A
//! guard fed 10^8 tokens, a pool that serves 10^6 sequences and an agent session of 10^6
//! events must end at the resident size they reached early on (a leak of one byte a token would
//! show as 100 MB). The runs take turns (resident memory is the whole process's).
#![allow(unsafe_code)]

mod common;

use std::ptr::{null, null_mut};
use std::sync::Mutex;

use loopguard::ffi::*;

/// One soak at a time: the samples must be this run's alone.
static TURN: Mutex<()> = Mutex::new(());

/// The process's resident memory in bytes (`/proc/self/statm`), or None off Linux.
fn rss() -> Option<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    Some(pages * 4096)
}

/// Samples resident memory ten times over `total` steps of `step`, and checks that the last
/// nine samples stay within `slack` bytes of the first (taken after a tenth of the run, once
/// every buffer has reached its size).
fn soak(name: &str, total: u64, slack: u64, mut step: impl FnMut(u64)) {
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    let tenth = total / 10;
    let mut samples = Vec::new();
    for i in 0..total {
        step(i);
        if (i + 1) % tenth == 0 {
            samples.push(rss());
        }
    }
    let Some(samples) = samples.into_iter().collect::<Option<Vec<u64>>>() else {
        eprintln!("{name}: resident memory is not readable here (no /proc): not sampled");
        return;
    };
    let mib = |b: u64| b as f64 / (1 << 20) as f64;
    let first = samples[0];
    let worst = samples.iter().copied().max().unwrap();
    eprintln!(
        "{name}: resident {:.1} MiB after a tenth, {:.1} MiB at most, {:.1} MiB at the end",
        mib(first),
        mib(worst),
        mib(*samples.last().unwrap())
    );
    assert!(
        worst <= first + slack,
        "{name}: resident memory grew from {first} to {worst} bytes: {samples:?}"
    );
}

const WORDS: [&str; 16] = [
    " the", " model", " said", " that", " it", " would", " stop", ",", " and", " then", ".", "\n",
    " again", " code", "(", ")",
];

#[test]
fn a_stream_guard_through_a_hundred_million_tokens() {
    // SAFETY: the pointers passed are the handle made here and live slices.
    unsafe {
        let mut c = std::mem::zeroed::<lg_stream_config>();
        lg_stream_config_init(&mut c);
        let mut s = null_mut();
        assert_eq!(lg_stream_new(&c, &mut s), lg_status::LG_OK);
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let (mut halts, mut a) = (0u64, lg_action::LG_ACTION_CONTINUE);
        soak("stream, 10^8 tokens", 100_000_000, 1 << 20, |i| {
            let r = common::xorshift(&mut x);
            // Mostly fresh ids; now and then a stretch that loops, until the guard halts and
            // the sequence is reset, as a server would. One token in 16 carries its piece.
            let looping = (i / 4096) % 8 == 7;
            let id = if looping {
                (i % 5) as u32
            } else {
                (r >> 40) as u32
            };
            let st = if i % 16 == 0 {
                let w = WORDS[(id % 16) as usize];
                lg_stream_push_token(s, id, w.as_ptr(), w.len(), &mut a)
            } else {
                lg_stream_push_token(s, id, null(), 0, &mut a)
            };
            debug_assert_eq!(st, lg_status::LG_OK);
            if a == lg_action::LG_ACTION_HALT {
                halts += 1;
                lg_stream_reset(s);
            }
        });
        assert!(halts > 1000, "{halts} halts");
        lg_stream_free(s);
    }
}

#[test]
fn a_pool_through_a_million_sequences() {
    // SAFETY: as above.
    unsafe {
        let mut c = std::mem::zeroed::<lg_stream_config>();
        lg_stream_config_init(&mut c);
        let mut p = null_mut();
        assert_eq!(lg_pool_new(&c, 64, &mut p), lg_status::LG_OK);
        let mut live: Vec<u64> = Vec::with_capacity(64);
        let (mut ids, mut toks, mut out) = (vec![0u64; 64], vec![0u32; 64], vec![0u8; 64]);
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let (mut started, mut halted) = (0u64, 0u64);
        // Each step: fill the free slots with new sequences, push one token into each live
        // one, and end the sequences that halted or ran 100 tokens.
        let mut lengths = [0u32; 65536];
        soak("pool, 10^6 sequences", 1_600_000, 1 << 20, |_| {
            while live.len() < 64 {
                let mut slot = 0;
                assert_eq!(lg_pool_add(p, &mut slot), lg_status::LG_OK);
                lengths[(slot & 0xffff) as usize] = 0;
                live.push(slot);
                started += 1;
            }
            for (k, &slot) in live.iter().enumerate() {
                let r = common::xorshift(&mut x);
                ids[k] = slot;
                // One sequence in four loops on a block of three tokens.
                let len = lengths[(slot & 0xffff) as usize];
                toks[k] = if slot % 4 == 0 {
                    len % 3
                } else {
                    (r >> 40) as u32
                };
            }
            let n = live.len();
            assert_eq!(
                lg_pool_push(p, ids.as_ptr(), toks.as_ptr(), n, out.as_mut_ptr()),
                lg_status::LG_OK
            );
            let mut k = 0;
            live.retain(|&slot| {
                let len = &mut lengths[(slot & 0xffff) as usize];
                *len += 1;
                let halt = out[k] == lg_action::LG_ACTION_HALT as u8;
                k += 1;
                halted += u64::from(halt);
                let done = halt || *len >= 100;
                if done {
                    assert_eq!(lg_pool_remove(p, slot), lg_status::LG_OK);
                }
                !done
            });
        });
        assert!(started >= 1_000_000, "{started} sequences");
        assert!(halted > 10_000, "{halted} halts");
        lg_pool_free(p);
    }
}

#[test]
fn an_agent_session_of_a_million_events() {
    // SAFETY: as above.
    unsafe {
        let mut c = std::mem::zeroed::<lg_agent_config>();
        lg_agent_config_init(&mut c);
        let mut a = null_mut();
        assert_eq!(lg_agent_new(&c, &mut a), lg_status::LG_OK);
        let mut x = 0x1234_5678_9abc_def0u64;
        let mut act = lg_action::LG_ACTION_CONTINUE;
        let mut resets = 0u64;
        soak("agent, 10^6 events", 1_000_000, 1 << 20, |i| {
            let r = common::xorshift(&mut x);
            let st = match i % 4 {
                0 => {
                    // Calls with fresh arguments, and now and then the same one again.
                    let args = if r % 8 == 0 {
                        r#"{"command": "pytest -x"}"#.to_string()
                    } else {
                        format!(r#"{{"command": "grep -n item{} src/lib.rs"}}"#, r % 100_000)
                    };
                    lg_agent_call(a, b"bash".as_ptr(), 4, args.as_ptr(), args.len(), &mut act)
                }
                1 => {
                    let out = format!("src/lib.rs:{}: item\n", r % 1000);
                    lg_agent_result(a, out.as_ptr(), out.len(), null(), 0, &mut act)
                }
                2 => {
                    let msg = format!("Looking at line {} next.", r % 1000);
                    lg_agent_message(a, msg.as_ptr(), msg.len(), &mut act)
                }
                _ => lg_agent_tick(a, i * 10, &mut act),
            };
            debug_assert_eq!(st, lg_status::LG_OK);
            if act == lg_action::LG_ACTION_HALT {
                resets += 1;
                lg_agent_reset(a);
            }
        });
        let mut used = 0usize;
        assert_eq!(lg_agent_memory_usage(a, &mut used), lg_status::LG_OK);
        assert!(used < 1 << 20, "{used} bytes held after 10^6 events");
        eprintln!("agent: {used} bytes held at the end, {resets} halts reset");
        lg_agent_free(a);
    }
}
