//! The C ABI: the only module with `extern "C"`. `include/loopguard.h` is generated from it by
//! cbindgen (`cbindgen.toml`).
//!
//! Rules every function follows:
//! - a fallible call returns an [`lg_status`]: 0 is `LG_OK`; out-params are written only on
//!   `LG_OK`;
//! - every body runs inside one panic boundary: a panic becomes `LG_ERR_PANIC` and poisons the
//!   handle, which then answers `LG_ERR_POISONED` until freed;
//! - a NULL handle is `LG_ERR_NULL`; a NULL buffer with a non-zero length is `LG_ERR_NULL`, and a
//!   NULL buffer with length 0 is empty; `_free(NULL)` does nothing;
//! - a handle is safe to move between threads, not for concurrent use. Calling back into the
//!   same handle from one of its callbacks answers `LG_ERR_REENTRANT`.
//!
//! # Safety
//!
//! One contract covers every `unsafe extern "C"` function here, so it is stated once rather
//! than on each: every pointer is NULL or valid for the length its argument says (an element
//! for out-params and structs, `struct_size` bytes for versioned structs); a handle comes from
//! the matching `_new` (or `lg_stream_clone`) and has not been freed; a handle is not used by
//! two threads at once.

#![allow(non_camel_case_types)]
#![allow(unsafe_code)]
#![allow(clippy::missing_safety_doc)]

use std::borrow::Cow;
use std::cell::{Cell, RefCell};
use std::ffi::{c_char, c_void, CStr, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};

use crate::{Action, LoopKind, Preset, StreamGuard, StreamSettings, Unit, Verbosity, Verdict};

mod agent;
mod pool;
mod stream;

pub use agent::*;
pub use pool::*;
pub use stream::*;

/// Major version of the library and header.
pub const LG_VERSION_MAJOR: u32 = 0;
/// Minor version of the library and header.
pub const LG_VERSION_MINOR: u32 = 1;
/// Patch version of the library and header.
pub const LG_VERSION_PATCH: u32 = 0;
/// `lg_verdict.onset_byte`, `lg_stats.first_warn_at` and `halted_at` when unknown.
pub const LG_UNKNOWN: u64 = u64::MAX;
/// Pushes after a checkpoint that a rollback can keep (see `lg_stream_checkpoint`).
pub const LG_MAX_DRAFTS: usize = 64;
/// Bytes of pieces and text after a checkpoint that a rollback can keep.
pub const LG_DRAFT_BYTES: usize = 4096;
/// Pushes after a checkpoint among which a rollback costs only what the rolled-back pushes
/// wrote (past them, a copy of the guard and the kept pushes read again).
pub const LG_NOTED_PUSHES: usize = 16;
/// Loops an agent guard's loop memory holds (see `lg_agent_memory_import`).
pub const LG_MAX_MEMORY: usize = 256;
/// Bytes of an exported loop memory at most: a buffer this large always fits one.
pub const LG_MAX_MEMORY_BYTES: usize = 3344;
// The C constants are the Rust API's, written out for cbindgen.
const _: () = assert!(
    LG_MAX_DRAFTS == crate::MAX_DRAFTS
        && LG_DRAFT_BYTES == crate::DRAFT_BYTES
        && LG_NOTED_PUSHES == crate::NOTED_PUSHES
);
const _: () =
    assert!(LG_MAX_MEMORY == crate::MAX_MEMORY && LG_MAX_MEMORY_BYTES == crate::MAX_MEMORY_BYTES);

/// What a call returned. Values are only ever appended.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum lg_status {
    /// Success.
    LG_OK = 0,
    /// A required pointer was NULL (or a NULL buffer came with a non-zero length).
    LG_ERR_NULL = 1,
    /// An argument was out of range (verbosity, preset, struct_size too small, a buffer length
    /// over `PTRDIFF_MAX` bytes).
    LG_ERR_INVALID_ARGUMENT = 2,
    /// The configuration is invalid: `lg_stream_config_validate` says which field.
    LG_ERR_CONFIG = 3,
    /// The library panicked; the handle is poisoned.
    LG_ERR_PANIC = 4,
    /// An earlier panic poisoned this handle: free it.
    LG_ERR_POISONED = 5,
    /// Called from a callback of the same handle.
    LG_ERR_REENTRANT = 6,
    /// The pool slot id is not in use (removed, never added, or from another pool).
    LG_ERR_NO_SLOT = 7,
    /// The pool has no free slot.
    LG_ERR_POOL_FULL = 8,
}
use lg_status::*;

/// What the caller should do with a sequence.
#[repr(u8)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum lg_action {
    /// Nothing looks wrong.
    LG_ACTION_CONTINUE = 0,
    /// First evidence of repetition.
    LG_ACTION_WARN = 1,
    /// Do not run this tool call (agent guard only); the session may go on with another.
    LG_ACTION_BLOCK = 2,
    /// The repetition persists: stop generating. Sticky until reset.
    LG_ACTION_HALT = 3,
    /// The stream loops inside its reasoning: force the configured end marker
    /// (`reasoning_end`) instead of stopping; the guard then watches the answer. Only a guard
    /// configured with a marker answers it; sticky until the marker is pushed.
    LG_ACTION_END_REASONING = 4,
}

/// Which detector produced the evidence.
#[repr(u8)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum lg_kind {
    /// No evidence.
    LG_KIND_NONE = 0,
    /// Back-to-back copies of a block of symbols.
    LG_KIND_EXACT_LOOP = 1,
    /// A long block recurring verbatim far back.
    LG_KIND_LONG_REPEAT = 2,
    /// Copies that vary a little.
    LG_KIND_NEAR_LOOP = 3,
    /// One character or a short unit of bytes repeated.
    LG_KIND_CHAR_RUN = 4,
    /// One word repeated back to back.
    LG_KIND_WORD_STUTTER = 5,
    /// Lines or a block of lines repeated (digits folded).
    LG_KIND_REPEATED_LINES = 6,
    /// Lines (unit: lines) or text (unit: bytes) repeated with a counter that steps every copy.
    LG_KIND_COUNTER_LADDER = 7,
    /// Names that grow, each an earlier one plus a suffix.
    LG_KIND_GROWING_REPEAT = 8,
    /// A block of code lines re-filled sibling after sibling (unit: lines).
    LG_KIND_TEMPLATE_RUNAWAY = 9,
}

/// The unit of `lg_verdict.period` and `span`.
#[repr(u8)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum lg_unit {
    /// Token ids (or words for text-only streams).
    LG_UNIT_SYMBOL = 0,
    /// Bytes of text.
    LG_UNIT_BYTE = 1,
    /// Lines of text.
    LG_UNIT_LINE = 2,
}

/// A named configuration.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum lg_preset {
    /// Halts earlier; more warnings.
    LG_PRESET_STRICT = 0,
    /// The default.
    LG_PRESET_BALANCED = 1,
    /// Halts only long, unambiguous loops.
    LG_PRESET_LENIENT = 2,
}

/// How much `lg_stream_describe` says.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum lg_verbosity {
    /// One short line: `halt: exact_loop period 7 x5.7`.
    LG_VERBOSITY_BRIEF = 0,
    /// One sentence with the repeated text.
    LG_VERBOSITY_SUMMARY = 1,
    /// Every field, one `key: value` a line.
    LG_VERBOSITY_FULL = 2,
}

/// A string given by pointer and length (not NUL-terminated).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct lg_str {
    /// The bytes; may be NULL only when `len` is 0.
    pub ptr: *const c_char,
    /// Their number.
    pub len: usize,
}

/// The answer to a push. Set `struct_size` to `sizeof(lg_verdict)` before passing it: the
/// library writes only the fields that fit, so structs from older headers keep working.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct lg_verdict {
    /// `sizeof(lg_verdict)` as the caller knows it.
    pub struct_size: usize,
    /// An `lg_action`.
    pub action: lg_action,
    /// An `lg_kind`.
    pub kind: lg_kind,
    /// An `lg_unit`: what `period` and `span` count.
    pub unit: lg_unit,
    /// Length of the repeated block.
    pub period: u32,
    /// Copies of the block seen (fractional).
    pub repeats: f32,
    /// Length of the repetitive region.
    pub span: u32,
    /// Index of the first symbol of the first copy.
    pub onset: u64,
    /// Byte offset of the onset in the text, or `LG_UNKNOWN`.
    pub onset_byte: u64,
    /// Index of the symbol whose push produced this verdict.
    pub at: u64,
    /// How sure the guard is, in [0, 1].
    pub confidence: f32,
}

/// Counters of a stream. Set `struct_size` as for `lg_verdict`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct lg_stats {
    /// `sizeof(lg_stats)` as the caller knows it.
    pub struct_size: usize,
    /// Symbols pushed: token ids, or for text-only streams words, digits and line breaks.
    pub symbols: u64,
    /// Bytes of text pushed.
    pub bytes: u64,
    /// Pushes that answered warn.
    pub warnings: u64,
    /// Symbol index of the first warning, or `LG_UNKNOWN`.
    pub first_warn_at: u64,
    /// Symbol index of the halt, or `LG_UNKNOWN`.
    pub halted_at: u64,
}

/// Called synchronously from a push: `slot` is the pool slot (0 for a lone stream) and
/// `verdict` is valid only during the call. It must not call back into the same handle (that
/// answers `LG_ERR_REENTRANT`), must not unwind or longjmp, and should return quickly.
pub type lg_verdict_callback =
    Option<unsafe extern "C" fn(user_data: *mut c_void, slot: u64, verdict: *const lg_verdict)>;

/// Callbacks and their user data, as set by `lg_*_set_callbacks`.
#[derive(Clone, Copy)]
pub(crate) struct Callbacks {
    on_warn: lg_verdict_callback,
    on_halt: lg_verdict_callback,
    user_data: *mut c_void,
}

// The user data is the caller's; moving a handle to another thread moves the promise with it.
unsafe impl Send for Callbacks {}

impl Default for Callbacks {
    fn default() -> Self {
        Callbacks {
            on_warn: None,
            on_halt: None,
            user_data: std::ptr::null_mut(),
        }
    }
}

impl Callbacks {
    /// [`fire`](Self::fire) with the verdict `guard` holds after a push, kept out of the
    /// per-token path (a push that changes the action is rare): the push need not assemble
    /// the verdict for it.
    #[cold]
    #[inline(never)]
    fn fire_cold(&self, slot: u64, before: Action, guard: &StreamGuard) {
        self.fire(slot, before, &guard.verdict());
    }

    /// Calls the callback a transition from `before` to `after` calls for.
    fn fire(&self, slot: u64, before: Action, after: &Verdict) {
        let cb = match after.action {
            // Ending a reasoning section stops the stream as it was going: the halt callback,
            // with the verdict saying which.
            Action::Halt | Action::EndReasoning if before < after.action => self.on_halt,
            Action::Warn if before == Action::Continue => self.on_warn,
            _ => None,
        };
        if let Some(cb) = cb {
            let v = verdict_to_c(after);
            // SAFETY: the caller registered this function for exactly this call.
            unsafe { cb(self.user_data, slot, &v) };
        }
    }
}

/// `HandleState::flags`: a call is running on the handle.
const BUSY: u8 = 1;
/// `HandleState::flags`: a panic poisoned the handle.
const POISONED: u8 = 2;

/// State every handle carries: re-entry and poison flags, the last error, the callbacks.
pub(crate) struct HandleState {
    /// `BUSY` and `POISONED` in one byte, so that the per-token call tests both at once.
    flags: Cell<u8>,
    error: RefCell<CString>,
    callbacks: Cell<Callbacks>,
}

impl HandleState {
    fn new() -> HandleState {
        HandleState {
            flags: Cell::new(0),
            error: RefCell::new(CString::default()),
            callbacks: Cell::new(Callbacks::default()),
        }
    }

    fn set_error(&self, msg: &str) {
        let clean: Vec<u8> = msg.bytes().filter(|&b| b != 0).collect();
        *self.error.borrow_mut() = CString::new(clean).unwrap_or_default();
    }

    /// `lg_*_set_callbacks` for any handle.
    fn set_callbacks(
        &self,
        on_warn: lg_verdict_callback,
        on_halt: lg_verdict_callback,
        user_data: *mut c_void,
    ) -> lg_status {
        if let Err(e) = self.enter() {
            return self.refuse(e);
        }
        self.callbacks.set(Callbacks {
            on_warn,
            on_halt,
            user_data,
        });
        LG_OK
    }

    /// `lg_*_last_error` for any handle: valid until the next call on the handle.
    fn last_error(&self) -> *const c_char {
        // SAFETY: the message is only replaced by a later call on this handle.
        unsafe { (*self.error.as_ptr()).as_ptr() }
    }

    /// Checks the handle may be used now.
    #[inline(always)]
    fn enter(&self) -> Result<(), lg_status> {
        match self.flags.get() {
            0 => Ok(()),
            f if f & BUSY != 0 => Err(LG_ERR_REENTRANT),
            _ => Err(LG_ERR_POISONED),
        }
    }

    /// A call is running on the handle (a callback is calling back).
    fn busy(&self) -> bool {
        self.flags.get() & BUSY != 0
    }

    /// Marks the handle busy; `enter` has checked it was neither busy nor poisoned.
    #[inline(always)]
    fn begin(&self) {
        self.flags.set(BUSY);
    }

    /// Ends the call `begin` began: a panic in it poisons the handle for good.
    #[inline(always)]
    fn end(&self, panicked: bool) {
        if panicked {
            self.poison();
        } else {
            self.flags.set(0);
        }
    }

    /// Marks the handle poisoned after a panic, for good, and says so in its last error.
    #[cold]
    #[inline(never)]
    fn poison(&self) {
        self.flags.set(POISONED);
        self.set_error("loopguard panicked: this handle is poisoned, free it");
    }

    /// Runs `f` with the handle marked busy, inside a panic boundary: a panic poisons it. Every
    /// failure leaves its message in the handle's last error: a re-entrant call, an argument
    /// `f` refused, a panic.
    fn run<R>(&self, f: impl FnOnce() -> Result<R, Fail>) -> Result<R, lg_status> {
        if let Err(e) = self.enter() {
            return Err(self.refuse(e));
        }
        self.begin();
        let r = catch_unwind(AssertUnwindSafe(f));
        self.end(r.is_err());
        match r {
            Ok(Ok(r)) => Ok(r),
            Ok(Err(fail)) => Err(self.fail(fail)),
            Err(_) => Err(LG_ERR_PANIC),
        }
    }

    /// [`run`](Self::run) for a call that returns only a status.
    fn call(&self, f: impl FnOnce() -> Result<(), Fail>) -> lg_status {
        status(self.run(f))
    }

    /// Records why a call failed and returns its status.
    #[cold]
    #[inline(never)]
    fn fail(&self, fail: Fail) -> lg_status {
        self.set_error(&fail.msg);
        fail.status
    }

    /// The status (and message) for a call `enter` refused. A poisoned handle keeps the
    /// message of the panic that poisoned it.
    #[cold]
    #[inline(never)]
    fn refuse(&self, e: lg_status) -> lg_status {
        if e == LG_ERR_REENTRANT {
            self.set_error(
                "called from one of this handle's own callbacks: a callback must not use the \
                 handle whose push called it",
            );
        }
        e
    }
}

/// Runs a whole function body inside a panic boundary.
fn boundary(f: impl FnOnce() -> lg_status) -> lg_status {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or(LG_ERR_PANIC)
}

fn status(r: Result<(), lg_status>) -> lg_status {
    r.err().unwrap_or(LG_OK)
}

/// Why a call failed: the status it returns and the message `lg_*_last_error` gives after
/// it, naming the argument at fault.
pub(crate) struct Fail {
    status: lg_status,
    msg: Cow<'static, str>,
}

impl Fail {
    fn new(status: lg_status, msg: impl Into<Cow<'static, str>>) -> Fail {
        Fail {
            status,
            msg: msg.into(),
        }
    }

    /// A required pointer argument was NULL.
    fn null(arg: &str) -> Fail {
        Fail::new(LG_ERR_NULL, format!("{arg} is NULL"))
    }
}

/// A rollback that could not be made: the argument at fault is always `n`.
fn rollback_fail(e: crate::RollbackError) -> Fail {
    Fail::new(LG_ERR_INVALID_ARGUMENT, e.to_string())
}

/// A status with its generic description, for failures that need no argument named (an
/// unknown pool slot, a full pool).
impl From<lg_status> for Fail {
    fn from(status: lg_status) -> Fail {
        Fail::new(status, status_str(status as i32))
    }
}

/// A caller's input buffer `arg` of `len` elements (its length argument `len_arg`), with
/// [`slice()`]'s rules and a message naming both when it is refused.
///
/// # Safety
/// `ptr` must be valid for `len` elements when not NULL.
unsafe fn arg<'a, T>(ptr: *const T, len: usize, arg: &str, len_arg: &str) -> Result<&'a [T], Fail> {
    slice(ptr, len).map_err(|e| length_fail(e, arg, len_arg, len))
}

/// A caller's output buffer, as [`arg`].
///
/// # Safety
/// `ptr` must be valid for `len` elements when not NULL.
unsafe fn arg_mut<'a, T>(
    ptr: *mut T,
    len: usize,
    arg: &str,
    len_arg: &str,
) -> Result<&'a mut [T], Fail> {
    slice_mut(ptr, len).map_err(|e| length_fail(e, arg, len_arg, len))
}

#[cold]
fn length_fail(e: lg_status, arg: &str, len_arg: &str, len: usize) -> Fail {
    match e {
        LG_ERR_NULL => Fail::new(e, format!("{arg} is NULL with {len_arg} = {len}")),
        _ => Fail::new(
            e,
            format!("{len_arg} = {len}: over PTRDIFF_MAX (a negative length cast to size_t?)"),
        ),
    }
}

/// A required out-pointer argument, refused with its name when NULL.
fn out_arg<T>(ptr: *mut T, arg: &str) -> Result<*mut T, Fail> {
    if ptr.is_null() {
        return Err(Fail::null(arg));
    }
    Ok(ptr)
}

/// A slice from a C buffer: NULL with length 0 is empty, NULL otherwise is an error.
///
/// # Safety
/// `ptr` must be valid for `len` elements when not NULL.
unsafe fn slice<'a, T>(ptr: *const T, len: usize) -> Result<&'a [T], lg_status> {
    if ptr.is_null() {
        return if len == 0 { Ok(&[]) } else { Err(LG_ERR_NULL) };
    }
    check_len::<T>(len)?;
    Ok(std::slice::from_raw_parts(ptr, len))
}

/// No buffer holds more than `isize::MAX` bytes: a longer length is a caller's mistake (a
/// negative length cast to `size_t`, say), refused before a slice is made of it.
fn check_len<T>(len: usize) -> Result<(), lg_status> {
    if len > isize::MAX as usize / std::mem::size_of::<T>().max(1) {
        return Err(LG_ERR_INVALID_ARGUMENT);
    }
    Ok(())
}

/// A mutable slice from a C buffer, with the same rules as [`slice()`].
///
/// # Safety
/// `ptr` must be valid for `len` elements when not NULL.
unsafe fn slice_mut<'a, T>(ptr: *mut T, len: usize) -> Result<&'a mut [T], lg_status> {
    if ptr.is_null() {
        return if len == 0 {
            Ok(&mut [])
        } else {
            Err(LG_ERR_NULL)
        };
    }
    check_len::<T>(len)?;
    Ok(std::slice::from_raw_parts_mut(ptr, len))
}

/// Writes `value` into a caller's versioned struct `arg` (a `ty`): only the bytes its
/// `struct_size` covers, leaving `struct_size` as it was.
///
/// # Safety
/// `out` must be NULL or point to at least `(*out).struct_size` writable bytes.
unsafe fn write_sized<T: Copy>(out: *mut T, value: T, arg: &str, ty: &str) -> Result<(), Fail> {
    let out = out_arg(out, arg)?;
    let size = *(out as *const usize);
    let min = std::mem::size_of::<usize>();
    if size < min {
        return Err(Fail::new(
            LG_ERR_INVALID_ARGUMENT,
            format!("{arg}->struct_size = {size}: set it to sizeof({ty})"),
        ));
    }
    let n = size.min(std::mem::size_of::<T>());
    let src = &value as *const T as *const u8;
    std::ptr::copy_nonoverlapping(src.add(min), (out as *mut u8).add(min), n - min);
    Ok(())
}

pub(crate) fn verdict_to_c(v: &Verdict) -> lg_verdict {
    lg_verdict {
        struct_size: std::mem::size_of::<lg_verdict>(),
        action: action_to_c(v.action),
        kind: match v.kind {
            LoopKind::None => lg_kind::LG_KIND_NONE,
            LoopKind::ExactLoop => lg_kind::LG_KIND_EXACT_LOOP,
            LoopKind::LongRepeat => lg_kind::LG_KIND_LONG_REPEAT,
            LoopKind::NearLoop => lg_kind::LG_KIND_NEAR_LOOP,
            LoopKind::CharRun => lg_kind::LG_KIND_CHAR_RUN,
            LoopKind::WordStutter => lg_kind::LG_KIND_WORD_STUTTER,
            LoopKind::RepeatedLines => lg_kind::LG_KIND_REPEATED_LINES,
            LoopKind::CounterLadder => lg_kind::LG_KIND_COUNTER_LADDER,
            LoopKind::GrowingRepeat => lg_kind::LG_KIND_GROWING_REPEAT,
            LoopKind::TemplateRunaway => lg_kind::LG_KIND_TEMPLATE_RUNAWAY,
        },
        unit: match v.unit {
            Unit::Symbol => lg_unit::LG_UNIT_SYMBOL,
            Unit::Byte => lg_unit::LG_UNIT_BYTE,
            Unit::Line => lg_unit::LG_UNIT_LINE,
        },
        period: v.period,
        repeats: v.repeats,
        span: v.span,
        onset: v.onset,
        onset_byte: v.onset_byte.unwrap_or(LG_UNKNOWN),
        at: v.at,
        confidence: v.confidence,
    }
}

fn action_to_c(a: Action) -> lg_action {
    match a {
        Action::Continue => lg_action::LG_ACTION_CONTINUE,
        Action::Warn => lg_action::LG_ACTION_WARN,
        Action::Block => lg_action::LG_ACTION_BLOCK,
        Action::Halt => lg_action::LG_ACTION_HALT,
        Action::EndReasoning => lg_action::LG_ACTION_END_REASONING,
    }
}

/// Frees a handle made by `Box::into_raw`: NULL does nothing, and neither does a call made from
/// the handle's own callback (the call that fired it still holds the handle).
///
/// # Safety
/// `handle` must be NULL or a live handle whose state `state` returns.
unsafe fn free_handle<T>(handle: *mut T, state: impl Fn(&T) -> &HandleState) {
    let _ = boundary(|| {
        if let Some(h) = handle.as_ref() {
            if !state(h).busy() {
                drop(Box::from_raw(handle));
            }
        }
        LG_OK
    });
}

fn status_str(status: i32) -> &'static str {
    match status {
        0 => "ok",
        1 => "a required pointer was NULL",
        2 => "an argument was out of range",
        3 => "the configuration is invalid",
        4 => "loopguard panicked; the handle is poisoned",
        5 => "the handle was poisoned by an earlier panic",
        6 => "called back into a handle from its own callback",
        7 => "no such pool slot",
        8 => "the pool is full",
        _ => "unknown status",
    }
}

/// The library version as `major * 10000 + minor * 100 + patch`, to compare with the
/// `LG_VERSION_*` macros the caller compiled against. Never fails.
#[no_mangle]
pub extern "C" fn lg_version_number() -> u32 {
    LG_VERSION_MAJOR * 10000 + LG_VERSION_MINOR * 100 + LG_VERSION_PATCH
}

/// The library version as a static NUL-terminated string, such as `"0.1.0"`. Never NULL.
#[no_mangle]
pub extern "C" fn lg_version_string() -> *const c_char {
    concat!(env!("CARGO_PKG_VERSION"), "\0").as_ptr() as *const c_char
}

/// A static description of a status, for any value (unknown values say so). Never NULL.
#[no_mangle]
pub extern "C" fn lg_status_str(status: i32) -> *const c_char {
    static TEXTS: [&CStr; 10] = [
        c"ok",
        c"a required pointer was NULL",
        c"an argument was out of range",
        c"the configuration is invalid",
        c"loopguard panicked; the handle is poisoned",
        c"the handle was poisoned by an earlier panic",
        c"called back into a handle from its own callback",
        c"no such pool slot",
        c"the pool is full",
        c"unknown status",
    ];
    let i = if (0..9).contains(&status) {
        status as usize
    } else {
        9
    };
    TEXTS[i].as_ptr()
}

/// Every threshold of a stream guard, as plain data. Fill it with `lg_stream_config_init` (or
/// `_preset`, `_vllm`), change fields, pass it to `lg_stream_new` or `lg_pool_new`, which copy
/// it: the struct (and the pattern strings) may be freed or reused right after. Fields are only
/// appended; the library reads `min(struct_size, sizeof)` bytes and defaults the rest.
/// Immutable once filled, it may be shared by any number of threads.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct lg_stream_config {
    /// `sizeof(lg_stream_config)` as the caller knows it (set by the init functions).
    pub struct_size: usize,
    /// Shortest period reported as an exact loop (1..=max_period).
    pub min_period: u32,
    /// Longest exact-loop period (1..=4096).
    pub max_period: u32,
    /// Periods checked exactly at every symbol whatever the block; 0 = off.
    pub dense_periods: u32,
    /// Copies that halt (2..=1000).
    pub halt_copies: u32,
    /// Minimum repetitive span, in symbols, to halt.
    pub halt_span: u32,
    /// Copies that warn; 0 = never; more than `halt_copies` warns with the halt.
    pub warn_copies: u32,
    /// Minimum span to warn.
    pub warn_span: u32,
    /// Symbols held (a power of two, 64..=65536).
    pub window: u32,
    /// Length of the hashed n-grams (1..=16).
    pub ngram: u32,
    /// A verbatim recurrence this long beyond max_period warns, and so does near-loop coverage
    /// from further back than half the near window; 0 = off.
    pub long_warn_run: u32,
    /// Run that, with back-to-back copies, halts a long repeat; 0 = off.
    pub long_halt_run: u32,
    /// Window of the near-loop coverage; 0 = off.
    pub near_window: u32,
    /// Coverage that warns, in (0, 1].
    pub near_warn: f32,
    /// Coverage that halts once it lasts near_patience; 0 = off. Halts only on streams with
    /// text, where indented lines, code fences and tables are left out of the coverage.
    pub near_halt: f32,
    /// Symbols the halting coverage must last, counting those pushed while the latest repeat
    /// came from within half the near window.
    pub near_patience: u32,
    /// Bytes of a character run that warn; 0 = off, else 4..=LG_MAX_RUN.
    pub char_run_warn: u32,
    /// Bytes of a character run that halt; 0 = off, else char_run_warn..=LG_MAX_RUN.
    pub char_run_halt: u32,
    /// Bytes of a white-space or rule run that halt; 0 = off, else 16..=LG_MAX_RUN.
    pub separator_run_halt: u32,
    /// Copies of a line that warn; 0 = off.
    pub line_warn_copies: u32,
    /// Copies of a line that halt; 0 = off.
    pub line_halt_copies: u32,
    /// Letters a line needs to count.
    pub line_min_letters: u32,
    /// Stretch of near-loop patience in code and tables (1..=16).
    pub structure_slack: f32,
    /// Symbols of uninterrupted warnings after which the guard halts; 0 = never.
    pub escalate_after: u32,
    /// Texts that reset detection when they appear (may be NULL when the length is 0).
    pub breakers: *const lg_str,
    /// Number of breakers (at most 64).
    pub breakers_len: usize,
    /// Texts that excuse a loop whose repeated block contains one.
    pub exempt: *const lg_str,
    /// Number of exempt patterns (at most 64).
    pub exempt_len: usize,
    /// Copies of a template re-filled in code that warn. `0` (off) or `2..=1000`. (Appended in
    /// 0.1: an older struct leaves it at the default.)
    pub template_warn: u32,
    /// Copies of one template the host allows; the next halts. `0` (off) or `2..=1000`.
    pub template_budget: u32,
    /// The text that opens a reasoning section (`"<think>"`); empty: the stream begins inside
    /// one when `reasoning_end` is set. At most 64 bytes of UTF-8. (Appended in 0.1.)
    pub reasoning_start: lg_str,
    /// The text that ends a reasoning section (`"</think>"`); empty = off. When set, a loop
    /// inside the reasoning of a stream with text answers `LG_ACTION_END_REASONING` instead of
    /// a halt: force this text as the next tokens. At most 64 bytes of UTF-8.
    pub reasoning_end: lg_str,
    /// The model generating the stream (`"SmolLM2-135M-Instruct"`), or empty: a name a
    /// per-model profile matches gets that profile's adjustments. At most 256 bytes of UTF-8.
    pub model: lg_str,
}

// The pattern pointers are only read during the call that receives the struct.
unsafe impl Send for lg_stream_config {}
unsafe impl Sync for lg_stream_config {}

/// The defaults, as `lg_stream_config_init` fills them (the balanced preset): for Rust code
/// that drives the C ABI (benchmarks, profilers).
impl Default for lg_stream_config {
    fn default() -> Self {
        config_from_settings(&StreamSettings::preset(Preset::Balanced))
    }
}

fn config_from_settings(s: &StreamSettings) -> lg_stream_config {
    lg_stream_config {
        struct_size: std::mem::size_of::<lg_stream_config>(),
        min_period: s.min_period,
        max_period: s.max_period,
        dense_periods: s.dense_periods,
        halt_copies: s.halt_copies,
        halt_span: s.halt_span,
        warn_copies: s.warn_copies,
        warn_span: s.warn_span,
        window: s.window,
        ngram: s.ngram,
        long_warn_run: s.long_warn_run,
        long_halt_run: s.long_halt_run,
        near_window: s.near_window,
        near_warn: s.near_warn,
        near_halt: s.near_halt,
        near_patience: s.near_patience,
        char_run_warn: s.char_run_warn,
        char_run_halt: s.char_run_halt,
        separator_run_halt: s.separator_run_halt,
        line_warn_copies: s.line_warn_copies,
        line_halt_copies: s.line_halt_copies,
        line_min_letters: s.line_min_letters,
        structure_slack: s.structure_slack,
        escalate_after: s.escalate_after,
        breakers: std::ptr::null(),
        breakers_len: 0,
        exempt: std::ptr::null(),
        exempt_len: 0,
        template_warn: s.template_warn,
        template_budget: s.template_budget,
        reasoning_start: lg_str {
            ptr: std::ptr::null(),
            len: 0,
        },
        reasoning_end: lg_str {
            ptr: std::ptr::null(),
            len: 0,
        },
        model: lg_str {
            ptr: std::ptr::null(),
            len: 0,
        },
    }
}

/// Reads a caller's config: `min(struct_size, sizeof)` bytes over the defaults.
///
/// # Safety
/// `cfg` must point to `struct_size` readable bytes; the pattern arrays must be valid.
unsafe fn settings_from_c(cfg: *const lg_stream_config) -> Result<StreamSettings, Fail> {
    let size = struct_size(cfg as *const usize, "lg_stream_config")?;
    let mut c = config_from_settings(&StreamSettings::default());
    let n = size.min(std::mem::size_of::<lg_stream_config>());
    std::ptr::copy_nonoverlapping(
        cfg as *const u8,
        &mut c as *mut lg_stream_config as *mut u8,
        n,
    );
    Ok(StreamSettings {
        min_period: c.min_period,
        max_period: c.max_period,
        dense_periods: c.dense_periods,
        halt_copies: c.halt_copies,
        halt_span: c.halt_span,
        warn_copies: c.warn_copies,
        warn_span: c.warn_span,
        window: c.window,
        ngram: c.ngram,
        long_warn_run: c.long_warn_run,
        long_halt_run: c.long_halt_run,
        near_window: c.near_window,
        near_warn: c.near_warn,
        near_halt: c.near_halt,
        near_patience: c.near_patience,
        char_run_warn: c.char_run_warn,
        char_run_halt: c.char_run_halt,
        separator_run_halt: c.separator_run_halt,
        line_warn_copies: c.line_warn_copies,
        line_halt_copies: c.line_halt_copies,
        line_min_letters: c.line_min_letters,
        structure_slack: c.structure_slack,
        escalate_after: c.escalate_after,
        template_warn: c.template_warn,
        template_budget: c.template_budget,
        breakers: if size >= std::mem::offset_of!(lg_stream_config, breakers_len) + 8 {
            strings(c.breakers, c.breakers_len, "breakers")?
        } else {
            Vec::new()
        },
        exempt: if size >= std::mem::offset_of!(lg_stream_config, exempt_len) + 8 {
            strings(c.exempt, c.exempt_len, "exempt")?
        } else {
            Vec::new()
        },
        // The defaults hold NULL and 0 for a struct too short to have them.
        reasoning_start: text(c.reasoning_start, "reasoning_start", MAX_MARKER)?,
        reasoning_end: text(c.reasoning_end, "reasoning_end", MAX_MARKER)?,
        model: text(c.model, "model", 256)?,
    })
}

/// `len` strings from C.
///
/// # Safety
/// `ptr` is NULL with `len` 0, or valid for `len` `lg_str`s, each valid for its length.
/// A wrong string list makes the config invalid: `LG_ERR_CONFIG`, with the field named.
unsafe fn strings(ptr: *const lg_str, len: usize, field: &str) -> Result<Vec<String>, Fail> {
    let invalid = |msg: String| Fail::new(LG_ERR_CONFIG, msg);
    let items = slice(ptr, len).map_err(|e| match e {
        LG_ERR_NULL => invalid(format!("{field} is NULL with {field}_len = {len}")),
        _ => invalid(format!("{field}_len = {len}: over PTRDIFF_MAX")),
    })?;
    items
        .iter()
        .enumerate()
        .map(|(i, &s)| text(s, &format!("{field}[{i}]"), usize::MAX))
        .collect()
}

const MAX_MARKER: usize = crate::config::MAX_MARKER;

/// One string from C of at most `most` bytes (`LG_ERR_CONFIG` naming `field` when it is NULL
/// with a length, too long or not UTF-8).
///
/// # Safety
/// `s.ptr` is NULL with `s.len` 0, or valid for `s.len` bytes.
unsafe fn text(s: lg_str, field: &str, most: usize) -> Result<String, Fail> {
    let invalid = |msg: String| Fail::new(LG_ERR_CONFIG, msg);
    if s.len > most {
        return Err(invalid(format!(
            "{field}.len = {}: at most {most} bytes",
            s.len
        )));
    }
    let bytes = slice(s.ptr as *const u8, s.len).map_err(|e| match e {
        LG_ERR_NULL => invalid(format!("{field}.ptr is NULL with len = {}", s.len)),
        _ => invalid(format!("{field}.len = {}: over PTRDIFF_MAX", s.len)),
    })?;
    String::from_utf8(bytes.to_vec()).map_err(|_| invalid(format!("{field} is not UTF-8")))
}

/// The `struct_size` a caller's versioned config `ty` starts with: at least the field itself
/// (`LG_ERR_INVALID_ARGUMENT` otherwise, as the header says).
///
/// # Safety
/// `cfg` must point to a readable `size_t`.
unsafe fn struct_size(cfg: *const usize, ty: &str) -> Result<usize, Fail> {
    let size = *cfg;
    if size < std::mem::size_of::<usize>() {
        return Err(Fail::new(
            LG_ERR_INVALID_ARGUMENT,
            format!("struct_size = {size}: set it to sizeof({ty})"),
        ));
    }
    Ok(size)
}

/// Validates a caller's config into a shared `StreamConfig`, or an error message.
///
/// # Safety
/// As for `settings_from_c`.
unsafe fn config_from_c(cfg: *const lg_stream_config) -> Result<crate::StreamConfig, Fail> {
    let settings = settings_from_c(cfg)?;
    crate::StreamConfig::new(&settings).map_err(|e| Fail::new(LG_ERR_CONFIG, e.to_string()))
}

/// Fills `*config` with the defaults (the balanced preset) and sets its `struct_size`.
/// `LG_ERR_NULL` when `config` is NULL. O(1), never allocates.
#[no_mangle]
pub unsafe extern "C" fn lg_stream_config_init(config: *mut lg_stream_config) -> lg_status {
    lg_stream_config_preset(config, lg_preset::LG_PRESET_BALANCED as i32)
}

/// Fills `*config` with a preset (an `lg_preset` value) and sets its `struct_size`.
/// `LG_ERR_NULL` when `config` is NULL, `LG_ERR_INVALID_ARGUMENT` for an unknown preset.
/// O(1), never allocates.
#[no_mangle]
pub unsafe extern "C" fn lg_stream_config_preset(
    config: *mut lg_stream_config,
    preset: i32,
) -> lg_status {
    boundary(|| {
        if config.is_null() {
            return LG_ERR_NULL;
        }
        let p = match preset {
            x if x == lg_preset::LG_PRESET_STRICT as i32 => Preset::Strict,
            x if x == lg_preset::LG_PRESET_BALANCED as i32 => Preset::Balanced,
            x if x == lg_preset::LG_PRESET_LENIENT as i32 => Preset::Lenient,
            _ => return LG_ERR_INVALID_ARGUMENT,
        };
        *config = config_from_settings(&StreamSettings::preset(p));
        LG_OK
    })
}

/// Fills `*config` so that a guard halts on exactly the token where vLLM's
/// `repetition_detection` would with the same parameters, every other detector off. Checked
/// when the config is used (`max_pattern_size` 1..=4096, `min_count` >= 2). `LG_ERR_NULL` when
/// `config` is NULL. O(1), never allocates.
#[no_mangle]
pub unsafe extern "C" fn lg_stream_config_vllm(
    config: *mut lg_stream_config,
    min_pattern_size: u32,
    max_pattern_size: u32,
    min_count: u32,
) -> lg_status {
    boundary(|| {
        if config.is_null() {
            return LG_ERR_NULL;
        }
        *config = config_from_settings(&StreamSettings::vllm_compatible(
            min_pattern_size,
            max_pattern_size,
            min_count,
        ));
        LG_OK
    })
}

/// Checks a config. On an invalid one returns `LG_ERR_CONFIG` (`LG_ERR_INVALID_ARGUMENT` for a
/// `struct_size` too small to hold itself) and writes into `buf` (when `buf_len` > 0) a
/// NUL-terminated message naming the field and its allowed range, truncated to fit. Allocates
/// while it runs.
#[no_mangle]
pub unsafe extern "C" fn lg_stream_config_validate(
    config: *const lg_stream_config,
    buf: *mut c_char,
    buf_len: usize,
) -> lg_status {
    boundary(|| {
        if config.is_null() {
            return LG_ERR_NULL;
        }
        validate_into(buf, buf_len, || config_from_c(config).map(drop))
    })
}

/// A caller's output buffer for text: NULL with length 0 is no buffer (the caller asks only
/// for the length), NULL otherwise is `LG_ERR_NULL`, and a length over `PTRDIFF_MAX` (a
/// negative length cast to `size_t`) is `LG_ERR_INVALID_ARGUMENT`. Every function that writes
/// into a caller's buffer takes it through here before writing a byte.
///
/// # Safety
/// `buf` must be valid for `buf_len` bytes when not NULL.
unsafe fn out_text<'a>(buf: *mut c_char, buf_len: usize) -> Result<&'a mut [u8], Fail> {
    arg_mut(buf as *mut u8, buf_len, "buf", "buf_len")
}

/// The body of `lg_*_config_validate`: checks the message buffer first, then the config;
/// on an invalid one writes the message (truncated to fit) and returns `LG_ERR_CONFIG`.
///
/// # Safety
/// `buf` must be valid for `buf_len` bytes when not NULL.
pub(crate) unsafe fn validate_into(
    buf: *mut c_char,
    buf_len: usize,
    check: impl FnOnce() -> Result<(), Fail>,
) -> lg_status {
    let out = match out_text(buf, buf_len) {
        Ok(out) => out,
        Err(fail) => return fail.status,
    };
    match check() {
        Ok(()) => LG_OK,
        Err(fail) => {
            write_text(&fail.msg, out);
            fail.status
        }
    }
}

/// Copies `text` into `out` as a NUL-terminated string, truncated to fit at a character
/// boundary, so what is written is always valid UTF-8 (nothing when `out` is empty). Returns
/// the length the whole text needs (without the NUL).
fn write_text(text: &str, out: &mut [u8]) -> usize {
    if let Some(room) = out.len().checked_sub(1) {
        let mut n = text.len().min(room);
        while !text.is_char_boundary(n) {
            n -= 1;
        }
        out[..n].copy_from_slice(&text.as_bytes()[..n]);
        out[n] = 0;
    }
    text.len()
}

/// The body of `lg_*_describe`: checks the buffer and the verbosity, describes through
/// `describe`, and copies the text out, snprintf-style.
///
/// # Safety
/// `buf` is valid for `buf_len` bytes or NULL; `out_len` is NULL or valid.
unsafe fn describe_into(
    verbosity: i32,
    buf: *mut c_char,
    buf_len: usize,
    out_len: *mut usize,
    describe: impl FnOnce(Verbosity, &mut String) -> std::fmt::Result,
) -> Result<(), Fail> {
    let out = out_text(buf, buf_len)?;
    let v = self::verbosity(verbosity)?;
    let mut text = String::new();
    describe(v, &mut text).map_err(|_| Fail::from(LG_ERR_PANIC))?;
    let n = write_text(&text, out);
    if !out_len.is_null() {
        *out_len = n;
    }
    Ok(())
}

/// An `lg_verbosity` value from C, checked (an enum parameter would make a bad value UB).
fn verbosity(v: i32) -> Result<Verbosity, Fail> {
    match v {
        x if x == lg_verbosity::LG_VERBOSITY_BRIEF as i32 => Ok(Verbosity::Brief),
        x if x == lg_verbosity::LG_VERBOSITY_SUMMARY as i32 => Ok(Verbosity::Summary),
        x if x == lg_verbosity::LG_VERBOSITY_FULL as i32 => Ok(Verbosity::Full),
        _ => Err(Fail::new(
            LG_ERR_INVALID_ARGUMENT,
            format!("verbosity = {v}: allowed an lg_verbosity (0..=2)"),
        )),
    }
}

// Compile-time checks of the threading promises: configs are shared freely, guards and
// handles move between threads.
const _: () = {
    const fn send<T: Send>() {}
    const fn sync<T: Sync>() {}
    send::<crate::StreamConfig>();
    sync::<crate::StreamConfig>();
    send::<crate::StreamGuard>();
    sync::<crate::StreamGuard>();
    send::<lg_stream>();
    send::<lg_pool>();
    sync::<lg_stream_config>();
};

#[cfg(test)]
mod tests {
    use super::*;

    /// A panic inside a call becomes a status and poisons the handle for good.
    #[test]
    fn a_panic_poisons_the_handle() {
        let state = HandleState::new();
        let r: Result<(), lg_status> = state.run(|| panic!("boom"));
        assert_eq!(r, Err(LG_ERR_PANIC));
        assert_eq!(state.run(|| Ok(())), Err(LG_ERR_POISONED));
        assert!(state.error.borrow().to_str().unwrap().contains("poisoned"));
        // And a panic outside any handle is still caught at the boundary.
        assert_eq!(boundary(|| panic!("boom")), LG_ERR_PANIC);
    }

    #[test]
    fn a_busy_handle_refuses_reentry() {
        let state = HandleState::new();
        let inner = state.run(|| Ok(state.run(|| Ok(()))));
        assert_eq!(inner, Ok(Err(LG_ERR_REENTRANT)));
        assert_eq!(state.run(|| Ok(())), Ok(()));
    }
}
