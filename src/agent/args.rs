//! Tool-call arguments: one hash that says "the same call", and a small sketch that says "a
//! similar call".
//!
//! serde_json parses the arguments and a visitor hashes them as it goes, so no JSON tree is
//! built: time is linear in the input and memory is one scratch buffer, whatever the size.
//! Canonical hashing sorts object keys (members are combined commutatively) and reads `1.0`
//! as `1`; keys named in the ignore list are skipped at any depth.

use std::fmt;
use std::io::Write as _;

use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use xxhash_rust::xxh3::xxh3_64_with_seed;

/// Features kept per call for the near-duplicate test (bottom-k of the leaf features).
pub(crate) const SKETCH: usize = 16;

const TAG_NULL: u64 = 0x6e75_6c6c;
const TAG_TRUE: u64 = 0x7472_7565;
const TAG_FALSE: u64 = 0x6661_6c73;
const TAG_STR: u64 = 0x0073_7472;
const TAG_INT: u64 = 0x0069_6e74;
const TAG_FLOAT: u64 = 0x0066_6c74;
const TAG_SEQ: u64 = 0x0073_6571;
const TAG_MAP: u64 = 0x006d_6170;
const TAG_RAW: u64 = 0x0072_6177;
const TAG_HANDLE: u64 = 0x6861_6e64;

/// A bottom-k set of 32-bit features, sorted ascending, without duplicates.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Sketch {
    len: u8,
    /// Bit `f % 64` of every feature ever inserted: a quick upper bound on overlaps.
    mask: u64,
    items: [u32; SKETCH],
}

impl Sketch {
    pub(crate) fn insert(&mut self, f: u32) {
        self.mask |= 1 << (f % 64);
        let n = self.len as usize;
        let at = match self.items[..n].binary_search(&f) {
            Ok(_) => return,
            Err(at) => at,
        };
        if n == SKETCH {
            if at == SKETCH {
                return; // larger than every kept feature
            }
            self.items.copy_within(at..SKETCH - 1, at + 1);
        } else {
            self.items.copy_within(at..n, at + 1);
            self.len += 1;
        }
        self.items[at] = f;
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.len == 0
    }

    fn as_slice(&self) -> &[u32] {
        &self.items[..self.len as usize]
    }

    /// `similarity(other) >= threshold`, rejecting most dissimilar pairs from the masks alone.
    pub(crate) fn at_least(&self, other: &Sketch, threshold: f32) -> bool {
        let (a, b) = (self.len as u32, other.len as u32);
        if a > 0 && b > 0 {
            let both = (self.mask & other.mask).count_ones().min(a.min(b));
            if (both as f32) < threshold * a.max(b) as f32 {
                return false;
            }
        }
        self.similarity(other) >= threshold
    }

    /// Estimated Jaccard similarity: exact while both sets fit the sketch.
    pub(crate) fn similarity(&self, other: &Sketch) -> f32 {
        let (a, b) = (self.as_slice(), other.as_slice());
        if a.is_empty() && b.is_empty() {
            return 1.0;
        }
        // Walk the union in order, keeping its SKETCH smallest, and count what both hold.
        let (mut i, mut j, mut union, mut both) = (0, 0, 0u32, 0u32);
        while union < SKETCH as u32 && (i < a.len() || j < b.len()) {
            match (a.get(i), b.get(j)) {
                (Some(x), Some(y)) if x == y => {
                    both += 1;
                    i += 1;
                    j += 1;
                }
                (Some(x), Some(y)) if x < y => i += 1,
                (Some(_), None) => i += 1,
                _ => j += 1,
            }
            union += 1;
        }
        both as f32 / union as f32
    }
}

/// What a call's arguments reduce to.
#[derive(Clone, Debug, Default)]
pub(crate) struct ArgsDigest {
    /// Equal for equal calls (canonically, when asked), whatever the bytes.
    pub hash: u64,
    /// The arguments parsed as JSON. When not, `hash` is of the trimmed raw bytes.
    pub valid: bool,
    /// Leaf features with numbers folded, for the near-duplicate test.
    pub sketch: Sketch,
    /// The one string value, when the arguments hold exactly one leaf (`git status` of
    /// `{"command": "git status"}`), for messages.
    pub preview: Option<String>,
}

/// Hashes `raw` arguments; in the sketch every number reads the same (line numbers, offsets
/// and counters vary in near duplicates) while strings stay exact. Empty input is JSON `null`. Never panics, whatever the bytes;
/// nesting deeper than serde_json's limit (128) counts as invalid JSON.
///
/// The handles the environment gave out are folded: a value (a number, or a string such as
/// `bash_3`) whose [`handle_hash`] is in `handles` is the handle an answer named (`terminal ID
/// 8`), passed back, not a choice of the agent's.
pub(crate) fn digest(
    raw: &[u8],
    canonical: bool,
    ignored: [&[String]; 2],
    handles: &[u64],
) -> ArgsDigest {
    let trimmed = super::text::trim_ascii(raw);
    if trimmed.is_empty() {
        return ArgsDigest {
            hash: TAG_NULL,
            valid: true,
            sketch: Sketch::default(),
            preview: None,
        };
    }
    let mut walk = Walk {
        canonical,
        ignored,
        handles,
        sketch: Sketch::default(),
        leaves: 0,
        preview: None,
    };
    let mut de = serde_json::Deserializer::from_slice(trimmed);
    let parsed = Node {
        walk: &mut walk,
        path: 0,
    }
    .deserialize(&mut de)
    .and_then(|h| de.end().map(|()| h));
    match parsed {
        Ok(hash) => ArgsDigest {
            hash,
            valid: true,
            sketch: walk.sketch,
            preview: if walk.leaves == 1 { walk.preview } else { None },
        },
        Err(_) => {
            let hash = xxh3_64_with_seed(trimmed, TAG_RAW);
            let mut sketch = Sketch::default();
            sketch.insert((hash >> 32) as u32);
            ArgsDigest {
                hash,
                valid: false,
                sketch,
                preview: None,
            }
        }
    }
}

struct Walk<'a> {
    canonical: bool,
    ignored: [&'a [String]; 2],
    handles: &'a [u64],
    sketch: Sketch,
    leaves: u32,
    preview: Option<String>,
}

/// Characters of an argument kept for messages.
const PREVIEW_CHARS: usize = 60;

impl Walk<'_> {
    fn leaf(&mut self, path: u64, folded: u64) {
        self.leaves += 1;
        let f = xxh3_64_with_seed(&folded.to_le_bytes(), path);
        self.sketch.insert((f >> 32) as u32);
    }

    fn string(&mut self, path: u64, s: &str) -> u64 {
        if self.leaves == 0 {
            let mut p = match s.char_indices().nth(PREVIEW_CHARS) {
                Some((cut, _)) => s[..cut].to_owned(),
                None => s.to_owned(),
            };
            if p.len() < s.len() {
                p.push('…');
            }
            self.preview = Some(p);
        }
        // Strings stay exact (`file1.ts` and `file2.ts` are different targets); numbers fold.
        let h = if self.is_handle(s.as_bytes()) {
            TAG_HANDLE
        } else {
            xxh3_64_with_seed(s.as_bytes(), TAG_STR)
        };
        self.leaf(path, h);
        h
    }

    fn is_handle(&self, token: &[u8]) -> bool {
        !self.handles.is_empty() && self.handles.contains(&handle_hash(token))
    }

    fn number(&mut self, path: u64, exact: u64) -> u64 {
        self.leaf(path, TAG_INT);
        exact
    }
}

/// The hash a handle is known by, in an answer and in arguments.
pub(crate) fn handle_hash(token: &[u8]) -> u64 {
    xxh3_64_with_seed(token, TAG_HANDLE)
}

fn combine(a: u64, b: u64) -> u64 {
    xxh3_64_with_seed(&b.to_le_bytes(), a)
}

/// One JSON value at `path`; deserializes to its hash.
struct Node<'w, 'a> {
    walk: &'w mut Walk<'a>,
    path: u64,
}

impl<'de> DeserializeSeed<'de> for Node<'_, '_> {
    type Value = u64;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<u64, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Node<'_, '_> {
    type Value = u64;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_unit<E: de::Error>(self) -> Result<u64, E> {
        self.walk.leaf(self.path, TAG_NULL);
        Ok(TAG_NULL)
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<u64, E> {
        let h = if v { TAG_TRUE } else { TAG_FALSE };
        self.walk.leaf(self.path, h);
        Ok(h)
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<u64, E> {
        if !self.walk.handles.is_empty() {
            // The number as an answer spells it, written on the stack.
            let mut digits = [0u8; 20];
            let mut w = &mut digits[..];
            let _ = write!(w, "{v}");
            let n = 20 - w.len();
            if self.walk.is_handle(&digits[..n]) {
                return Ok(self.walk.number(self.path, TAG_HANDLE));
            }
        }
        Ok(self
            .walk
            .number(self.path, xxh3_64_with_seed(&v.to_le_bytes(), TAG_INT)))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<u64, E> {
        match i64::try_from(v) {
            Ok(v) => self.visit_i64(v),
            Err(_) => Ok(self
                .walk
                .number(self.path, xxh3_64_with_seed(&v.to_le_bytes(), TAG_FLOAT))),
        }
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<u64, E> {
        // `1.0` == `1` when canonical (and in JSON.stringify, which writes 1.0 as 1).
        if v.fract() == 0.0 && v.abs() < 9.0e15 {
            return self.visit_i64(v as i64);
        }
        Ok(self.walk.number(
            self.path,
            xxh3_64_with_seed(&v.to_bits().to_le_bytes(), TAG_FLOAT),
        ))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<u64, E> {
        Ok(self.walk.string(self.path, v))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<u64, A::Error> {
        // Elements share their parent's path: a list of paths is a set of features.
        let mut h = TAG_SEQ;
        while let Some(e) = seq.next_element_seed(Node {
            walk: &mut *self.walk,
            path: self.path,
        })? {
            h = combine(h, e);
        }
        Ok(h)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<u64, A::Error> {
        let canonical = self.walk.canonical;
        let (mut acc, mut n) = (0u64, 0u64);
        while let Some(key) = map.next_key_seed(KeyHash(self.walk.ignored))? {
            let Some(key) = key else {
                map.next_value::<IgnoredAny>()?;
                continue;
            };
            let path = combine(self.path, key);
            let v = map.next_value_seed(Node {
                walk: &mut *self.walk,
                path,
            })?;
            let member = combine(key, v);
            // Sorted keys without sorting: a sum of well-mixed member hashes ignores order.
            acc = if canonical {
                acc.wrapping_add(member)
            } else {
                combine(acc, member)
            };
            n += 1;
        }
        Ok(combine(acc, TAG_MAP ^ n))
    }
}

/// A map key: its hash, or `None` when the key is in the ignore lists.
struct KeyHash<'a>([&'a [String]; 2]);

impl<'de> DeserializeSeed<'de> for KeyHash<'_> {
    type Value = Option<u64>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Option<u64>, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for KeyHash<'_> {
    type Value = Option<u64>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object key")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Option<u64>, E> {
        if self.0.iter().any(|list| list.iter().any(|k| k == v)) {
            return Ok(None);
        }
        Ok(Some(xxh3_64_with_seed(v.as_bytes(), TAG_STR)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(s: &str) -> ArgsDigest {
        digest(s.as_bytes(), true, [&["request_id".to_string()], &[]], &[])
    }

    #[test]
    fn canonical_equality() {
        assert_eq!(
            d(r#"{"a":1,"b":[1,2]}"#).hash,
            d(r#"{ "b":[1,2], "a":1.0 }"#).hash
        );
        assert_ne!(
            d(r#"{"a":1,"b":[1,2]}"#).hash,
            d(r#"{"a":1,"b":[2,1]}"#).hash
        );
        assert_ne!(d(r#"{"a":"1"}"#).hash, d(r#"{"a":1}"#).hash);
        assert_ne!(d(r#"{"a":{"b":1}}"#).hash, d(r#"{"a":{"c":1}}"#).hash);
        assert_eq!(
            d(r#"{"q":"x","request_id":"r-1"}"#).hash,
            d(r#"{"request_id":"r-2","q":"x"}"#).hash
        );
        assert_eq!(d("").hash, d("null").hash);
    }

    #[test]
    fn key_order_matters_when_not_canonical() {
        let a = digest(br#"{"a":1,"b":2}"#, false, [&[], &[]], &[]);
        let b = digest(br#"{"b":2,"a":1}"#, false, [&[], &[]], &[]);
        assert_ne!(a.hash, b.hash);
    }

    #[test]
    fn invalid_json_is_hashed_raw() {
        let a = d("{not json");
        assert!(!a.valid);
        assert_eq!(a.hash, d("  {not json ").hash);
        assert_ne!(a.hash, d("{not json!").hash);
        let deep = "[".repeat(10_000);
        assert!(!d(&deep).valid);
    }

    #[test]
    fn sketch_folds_numbers() {
        let a = d(r#"{"path":"src/foo.ts","start_line":1}"#);
        let b = d(r#"{"path":"src/foo.ts","start_line":50}"#);
        assert_ne!(a.hash, b.hash);
        assert_eq!(a.sketch.similarity(&b.sketch), 1.0);
        let c = d(r#"{"path":"src/bar.ts","start_line":50}"#);
        assert!((a.sketch.similarity(&c.sketch) - 1.0 / 3.0).abs() < 1e-6);
        let e = d(r#"{"path":"src/foo2.ts","start_line":50}"#);
        assert!(a.sketch.similarity(&e.sketch) < 0.5);
        for (x, y) in [(&a, &b), (&a, &c), (&a, &e), (&b, &c)] {
            for th in [0.1, 0.3, 0.5, 0.8, 1.0] {
                let exact = x.sketch.similarity(&y.sketch) >= th;
                assert_eq!(x.sketch.at_least(&y.sketch, th), exact);
            }
        }
    }

    #[test]
    fn sketch_keeps_the_smallest() {
        let mut s = Sketch::default();
        for f in (0..100u32).rev() {
            s.insert(f * 7);
            s.insert(f * 7);
        }
        assert_eq!(
            s.as_slice(),
            &(0..16).map(|f| f * 7).collect::<Vec<_>>()[..]
        );
    }
}
