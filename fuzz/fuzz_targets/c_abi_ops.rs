//! The C ABI as a caller drives it: sequences of new / push / describe with any buffer length /
//! verdict with any struct_size / reset / clone / callbacks (which try to re-enter and to free
//! their own handle) / free, on streams and pools. Built with AddressSanitizer by cargo fuzz,
//! so a write past a buffer or a use after free fails the run; every status must be one the
//! header lists, and a refused buffer must be left untouched.
#![no_main]

use std::ffi::{c_char, c_void};
use std::ptr::{null, null_mut};

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use loopguard::ffi::*;

#[derive(Arbitrary, Debug)]
enum Op {
    New { preset: u8 },
    PushToken { h: u8, id: u32, piece: Option<Vec<u8>>, null_len: u8 },
    PushText { h: u8, text: Vec<u8> },
    Finish { h: u8 },
    Describe { h: u8, verbosity: i8, len: Len },
    Verdict { h: u8, struct_size: u8 },
    Stats { h: u8 },
    Repeated { h: u8 },
    Reset { h: u8 },
    Clone { h: u8 },
    Callbacks { h: u8, mode: u8 },
    Free { h: u8 },
    PoolNew { capacity: u8 },
    PoolAdd,
    PoolRemove { slot: u8, raw: u64 },
    PoolPush { batch: Vec<(u8, u32)>, raw: Option<u64> },
    PoolVerdict { slot: u8 },
    Checkpoint { h: u8 },
    Rollback { h: u8, n: u8 },
    Commit { h: u8 },
    PoolCheckpoint { slot: u8 },
    PoolRollback { slot: u8, n: u8 },
    PoolCommit { slot: u8 },
    Loop { h: u8, period: u8, times: u8 },
    AgentNew { preset: u8 },
    AgentCall { a: u8, tool: Option<Vec<u8>>, args: Vec<u8>, repeat: u8 },
    AgentResult { a: u8, output: Option<Vec<u8>>, error: Option<Vec<u8>> },
    AgentReject { a: u8 },
    AgentDescribe { a: u8, verbosity: i8, len: Len },
    AgentEvidence { a: u8, cap: Len },
    AgentFree { a: u8 },
}

/// A buffer length: within the buffer, zero, or one a caller gets wrong.
#[derive(Arbitrary, Debug)]
enum Len {
    Within(u8),
    Zero,
    Huge(u8),
}

const BUF: usize = 96;

/// The length a `Len` stands for, for a buffer of `BUF` bytes.
fn buf_len(len: &Len) -> usize {
    match *len {
        Len::Within(n) => usize::from(n) % (BUF + 1),
        Len::Zero => 0,
        Len::Huge(k) => (isize::MAX as usize) + 1 + usize::from(k),
    }
}

/// Runs an `lg_*_describe` into a `BUF`-byte buffer with the length `len` stands for, and
/// checks what it wrote: on success a NUL-terminated, valid UTF-8 prefix of the length it
/// reports and nothing past `buf_len`; on failure nothing at all.
unsafe fn described(
    len: &Len,
    describe: impl FnOnce(*mut c_char, usize, *mut usize) -> lg_status,
) -> lg_status {
    let mut buf = [0x55 as c_char; BUF];
    let n = buf_len(len);
    let mut need = usize::MAX;
    let st = describe(buf.as_mut_ptr(), n, &mut need);
    valid(st);
    if st == lg_status::LG_OK {
        if n > 0 {
            let end = buf[..n].iter().position(|&b| b == 0).expect("NUL-terminated");
            assert!(end <= need);
            let bytes = std::slice::from_raw_parts(buf.as_ptr() as *const u8, end);
            assert!(std::str::from_utf8(bytes).is_ok());
        }
        assert!(buf[n.min(BUF)..].iter().all(|&b| b == 0x55), "wrote past buf_len");
    } else {
        assert!(buf.iter().all(|&b| b == 0x55), "a refused call wrote");
    }
    st
}

fn valid(s: lg_status) {
    // The enum holds only the listed values; reading one back checks nothing was forged.
    assert!((s as i32) >= 0 && (s as i32) <= 8, "{s:?}");
}

/// What a callback does, through its user data.
struct Hook {
    handle: *mut lg_stream,
    mode: u8,
}

unsafe extern "C" fn hook(user: *mut c_void, _slot: u64, v: *const lg_verdict) {
    let hook = &*(user as *const Hook);
    assert!(!v.is_null());
    match hook.mode % 3 {
        0 => {}
        1 => {
            let s = lg_stream_push_token(hook.handle, 1, null(), 0, null_mut());
            assert_eq!(s, lg_status::LG_ERR_REENTRANT);
        }
        _ => lg_stream_free(hook.handle), // refused: the push still holds the handle
    }
}

unsafe extern "C" fn pool_hook(_user: *mut c_void, _slot: u64, v: *const lg_verdict) {
    assert!(!v.is_null());
}

fuzz_target!(|ops: Vec<Op>| unsafe {
    let mut streams: Vec<*mut lg_stream> = Vec::new();
    let mut hooks: Vec<Box<Hook>> = Vec::new();
    let mut pool: *mut lg_pool = null_mut();
    let mut slots: Vec<u64> = Vec::new();
    let mut agents: Vec<*mut lg_agent> = Vec::new();
    let agent = |agents: &Vec<*mut lg_agent>, a: u8| -> *mut lg_agent {
        if a == 255 || agents.is_empty() {
            null_mut()
        } else {
            agents[usize::from(a) % agents.len()]
        }
    };
    let pick = |streams: &Vec<*mut lg_stream>, h: u8| -> *mut lg_stream {
        // Index 255 is the NULL handle.
        if h == 255 || streams.is_empty() {
            null_mut()
        } else {
            streams[usize::from(h) % streams.len()]
        }
    };
    for op in ops.into_iter().take(200) {
        match op {
            Op::New { preset } => {
                let mut c = std::mem::zeroed::<lg_stream_config>();
                let st = lg_stream_config_preset(&mut c, i32::from(preset % 4));
                valid(st);
                if st == lg_status::LG_OK && streams.len() < 16 {
                    let mut s = null_mut();
                    assert_eq!(lg_stream_new(&c, &mut s), lg_status::LG_OK);
                    streams.push(s);
                }
            }
            Op::PushToken { h, id, piece, null_len } => {
                let s = pick(&streams, h);
                let mut a = 0xaau8;
                let st = match &piece {
                    Some(p) => lg_stream_push_token(
                        s,
                        id,
                        p.as_ptr(),
                        p.len(),
                        &mut a as *mut u8 as *mut lg_action,
                    ),
                    None => lg_stream_push_token(s, id, null(), usize::from(null_len), null_mut()),
                };
                valid(st);
                if s.is_null() || (piece.is_none() && null_len > 0) {
                    assert_eq!(st, lg_status::LG_ERR_NULL);
                } else {
                    assert_eq!(st, lg_status::LG_OK);
                }
                if piece.is_some() && st == lg_status::LG_OK {
                    assert!(a <= 3, "action {a}");
                }
            }
            Op::PushText { h, text } => {
                let s = pick(&streams, h);
                valid(lg_stream_push_text(s, text.as_ptr(), text.len(), null_mut()));
            }
            Op::Finish { h } => valid(lg_stream_finish_text(pick(&streams, h), null_mut())),
            Op::Describe { h, verbosity, len } => {
                let s = pick(&streams, h);
                let st = described(&len, |buf, n, need| {
                    lg_stream_describe(s, i32::from(verbosity), buf, n, need)
                });
                if st != lg_status::LG_OK && !s.is_null() {
                    assert!(!std::ffi::CStr::from_ptr(lg_stream_last_error(s)).is_empty());
                }
            }
            Op::Verdict { h, struct_size } => {
                let s = pick(&streams, h);
                let mut v = std::mem::zeroed::<lg_verdict>();
                v.struct_size = usize::from(struct_size) % (std::mem::size_of::<lg_verdict>() + 8);
                valid(lg_stream_verdict(s, &mut v));
            }
            Op::Stats { h } => {
                let mut st = std::mem::zeroed::<lg_stats>();
                st.struct_size = std::mem::size_of::<lg_stats>();
                valid(lg_stream_stats(pick(&streams, h), &mut st));
            }
            Op::Repeated { h } => {
                let (mut p, mut n) = (null(), 0usize);
                let st = lg_stream_repeated_text(pick(&streams, h), &mut p, &mut n);
                valid(st);
                if st == lg_status::LG_OK && n > 0 {
                    let bytes = std::slice::from_raw_parts(p, n);
                    assert!(bytes.iter().fold(0u8, |h, &b| h ^ b) < 255 || n > 0);
                }
            }
            Op::Reset { h } => valid(lg_stream_reset(pick(&streams, h))),
            Op::Clone { h } => {
                let mut out = null_mut();
                let st = lg_stream_clone(pick(&streams, h), &mut out);
                valid(st);
                if st == lg_status::LG_OK {
                    streams.push(out);
                }
            }
            Op::Callbacks { h, mode } => {
                let s = pick(&streams, h);
                if !s.is_null() {
                    let hk = Box::new(Hook { handle: s, mode });
                    let user = &*hk as *const Hook as *mut c_void;
                    hooks.push(hk);
                    valid(lg_stream_set_callbacks(s, Some(hook), Some(hook), user));
                }
            }
            Op::Free { h } => {
                if !streams.is_empty() && h != 255 {
                    let i = usize::from(h) % streams.len();
                    let s = streams.swap_remove(i);
                    lg_stream_free(s);
                    // Hooks that named it must not run again: they go with it.
                    hooks.retain(|k| k.handle != s);
                }
            }
            Op::PoolNew { capacity } => {
                lg_pool_free(pool);
                slots.clear();
                let mut c = std::mem::zeroed::<lg_stream_config>();
                lg_stream_config_init(&mut c);
                pool = null_mut();
                let st = lg_pool_new(&c, usize::from(capacity % 9), &mut pool);
                valid(st);
                if st == lg_status::LG_OK {
                    valid(lg_pool_set_callbacks(pool, Some(pool_hook), Some(pool_hook), null_mut()));
                } else {
                    assert!(pool.is_null());
                }
            }
            Op::PoolAdd => {
                let mut id = 0;
                let st = lg_pool_add(pool, &mut id);
                valid(st);
                if st == lg_status::LG_OK {
                    slots.push(id);
                }
            }
            Op::PoolRemove { slot, raw } => {
                let id = if slots.is_empty() || slot == 255 {
                    raw
                } else {
                    slots.swap_remove(usize::from(slot) % slots.len())
                };
                valid(lg_pool_remove(pool, id));
            }
            Op::PoolPush { batch, raw } => {
                let ids: Vec<u64> = batch
                    .iter()
                    .map(|&(k, _)| match (slots.is_empty(), raw) {
                        (false, None) => slots[usize::from(k) % slots.len()],
                        (_, r) => r.unwrap_or(u64::from(k)),
                    })
                    .collect();
                let toks: Vec<u32> = batch.iter().map(|&(_, t)| t % 7).collect();
                let mut out = vec![0xaau8; ids.len()];
                let st = lg_pool_push(pool, ids.as_ptr(), toks.as_ptr(), ids.len(), out.as_mut_ptr());
                valid(st);
                if st == lg_status::LG_OK {
                    assert!(out.iter().all(|&a| a <= 3));
                } else if !pool.is_null() {
                    assert!(out.iter().all(|&a| a == 0xaa), "a refused batch wrote");
                }
            }
            Op::PoolVerdict { slot } => {
                let id = slots.get(usize::from(slot) % slots.len().max(1)).copied().unwrap_or(9);
                let mut v = std::mem::zeroed::<lg_verdict>();
                v.struct_size = std::mem::size_of::<lg_verdict>();
                valid(lg_pool_verdict(pool, id, &mut v));
            }
            Op::Checkpoint { h } => valid(lg_stream_checkpoint(pick(&streams, h))),
            Op::Rollback { h, n } => {
                valid(lg_stream_rollback(pick(&streams, h), usize::from(n % 80), null_mut()))
            }
            Op::Commit { h } => valid(lg_stream_commit(pick(&streams, h))),
            Op::PoolCheckpoint { slot } => {
                let id = slots.get(usize::from(slot) % slots.len().max(1)).copied().unwrap_or(9);
                valid(lg_pool_checkpoint(pool, id));
            }
            Op::PoolRollback { slot, n } => {
                let id = slots.get(usize::from(slot) % slots.len().max(1)).copied().unwrap_or(9);
                let mut a = lg_action::LG_ACTION_CONTINUE;
                valid(lg_pool_rollback(pool, id, usize::from(n % 80), &mut a));
            }
            Op::PoolCommit { slot } => {
                let id = slots.get(usize::from(slot) % slots.len().max(1)).copied().unwrap_or(9);
                valid(lg_pool_commit(pool, id));
            }
            Op::Loop { h, period, times } => {
                let s = pick(&streams, h);
                let p = u32::from(period % 12) + 1;
                for i in 0..u32::from(times) * 4 {
                    valid(lg_stream_push_token(s, i % p, b"ab".as_ptr(), 2, null_mut()));
                }
            }
            Op::AgentNew { preset } => {
                let mut c = std::mem::zeroed::<lg_agent_config>();
                let st = lg_agent_config_preset(&mut c, i32::from(preset % 6));
                valid(st);
                if st == lg_status::LG_OK && agents.len() < 8 {
                    let mut a = null_mut();
                    assert_eq!(lg_agent_new(&c, &mut a), lg_status::LG_OK);
                    agents.push(a);
                }
            }
            Op::AgentCall { a, tool, args, repeat } => {
                let h = agent(&agents, a);
                let mut act = 0xaau8;
                for _ in 0..=repeat % 6 {
                    let st = match &tool {
                        Some(t) => lg_agent_call(
                            h,
                            t.as_ptr(),
                            t.len(),
                            args.as_ptr(),
                            args.len(),
                            &mut act as *mut u8 as *mut lg_action,
                        ),
                        None => lg_agent_call(h, null(), 3, args.as_ptr(), args.len(), null_mut()),
                    };
                    valid(st);
                    if h.is_null() || tool.is_none() {
                        assert_eq!(st, lg_status::LG_ERR_NULL);
                    } else {
                        assert_eq!(st, lg_status::LG_OK);
                        assert!(act <= 3);
                    }
                }
            }
            Op::AgentResult { a, output, error } => {
                let h = agent(&agents, a);
                let (o, ol) = output.as_ref().map_or((null(), 0), |o| (o.as_ptr(), o.len()));
                let (e, el) = error.as_ref().map_or((null(), 0), |e| (e.as_ptr(), e.len()));
                valid(lg_agent_result(h, o, ol, e, el, null_mut()));
            }
            Op::AgentReject { a } => valid(lg_agent_reject(agent(&agents, a), null_mut())),
            Op::AgentDescribe { a, verbosity, len } => {
                let h = agent(&agents, a);
                let st = described(&len, |buf, n, need| {
                    lg_agent_describe(h, i32::from(verbosity), buf, n, need)
                });
                if st != lg_status::LG_OK && !h.is_null() {
                    assert!(!std::ffi::CStr::from_ptr(lg_agent_last_error(h)).is_empty());
                }
            }
            Op::AgentEvidence { a, cap } => {
                let h = agent(&agents, a);
                let mut out = [7u64; 8];
                let n = match cap {
                    Len::Within(k) => usize::from(k) % 9,
                    Len::Zero => 0,
                    Len::Huge(k) => (isize::MAX as usize) / 8 + 1 + usize::from(k),
                };
                let mut len = usize::MAX;
                let st = lg_agent_evidence(h, out.as_mut_ptr(), n, &mut len);
                valid(st);
                if st == lg_status::LG_OK {
                    assert!(out[n.min(8)..].iter().all(|&v| v == 7), "wrote past cap");
                } else {
                    assert!(out.iter().all(|&v| v == 7), "a refused call wrote");
                }
            }
            Op::AgentFree { a } => {
                if !agents.is_empty() && a != 255 {
                    lg_agent_free(agents.swap_remove(usize::from(a) % agents.len()));
                }
            }
        }
    }
    for a in agents {
        lg_agent_free(a);
    }
    for s in streams {
        lg_stream_free(s);
    }
    lg_pool_free(pool);
    drop(hooks);
});
