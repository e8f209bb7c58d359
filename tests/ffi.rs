//! The `extern "C"` functions called from Rust with NULL pointers, bad values and misuse.

use std::ptr;

use loopguard::ffi::lg_status::*;
use loopguard::ffi::*;

fn config() -> lg_stream_config {
    let mut c = std::mem::MaybeUninit::<lg_stream_config>::uninit();
    assert_eq!(unsafe { lg_stream_config_init(c.as_mut_ptr()) }, LG_OK);
    unsafe { c.assume_init() }
}

/// Rust code driving the C ABI may take `Default`: the same defaults, field for field.
#[test]
fn the_rust_default_config_is_what_init_fills() {
    assert_eq!(
        format!("{:?}", lg_stream_config::default()),
        format!("{:?}", config())
    );
}

#[test]
fn null_handles_and_buffers_are_errors_not_crashes() {
    unsafe {
        let mut a = lg_action::LG_ACTION_CONTINUE;
        let mut v: lg_verdict = std::mem::zeroed();
        v.struct_size = std::mem::size_of::<lg_verdict>();
        let mut n = 0usize;
        assert_eq!(
            lg_stream_push_token(ptr::null_mut(), 1, ptr::null(), 0, &mut a),
            LG_ERR_NULL
        );
        assert_eq!(
            lg_stream_push_text(ptr::null_mut(), ptr::null(), 0, &mut a),
            LG_ERR_NULL
        );
        assert_eq!(lg_stream_finish_text(ptr::null_mut(), &mut a), LG_ERR_NULL);
        assert_eq!(lg_stream_verdict(ptr::null(), &mut v), LG_ERR_NULL);
        assert_eq!(lg_stream_memory_usage(ptr::null(), &mut n), LG_ERR_NULL);
        assert_eq!(lg_stream_reset(ptr::null_mut()), LG_ERR_NULL);
        assert_eq!(lg_stream_clone(ptr::null(), ptr::null_mut()), LG_ERR_NULL);
        assert_eq!(
            lg_stream_set_callbacks(ptr::null_mut(), None, None, ptr::null_mut()),
            LG_ERR_NULL
        );
        assert_eq!(lg_pool_add(ptr::null_mut(), &mut 0), LG_ERR_NULL);
        assert_eq!(
            lg_pool_push(
                ptr::null_mut(),
                ptr::null(),
                ptr::null(),
                0,
                ptr::null_mut()
            ),
            LG_ERR_NULL
        );
        assert!(!lg_stream_last_error(ptr::null()).is_null());
        assert!(!lg_pool_last_error(ptr::null()).is_null());
        lg_stream_free(ptr::null_mut());
        lg_pool_free(ptr::null_mut());
        assert!(!lg_status_str(i32::MIN).is_null());

        let c = config();
        let mut s = ptr::null_mut();
        assert_eq!(lg_stream_new(&c, &mut s), LG_OK);
        assert_eq!(
            lg_stream_push_token(s, 1, ptr::null(), 9, &mut a),
            LG_ERR_NULL
        );
        assert_eq!(lg_stream_push_text(s, ptr::null(), 9, &mut a), LG_ERR_NULL);
        assert_eq!(
            lg_stream_describe(s, 0, ptr::null_mut(), 10, &mut n),
            LG_ERR_NULL
        );
        assert_eq!(
            lg_stream_describe(s, -1, ptr::null_mut(), 0, &mut n),
            LG_ERR_INVALID_ARGUMENT
        );
        assert_eq!(
            lg_stream_repeated_text(s, ptr::null_mut(), &mut n),
            LG_ERR_NULL
        );
        lg_stream_free(s);
    }
}

/// A length no buffer can have (a negative length cast to `size_t`) is refused before any
/// slice is made of it, and the handle stays usable.
#[test]
fn absurd_lengths_are_invalid_arguments() {
    unsafe {
        let c = config();
        let mut s = ptr::null_mut();
        assert_eq!(lg_stream_new(&c, &mut s), LG_OK);
        let mut a = lg_action::LG_ACTION_HALT;
        let byte = 0u8;
        for len in [usize::MAX, isize::MAX as usize + 1] {
            assert_eq!(
                lg_stream_push_token(s, 7, &byte, len, &mut a),
                LG_ERR_INVALID_ARGUMENT
            );
            assert_eq!(
                lg_stream_push_text(s, &byte, len, &mut a),
                LG_ERR_INVALID_ARGUMENT
            );
        }
        assert_eq!(
            a,
            lg_action::LG_ACTION_HALT,
            "out_action written on an error"
        );
        assert_eq!(lg_stream_push_token(s, 7, &byte, 1, &mut a), LG_OK);
        assert_eq!(a, lg_action::LG_ACTION_CONTINUE);
        lg_stream_free(s);

        let mut p = ptr::null_mut();
        assert_eq!(lg_pool_new(&c, 2, &mut p), LG_OK);
        let (slot, tok, mut act) = (0u64, 0u32, 0u8);
        assert_eq!(
            lg_pool_push(p, &slot, &tok, usize::MAX / 2, &mut act),
            LG_ERR_INVALID_ARGUMENT
        );
        lg_pool_free(p);
    }
}

/// Output buffers get the same check as input ones: a length over `PTRDIFF_MAX` is refused
/// before a byte is written (it used to be taken at its word, and the text written past the
/// caller's buffer).
#[test]
fn absurd_output_lengths_are_invalid_arguments() {
    unsafe {
        let mut c = config();
        let mut s = ptr::null_mut();
        assert_eq!(lg_stream_new(&c, &mut s), LG_OK);
        let mut a = lg_action::LG_ACTION_CONTINUE;
        for _ in 0..200 {
            lg_stream_push_token(s, 7, b"ab".as_ptr(), 2, &mut a);
        }
        assert_eq!(a, lg_action::LG_ACTION_HALT);
        let mut small = [b'x' as std::ffi::c_char; 8];
        let mut need = 0usize;
        for len in [usize::MAX, isize::MAX as usize + 1] {
            assert_eq!(
                lg_stream_describe(s, 2, small.as_mut_ptr(), len, &mut need),
                LG_ERR_INVALID_ARGUMENT
            );
        }
        lg_stream_free(s);
        c.halt_copies = 1;
        assert_eq!(
            lg_stream_config_validate(&c, small.as_mut_ptr(), usize::MAX),
            LG_ERR_INVALID_ARGUMENT
        );

        let mut ac = std::mem::zeroed::<lg_agent_config>();
        assert_eq!(lg_agent_config_init(&mut ac), LG_OK);
        let mut agent = ptr::null_mut();
        assert_eq!(lg_agent_new(&ac, &mut agent), LG_OK);
        for _ in 0..6 {
            let args = br#"{"command":"ls"}"#;
            lg_agent_call(
                agent,
                b"Bash".as_ptr(),
                4,
                args.as_ptr(),
                args.len(),
                &mut a,
            );
            lg_agent_result(agent, b"x".as_ptr(), 1, ptr::null(), 0, &mut a);
        }
        assert_eq!(
            lg_agent_describe(agent, 2, small.as_mut_ptr(), usize::MAX, &mut need),
            LG_ERR_INVALID_ARGUMENT
        );
        let mut steps = [0u64; 2];
        let mut n = 0usize;
        assert_eq!(
            lg_agent_evidence(agent, steps.as_mut_ptr(), usize::MAX, &mut n),
            LG_ERR_INVALID_ARGUMENT
        );
        ac.window = 3;
        assert_eq!(
            lg_agent_config_validate(&ac, small.as_mut_ptr(), isize::MAX as usize + 1),
            LG_ERR_INVALID_ARGUMENT
        );
        assert!(
            small.iter().all(|&b| b == b'x' as std::ffi::c_char),
            "nothing written"
        );
        assert_eq!(steps, [0, 0]);
        lg_agent_free(agent);
    }
}

/// A description cut to fit a small buffer is still valid UTF-8, and says how long the whole
/// text is.
#[test]
fn truncated_descriptions_end_on_a_character() {
    unsafe {
        let c = config();
        let mut s = ptr::null_mut();
        assert_eq!(lg_stream_new(&c, &mut s), LG_OK);
        let mut a = lg_action::LG_ACTION_CONTINUE;
        let piece = "ありがとう".as_bytes();
        for i in 0..200 {
            lg_stream_push_token(s, 7 + i % 5, piece.as_ptr(), piece.len(), &mut a);
        }
        assert_eq!(a, lg_action::LG_ACTION_HALT);
        let mut need = 0usize;
        assert_eq!(
            lg_stream_describe(s, 2, ptr::null_mut(), 0, &mut need),
            LG_OK
        );
        let mut full = vec![0 as std::ffi::c_char; need + 1];
        assert_eq!(
            lg_stream_describe(s, 2, full.as_mut_ptr(), full.len(), &mut need),
            LG_OK
        );
        let full: Vec<u8> = full[..need].iter().map(|&b| b as u8).collect();
        assert!(std::str::from_utf8(&full).unwrap().contains("ありがとう"));
        for cap in 1..need {
            let mut buf = vec![b'x' as std::ffi::c_char; cap];
            let mut n = 0usize;
            assert_eq!(
                lg_stream_describe(s, 2, buf.as_mut_ptr(), cap, &mut n),
                LG_OK
            );
            assert_eq!(n, need);
            let text = std::ffi::CStr::from_ptr(buf.as_ptr()).to_bytes();
            assert!(text.len() < cap && full.starts_with(text), "cap {cap}");
            assert!(std::str::from_utf8(text).is_ok(), "cap {cap}: {text:?}");
            assert!(
                text.len() + 3 >= cap - 1,
                "cap {cap}: cut more than one character"
            );
        }
        lg_stream_free(s);
    }
}

#[test]
fn out_params_are_written_only_on_success() {
    unsafe {
        let mut c = config();
        c.halt_copies = 1;
        let sentinel = 0x5 as *mut lg_stream;
        let mut s = sentinel;
        assert_eq!(lg_stream_new(&c, &mut s), LG_ERR_CONFIG);
        assert_eq!(s, sentinel);
        let mut p = 0x7 as *mut lg_pool;
        assert_eq!(lg_pool_new(&c, 4, &mut p), LG_ERR_CONFIG);
        assert_eq!(p, 0x7 as *mut lg_pool);
        let mut buf = [0x41 as std::ffi::c_char; 64];
        assert_eq!(
            lg_stream_config_validate(&c, buf.as_mut_ptr(), buf.len()),
            LG_ERR_CONFIG
        );
        let msg = std::ffi::CStr::from_ptr(buf.as_ptr()).to_str().unwrap();
        assert!(msg.contains("halt_copies"), "{msg}");
    }
}

#[test]
fn the_c_path_gives_the_rust_verdicts() {
    unsafe {
        let c = config();
        let mut s = ptr::null_mut();
        assert_eq!(lg_stream_new(&c, &mut s), LG_OK);
        let mut g = loopguard::StreamGuard::new(&loopguard::StreamConfig::default());
        for i in 0..500u32 {
            let id = i % 11 + (i / 200) * 100;
            let mut a = lg_action::LG_ACTION_CONTINUE;
            assert_eq!(lg_stream_push_token(s, id, ptr::null(), 0, &mut a), LG_OK);
            let r = g.push_token(id, None);
            // The C values are lg_action's, which only append: not the Rust discriminants.
            let want = match r.action {
                loopguard::Action::Continue => lg_action::LG_ACTION_CONTINUE,
                loopguard::Action::Warn => lg_action::LG_ACTION_WARN,
                loopguard::Action::Block => lg_action::LG_ACTION_BLOCK,
                loopguard::Action::EndReasoning => lg_action::LG_ACTION_END_REASONING,
                loopguard::Action::Halt => lg_action::LG_ACTION_HALT,
            };
            assert_eq!(a, want);
            let mut v: lg_verdict = std::mem::zeroed();
            v.struct_size = std::mem::size_of::<lg_verdict>();
            assert_eq!(lg_stream_verdict(s, &mut v), LG_OK);
            assert_eq!((v.period, v.onset, v.at), (r.period, r.onset, r.at));
        }
        lg_stream_free(s);
    }
}

fn agent_config() -> lg_agent_config {
    let mut c = std::mem::MaybeUninit::<lg_agent_config>::uninit();
    assert_eq!(unsafe { lg_agent_config_init(c.as_mut_ptr()) }, LG_OK);
    unsafe { c.assume_init() }
}

#[test]
fn agent_functions_reject_null_and_misuse() {
    unsafe {
        let mut a = lg_action::LG_ACTION_CONTINUE;
        let null = ptr::null_mut::<lg_agent>();
        let t = b"tool";
        assert_eq!(
            lg_agent_call(null, t.as_ptr(), 4, ptr::null(), 0, &mut a),
            LG_ERR_NULL
        );
        assert_eq!(
            lg_agent_result(null, ptr::null(), 0, ptr::null(), 0, &mut a),
            LG_ERR_NULL
        );
        assert_eq!(lg_agent_message(null, ptr::null(), 0, &mut a), LG_ERR_NULL);
        assert_eq!(lg_agent_user(null, ptr::null(), 0, &mut a), LG_ERR_NULL);
        assert_eq!(lg_agent_state(null, 1, &mut a), LG_ERR_NULL);
        assert_eq!(lg_agent_reset(null), LG_ERR_NULL);
        let mut n = 0usize;
        assert_eq!(lg_agent_memory_usage(null, &mut n), LG_ERR_NULL);
        assert!(!lg_agent_last_error(null).is_null());
        lg_agent_free(null);

        let cfg = agent_config();
        let mut h = ptr::null_mut();
        assert_eq!(lg_agent_new(&cfg, ptr::null_mut()), LG_ERR_NULL);
        assert_eq!(lg_agent_new(&cfg, &mut h), LG_OK);
        // A NULL buffer with a length is an error and leaves `a` alone.
        a = lg_action::LG_ACTION_HALT;
        assert_eq!(
            lg_agent_call(h, ptr::null(), 3, t.as_ptr(), 4, &mut a),
            LG_ERR_NULL
        );
        assert_eq!(a, lg_action::LG_ACTION_HALT);
        assert!(!std::ffi::CStr::from_ptr(lg_agent_last_error(h)).is_empty());
        // Invalid UTF-8 names and arguments are accepted.
        let bad = [0xffu8, 0xfe, 0x80];
        assert_eq!(
            lg_agent_call(h, bad.as_ptr(), 3, bad.as_ptr(), 3, &mut a),
            LG_OK
        );
        assert_eq!(a, lg_action::LG_ACTION_CONTINUE);
        let mut v: lg_agent_verdict = std::mem::zeroed();
        v.struct_size = std::mem::size_of::<lg_agent_verdict>();
        assert_eq!(lg_agent_get_verdict(h, &mut v), LG_OK);
        assert_eq!(v.args_invalid, 1);
        assert_eq!(
            lg_agent_describe(h, 7, ptr::null_mut(), 0, &mut n),
            LG_ERR_INVALID_ARGUMENT
        );
        assert_eq!(lg_agent_describe(h, 0, ptr::null_mut(), 0, &mut n), LG_OK);
        assert_eq!(lg_agent_set_enabled(h, 0), LG_OK);
        lg_agent_free(h);

        // Out-of-range config values are config errors.
        let mut bad_cfg = agent_config();
        bad_cfg.preset = 99;
        assert_eq!(lg_agent_new(&bad_cfg, &mut h), LG_ERR_CONFIG);
        let mut bad_cfg = agent_config();
        bad_cfg.near_similarity = f32::NAN;
        assert_eq!(lg_agent_new(&bad_cfg, &mut h), LG_ERR_CONFIG);
        let mut bad_cfg = agent_config();
        bad_cfg.tools_len = 3;
        assert_eq!(lg_agent_new(&bad_cfg, &mut h), LG_ERR_CONFIG);
    }
}

#[test]
fn the_agent_c_path_gives_the_rust_verdicts() {
    use loopguard::{AgentConfig, AgentGuard};
    let calls = [
        ("read", r#"{"p":"a"}"#, "x", None),
        ("read", r#"{"p":"a"}"#, "x", None),
        ("build", "{}", "", Some("error E0308 at src/a.rs:10")),
        ("read", r#"{"p":"a"}"#, "x", None),
        ("build", "{}", "", Some("error E0308 at src/b.rs:12")),
        (
            "build",
            r#"{"v":1}"#,
            "",
            Some("error E0308 at src/c.rs:99"),
        ),
        ("read", r#"{"p":"a"}"#, "x", None),
        ("build", r#"{"v":2}"#, "", Some("error E0308 at src/d.rs:1")),
        ("build", r#"{"v":3}"#, "", None),
    ];
    let mut g = AgentGuard::new(&AgentConfig::default());
    let cfg = agent_config();
    unsafe {
        let mut h = ptr::null_mut();
        assert_eq!(lg_agent_new(&cfg, &mut h), LG_OK);
        for (tool, args, out, err) in calls {
            let want = g.call(tool, args.as_bytes()).action;
            let mut a = lg_action::LG_ACTION_CONTINUE;
            let (t, ar) = (tool.as_bytes(), args.as_bytes());
            assert_eq!(
                lg_agent_call(h, t.as_ptr(), t.len(), ar.as_ptr(), ar.len(), &mut a),
                LG_OK
            );
            assert_eq!(a as u8, want as u8, "{tool} {args}");
            let want = g
                .result(Some(out.as_bytes()), err.map(str::as_bytes))
                .action;
            let (ep, el) = err.map_or((ptr::null(), 0), |e| (e.as_ptr(), e.len()));
            assert_eq!(
                lg_agent_result(h, out.as_ptr(), out.len(), ep, el, &mut a),
                LG_OK
            );
            assert_eq!(a as u8, want as u8, "result of {tool}");
        }
        lg_agent_free(h);
    }
    assert!(g.stats().detections > 0);
}
