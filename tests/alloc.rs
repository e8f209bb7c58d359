//! No heap allocation per push after construction, and memory that does not grow with the
//! stream. A counting global allocator proves it (and first proves that it can count).

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use loopguard::{Action, Preset, StreamConfig, StreamGuard, StreamSettings};

mod common;

/// Counts allocations made by the current thread (tests run on several threads at once).
struct Counting;

thread_local! {
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let _ = ALLOCATIONS.try_with(|c| c.set(c.get() + 1));
        System.alloc(layout)
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout)
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let _ = ALLOCATIONS.try_with(|c| c.set(c.get() + 1));
        System.realloc(ptr, layout, new_size)
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn allocations() -> u64 {
    ALLOCATIONS.with(|c| c.get())
}

/// Runs `f` and returns how many allocations it made on this thread.
fn count(f: impl FnOnce()) -> u64 {
    let before = allocations();
    f();
    allocations() - before
}

#[test]
fn the_counter_counts() {
    let n = count(|| {
        let v: Vec<u64> = Vec::with_capacity(10);
        std::hint::black_box(&v);
        let s = String::from("allocates");
        std::hint::black_box(&s);
    });
    assert_eq!(n, 2);
    // And a guard's construction allocates, which the counter sees.
    let config = StreamConfig::default();
    assert!(count(|| drop(StreamGuard::new(&config))) > 0);
}

/// Every push path, over real model output with loops, warnings and halts and over people's
/// code, allocates nothing.
#[test]
fn pushes_never_allocate() {
    // Model prose with loops, and people's code in thirteen languages (the judge's paths
    // for code, tables and data).
    let mut records = common::load("smollm2-sample.jsonl");
    records.extend(common::load("code-sample.jsonl"));
    let mut settings = StreamSettings::preset(Preset::Strict);
    settings.breakers.push("</think>".into());
    settings.exempt.push("never matches in this corpus".into());
    for settings in [
        StreamSettings::default(),
        settings,
        StreamSettings::vllm_compatible(1, 64, 3),
    ] {
        let config = StreamConfig::new(&settings).unwrap();
        let mut guard = StreamGuard::new(&config);
        let mut halts = 0;
        let n = count(|| {
            for rec in &records {
                for with_pieces in [false, true] {
                    guard.reset();
                    halts += common::feed_tokens(&mut guard, rec, with_pieces).is_some() as u32;
                    std::hint::black_box(guard.repeated_text());
                }
                guard.reset();
                halts += common::feed_text(&mut guard, rec.text.as_bytes(), 7).is_some() as u32;
                std::hint::black_box(guard.stats());
            }
        });
        assert_eq!(n, 0, "{settings:?}");
        assert!(halts > 10, "the sample has loops to halt");
    }
}

/// Memory is fixed at construction: 10^8 tokens (pushed without a halt) later it is the same,
/// and no push allocated. Uses every id up to u32::MAX.
#[test]
fn memory_is_constant_over_a_hundred_million_tokens() {
    let config = StreamConfig::default();
    let mut guard = StreamGuard::new(&config);
    let before = guard.memory_usage();
    assert!(
        before <= 16 * 1024,
        "{before} bytes at the default settings"
    );
    let mut x = 0x2545_f491_4f6c_dd1du64;
    let n = count(|| {
        for _ in 0..100_000_000u32 {
            // A stream with no loops, so the guard keeps working on every token.
            let v = guard.push_token((common::xorshift(&mut x) >> 32) as u32, None);
            assert_ne!(v.action, Action::Halt);
        }
    });
    assert_eq!(n, 0);
    assert_eq!(guard.stats().symbols, 100_000_000);
    assert_eq!(guard.memory_usage(), before);
}

#[test]
fn reset_and_clone_keep_their_promises() {
    let config = StreamConfig::default();
    let mut guard = StreamGuard::new(&config);
    for _ in 0..1000 {
        guard.push_token(7, Some(b" again"));
    }
    assert_eq!(count(|| guard.reset()), 0);
    // A clone copies the buffers once, and then pushes to it allocate nothing either.
    let mut copy = guard.clone();
    assert_eq!(
        count(|| {
            std::hint::black_box(copy.push_token(1, Some(b"x")));
        }),
        0
    );
    assert_eq!(copy.memory_usage(), guard.memory_usage());
}

/// Speculative decoding: the first checkpoint allocates the copy, and from then on checkpoints,
/// drafts, rollbacks and commits allocate nothing, over real generations.
#[test]
fn checkpoints_after_the_first_never_allocate() {
    let config = StreamConfig::default();
    let mut guard = StreamGuard::new(&config);
    let before = guard.memory_usage();
    assert!(count(|| guard.checkpoint()) > 0);
    let with_drafts = guard.memory_usage();
    assert!(with_drafts > before);
    let records = common::load("smollm2-sample.jsonl");
    let mut rollbacks = 0;
    let n = count(|| {
        for rec in &records {
            guard.reset();
            for (i, (&id, piece)) in rec.ids.iter().zip(&rec.pieces).enumerate() {
                if i % 4 == 0 {
                    guard.checkpoint();
                }
                guard.push_token(id, Some(piece));
                guard.push_token(id ^ 1, None);
                if guard.rollback(1).is_ok() {
                    rollbacks += 1;
                }
                if i % 4 == 3 {
                    guard.commit();
                }
            }
        }
    });
    assert_eq!(n, 0);
    assert!(rollbacks > 1000);
    assert_eq!(guard.memory_usage(), with_drafts);
}

/// The C push path and a pool batch allocate nothing either.
#[test]
fn the_c_abi_push_and_pool_batch_never_allocate() {
    use loopguard::ffi::*;
    use std::ptr;
    unsafe {
        let mut c = std::mem::MaybeUninit::<lg_stream_config>::uninit();
        lg_stream_config_init(c.as_mut_ptr());
        let c = c.assume_init();
        let mut s = ptr::null_mut();
        assert_eq!(lg_stream_new(&c, &mut s), lg_status::LG_OK);
        let mut pool = ptr::null_mut();
        assert_eq!(lg_pool_new(&c, 256, &mut pool), lg_status::LG_OK);
        let mut slots = vec![0u64; 256];
        for slot in slots.iter_mut() {
            assert_eq!(lg_pool_add(pool, slot), lg_status::LG_OK);
        }
        let mut tokens = vec![0u32; 256];
        let mut actions = vec![0u8; 256];
        let mut halts = 0;
        let n = count(|| {
            for i in 0..2000u32 {
                let mut a = lg_action::LG_ACTION_CONTINUE;
                lg_stream_push_token(s, i % 13, b" piece".as_ptr(), 6, &mut a);
                lg_stream_push_text(s, b"some text ".as_ptr(), 10, &mut a);
                for (k, t) in tokens.iter_mut().enumerate() {
                    *t = if k % 2 == 0 {
                        i % (k as u32 + 2)
                    } else {
                        i + k as u32 * 7919
                    };
                }
                lg_pool_push(
                    pool,
                    slots.as_ptr(),
                    tokens.as_ptr(),
                    256,
                    actions.as_mut_ptr(),
                );
                halts += actions
                    .iter()
                    .filter(|&&x| x == lg_action::LG_ACTION_HALT as u8)
                    .count();
            }
        });
        assert_eq!(n, 0);
        assert!(halts > 0);
        lg_pool_free(pool);
        lg_stream_free(s);
    }
}

/// Code loops take the judge's paths for code (a declaration made again, a statement
/// unrolled, a block written again, a ladder, a list filled with one item, a key given
/// again): none of them allocates either, with pieces or as text.
#[test]
fn code_loops_never_allocate() {
    let loops = [
        "int main(void) {\n".to_string() + &"    private int color;\n".repeat(40),
        "fn main() {\n".to_string() + &"    point_double(r, r);\n".repeat(40),
        "def f():\n".to_string()
            + &"    reply = session.poll()\n    assert reply is None\n\n".repeat(20),
        "switch (n) {\n".to_string()
            + &(0..60)
                .map(|i| format!("    case {i}: return lane({i});\n"))
                .collect::<String>(),
        "let table = [\n".to_string() + &"    Token::U8(0),\n".repeat(60),
        "config = {\n".to_string() + &"    \"name\": \"value\",\n".repeat(40),
    ];
    let config = StreamConfig::new(&StreamSettings::preset(Preset::Balanced)).unwrap();
    let mut guard = StreamGuard::new(&config);
    let mut halts = 0;
    let n = count(|| {
        for text in &loops {
            guard.reset();
            for word in text.split_inclusive([' ', '\n']) {
                let id = word
                    .bytes()
                    .fold(7u32, |h, b| h.wrapping_mul(31) ^ b as u32)
                    % 50_000;
                let v = guard.push_token(id, Some(word.as_bytes()));
                if v.action == Action::Halt {
                    halts += 1;
                    break;
                }
            }
            guard.reset();
            halts += common::feed_text(&mut guard, text.as_bytes(), 7).is_some() as u32;
        }
    });
    assert_eq!(n, 0);
    assert!(halts >= 8, "the loops halt ({halts})");
}
