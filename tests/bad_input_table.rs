//! The README's table of bad input through the C ABI, made true: every row is a call made
//! here, and the status and message in the table are the ones the call gave. Each row also
//! checks that the message names the argument at fault. The README must hold exactly the table
//! this test renders (`LOOPGUARD_UPDATE_README=1 cargo test --test bad_input_table` rewrites
//! it).
#![allow(unsafe_code)]

mod tools;

use std::ffi::{c_char, c_void, CStr};
use std::ptr::{null, null_mut};
use std::sync::Mutex;

use loopguard::ffi::*;

/// One bad input: what the caller did, what came back, and the word the message must contain.
struct Row {
    call: &'static str,
    status: lg_status,
    message: String,
    names: &'static str,
}

fn text(p: *const c_char) -> String {
    // SAFETY: the library returns NUL-terminated strings.
    unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
}

fn status_name(s: lg_status) -> String {
    format!("{s:?}")
}

unsafe fn stream() -> *mut lg_stream {
    let mut c = std::mem::zeroed::<lg_stream_config>();
    assert_eq!(lg_stream_config_init(&mut c), lg_status::LG_OK);
    let mut s = null_mut();
    assert_eq!(lg_stream_new(&c, &mut s), lg_status::LG_OK);
    s
}

unsafe fn agent() -> *mut lg_agent {
    let mut c = std::mem::zeroed::<lg_agent_config>();
    assert_eq!(lg_agent_config_init(&mut c), lg_status::LG_OK);
    let mut a = null_mut();
    assert_eq!(lg_agent_new(&c, &mut a), lg_status::LG_OK);
    a
}

/// A call on a fresh handle `h` and the message its `last_error` then gives; `h` is freed.
unsafe fn on<H>(
    call: &'static str,
    names: &'static str,
    h: *mut H,
    last_error: unsafe extern "C" fn(*const H) -> *const c_char,
    free: unsafe extern "C" fn(*mut H),
    f: impl FnOnce(*mut H) -> lg_status,
) -> Row {
    let status = f(h);
    let message = text(last_error(h));
    free(h);
    Row {
        call,
        status,
        message,
        names,
    }
}

unsafe fn on_stream(
    call: &'static str,
    names: &'static str,
    f: impl FnOnce(*mut lg_stream) -> lg_status,
) -> Row {
    on(
        call,
        names,
        stream(),
        lg_stream_last_error,
        lg_stream_free,
        f,
    )
}

unsafe fn on_agent(
    call: &'static str,
    names: &'static str,
    f: impl FnOnce(*mut lg_agent) -> lg_status,
) -> Row {
    on(call, names, agent(), lg_agent_last_error, lg_agent_free, f)
}

unsafe fn on_pool(
    call: &'static str,
    names: &'static str,
    f: impl FnOnce(*mut lg_pool) -> lg_status,
) -> Row {
    let mut c = std::mem::zeroed::<lg_stream_config>();
    lg_stream_config_init(&mut c);
    let mut p = null_mut();
    assert_eq!(lg_pool_new(&c, 1, &mut p), lg_status::LG_OK);
    on(call, names, p, lg_pool_last_error, lg_pool_free, f)
}

/// A stream config changed by `f`, checked by `lg_stream_config_validate`.
unsafe fn stream_config(
    call: &'static str,
    names: &'static str,
    f: impl FnOnce(&mut lg_stream_config),
) -> Row {
    let mut c = std::mem::zeroed::<lg_stream_config>();
    lg_stream_config_init(&mut c);
    f(&mut c);
    let mut buf = [0 as c_char; 256];
    let status = lg_stream_config_validate(&c, buf.as_mut_ptr(), buf.len());
    // `lg_stream_new` gives the same status for the same config.
    let mut s = null_mut();
    assert_eq!(lg_stream_new(&c, &mut s), status, "{call}");
    Row {
        call,
        status,
        message: text(buf.as_ptr()),
        names,
    }
}

unsafe fn agent_config(
    call: &'static str,
    names: &'static str,
    f: impl FnOnce(&mut lg_agent_config),
) -> Row {
    let mut c = std::mem::zeroed::<lg_agent_config>();
    lg_agent_config_init(&mut c);
    f(&mut c);
    let mut buf = [0 as c_char; 256];
    let status = lg_agent_config_validate(&c, buf.as_mut_ptr(), buf.len());
    let mut a = null_mut();
    assert_eq!(lg_agent_new(&c, &mut a), status, "{call}");
    Row {
        call,
        status,
        message: text(buf.as_ptr()),
        names,
    }
}

/// A push from the stream's own halt callback: the status it got and the message then.
static REENTRY: Mutex<Option<(lg_status, String)>> = Mutex::new(None);

unsafe extern "C" fn push_again(user: *mut c_void, _slot: u64, _v: *const lg_verdict) {
    let s = user as *mut lg_stream;
    let status = lg_stream_push_token(s, 1, null(), 0, null_mut());
    *REENTRY.lock().unwrap() = Some((status, text(lg_stream_last_error(s))));
}

fn rows() -> Vec<Row> {
    const HUGE: usize = usize::MAX;
    let mut buf = [0 as c_char; 64];
    let b = buf.as_mut_ptr();
    let x = b"x".as_ptr();
    // SAFETY: each call passes what its row says; the bad pointers are NULL or never read.
    unsafe {
        vec![
            on_stream("`lg_stream_push_token(s, 1, NULL, 5, &a)`", "piece", |s| {
                lg_stream_push_token(s, 1, null(), 5, null_mut())
            }),
            on_stream(
                "`lg_stream_push_text(s, \"x\", SIZE_MAX, &a)`",
                "text_len",
                |s| lg_stream_push_text(s, x, HUGE, null_mut()),
            ),
            on_stream(
                "`lg_stream_describe(s, LG_VERBOSITY_FULL, buf, (size_t)-1, NULL)`",
                "buf_len",
                |s| lg_stream_describe(s, 2, b, HUGE, null_mut()),
            ),
            on_stream(
                "`lg_stream_describe(s, 7, buf, 64, NULL)`",
                "verbosity",
                |s| lg_stream_describe(s, 7, b, 64, null_mut()),
            ),
            on_stream("`lg_stream_verdict(s, NULL)`", "out", |s| {
                lg_stream_verdict(s, null_mut())
            }),
            on_stream(
                "`lg_stream_verdict(s, &v)` with `v.struct_size = 0`",
                "struct_size",
                |s| {
                    let mut v = std::mem::zeroed::<lg_verdict>();
                    lg_stream_verdict(s, &mut v)
                },
            ),
            on_stream("`lg_stream_repeated_text(s, NULL, &n)`", "out_text", |s| {
                let mut n = 0;
                lg_stream_repeated_text(s, null_mut(), &mut n)
            }),
            on_stream("`lg_stream_clone(s, NULL)`", "out", |s| {
                lg_stream_clone(s, null_mut())
            }),
            on_stream(
                "`lg_stream_rollback(s, 3, &a)` after a checkpoint and two pushes",
                "n",
                |s| {
                    lg_stream_checkpoint(s);
                    lg_stream_push_token(s, 1, null(), 0, null_mut());
                    lg_stream_push_token(s, 2, null(), 0, null_mut());
                    lg_stream_rollback(s, 3, null_mut())
                },
            ),
            on_stream(
                "`lg_stream_rollback(s, 1, &a)` without a checkpoint",
                "n",
                |s| lg_stream_rollback(s, 1, null_mut()),
            ),
            on_stream("a push from the stream's own callback", "callback", |s| {
                lg_stream_set_callbacks(s, None, Some(push_again), s as *mut c_void);
                for i in 0..200u32 {
                    lg_stream_push_token(s, i % 4, null(), 0, null_mut());
                }
                let (status, message) = REENTRY
                    .lock()
                    .unwrap()
                    .take()
                    .expect("the halt callback ran");
                // The table shows what the callback saw; the handle keeps the message.
                assert_eq!(text(lg_stream_last_error(s)), message);
                status
            }),
            Row {
                call: "any call with a NULL handle, then `lg_stream_last_error(NULL)`",
                status: lg_stream_reset(null_mut()),
                message: text(lg_stream_last_error(null())),
                names: "NULL",
            },
            stream_config(
                "`lg_stream_config_validate` with `struct_size = 0`",
                "struct_size",
                |c| c.struct_size = 0,
            ),
            stream_config("`near_warn = NAN`", "near_warn", |c| c.near_warn = f32::NAN),
            stream_config("`halt_copies = 1`", "halt_copies", |c| c.halt_copies = 1),
            stream_config("`window = 1000`", "window", |c| c.window = 1000),
            stream_config(
                "`breakers = {\"x\", SIZE_MAX}`, `breakers_len = 1`",
                "breakers[0].len",
                |c| {
                    let bad = Box::leak(Box::new([lg_str {
                        ptr: b"x".as_ptr() as *const c_char,
                        len: usize::MAX,
                    }]));
                    c.breakers = bad.as_ptr();
                    c.breakers_len = 1;
                },
            ),
            stream_config("`breakers = NULL`, `breakers_len = 3`", "breakers", |c| {
                c.breakers_len = 3
            }),
            stream_config(
                "`exempt = {\"\\xff\", 1}`, `exempt_len = 1`",
                "exempt[0]",
                |c| {
                    let bad = Box::leak(Box::new([lg_str {
                        ptr: b"\xff".as_ptr() as *const c_char,
                        len: 1,
                    }]));
                    c.exempt = bad.as_ptr();
                    c.exempt_len = 1;
                },
            ),
            on_pool(
                "`lg_pool_push(p, slots, tokens, 2, out)` with a slot never added",
                "slot",
                |p| {
                    let (slots, toks, mut out) = ([7u64, 8], [1u32, 2], [0u8; 2]);
                    lg_pool_push(p, slots.as_ptr(), toks.as_ptr(), 2, out.as_mut_ptr())
                },
            ),
            on_pool("`lg_pool_push(p, NULL, tokens, 2, out)`", "slots", |p| {
                let (toks, mut out) = ([1u32, 2], [0u8; 2]);
                lg_pool_push(p, null(), toks.as_ptr(), 2, out.as_mut_ptr())
            }),
            on_pool("`lg_pool_add(p, &id)` on a full pool", "full", |p| {
                let mut id = 0;
                lg_pool_add(p, &mut id);
                lg_pool_add(p, &mut id)
            }),
            on_agent("`lg_agent_call(a, NULL, 3, args, n, &act)`", "tool", |a| {
                lg_agent_call(a, null(), 3, x, 1, null_mut())
            }),
            on_agent(
                "`lg_agent_result(a, NULL, 2, NULL, 0, &act)`",
                "output",
                |a| lg_agent_result(a, null(), 2, null(), 0, null_mut()),
            ),
            on_agent("`lg_agent_evidence(a, out, SIZE_MAX, &n)`", "cap", |a| {
                let (mut out, mut n) = ([0u64; 4], 0);
                lg_agent_evidence(a, out.as_mut_ptr(), HUGE, &mut n)
            }),
            on_agent("`lg_agent_evidence(a, out, 4, NULL)`", "out_len", |a| {
                let mut out = [0u64; 4];
                lg_agent_evidence(a, out.as_mut_ptr(), 4, null_mut())
            }),
            agent_config(
                "`lg_agent_config_validate` with `struct_size = 0`",
                "struct_size",
                |c| c.struct_size = 0,
            ),
            agent_config("`message_text_span = 70000`", "message_text_span", |c| {
                c.message_text_span = 70000
            }),
            agent_config(
                "`ignored_fields = NULL`, `ignored_fields_len = 5`",
                "ignored_fields",
                |c| c.ignored_fields_len = 5,
            ),
            agent_config("`near_similarity = 2`", "near_similarity", |c| {
                c.near_similarity = 2.0
            }),
        ]
    }
}

fn render(rows: &[Row]) -> String {
    let mut out = String::from("| Bad input | Status | Message |\n|---|---|---|\n");
    for r in rows {
        out.push_str(&format!(
            "| {} | `{}` | {} |\n",
            r.call,
            status_name(r.status),
            if r.message.is_empty() {
                "(none)".to_string()
            } else {
                format!("`{}`", r.message.replace('|', "\\|"))
            }
        ));
    }
    out
}

#[test]
fn every_bad_input_names_its_argument_and_the_readme_shows_it() {
    let rows = rows();
    for r in &rows {
        assert_ne!(r.status, lg_status::LG_OK, "{}", r.call);
        assert!(
            r.message.contains(r.names),
            "{}: the message {:?} does not name {:?}",
            r.call,
            r.message,
            r.names
        );
    }
    let table = render(&rows);
    let path = tools::root().join("README.md");
    let readme = std::fs::read_to_string(&path).unwrap();
    let (begin, end) = (
        "<!-- bad-input-table: generated by tests/bad_input_table.rs -->\n",
        "<!-- end of bad-input-table -->",
    );
    let start = readme
        .find(begin)
        .expect("the README has the table's markers")
        + begin.len();
    let stop = readme[start..].find(end).expect("the end marker") + start;
    if readme[start..stop] != table {
        if std::env::var_os("LOOPGUARD_UPDATE_README").is_some() {
            let new = format!("{}{table}{}", &readme[..start], &readme[stop..]);
            std::fs::write(&path, new).unwrap();
        } else {
            panic!(
                "the README's bad-input table is stale: rerun with LOOPGUARD_UPDATE_README=1\n{table}"
            );
        }
    }
}
