//! The `extern "C"` functions called from Rust with NULL pointers, bad values and misuse.

use std::ptr;

use loopguard::ffi::lg_status::*;
use loopguard::ffi::*;

fn config() -> lg_stream_config {
    let mut c = std::mem::MaybeUninit::<lg_stream_config>::uninit();
    assert_eq!(unsafe { lg_stream_config_init(c.as_mut_ptr()) }, LG_OK);
    unsafe { c.assume_init() }
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
            assert_eq!(a as u8, r.action as u8);
            let mut v: lg_verdict = std::mem::zeroed();
            v.struct_size = std::mem::size_of::<lg_verdict>();
            assert_eq!(lg_stream_verdict(s, &mut v), LG_OK);
            assert_eq!((v.period, v.onset, v.at), (r.period, r.onset, r.at));
        }
        lg_stream_free(s);
    }
}
