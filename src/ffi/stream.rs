//! `lg_stream`: one guarded sequence.

use std::cell::UnsafeCell;
use std::ffi::{c_char, c_void};

use super::*;
use crate::StreamGuard;

/// One generated sequence's guard. Opaque: create with `lg_stream_new`, free with
/// `lg_stream_free`. Safe to move between threads, not for concurrent use.
pub struct lg_stream {
    guard: UnsafeCell<StreamGuard>,
    state: HandleState,
}

impl lg_stream {
    /// Runs `f` on the guard inside the handle's boundary.
    ///
    /// # Safety
    /// `s` must be NULL or a live handle from `lg_stream_new` / `lg_stream_clone`.
    unsafe fn with<R>(
        s: *const lg_stream,
        f: impl FnOnce(&mut StreamGuard) -> Result<R, Fail>,
    ) -> Result<R, lg_status> {
        let h = s.as_ref().ok_or(LG_ERR_NULL)?;
        // SAFETY: `run` marks the handle busy, so no other call on it holds this reference.
        h.state.run(|| f(&mut *h.guard.get()))
    }

    /// [`with`](Self::with) for a call that returns only a status.
    ///
    /// # Safety
    /// As for `with`.
    unsafe fn call(
        s: *const lg_stream,
        f: impl FnOnce(&mut StreamGuard) -> Result<(), Fail>,
    ) -> lg_status {
        status(Self::with(s, f))
    }

    /// Pushes with `push`, which calls the [`Changed`] it is given with the guard and the
    /// action before the push when the push changed it: the callbacks, fired while the handle
    /// is still busy (so they cannot re-enter it). The per-token path: one panic boundary, one
    /// flag test, no struct conversion unless a callback runs.
    #[inline(always)]
    unsafe fn push(
        s: *mut lg_stream,
        out_action: *mut lg_action,
        push: impl FnOnce(&mut StreamGuard, Changed) -> Result<Action, Fail>,
    ) -> lg_status {
        let Some(h) = s.as_ref() else {
            return LG_ERR_NULL;
        };
        if let Err(e) = h.state.enter() {
            return h.state.refuse(e);
        }
        h.state.begin();
        // The status is decided inside the boundary, so that only a small integer crosses it.
        let r = catch_unwind(AssertUnwindSafe(|| {
            let g = &mut *h.guard.get();
            match push(g, Changed(&h.state)) {
                Ok(action) => {
                    if !out_action.is_null() {
                        *out_action = action_to_c(action);
                    }
                    LG_OK
                }
                Err(fail) => h.state.fail(fail),
            }
        }));
        h.state.end(r.is_err());
        r.unwrap_or(LG_ERR_PANIC)
    }
}

/// What a push calls when it changed the action: the handle's callbacks. One pointer, passed
/// by value, so the per-token path keeps nothing on the stack for it.
#[derive(Clone, Copy)]
struct Changed<'a>(&'a HandleState);

impl Changed<'_> {
    fn call(self, g: &StreamGuard, before: Action) {
        self.0.callbacks.get().fire_cold(0, before, g);
    }
}

/// Runs `push` on `g` for [`lg_stream::push`], and `changed` when it changed the action.
#[inline(always)]
fn then_changed(
    g: &mut StreamGuard,
    changed: Changed,
    push: impl FnOnce(&mut StreamGuard) -> Result<Verdict, Fail>,
) -> Result<Action, Fail> {
    let before = g.verdict().action;
    let action = push(g)?.action;
    if action != before {
        changed.call(g, before);
    }
    Ok(action)
}

/// Creates a guard for one sequence from `*config` (copied), into `*out`. `LG_ERR_CONFIG` for
/// an invalid config (`lg_stream_config_validate` says why), `LG_ERR_NULL` for NULL pointers.
/// Allocates about 16 KiB once; free it with `lg_stream_free`.
#[no_mangle]
pub unsafe extern "C" fn lg_stream_new(
    config: *const lg_stream_config,
    out: *mut *mut lg_stream,
) -> lg_status {
    boundary(|| {
        if config.is_null() || out.is_null() {
            return LG_ERR_NULL;
        }
        match config_from_c(config) {
            Ok(c) => {
                *out = Box::into_raw(Box::new(lg_stream {
                    guard: UnsafeCell::new(StreamGuard::new(&c)),
                    state: HandleState::new(),
                }));
                LG_OK
            }
            Err(fail) => fail.status,
        }
    })
}

/// Frees a guard. NULL does nothing, and so does a call from the guard's own callback.
#[no_mangle]
pub unsafe extern "C" fn lg_stream_free(stream: *mut lg_stream) {
    free_handle(stream, |h| &h.state);
}

/// Pushes one generated token id with its text piece (`piece` may be NULL with `piece_len` 0
/// for no piece; a non-NULL empty piece is an empty piece). Writes the action into
/// `*out_action` when it is not NULL; the details are in `lg_stream_verdict`. Calls the warn
/// callback when the stream starts warning and the halt callback when it halts. O(1) per token
/// plus O(piece_len), never allocates. After a halt every push answers halt until reset.
#[no_mangle]
pub unsafe extern "C" fn lg_stream_push_token(
    stream: *mut lg_stream,
    token: u32,
    piece: *const u8,
    piece_len: usize,
    out_action: *mut lg_action,
) -> lg_status {
    // No piece (NULL, length 0), one test: the per-token path of a server without pieces, a
    // push that cannot fail.
    if (piece as usize | piece_len) == 0 {
        return lg_stream::push(stream, out_action, |g, changed| {
            Ok(g.push_id_then(token, |g, before| changed.call(g, before)))
        });
    }
    lg_stream::push(stream, out_action, |g, changed| {
        then_changed(g, changed, |g| {
            let piece = arg(piece, piece_len, "piece", "piece_len")?;
            Ok(g.push_token(token, Some(piece)))
        })
    })
}

/// Pushes a chunk of text, for streams without token ids (any chunking, any bytes). Writes the
/// strongest action reached in the chunk into `*out_action` when not NULL. O(text_len), never
/// allocates; a halt stops reading the chunk.
#[no_mangle]
pub unsafe extern "C" fn lg_stream_push_text(
    stream: *mut lg_stream,
    text: *const u8,
    text_len: usize,
    out_action: *mut lg_action,
) -> lg_status {
    lg_stream::push(stream, out_action, |g, changed| {
        then_changed(g, changed, |g| {
            Ok(g.push_text(arg(text, text_len, "text", "text_len")?))
        })
    })
}

/// Ends a text-only stream (pushes the last word, which no space followed). O(1).
#[no_mangle]
pub unsafe extern "C" fn lg_stream_finish_text(
    stream: *mut lg_stream,
    out_action: *mut lg_action,
) -> lg_status {
    lg_stream::push(stream, out_action, |g, changed| {
        then_changed(g, changed, |g| Ok(g.finish_text()))
    })
}

/// Forgets the sequence, as if new (a halt included). Never allocates.
#[no_mangle]
pub unsafe extern "C" fn lg_stream_reset(stream: *mut lg_stream) -> lg_status {
    boundary(|| {
        lg_stream::call(stream, |g| {
            g.reset();
            Ok(())
        })
    })
}

/// Marks the guard's state for speculative decoding: pushes from now on can be taken back with
/// `lg_stream_rollback` until `lg_stream_commit` (or a reset). A checkpoint already held is
/// replaced. The first checkpoint of a guard allocates what drafting needs (about 90 KiB: a
/// copy of its scalars before each of the first `LG_NOTED_PUSHES` pushes, the journal of
/// their writes, a copy of the guard and a log of `LG_MAX_DRAFTS` pushes and `LG_DRAFT_BYTES`
/// bytes); later ones allocate and copy nothing.
#[no_mangle]
pub unsafe extern "C" fn lg_stream_checkpoint(stream: *mut lg_stream) -> lg_status {
    boundary(|| {
        lg_stream::call(stream, |g| {
            g.checkpoint();
            Ok(())
        })
    })
}

/// Takes back the last `n` pushes since the checkpoint (the drafts the verifier rejected):
/// the guard then answers exactly as one fed only the pushes before them. The checkpoint
/// stays. Writes the action of the last push kept into `*out_action` when not NULL; no
/// callback fires. `LG_ERR_INVALID_ARGUMENT`, naming `n`, with no checkpoint, with more pushes
/// asked back than were made, or when the pushes that would stay are not all held (more than
/// `LG_MAX_DRAFTS` or `LG_DRAFT_BYTES` since the checkpoint); the guard is then unchanged.
/// Among the first `LG_NOTED_PUSHES` pushes, costs what the rolled-back pushes wrote (never the
/// kept ones); past them, a copy of the guard and a push per kept push past them. Never
/// allocates.
#[no_mangle]
pub unsafe extern "C" fn lg_stream_rollback(
    stream: *mut lg_stream,
    n: usize,
    out_action: *mut lg_action,
) -> lg_status {
    boundary(|| {
        lg_stream::call(stream, |g| {
            let v = g.rollback(n).map_err(rollback_fail)?;
            if !out_action.is_null() {
                *out_action = action_to_c(v.action);
            }
            Ok(())
        })
    })
}

/// Ends the checkpoint and keeps every push since. O(1); nothing without a checkpoint.
#[no_mangle]
pub unsafe extern "C" fn lg_stream_commit(stream: *mut lg_stream) -> lg_status {
    boundary(|| {
        lg_stream::call(stream, |g| {
            g.commit();
            Ok(())
        })
    })
}

/// Copies the whole state of a guard into a new one (`*out`), for forked or resumed sequences.
/// Callbacks are not copied. Allocates the new guard; free it with `lg_stream_free`.
#[no_mangle]
pub unsafe extern "C" fn lg_stream_clone(
    stream: *const lg_stream,
    out: *mut *mut lg_stream,
) -> lg_status {
    boundary(|| {
        lg_stream::call(stream, |g| {
            let out = out_arg(out, "out")?;
            *out = Box::into_raw(Box::new(lg_stream {
                guard: UnsafeCell::new(g.clone()),
                state: HandleState::new(),
            }));
            Ok(())
        })
    })
}

/// Writes the last push's verdict into `*out` (set `out->struct_size` first). O(1).
#[no_mangle]
pub unsafe extern "C" fn lg_stream_verdict(
    stream: *const lg_stream,
    out: *mut lg_verdict,
) -> lg_status {
    boundary(|| {
        lg_stream::call(stream, |g| {
            write_sized(out, verdict_to_c(&g.verdict()), "out", "lg_verdict")
        })
    })
}

/// Points `*out_text` at the repeated block of the last warning or halt (at most 256 bytes,
/// not NUL-terminated, possibly cut inside a UTF-8 character) and writes its length. Valid
/// until the next call that changes the guard (push, reset, free). O(1).
#[no_mangle]
pub unsafe extern "C" fn lg_stream_repeated_text(
    stream: *const lg_stream,
    out_text: *mut *const u8,
    out_len: *mut usize,
) -> lg_status {
    boundary(|| {
        lg_stream::call(stream, |g| {
            let (out_text, out_len) =
                (out_arg(out_text, "out_text")?, out_arg(out_len, "out_len")?);
            let t = g.repeated_text();
            *out_text = t.as_ptr();
            *out_len = t.len();
            Ok(())
        })
    })
}

/// Describes the last verdict into `buf` as a NUL-terminated string (truncated to fit, like
/// `snprintf`) at a verbosity (an `lg_verbosity`), and writes the full length it needs into
/// `*out_len` when not NULL. Allocates while it runs; not for the per-token path.
#[no_mangle]
pub unsafe extern "C" fn lg_stream_describe(
    stream: *const lg_stream,
    verbosity: i32,
    buf: *mut c_char,
    buf_len: usize,
    out_len: *mut usize,
) -> lg_status {
    boundary(|| {
        lg_stream::call(stream, |g| {
            describe_into(verbosity, buf, buf_len, out_len, |v, s| g.describe(v, s))
        })
    })
}

/// Writes the bytes the guard owns into `*out` (constant for its life). O(1).
#[no_mangle]
pub unsafe extern "C" fn lg_stream_memory_usage(
    stream: *const lg_stream,
    out: *mut usize,
) -> lg_status {
    boundary(|| {
        lg_stream::call(stream, |g| {
            *out_arg(out, "out")? = g.memory_usage();
            Ok(())
        })
    })
}

/// Writes the stream's counters into `*out` (set `out->struct_size` first). O(1).
#[no_mangle]
pub unsafe extern "C" fn lg_stream_stats(
    stream: *const lg_stream,
    out: *mut lg_stats,
) -> lg_status {
    boundary(|| {
        lg_stream::call(stream, |g| {
            write_sized(out, stats_to_c(&g.stats()), "out", "lg_stats")
        })
    })
}

pub(crate) fn stats_to_c(s: &crate::StreamStats) -> lg_stats {
    lg_stats {
        struct_size: std::mem::size_of::<lg_stats>(),
        symbols: s.symbols,
        bytes: s.bytes,
        warnings: s.warnings,
        first_warn_at: s.first_warn_at.unwrap_or(LG_UNKNOWN),
        halted_at: s.halted_at.unwrap_or(LG_UNKNOWN),
    }
}

/// Sets the callbacks called from pushes on this guard (either may be NULL) and the user data
/// they receive. See `lg_verdict_callback` for the rules. O(1).
#[no_mangle]
pub unsafe extern "C" fn lg_stream_set_callbacks(
    stream: *mut lg_stream,
    on_warn: lg_verdict_callback,
    on_halt: lg_verdict_callback,
    user_data: *mut c_void,
) -> lg_status {
    boundary(|| match stream.as_ref() {
        Some(h) => h.state.set_callbacks(on_warn, on_halt, user_data),
        None => LG_ERR_NULL,
    })
}

/// Why the last failed call on this handle failed, naming the argument at fault, NUL-terminated;
/// "" when none failed. Never NULL (a NULL handle gives a static message). Valid until the
/// next call on the handle.
#[no_mangle]
pub unsafe extern "C" fn lg_stream_last_error(stream: *const lg_stream) -> *const c_char {
    match stream.as_ref() {
        None => c"NULL lg_stream handle".as_ptr(),
        Some(h) => h.state.last_error(),
    }
}
