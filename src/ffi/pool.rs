//! `lg_pool`: many sequences of a batched server, advanced in one call.

use std::cell::UnsafeCell;
use std::ffi::{c_char, c_void};

use super::*;
use crate::StreamGuard;

/// How many sequences ahead `lg_pool_push` prefetches.
const AHEAD: usize = 4;

/// Asks the CPU to bring the line at `p` into cache. A hint: it never faults, whatever `p`.
#[inline(always)]
fn prefetch(p: *const u32) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch reads nothing the program sees and never faults, whatever the address.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(p as *const i8);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// `Slots::live` of a slot not in use: no slot id equals it (an index is below 65536).
const NOT_LIVE: u64 = u64::MAX;

struct Slots {
    guards: Vec<StreamGuard>,
    /// The id each slot answers to (its generation and index), or `NOT_LIVE`. Kept apart from
    /// the guards, so that checking a batch's ids reads one small array.
    live: Vec<u64>,
    /// Bumped on every remove, so that an old slot id is refused rather than aliasing.
    generations: Vec<u32>,
    /// Indexes of unused slots (capacity reserved up front: add and remove never allocate).
    free: Vec<u32>,
}

impl Slots {
    /// The index of slot `id`, when it is in use.
    #[inline]
    fn index(&self, id: u64) -> Result<usize, Fail> {
        let index = (id & 0xffff_ffff) as usize;
        match self.live.get(index) {
            Some(&live) if live == id => Ok(index),
            _ => Err(no_slot(id)),
        }
    }

    fn get(&mut self, id: u64) -> Result<&mut StreamGuard, Fail> {
        let index = self.index(id)?;
        Ok(&mut self.guards[index])
    }
}

/// The sequences of a batched server, one guard per slot, all with one configuration. Opaque:
/// create with `lg_pool_new`, free with `lg_pool_free`. Safe to move between threads, not for
/// concurrent use.
pub struct lg_pool {
    slots: UnsafeCell<Slots>,
    state: HandleState,
}

impl lg_pool {
    /// # Safety
    /// `p` must be NULL or a live handle from `lg_pool_new`.
    unsafe fn call(p: *const lg_pool, f: impl FnOnce(&mut Slots) -> Result<(), Fail>) -> lg_status {
        let Some(h) = p.as_ref() else {
            return LG_ERR_NULL;
        };
        // SAFETY: `run` marks the handle busy, so no other call on it holds this reference.
        h.state.call(|| f(&mut *h.slots.get()))
    }
}

/// An unknown slot id, named (cold: the per-batch check only calls it on a failure).
#[cold]
fn no_slot(id: u64) -> Fail {
    Fail::new(
        LG_ERR_NO_SLOT,
        format!("slot {id} is not in use (removed, never added, or from another pool)"),
    )
}

/// Creates a pool of `capacity` slots (1..=65536), each a guard built from `*config` (copied),
/// into `*out`. Allocates every guard now (about 16 KiB each), so that adding, removing and
/// pushing never allocate. `LG_ERR_CONFIG` for an invalid config.
#[no_mangle]
pub unsafe extern "C" fn lg_pool_new(
    config: *const lg_stream_config,
    capacity: usize,
    out: *mut *mut lg_pool,
) -> lg_status {
    boundary(|| {
        if config.is_null() || out.is_null() {
            return LG_ERR_NULL;
        }
        if capacity == 0 || capacity > 65536 {
            return LG_ERR_INVALID_ARGUMENT;
        }
        let c = match config_from_c(config) {
            Ok(c) => c,
            Err(fail) => return fail.status,
        };
        let slots = Slots {
            guards: (0..capacity).map(|_| StreamGuard::new(&c)).collect(),
            live: vec![NOT_LIVE; capacity],
            generations: vec![0; capacity],
            free: (0..capacity as u32).rev().collect(),
        };
        *out = Box::into_raw(Box::new(lg_pool {
            slots: UnsafeCell::new(slots),
            state: HandleState::new(),
        }));
        LG_OK
    })
}

/// Frees a pool and every guard in it. NULL does nothing, and so does a call from the pool's
/// own callback.
#[no_mangle]
pub unsafe extern "C" fn lg_pool_free(pool: *mut lg_pool) {
    free_handle(pool, |h| &h.state);
}

/// Takes a free slot for a new sequence and writes its id into `*out_slot`. The guard starts
/// fresh. `LG_ERR_POOL_FULL` when every slot is in use. O(1), never allocates.
#[no_mangle]
pub unsafe extern "C" fn lg_pool_add(pool: *mut lg_pool, out_slot: *mut u64) -> lg_status {
    boundary(|| {
        lg_pool::call(pool, |s| {
            let out_slot = out_arg(out_slot, "out_slot")?;
            let index = s.free.pop().ok_or_else(|| {
                Fail::new(
                    LG_ERR_POOL_FULL,
                    format!("the pool is full: all {} slots are in use", s.live.len()),
                )
            })? as usize;
            let id = ((s.generations[index] as u64) << 32) | index as u64;
            s.live[index] = id;
            s.guards[index].reset();
            *out_slot = id;
            Ok(())
        })
    })
}

/// Releases a slot; its id is refused from now on (`LG_ERR_NO_SLOT`). O(1), never allocates.
#[no_mangle]
pub unsafe extern "C" fn lg_pool_remove(pool: *mut lg_pool, slot: u64) -> lg_status {
    boundary(|| {
        lg_pool::call(pool, |s| {
            let index = s.index(slot)?;
            s.live[index] = NOT_LIVE;
            s.generations[index] = s.generations[index].wrapping_add(1);
            s.free.push(index as u32);
            Ok(())
        })
    })
}

/// Resets one slot's guard for a new sequence. O(1), never allocates.
#[no_mangle]
pub unsafe extern "C" fn lg_pool_reset(pool: *mut lg_pool, slot: u64) -> lg_status {
    boundary(|| {
        lg_pool::call(pool, |s| {
            s.get(slot)?.reset();
            Ok(())
        })
    })
}

/// Advances many sequences in one call: pushes `tokens[i]` into slot `slots[i]` for i in
/// 0..n, in order (a slot may appear more than once), and writes each action into
/// `out_actions[i]` (`lg_action` values). Every slot id is checked first: with an unknown one
/// (`LG_ERR_NO_SLOT`) nothing is pushed or written. Calls the pool's callbacks with the slot id
/// as sequences start warning or halt. O(n), never allocates.
#[no_mangle]
pub unsafe extern "C" fn lg_pool_push(
    pool: *mut lg_pool,
    slots: *const u64,
    tokens: *const u32,
    n: usize,
    out_actions: *mut u8,
) -> lg_status {
    boundary(|| {
        let Some(h) = pool.as_ref() else {
            return LG_ERR_NULL;
        };
        let callbacks = h.state.callbacks.get();
        let fire = callbacks.on_warn.is_some() || callbacks.on_halt.is_some();
        h.state.call(|| {
            let ids = arg(slots, n, "slots", "n")?;
            let toks = arg(tokens, n, "tokens", "n")?;
            let out = arg_mut(out_actions, n, "out_actions", "n")?;
            let s = &mut *h.slots.get();
            for &id in ids {
                s.index(id)?;
            }
            for (k, ((&id, &tok), act)) in ids.iter().zip(toks).zip(out.iter_mut()).enumerate() {
                // A few sequences ahead, bring in the n-gram index entry their push will use:
                // with hundreds of guards it is the one line a push rarely finds in cache.
                if let (Some(&ahead), Some(&ahead_tok)) = (ids.get(k + AHEAD), toks.get(k + AHEAD))
                {
                    prefetch(s.guards[(ahead & 0xffff_ffff) as usize].index_entry(ahead_tok));
                }
                // Checked whole above: only the index is needed now.
                let g = &mut s.guards[(id & 0xffff_ffff) as usize];
                let action = g.push_id_then(tok, |g, before| {
                    if fire {
                        // Still inside `run`: the handle is busy, so a callback cannot re-enter.
                        callbacks.fire_cold(id, before, g);
                    }
                });
                *act = action_to_c(action) as u8;
            }
            Ok(())
        })
    })
}

/// `lg_stream_checkpoint` for one slot's guard (its first checkpoint allocates about 90 KiB).
#[no_mangle]
pub unsafe extern "C" fn lg_pool_checkpoint(pool: *mut lg_pool, slot: u64) -> lg_status {
    boundary(|| {
        lg_pool::call(pool, |s| {
            s.get(slot)?.checkpoint();
            Ok(())
        })
    })
}

/// `lg_stream_rollback` for one slot's guard: takes back its last `n` pushes since its
/// checkpoint and writes the action then into `*out_action` when not NULL. Never allocates.
#[no_mangle]
pub unsafe extern "C" fn lg_pool_rollback(
    pool: *mut lg_pool,
    slot: u64,
    n: usize,
    out_action: *mut lg_action,
) -> lg_status {
    boundary(|| {
        lg_pool::call(pool, |s| {
            let v = s.get(slot)?.rollback(n).map_err(rollback_fail)?;
            if !out_action.is_null() {
                *out_action = action_to_c(v.action);
            }
            Ok(())
        })
    })
}

/// `lg_stream_commit` for one slot's guard. O(1).
#[no_mangle]
pub unsafe extern "C" fn lg_pool_commit(pool: *mut lg_pool, slot: u64) -> lg_status {
    boundary(|| {
        lg_pool::call(pool, |s| {
            s.get(slot)?.commit();
            Ok(())
        })
    })
}

/// Writes one slot's last verdict into `*out` (set `out->struct_size` first). O(1).
#[no_mangle]
pub unsafe extern "C" fn lg_pool_verdict(
    pool: *const lg_pool,
    slot: u64,
    out: *mut lg_verdict,
) -> lg_status {
    boundary(|| {
        lg_pool::call(pool, |s| {
            let v = verdict_to_c(&s.get(slot)?.verdict());
            write_sized(out, v, "out", "lg_verdict")
        })
    })
}

/// Sets the callbacks called from `lg_pool_push` (either may be NULL) and their user data;
/// they receive the slot id. See `lg_verdict_callback` for the rules. O(1).
#[no_mangle]
pub unsafe extern "C" fn lg_pool_set_callbacks(
    pool: *mut lg_pool,
    on_warn: lg_verdict_callback,
    on_halt: lg_verdict_callback,
    user_data: *mut c_void,
) -> lg_status {
    boundary(|| match pool.as_ref() {
        Some(h) => h.state.set_callbacks(on_warn, on_halt, user_data),
        None => LG_ERR_NULL,
    })
}

/// Why the last failed call on this pool failed, naming the argument at fault (or the slot),
/// NUL-terminated; "" when none failed. Never NULL. Valid until the next call on the pool.
#[no_mangle]
pub unsafe extern "C" fn lg_pool_last_error(pool: *const lg_pool) -> *const c_char {
    match pool.as_ref() {
        None => c"NULL lg_pool handle".as_ptr(),
        Some(h) => h.state.last_error(),
    }
}
