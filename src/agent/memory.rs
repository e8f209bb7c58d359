//! Loop memory across sessions: the fingerprints of the loops a guard reported, exported as a
//! few bytes and imported into the guard of a later session, which then warns one repeat
//! earlier when the agent falls into the same loop again.
//!
//! What is kept is what the detectors already compare: the kind of loop, the 64-bit hash of
//! the call it was about (tool and canonical arguments, as the identical-call detector keys
//! calls, independent of the files' state) and how many times it was reported. Never text.
//! A hash of a short argument can be guessed by hashing candidates (it is not a commitment),
//! so a memory deserves the care the tool names and commands it came from do.
//!
//! # Format, version 1 (little-endian)
//!
//! | bytes | field |
//! |---|---|
//! | 4 | magic `LGAM` |
//! | 1 | version, 1 |
//! | 1 | reserved, 0 |
//! | 2 | entry count `n`, at most [`MAX_MEMORY`] |
//! | 13 × n | entries: kind (`AgentLoopKind` value, 1 byte), key (8), count (4) |
//! | 8 | XXH3-64 of every byte before it |
//!
//! An import checks every field and the checksum and names what is wrong; nothing is merged
//! from a memory that fails. A newer version is refused, not guessed at.

use std::fmt;

use xxhash_rust::xxh3::xxh3_64;

use super::AgentLoopKind;

/// Loops a memory holds; past it the least reported one is forgotten.
pub const MAX_MEMORY: usize = 256;
/// Bytes of an exported memory at most.
pub const MAX_MEMORY_BYTES: usize = HEADER + ENTRY * MAX_MEMORY + CHECKSUM;

const MAGIC: &[u8; 4] = b"LGAM";
const VERSION: u8 = 1;
const HEADER: usize = 8;
const ENTRY: usize = 13;
const CHECKSUM: usize = 8;

/// Why an import was refused. The guard's memory is left as it was.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemoryError(String);

impl fmt::Display for MemoryError {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "memory: {}", self.0)
    }
}

impl std::error::Error for MemoryError {}

/// One remembered loop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Entry {
    kind: AgentLoopKind,
    key: u64,
    count: u32,
    /// From an earlier session (imported, or kept over a reset): only such a loop makes the
    /// guard warn earlier. A loop of this session has its own thresholds to climb.
    earlier: bool,
}

/// The loops a guard reported or was given, bounded.
#[derive(Clone, Debug, Default)]
pub(crate) struct LoopMemory {
    entries: Vec<Entry>,
}

impl LoopMemory {
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether a loop of `kind` on `key` is remembered from an earlier session.
    pub fn recalls(&self, kind: AgentLoopKind, key: u64) -> bool {
        self.entries
            .iter()
            .any(|e| e.earlier && e.kind == kind && e.key == key)
    }

    /// The session is reset: its own loops are forgotten (as the rest of it is), the loops
    /// given from earlier sessions stay.
    pub fn forget_session(&mut self) {
        self.entries.retain(|e| e.earlier);
    }

    /// Counts `count` more reports of a loop of `kind` on `key`, from an earlier session or
    /// this one; when full, the least reported loop (the oldest among equals) makes room,
    /// unless this one is reported less, and only a loop of this session for another one.
    pub fn record(&mut self, kind: AgentLoopKind, key: u64, count: u32, earlier: bool) {
        if let Some(e) = self
            .entries
            .iter_mut()
            .find(|e| e.kind == kind && e.key == key)
        {
            e.count = e.count.saturating_add(count);
            e.earlier |= earlier;
            return;
        }
        let entry = Entry {
            kind,
            key,
            count,
            earlier,
        };
        if self.entries.len() < MAX_MEMORY {
            self.entries.push(entry);
            return;
        }
        // A loop of this session never pushes out one given from an earlier session: a reset
        // would then lose both.
        let least = self
            .entries
            .iter()
            .enumerate()
            .filter(|(_, e)| earlier || !e.earlier)
            .min_by_key(|(_, e)| e.count);
        if let Some((least, _)) = least.filter(|(_, e)| e.count <= count) {
            self.entries.remove(least);
            self.entries.push(entry);
        }
    }

    /// Appends the memory in the version 1 format to `out`.
    pub fn export(&self, out: &mut Vec<u8>) {
        let start = out.len();
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&[VERSION, 0]);
        out.extend_from_slice(&(self.entries.len() as u16).to_le_bytes());
        for e in &self.entries {
            out.push(e.kind as u8);
            out.extend_from_slice(&e.key.to_le_bytes());
            out.extend_from_slice(&e.count.to_le_bytes());
        }
        let sum = xxh3_64(&out[start..]);
        out.extend_from_slice(&sum.to_le_bytes());
    }

    /// Checks a memory in the version 1 format and merges it; returns the loops it held.
    pub fn import(&mut self, bytes: &[u8]) -> Result<usize, MemoryError> {
        let fail = |msg: String| Err(MemoryError(msg));
        if bytes.len() < HEADER + CHECKSUM {
            return fail(format!(
                "{} bytes, shorter than an empty memory ({} bytes)",
                bytes.len(),
                HEADER + CHECKSUM
            ));
        }
        if &bytes[..4] != MAGIC {
            return fail("not a loopguard loop memory (no LGAM magic)".into());
        }
        if bytes[4] != VERSION {
            return fail(format!(
                "version {}, this library reads version {VERSION}",
                bytes[4]
            ));
        }
        if bytes[5] != 0 {
            return fail(format!("reserved byte {}, expected 0", bytes[5]));
        }
        let n = u16::from_le_bytes([bytes[6], bytes[7]]) as usize;
        if n > MAX_MEMORY {
            return fail(format!("{n} entries, at most {MAX_MEMORY}"));
        }
        let want = HEADER + ENTRY * n + CHECKSUM;
        if bytes.len() != want {
            return fail(format!(
                "{} bytes, a memory of {n} entries has {want}",
                bytes.len()
            ));
        }
        let body = &bytes[..want - CHECKSUM];
        let sum = u64::from_le_bytes(bytes[want - CHECKSUM..].try_into().expect("8 bytes"));
        if xxh3_64(body) != sum {
            return fail("checksum mismatch: the bytes were changed or cut".into());
        }
        let mut read = Vec::with_capacity(n);
        for (i, e) in body[HEADER..].chunks_exact(ENTRY).enumerate() {
            let Some(kind) = AgentLoopKind::from_u8(e[0]).filter(|k| *k != AgentLoopKind::None)
            else {
                return fail(format!("entry {i}: unknown loop kind {}", e[0]));
            };
            read.push(Entry {
                kind,
                key: u64::from_le_bytes(e[1..9].try_into().expect("8 bytes")),
                count: u32::from_le_bytes(e[9..13].try_into().expect("4 bytes")),
                earlier: true,
            });
        }
        for e in &read {
            self.record(e.kind, e.key, e.count, true);
        }
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn export_then_import_gives_the_same_memory() {
        let mut m = LoopMemory::default();
        m.record(AgentLoopKind::IdenticalCall, 42, 1, false);
        m.record(AgentLoopKind::IdenticalCall, 42, 2, false);
        m.record(AgentLoopKind::NoProgress, 7, 1, false);
        assert!(
            !m.recalls(AgentLoopKind::IdenticalCall, 42),
            "this session's own loop"
        );
        let mut bytes = Vec::new();
        m.export(&mut bytes);
        assert_eq!(bytes.len(), HEADER + 2 * ENTRY + CHECKSUM);
        let mut n = LoopMemory::default();
        assert_eq!(n.import(&bytes), Ok(2));
        assert!(n.entries.iter().all(|e| e.earlier));
        assert_eq!(
            n.entries
                .iter()
                .map(|e| (e.kind, e.key, e.count))
                .collect::<Vec<_>>(),
            m.entries
                .iter()
                .map(|e| (e.kind, e.key, e.count))
                .collect::<Vec<_>>()
        );
        m.forget_session();
        assert_eq!(m.len(), 0, "a reset forgets the session's own loops");
        n.forget_session();
        assert_eq!(n.len(), 2, "and keeps those given");
        assert!(n.recalls(AgentLoopKind::IdenticalCall, 42));
        assert!(!n.recalls(AgentLoopKind::NoProgress, 42));
    }

    #[test]
    fn every_defect_is_named_and_nothing_is_merged() {
        let mut m = LoopMemory::default();
        m.record(AgentLoopKind::IdenticalCall, 42, 1, false);
        let mut good = Vec::new();
        m.export(&mut good);
        let cases: Vec<(Vec<u8>, &str)> = vec![
            (good[..10].to_vec(), "shorter than an empty memory"),
            ([b"XXXX", &good[4..]].concat(), "no LGAM magic"),
            ([&good[..4], &[2], &good[5..]].concat(), "version 2"),
            (
                [&good[..6], &[2], &good[7..]].concat(),
                "a memory of 2 entries has 42",
            ),
            (
                [&good[..6], &[1, 1], &good[8..]].concat(),
                "257 entries, at most 256",
            ),
            ([&good[..], &[0]].concat(), "a memory of 1 entries has"),
            (
                {
                    let mut b = good.clone();
                    b[12] ^= 1;
                    b
                },
                "checksum mismatch",
            ),
        ];
        for (bytes, want) in cases {
            let mut n = LoopMemory::default();
            let e = n.import(&bytes).unwrap_err().to_string();
            assert!(e.contains(want), "{e} should say {want}");
            assert_eq!(n.len(), 0);
        }
        // An unknown kind with a valid checksum.
        let mut b = good[..good.len() - CHECKSUM].to_vec();
        b[HEADER] = 200;
        let sum = xxh3_64(&b);
        b.extend_from_slice(&sum.to_le_bytes());
        let e = LoopMemory::default().import(&b).unwrap_err().to_string();
        assert!(e.contains("entry 0: unknown loop kind 200"), "{e}");
    }

    #[test]
    fn a_full_memory_forgets_the_least_reported_loop() {
        let mut m = LoopMemory::default();
        for k in 0..MAX_MEMORY as u64 {
            m.record(AgentLoopKind::IdenticalCall, k, 1 + (k == 0) as u32, true);
        }
        m.record(AgentLoopKind::IdenticalCall, 1000, 1, true);
        assert_eq!(m.len(), MAX_MEMORY);
        assert!(m.recalls(AgentLoopKind::IdenticalCall, 1000));
        assert!(
            m.recalls(AgentLoopKind::IdenticalCall, 0),
            "reported twice: kept"
        );
        assert!(
            !m.recalls(AgentLoopKind::IdenticalCall, 1),
            "the oldest of the least reported"
        );
        let mut bytes = Vec::new();
        m.export(&mut bytes);
        assert_eq!(bytes.len(), MAX_MEMORY_BYTES);
        // A loop of this session does not push out a given one; a reset keeps all given.
        m.record(AgentLoopKind::IdenticalCall, 2000, 5, false);
        assert!(!m.entries.iter().any(|e| e.key == 2000));
        m.forget_session();
        assert_eq!(m.len(), MAX_MEMORY);
    }
}
