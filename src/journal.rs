//! The journal of a speculative checkpoint: the old value of every array slot the guard's
//! pushes overwrite while a checkpoint holds them, so that a rollback puts back only what the
//! rolled-back pushes changed.
//!
//! A guard's state is its scalars (a copy of which is kept before each drafted push, see
//! `src/stream/speculative.rs`) and its arrays: the rings of symbols and bytes, and the tables
//! of n-gram sightings. The arrays are what make a guard 16 KiB, and a push changes a handful
//! of their slots. The journal is written by whoever is about to push (never inside the
//! detectors' loops): the stream guard notes the ring slots a push of `n` bytes can reach
//! before it starts, and each engine push notes the slots its symbol will write. A slot noted
//! twice is harmless: [`Journal::rewind`] puts back the oldest value last.

/// Which array a noted slot lies in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum Array {
    /// An engine's ring of symbols.
    Syms,
    /// An engine's n-gram index.
    Head,
    /// An engine's table of near-loop 4-gram sightings.
    Near,
    /// An engine's history for the dense pass.
    Hist,
    /// The text's ring of bytes.
    Ring,
    /// Where each recent stream symbol begins.
    Starts,
    /// Where each recent line begins.
    LineStarts,
}

impl Array {
    const ALL: [Array; 7] = [
        Array::Syms,
        Array::Head,
        Array::Near,
        Array::Hist,
        Array::Ring,
        Array::Starts,
        Array::LineStarts,
    ];
}

/// Which engine an engine array belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Owner {
    /// The stream's engine (token ids or words).
    Stream,
    /// The text's engine of lines.
    Lines,
}

/// Bits of a slot's index; the array and owner take the bits above.
const INDEX_BITS: u32 = 24;

/// One overwritten slot: where it is and what it held.
#[derive(Clone, Copy, Debug, Default)]
struct Write {
    at: u32,
    old: u32,
}

/// Old values of array slots, newest last, in memory allocated once.
#[derive(Clone)]
pub(crate) struct Journal {
    writes: Box<[Write]>,
    len: usize,
    /// A write did not fit: the pushes from the one that noted it on cannot be taken back.
    lost: bool,
}

impl Journal {
    /// Room for `capacity` writes.
    pub fn new(capacity: usize) -> Journal {
        Journal {
            writes: vec![Write::default(); capacity].into_boxed_slice(),
            len: 0,
            lost: false,
        }
    }

    pub fn memory_usage(&self) -> usize {
        std::mem::size_of::<Write>() * self.writes.len()
    }

    /// Writes noted so far: a mark to [`rewind`](Self::rewind) to.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Writes that can still be noted.
    pub fn room(&self) -> usize {
        self.writes.len() - self.len
    }

    /// Whether a write did not fit since the last [`clear`](Self::clear).
    pub fn lost(&self) -> bool {
        self.lost
    }

    pub fn clear(&mut self) {
        self.len = 0;
        self.lost = false;
    }

    /// Notes that slot `index` of `array` (of `owner`, for an engine's) held `old`.
    #[inline]
    pub fn note(&mut self, owner: Owner, array: Array, index: usize, old: u32) {
        debug_assert!(index < 1 << INDEX_BITS);
        let tag = (owner as u32) << 3 | array as u32;
        match self.writes.get_mut(self.len) {
            Some(w) => {
                *w = Write {
                    at: tag << INDEX_BITS | index as u32,
                    old,
                };
                self.len += 1;
            }
            None => self.lost = true,
        }
    }

    /// Puts back, newest first, every write noted after `mark`, by calling `put` with where
    /// it was and what it held, and forgets them.
    pub fn rewind(&mut self, mark: usize, mut put: impl FnMut(Owner, Array, usize, u32)) {
        for w in self.writes[mark..self.len].iter().rev() {
            let tag = w.at >> INDEX_BITS;
            let owner = if tag >> 3 == 0 {
                Owner::Stream
            } else {
                Owner::Lines
            };
            let array = Array::ALL[(tag & 7) as usize];
            put(
                owner,
                array,
                (w.at & ((1 << INDEX_BITS) - 1)) as usize,
                w.old,
            );
        }
        self.len = mark;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rewinding_puts_back_the_oldest_value_of_a_slot_noted_twice() {
        let mut slots = [7u32, 8, 9];
        let mut j = Journal::new(4);
        j.note(Owner::Lines, Array::Head, 1, slots[1]);
        slots[1] = 20;
        j.note(Owner::Lines, Array::Head, 1, slots[1]);
        slots[1] = 30;
        let mark = j.len();
        j.note(Owner::Stream, Array::Ring, 2, slots[2]);
        slots[2] = 40;
        j.rewind(mark, |o, a, i, old| {
            assert_eq!((o, a), (Owner::Stream, Array::Ring));
            slots[i] = old;
        });
        assert_eq!(slots, [7, 30, 9]);
        j.rewind(0, |o, a, i, old| {
            assert_eq!((o, a), (Owner::Lines, Array::Head));
            slots[i] = old;
        });
        assert_eq!(slots, [7, 8, 9]);
        assert_eq!(j.len(), 0);
    }

    #[test]
    fn a_write_that_does_not_fit_is_lost_not_written_past_the_end() {
        let mut j = Journal::new(1);
        j.note(Owner::Stream, Array::Syms, 0, 1);
        assert!(!j.lost());
        j.note(Owner::Stream, Array::Syms, 1, 2);
        assert!(j.lost());
        assert_eq!((j.len(), j.room()), (1, 0));
        j.clear();
        assert!(!j.lost());
    }
}
