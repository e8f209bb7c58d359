//! The state of the files as the agent's edits leave it.
//!
//! A coding agent's reads and test runs are fresh observations after an edit, so the guard keys
//! them by the state of the files they saw. Counting writes would make every edit a new state;
//! but an agent that puts back what it took out (a fix, its revert, the fix again) is back where
//! it was, and a test rerun there answers what it answered there before. So the state is the sum
//! of the edits applied: an edit that names the text it replaces (`old_str` → `new_str`, a
//! SEARCH/REPLACE block) adds `h(old) ^ h(new)` to its file's state, and its revert adds the
//! same again, which cancels; a whole-file write sets the file's state to the hash of what it
//! wrote. A shell's command line says what it does in a few shapes too: a file written whole
//! from a here-document (`cat > F <<'EOF'`) or deleted (`rm F`), and version control's own
//! reverts: `git stash` sets the files aside and `git stash pop` brings back the state they
//! were set aside in; `git checkout -- F` and `git restore F` put F back as committed, `git
//! checkout .` and `git reset --hard` everything. A write whose effect the arguments do not say
//! (any other command, a line-range edit) makes a state never seen before, as counting did.
//!
//! Two different states may be told apart where they are equal (a file written whole with the
//! text a series of edits had made is a new state), never the reverse, but for the cost of a
//! 64-bit hash collision.

use std::borrow::Cow;

use xxhash_rust::xxh3::xxh3_64_with_seed;

/// Files whose state is held; an older one is forgotten, and the state it leaves becomes new.
const FILES: usize = 64;

/// A held file: its path's hash (0: a free slot), its state, and the last replacement made in
/// it.
#[derive(Clone, Copy, Debug, Default)]
struct Held {
    path: u64,
    state: u64,
    last: u64,
}

/// What a write does to the files, read from its arguments.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Edit {
    /// Text replaced in a file: the xor of the hashes of the old and the new text, and a hash
    /// of the two in their order (a revert has the same delta, not the same `id`).
    Replace { path: u64, delta: u64, id: u64 },
    /// A file written whole: the hash of its content.
    Whole { path: u64, content: u64 },
    /// What a shell's command line does to the working tree, in the order it does it (see
    /// [`TreeOp`]).
    Tree(TreeOps),
}

/// What a shell command does to the working tree, where the guard follows it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TreeOp {
    /// `git stash` (`push`, `save`): the changes set aside, the tree as committed.
    Stash,
    /// `git stash pop` (`drop: true`) or `apply`: the changes set aside brought back.
    Unstash { drop: bool },
    /// `git stash drop`: the changes set aside forgotten; the tree unchanged.
    Drop,
    /// `git checkout -- F`, `git restore F`: F as committed (the hash of its path).
    Restore(u64),
    /// `git checkout .`, `git restore .`, `git reset --hard`: every file as committed.
    RestoreAll,
    /// `git commit`: the files unchanged, but what "as committed" means moves on.
    Commit,
    /// A file written whole by a shell (`cat > F <<'EOF'`): its path's and content's hashes,
    /// as an editor's whole write has them (see [`whole`]).
    Write { path: u64, content: u64 },
    /// `rm F`: the file gone.
    Delete(u64),
}

/// The operation of a file written whole with `content`, hashed as [`read`] hashes an
/// editor's: the same text written either way is the same state.
pub(crate) fn whole(path: &str, content: &str) -> TreeOp {
    let path = path_hash(path);
    TreeOp::Write {
        path,
        content: text_hash(path, content) | 1,
    }
}

/// Up to [`TREE_OPS`] operations of one command line.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct TreeOps {
    ops: [Option<TreeOp>; TREE_OPS],
}

/// Operations one command line is read for; a line with more has an unknown effect.
pub(crate) const TREE_OPS: usize = 4;

impl TreeOps {
    /// Adds `op`; `false` when the line holds more than [`TREE_OPS`].
    pub(crate) fn push(&mut self, op: TreeOp) -> bool {
        match self.ops.iter_mut().find(|o| o.is_none()) {
            Some(slot) => {
                *slot = Some(op);
                true
            }
            None => false,
        }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.ops[0].is_none()
    }
}

/// Stashes held at once; a deeper one is forgotten.
const STASHES: usize = 4;

/// The files set aside by a stash, and the state the tree was left in.
#[derive(Clone, Copy, Debug)]
struct Stashed {
    held: [Held; FILES],
    len: usize,
    sum: u64,
    base_clean: bool,
    /// The state right after the stash: a pop onto anything else merges into a new state.
    clean: u64,
}

/// The files' states, and the sum of them all.
#[derive(Clone, Debug)]
pub(crate) struct Files {
    /// Stashes, newest last (allocated at the first stash: each copies the held files).
    stashes: Vec<Stashed>,
    /// Commits so far: "as committed" is another tree after each.
    commits: u64,
    /// The held files' states are changes from the tree as committed (after a whole-tree
    /// revert), not from the tree the session began with.
    base_clean: bool,
    /// Oldest first.
    held: [Held; FILES],
    len: usize,
    /// The xor of every held file's contribution, and the unknown writes'.
    sum: u64,
    unknown: u64,
}

impl Default for Files {
    fn default() -> Files {
        Files {
            stashes: Vec::new(),
            commits: 0,
            base_clean: false,
            held: [Held::default(); FILES],
            len: 0,
            sum: 0,
            unknown: 0,
        }
    }
}

impl Files {
    /// Bytes held on the heap: the stashes (at most `STASHES`).
    pub(crate) fn heap_usage(&self) -> usize {
        self.stashes.capacity() * std::mem::size_of::<Stashed>()
    }

    /// The state of the files: 0 before any write.
    pub(crate) fn state(&self) -> u64 {
        self.sum
    }

    /// Applies a write whose effect its arguments say, and returns the new state. The same
    /// replacement made again in a file, with none other between, leaves it as it was: it
    /// applied to what the first one wrote (text that holds its old text, as an insertion does),
    /// and says no more than the first.
    pub(crate) fn apply(&mut self, edit: Edit) -> u64 {
        match edit {
            Edit::Tree(ops) => {
                for op in ops.ops.into_iter().flatten() {
                    self.tree_op(op);
                }
            }
            Edit::Replace { path, delta, id } => {
                let i = self.slot(path);
                let h = &mut self.held[i];
                if id != h.last {
                    h.last = id;
                    let state = h.state ^ delta;
                    self.set(i, state);
                }
            }
            Edit::Whole { path, content } => {
                let i = self.slot(path);
                self.held[i].last = 0;
                self.set(i, content);
            }
        }
        self.sum
    }

    /// The slot of the file at `path`, held from now on if it was not.
    fn slot(&mut self, path: u64) -> usize {
        match self.held[..self.len].iter().position(|h| h.path == path) {
            Some(i) => i,
            None => self.admit(path),
        }
    }

    /// Gives the file in slot `i` its new state, and the sum its new share.
    fn set(&mut self, i: usize, state: u64) {
        let h = &mut self.held[i];
        self.sum ^= contribution(h.path, h.state) ^ contribution(h.path, state);
        h.state = state;
    }

    /// The tree as committed: no file held differs from it. Its state is a constant of its
    /// own (the tree may have differed from the commit when the session began).
    fn clean(&mut self) -> u64 {
        self.held = [Held::default(); FILES];
        self.len = 0;
        self.base_clean = true;
        self.sum = xxh3_64_with_seed(&self.commits.to_le_bytes(), CLEAN_SEED);
        self.sum
    }

    fn tree_op(&mut self, op: TreeOp) {
        match op {
            TreeOp::Stash => {
                if self.stashes.len() == STASHES {
                    self.stashes.remove(0);
                }
                let (held, len, sum, base_clean) = (self.held, self.len, self.sum, self.base_clean);
                let clean = self.clean();
                self.stashes.push(Stashed {
                    held,
                    len,
                    sum,
                    base_clean,
                    clean,
                });
            }
            TreeOp::Unstash { drop } => match self.stashes.last().copied() {
                // Onto the tree the stash left: back where it was set aside.
                Some(s) if s.clean == self.sum => {
                    (self.held, self.len, self.sum, self.base_clean) =
                        (s.held, s.len, s.sum, s.base_clean);
                    if drop {
                        self.stashes.pop();
                    }
                }
                _ => {
                    if drop {
                        self.stashes.pop();
                    }
                    self.apply_unknown();
                }
            },
            TreeOp::Drop => {
                self.stashes.pop();
            }
            // Back to 0, the state it had at the base, when the base is the commit; otherwise
            // a state of its own.
            TreeOp::Restore(path) => {
                let content = if self.base_clean {
                    0
                } else {
                    xxh3_64_with_seed(&self.commits.to_le_bytes(), path ^ CLEAN_SEED) | 1
                };
                self.apply(Edit::Whole { path, content });
            }
            TreeOp::RestoreAll => {
                self.clean();
            }
            TreeOp::Write { path, content } => {
                self.apply(Edit::Whole { path, content });
            }
            TreeOp::Delete(path) => {
                let content = xxh3_64_with_seed(&path.to_le_bytes(), DELETED_SEED) | 1;
                self.apply(Edit::Whole { path, content });
            }
            TreeOp::Commit => {
                self.commits += 1;
                self.base_clean = false;
                self.apply_unknown();
            }
        }
    }

    /// A write whose effect is unknown: a state never seen before.
    pub(crate) fn apply_unknown(&mut self) -> u64 {
        self.unknown += 1;
        self.sum ^= xxh3_64_with_seed(&self.unknown.to_le_bytes(), UNKNOWN_SEED);
        self.sum
    }

    /// A slot for a file not held, forgetting the oldest when all are taken: its state stays in
    /// the sum, which an unknown write then makes new, since the files it summed can no longer
    /// be told.
    fn admit(&mut self, path: u64) -> usize {
        if self.len == FILES {
            self.held.copy_within(1.., 0);
            self.len -= 1;
            self.apply_unknown();
        }
        self.held[self.len] = Held {
            path,
            ..Held::default()
        };
        self.len += 1;
        self.len - 1
    }
}

const UNKNOWN_SEED: u64 = 0x5eed_0f0d_df11_e500;
/// The tree as committed (see [`Files::clean`]).
const CLEAN_SEED: u64 = 0xc1ea_0c0f_fee0_0001;
/// A file deleted.
const DELETED_SEED: u64 = 0xde1e_7ed0_f11e_0002;

/// A file's share of the sum: none while it is as it was before the session.
fn contribution(path: u64, state: u64) -> u64 {
    if state == 0 {
        0
    } else {
        xxh3_64_with_seed(&state.to_le_bytes(), path)
    }
}

fn text_hash(path: u64, text: &str) -> u64 {
    xxh3_64_with_seed(text.as_bytes(), path ^ 0x7e47)
}

pub(crate) fn path_hash(path: &str) -> u64 {
    // Never 0, the free slot's mark.
    xxh3_64_with_seed(path.as_bytes(), 0x9a74) | 1
}

/// What a write does, read from an editor's JSON arguments: the path (`path`, `file_path`,
/// `filePath`, `filepath`, `absolute_path`, `target_file`, `file`), then text replaced
/// (`old_str`/`new_str` and their spellings: `old_string`, `oldString`, `oldText`, `old_text`,
/// Augment's `old_str_1`, `search`/`replace`; a list of them under `edits`; SEARCH/REPLACE
/// blocks under `diff`) or a whole file (`file_text`, `content`, `contents`). `None` for
/// anything else: its effect is unknown.
pub(crate) fn read(args: &[u8]) -> Option<Edit> {
    #[derive(serde::Deserialize)]
    struct Args<'a> {
        #[serde(
            borrow,
            alias = "file_path",
            alias = "filePath",
            alias = "filepath",
            alias = "absolute_path",
            alias = "target_file",
            alias = "file"
        )]
        path: Option<Cow<'a, str>>,
        // The pair's members, spelt out rather than flattened: a flattened struct makes serde
        // buffer every member of the object first.
        #[serde(
            borrow,
            alias = "old_string",
            alias = "oldString",
            alias = "oldText",
            alias = "old_text",
            alias = "old_str_1",
            alias = "search"
        )]
        old_str: Option<Cow<'a, str>>,
        #[serde(
            borrow,
            alias = "new_string",
            alias = "newString",
            alias = "newText",
            alias = "new_text",
            alias = "new_str_1",
            alias = "replace"
        )]
        new_str: Option<Cow<'a, str>>,
        // MultiEdit's list: each item a pair (read with the same names).
        #[serde(borrow, default)]
        edits: Vec<Args<'a>>,
        #[serde(borrow)]
        diff: Option<Cow<'a, str>>,
        #[serde(borrow, alias = "content", alias = "contents")]
        file_text: Option<Cow<'a, str>>,
    }
    let a: Args = serde_json::from_slice(args).ok()?;
    let path = path_hash(a.path.as_deref()?);
    let mut delta = 0u64;
    let mut id = path;
    let mut any = false;
    let mut add = |old: &str, new: &str| {
        if old != new {
            delta ^= text_hash(path, old) ^ text_hash(path, new);
        }
        id = text_hash(id, old).rotate_left(17) ^ text_hash(id, new);
        any = true;
    };
    let pairs = std::iter::once((&a.old_str, &a.new_str))
        .chain(a.edits.iter().map(|p| (&p.old_str, &p.new_str)));
    for pair in pairs {
        if let (Some(old), Some(new)) = pair {
            add(old, new);
        }
    }
    if let Some(diff) = &a.diff {
        for (old, new) in search_replace_blocks(diff) {
            add(&old, &new);
        }
    }
    if any {
        return Some(Edit::Replace {
            path,
            delta,
            id: id | 1,
        });
    }
    let content = a.file_text?;
    Some(Edit::Whole {
        path,
        content: text_hash(path, &content) | 1,
    })
}

/// The SEARCH/REPLACE blocks of a diff (Roo Code's `apply_diff`, Cline's `replace_in_file`):
/// `<<<<<<< SEARCH`, the old lines (after Roo's `:start_line:` header and its `-------` rule),
/// `=======`, the new lines, `>>>>>>> REPLACE`.
fn search_replace_blocks(diff: &str) -> Vec<(String, String)> {
    let mut blocks = Vec::new();
    let mut lines = diff.lines();
    while let Some(line) = lines.next() {
        if !line.trim_end().ends_with("SEARCH") || !line.starts_with("<<<<<<<") {
            continue;
        }
        let mut old = String::new();
        let mut new = String::new();
        let mut in_new = false;
        let mut header = true;
        for line in lines.by_ref() {
            let t = line.trim_end();
            if header && (t.starts_with(":start_line:") || t.starts_with(":end_line:")) {
                continue;
            }
            if header && t == "-------" {
                header = false;
                continue;
            }
            header = false;
            if !in_new && t == "=======" {
                in_new = true;
            } else if in_new && t.starts_with(">>>>>>>") {
                break;
            } else {
                let to = if in_new { &mut new } else { &mut old };
                to.push_str(line);
                to.push('\n');
            }
        }
        blocks.push((old, new));
    }
    blocks
}

#[cfg(test)]
mod tests {
    use super::*;

    fn replace(path: &str, old: &str, new: &str) -> Edit {
        let args = serde_json::json!({"command": "str_replace", "path": path, "old_str": old, "new_str": new});
        read(args.to_string().as_bytes()).unwrap()
    }

    #[test]
    fn a_revert_brings_the_files_back_to_where_they_were() {
        let mut files = Files::default();
        let s1 = files.apply(replace("a.py", "x // y", "x // y + 1"));
        assert_ne!(s1, 0);
        assert_eq!(files.apply(replace("a.py", "x // y + 1", "x // y")), 0);
        let s2 = files.apply(replace("a.py", "x // y", "(x + y) // y"));
        assert_ne!(s2, s1);
        // Through a third text and back: the same state as the first fix.
        files.apply(replace("a.py", "(x + y) // y", "-(-x // y)"));
        assert_eq!(files.apply(replace("a.py", "-(-x // y)", "x // y + 1")), s1);
    }

    #[test]
    fn the_same_replacement_again_changes_nothing_more() {
        let mut f = Files::default();
        let s1 = f.apply(replace("a.py", "x", "x\ny"));
        assert_eq!(f.apply(replace("a.py", "x", "x\ny")), s1);
        // After a revert, the fix made again is the fix.
        assert_eq!(f.apply(replace("a.py", "x\ny", "x")), 0);
        assert_eq!(f.apply(replace("a.py", "x", "x\ny")), s1);
    }

    #[test]
    fn a_stash_sets_the_changes_aside_and_a_pop_brings_them_back() {
        let vcs = |list: &[TreeOp]| {
            let mut o = TreeOps::default();
            for &op in list {
                assert!(o.push(op));
            }
            Edit::Tree(o)
        };
        let mut f = Files::default();
        let edited = f.apply(replace("a.py", "x", "y"));
        let clean = f.apply(vcs(&[TreeOp::Stash]));
        assert_ne!(clean, edited);
        assert_ne!(clean, 0);
        assert_eq!(f.apply(vcs(&[TreeOp::Unstash { drop: true }])), edited);
        // Again: the same two states.
        assert_eq!(f.apply(vcs(&[TreeOp::Stash])), clean);
        assert_eq!(f.apply(vcs(&[TreeOp::Unstash { drop: false }])), edited);
        // A pop onto a tree changed since the stash merges: a new state.
        f.apply(vcs(&[TreeOp::Stash]));
        f.apply(replace("b.py", "1", "2"));
        let merged = f.apply(vcs(&[TreeOp::Unstash { drop: true }]));
        assert!(![0, clean, edited].contains(&merged));
        // Stash and pop in one line leave the files as they were.
        let before = f.state();
        assert_eq!(
            f.apply(vcs(&[TreeOp::Stash, TreeOp::Unstash { drop: true }])),
            before
        );
    }

    #[test]
    fn a_file_restored_from_the_commit_is_the_same_state_each_time() {
        let restore = |p: &str| {
            let mut o = TreeOps::default();
            o.push(TreeOp::Restore(path_hash(p)));
            Edit::Tree(o)
        };
        let mut f = Files::default();
        f.apply(replace("a.py", "x", "y"));
        let restored = f.apply(restore("a.py"));
        f.apply(replace("a.py", "x", "z"));
        assert_eq!(f.apply(restore("a.py")), restored);
        // After the whole tree is put back, a restored file is as committed, as it was then.
        let mut all = TreeOps::default();
        all.push(TreeOp::RestoreAll);
        let clean = f.apply(Edit::Tree(all));
        f.apply(replace("a.py", "x", "w"));
        assert_eq!(f.apply(restore("a.py")), clean);
        // A commit moves what "as committed" is.
        let mut commit = TreeOps::default();
        commit.push(TreeOp::Commit);
        f.apply(Edit::Tree(commit));
        assert_ne!(f.apply(Edit::Tree(all)), clean);
    }

    #[test]
    fn the_same_edit_in_another_file_is_another_state() {
        let mut a = Files::default();
        let mut b = Files::default();
        assert_ne!(
            a.apply(replace("a.py", "1", "2")),
            b.apply(replace("b.py", "1", "2"))
        );
        // Two files edited and both put back.
        let mut f = Files::default();
        f.apply(replace("a.py", "1", "2"));
        f.apply(replace("b.py", "1", "2"));
        assert_ne!(f.apply(replace("a.py", "2", "1")), 0);
        assert_eq!(f.apply(replace("b.py", "2", "1")), 0);
    }

    #[test]
    fn a_file_written_whole_again_is_the_same_state() {
        let mut f = Files::default();
        let whole = |text: &str| {
            read(
                serde_json::json!({"file_path": "n.rs", "content": text})
                    .to_string()
                    .as_bytes(),
            )
            .unwrap()
        };
        let s1 = f.apply(whole("fn a() {}\n"));
        let s2 = f.apply(whole("fn b() {}\n"));
        assert_ne!(s1, s2);
        assert_eq!(f.apply(whole("fn a() {}\n")), s1);
        // An unknown write is new, and stays new.
        let u = f.apply_unknown();
        assert_ne!(u, s1);
        assert_ne!(f.apply(whole("fn b() {}\n")), s2);
    }

    #[test]
    fn edits_are_read_in_the_editors_shapes() {
        let multi = br#"{"file_path":"a.ts","edits":[{"old_string":"a","new_string":"b"},{"old_string":"c","new_string":"d"}]}"#;
        let mut f = Files::default();
        let s = f.apply(read(multi).unwrap());
        let undo = br#"{"file_path":"a.ts","edits":[{"old_string":"d","new_string":"c"},{"old_string":"b","new_string":"a"}]}"#;
        assert_ne!(s, 0);
        assert_eq!(f.apply(read(undo).unwrap()), 0);
        let diff = "<<<<<<< SEARCH\n:start_line:47\n-------\n    let a = 1;\n=======\n    let a = 2;\n>>>>>>> REPLACE\n";
        let back = "<<<<<<< SEARCH\n    let a = 2;\n=======\n    let a = 1;\n>>>>>>> REPLACE";
        let roo = |d: &str| {
            read(
                serde_json::json!({"path": "m.rs", "diff": d})
                    .to_string()
                    .as_bytes(),
            )
        };
        let s = f.apply(roo(diff).unwrap());
        assert_ne!(s, 0);
        assert_eq!(f.apply(roo(back).unwrap()), 0);
        // No path, no edit; a line-range edit or a view says no effect.
        assert_eq!(read(br#"{"old_str":"a","new_str":"b"}"#), None);
        assert_eq!(read(br#"{"command":"view","path":"a.py"}"#), None);
        assert_eq!(read(br#"{"path":"a.py","old_str":"a"}"#), None);
        assert_eq!(read(b"edit 5:5"), None);
    }

    #[test]
    fn files_past_the_table_are_forgotten_into_a_new_state() {
        let mut f = Files::default();
        let first = f.apply(replace("f0", "a", "b"));
        for i in 1..=FILES {
            f.apply(replace(&format!("f{i}"), "a", "b"));
        }
        // f0 was forgotten: putting it back cannot reach any earlier state.
        let mut states = vec![first];
        for i in (1..=FILES).rev() {
            states.push(f.apply(replace(&format!("f{i}"), "b", "a")));
        }
        assert_ne!(f.apply(replace("f0", "b", "a")), 0);
        assert!(!states.contains(&0));
    }
}
