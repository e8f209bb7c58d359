//! The structure model of a text stream: what kind of line is being read — prose, a list
//! item, a heading, a field, a rule, a table row, code, a comment, markup or data — and
//! whether the lines around it are code.
//!
//! People repeat themselves on purpose in structured text: parallel declarations, tables of
//! constants, changelog entries, licence fields. A loop detector must not count that as a
//! model going round in circles, so the stream's detectors ask this model what they are
//! looking at. It reads language-agnostic cues only: indentation, the first bytes of a line
//! and its first word (known early, while the line is read), and at the end of the line its
//! make-up (letters, digits, brackets and operators, how it ends). Updates are O(1) per byte
//! at the head of a line and per 64-byte block after it, and nothing is allocated.

use crate::text::{is_rule_text, CLASS, SPACE};

const CODE_REGIONS: bool = true;

/// What a line is, once it has ended.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum LineKind {
    /// Nothing visible.
    #[default]
    Blank,
    /// Sentences.
    Prose,
    /// A bullet item (`* `, `- `, `+ `).
    ListItem,
    /// A line that ends with `:` and introduces what follows.
    Heading,
    /// `Name: value` (licence stanzas, headers).
    Field,
    /// A drawn rule (`---`, `━━━`).
    Rule,
    /// A markdown table row.
    TableRow,
    /// Code: inside a fence, indented in a code region, or shaped like code (brackets,
    /// operators, a statement end).
    Code,
    /// A comment line (`//`, `#`, `--`, `;`, `**`, `/*`).
    Comment,
    /// Markup: a line that opens with a tag or other markup (`<`, `@`, `>>>`).
    Markup,
    /// Numbers more than words (tables of constants, dates, versions).
    Data,
}

impl LineKind {
    /// Regular structure: repetition here is how such text is written, not a loop.
    pub fn is_structured(self) -> bool {
        matches!(
            self,
            LineKind::TableRow | LineKind::Code | LineKind::Comment | LineKind::Markup
        )
    }
}

/// Counts of a line's bytes, from which its make-up is judged when it ends (saturating: a
/// line of more than 65535 bytes is judged by its ratios as they were then).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct LineCues {
    letters: u16,
    digits: u16,
    /// Brackets, operators and statement punctuation: `{}[]();=<>|&\`. Markdown's `*`, a
    /// path's `/` and prose's `$` and `%` are not among them.
    code_marks: u16,
    visible: u16,
    /// The first mark of the line is `=`, early in it: `name = value`, an assignment.
    assigns: bool,
    /// A name shaped as only code writes one: a call (`name(`) or a name joined by `_`
    /// (`U_co`, `assert_type`); or a regular expression's escape (`\d`, `\s`, `\+`).
    named: bool,
    /// `ALIGNED` once a tab after the line's first visible byte, or two spaces or more between
    /// words but after a sentence's end (`k-left   k-ctrl-mask  or`), aligned columns, as code
    /// and tables do and prose never does; until then where the line stands for `aligns`
    /// (0 before its first visible byte, `IN_FIRST_WORD`, `PAST_FIRST_WORD`).
    columns: u8,
    /// A backtick: code quoted inside prose (`` `foo(bar)` ``), which the shapes then say
    /// nothing about.
    quoted: bool,
    /// The last two bytes of the line's blocks before this one (a shape may straddle two).
    prev: [u8; 2],
}

impl LineCues {
    /// Counts a block of the line (any size; the line is read in blocks).
    pub fn add(&mut self, block: &[u8]) {
        for part in block.chunks(LANE_MAX) {
            if self.code_marks == 0 {
                // The line's first mark, and how much came before it: `name = value`.
                if let Some(i) = part.iter().position(|&b| CUE[b as usize] & MARK != 0) {
                    let before = self.visible as u32 + lane(count(&part[..i]), 3);
                    self.assigns = part[i] == b'=' && before > 0 && before <= 48;
                }
            }
            let sums = count(part);
            if lane(sums, 4) > 0
                || matches!(self.prev[1], b'_' | b'\\' | b':')
                || self.prev[0] == b'\\'
            {
                self.shapes(part);
            }
            if self.columns != ALIGNED && self.aligns(part) {
                self.columns = ALIGNED;
            }
            self.prev = match part {
                [.., a, b] => [*a, *b],
                [b] => [self.prev[1], *b],
                [] => self.prev,
            };
            let add = |a: u16, k: u32| (a as u32 + lane(sums, k)).min(u16::MAX as u32) as u16;
            self.letters = add(self.letters, 0);
            self.digits = add(self.digits, 1);
            self.code_marks = add(self.code_marks, 2);
            self.visible = add(self.visible, 3);
        }
    }

    /// `part`, the next bytes of the line, holds two spaces or more between words past the
    /// line's first word (a list's marker is aligned so: `*   item`, `1.  item`), not after a
    /// sentence's end (`.`, `!`, `?`, `:`, where typists put two).
    fn aligns(&mut self, part: &[u8]) -> bool {
        // The first byte of `part` past the line's first word and the white space after it.
        let mut from = 0;
        while self.columns < PAST_FIRST_WORD && from < part.len() {
            if part[from] > b' ' {
                self.columns = IN_FIRST_WORD;
            } else if self.columns == IN_FIRST_WORD {
                self.columns = PAST_FIRST_WORD;
            }
            from += 1;
        }
        if self.columns != PAST_FIRST_WORD {
            return false;
        }
        let two_spaces = TWO_SPACES.get_or_init(|| memchr::memmem::Finder::new(b"  "));
        two_spaces.find_iter(&part[from..]).any(|k| {
            let i = from + k;
            let before = if i > 0 { part[i - 1] } else { self.prev[1] };
            before > b' '
                && !matches!(before, b'.' | b'!' | b'?' | b':')
                && part[i..]
                    .iter()
                    .find(|&&b| b != b' ')
                    .is_some_and(|&b| b > b' ')
        })
    }

    /// Reads `part`, the next bytes of the line, which holds a `(`, `_`, backslash, backtick
    /// or tab or follows a `_` or a backslash, for a code-shaped name, a pattern's escape, a
    /// backtick and a tab that aligns columns.
    fn shapes(&mut self, part: &[u8]) {
        if self.columns != ALIGNED {
            if let Some(t) = memchr::memrchr(b'\t', part) {
                if self.visible > 0 || part[..t].iter().any(|&b| b > b' ') {
                    self.columns = ALIGNED;
                }
            }
        }
        // A `_` that ended the blocks before is judged by the byte after it.
        let [p0, p1] = self.prev;
        if let Some(&next) = part.first() {
            self.named |= p1 == b'_' && joins(p0, next);
            // An escape cut by the block's end: `\` then the class here, or both before.
            self.named |=
                p1 == b'\\' && p0 != b'\\' && part.get(1).is_some_and(|&a| escape(p0, next, a));
            self.named |= p0 == b'\\' && escape(0, p1, next);
        }
        // A regular expression's escape: people write patterns in code (a syntax file's
        // `\d\+`, a validator's `\s*`); prose has none, and LaTeX, paths and Markdown
        // escape other things.
        if !self.named {
            for i in memchr::memchr_iter(b'\\', part) {
                let before = if i > 0 { part[i - 1] } else { p1 };
                if before != b'\\' {
                    if let (Some(&c), Some(&a)) = (part.get(i + 1), part.get(i + 2)) {
                        if escape(before, c, a) {
                            self.named = true;
                            break;
                        }
                    }
                }
            }
        }
        // A path joined by `::` (`std::vector`, `internal::None`, `Foo::Bar`): prose writes a
        // colon once, and before a space.
        if !self.named && p1 == b':' {
            // Cut by the block's end: `:` then `:` here, or `::` then the name here (the
            // byte before them is no longer held).
            self.named = match part {
                [b':', after, ..] => path_joins(p0, *after),
                [after, ..] => p0 == b':' && starts_name(*after),
                [] => false,
            };
        }
        if !self.named {
            for i in memchr::memmem::find_iter(part, b"::") {
                let before = if i > 0 { part[i - 1] } else { p1 };
                if part
                    .get(i + 2)
                    .is_some_and(|&after| path_joins(before, after))
                {
                    self.named = true;
                    break;
                }
            }
        }
        for i in memchr::memchr3_iter(b'(', b'_', b'`', part) {
            let before = if i > 0 { part[i - 1] } else { p1 };
            let shaped = match part[i] {
                b'(' => before.is_ascii_alphanumeric() || before == b'_',
                b'_' => part.get(i + 1).is_some_and(|&after| joins(before, after)),
                _ => {
                    self.quoted = true;
                    false
                }
            };
            self.named |= shaped;
        }
    }
}

/// A backslash between `before` and `c` (then `after`) is a regular expression's escape: a
/// class (`\d`, `\s`, `\w` and their negations) before a byte that is not a letter (`\d\+`,
/// `\s*`, `[\w.]`), or an operator taken as one (`+*?=|()<>{}`) right after a bracket class or
/// a group, or before another escape (`[a-z]\+\>`, `)\?`). LaTeX (`\sqrt`, `\delta`), Windows
/// paths (`\System32`) and Markdown's escapes between words (`5 \* 3`) are none.
fn escape(before: u8, c: u8, after: u8) -> bool {
    match c {
        b'd' | b'D' | b's' | b'S' | b'w' | b'W' => !after.is_ascii_alphabetic(),
        b'+' | b'*' | b'?' | b'=' | b'|' | b'(' | b')' | b'<' | b'>' | b'{' | b'}' => {
            matches!(before, b']' | b')') || after == b'\\'
        }
        _ => false,
    }
}

/// `::` between `before` and `after` joins a path: a name or number before it, a name after it
/// (an IPv6 address's `fe80::1` has a number after it).
fn path_joins(before: u8, after: u8) -> bool {
    before.is_ascii_alphanumeric() && starts_name(after)
}

/// `b` may begin a name: a letter or `_`.
fn starts_name(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_'
}

/// A `_` between these bytes joins two parts of one name (`U_co`), as prose never does.
fn joins(before: u8, after: u8) -> bool {
    before.is_ascii_alphanumeric() && after.is_ascii_alphanumeric()
}

/// `LineCues::columns`: in the line's first word, past it, and columns aligned.
const IN_FIRST_WORD: u8 = 1;
const PAST_FIRST_WORD: u8 = 2;
const ALIGNED: u8 = 3;

/// The searcher for two spaces in a row, built once (see `LineCues::aligns`).
static TWO_SPACES: std::sync::OnceLock<memchr::memmem::Finder<'static>> =
    std::sync::OnceLock::new();

/// Bytes summed in one go: each 12-bit lane of the sum holds at most this many.
const LANE_MAX: usize = 4095;

/// The cue counts of `bytes` (at most `LANE_MAX`), one 12-bit lane each: letters, digits,
/// marks, visible bytes, and bytes that may shape a name. One table load and one addition a
/// byte.
#[inline]
fn count(bytes: &[u8]) -> u64 {
    bytes
        .iter()
        .fold(0u64, |acc, &b| acc + CUE_LANES[b as usize])
}

fn lane(sums: u64, k: u32) -> u32 {
    (sums >> (12 * k)) as u32 & 0xfff
}

/// `CUE` spread into the lanes `count` sums.
static CUE_LANES: [u64; 256] = {
    let mut t = [0u64; 256];
    let mut b = 0;
    while b < 256 {
        let c = CUE[b] as u64;
        t[b] = (c & 1)
            | ((c >> 1) & 1) << 12
            | ((c >> 2) & 1) << 24
            | ((c >> 3) & 1) << 36
            | ((c >> 4) & 1) << 48;
        b += 1;
    }
    t
};

const LETTER: u8 = 1;
const DIGIT: u8 = 2;
const MARK: u8 = 4;
const VISIBLE: u8 = 8;
/// A byte that may shape a name as code (`(`, `_`, `::`), begin a pattern's escape (a
/// backslash), quote code in prose (a backtick) or align columns (a tab).
const SHAPE: u8 = 16;

/// Cue classes of bytes for [`LineCues`]. Bytes of multi-byte characters are letters.
static CUE: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        t[b] = if c.is_ascii_alphabetic() || c >= 0x80 {
            LETTER | VISIBLE
        } else if c.is_ascii_digit() {
            DIGIT | VISIBLE
        } else if matches!(
            c,
            b'{' | b'}'
                | b'['
                | b']'
                | b'('
                | b')'
                | b';'
                | b'='
                | b'<'
                | b'>'
                | b'|'
                | b'&'
                | b'\\'
        ) {
            MARK | VISIBLE
        } else if c > b' ' && c < 0x7f {
            VISIBLE
        } else {
            0
        } | if matches!(c, b'(' | b'_' | b'`' | b'\t' | b'\\' | b':') {
            SHAPE
        } else {
            0
        };
        b += 1;
    }
    t
};

/// Line-by-line structure of one stream.
#[derive(Clone, Debug)]
pub(crate) struct Structure {
    /// The first three bytes after the indentation.
    lead: [u8; 3],
    lead_len: u8,
    /// The lead is rule characters (`---`, `━`): the line is a drawn rule.
    lead_rule: bool,
    /// Indentation, in columns (a tab is four), at most 65535.
    indent: u16,
    /// The first word of the line is still being read; the last byte of it was ':'; it holds
    /// a '*' (markdown emphasis, as in `**Step:**`, is prose rather than a field name).
    first_word_open: bool,
    first_word_colon: bool,
    first_word_star: bool,
    cues: LineCues,
    in_fence: bool,
    in_table: bool,
    /// Code lines in a row just before this one (blank lines neither break nor extend it).
    code_run: u16,
    /// The line before this one (blank lines aside) was structured: code, markup, a comment,
    /// data, a field or a table row.
    after_structured: bool,
    /// The line before this one (blank lines aside) was data: numbers more than words.
    after_data: bool,
    /// What the line's head says so far (see `unprose` and `bullet`).
    unprose: bool,
    bullet: bool,
}

impl Structure {
    pub fn new() -> Structure {
        let mut s = Structure {
            lead: [0; 3],
            lead_len: 0,
            lead_rule: false,
            indent: 0,
            first_word_open: true,
            first_word_colon: false,
            first_word_star: false,
            cues: LineCues::default(),
            in_fence: false,
            in_table: false,
            code_run: 0,
            after_structured: false,
            after_data: false,
            unprose: false,
            bullet: false,
        };
        s.judge_head();
        s
    }

    /// Forgets the stream, as if new.
    pub fn reset(&mut self) {
        *self = Structure::new();
    }

    /// The line's indentation, lead and first word are known: nothing more is read for them.
    #[inline]
    pub fn head_settled(&self) -> bool {
        self.lead_len == 3 && !self.first_word_open
    }

    /// Inside a code fence, a table or an indented line: thresholds stretch.
    pub fn structured(&self) -> bool {
        self.in_fence || self.in_table || self.indent >= 4
    }

    /// Inside a code fence, a table, a line that begins with white space, a `field:` line, a
    /// line that begins with markup (`<`, `@`, `#`, `>>>`, `;` ...), with three digits (a date
    /// or a version) or with a drawn rule (`---`, `━━━`), a line after a line of data (a table
    /// of values, `y = 0, m = 10, d = 5`), or a line in a run of code: repetition
    /// there (code, changelog entries, licence fields, doctests, HTML) does not count towards a
    /// near loop. Prose, list items and quotes count.
    #[inline]
    pub fn unprose(&self) -> bool {
        self.unprose
    }

    /// The line is not prose by what it is rather than by where it stands: it is not
    /// prose (see [`unprose`](Self::unprose)) and does not begin with white space (a stream
    /// of text often begins with a space its first token carries).
    #[inline]
    pub fn marked(&self) -> bool {
        self.unprose && self.indent == 0
    }

    /// The line is a bullet item (`* `, `- `, `+ `).
    #[inline]
    pub fn bullet(&self) -> bool {
        self.bullet
    }

    /// In a run of code lines, after another structured line (markup, data, fields), in a
    /// fence, a table or an indented block: where blocks recur by design.
    pub fn in_code(&self) -> bool {
        self.code_run > 0 || self.after_structured || self.structured()
    }

    /// The line being read is a markdown heading (`## Name`, `### \`fn(x)\``): `#` marks and a
    /// space at the margin, out of code (where `# ` begins a comment).
    pub fn titles(&self) -> bool {
        let lead = &self.lead[..self.lead_len as usize];
        self.indent == 0
            && !self.in_code()
            && matches!(lead, [b'#', b' ', ..] | [b'#', b'#', b' ' | b'#', ..])
    }

    /// Indentation of the line being read, in columns.
    pub fn indent(&self) -> u32 {
        self.indent as u32
    }

    /// Works out `unprose` and `bullet` again, after what they depend on changed (the line's
    /// lead, indentation and first word, fences and tables): once per word at most.
    fn judge_head(&mut self) {
        let field = self.first_word_colon & !self.first_word_star;
        let markup = match self.lead[..self.lead_len as usize] {
            [] => false,
            [b'>', b'>', ..] => true,
            // A date, a version or a long number, not a list item ("12. ").
            [a, b, c] if a.is_ascii_digit() && b.is_ascii_digit() && c.is_ascii_digit() => true,
            [b, ..] => !(b.is_ascii_alphanumeric() || b >= 0x80 || b"*-+>\"'(_".contains(&b)),
        };
        self.unprose = self.in_fence
            || self.in_table
            || self.indent > 0
            || field
            || markup
            || self.lead_rule
            || self.after_data
            || (CODE_REGIONS && self.code_run > 0);
        self.bullet = self.lead_len >= 2
            && b"*-+".contains(&self.lead[0])
            && CLASS[self.lead[1] as usize] & SPACE != 0;
    }

    /// Reads bytes without white space into the line's lead and first word.
    pub fn head(&mut self, seg: &[u8]) {
        let Some(&last) = seg.last() else {
            return;
        };
        if self.lead_len < 3 {
            let have = self.lead_len as usize;
            let k = (3 - have).min(seg.len());
            self.lead[have..have + k].copy_from_slice(&seg[..k]);
            self.lead_len += k as u8;
            if self.lead_len == 3 {
                // No white space in it (that would be a bullet, "*  item"): a drawn rule.
                self.lead_rule = self.lead.iter().all(|&b| CLASS[b as usize] & SPACE == 0)
                    && is_rule_text([&self.lead, &[]]);
            }
        }
        if self.first_word_open {
            self.first_word_colon = last == b':';
            self.first_word_star |= memchr::memchr(b'*', seg).is_some();
        }
        self.judge_head();
    }

    /// Reads one white-space byte other than a newline into the line's indentation, lead and
    /// first word.
    pub fn space(&mut self, b: u8) {
        if self.lead_len == 0 {
            self.indent = self.indent.saturating_add(if b == b'\t' { 4 } else { 1 });
        } else {
            if self.lead_len < 3 {
                self.lead[self.lead_len as usize] = b;
                self.lead_len += 1;
            }
            self.first_word_open = false;
        }
        self.judge_head();
    }

    /// Counts a block of the line being read (its bytes, newline excluded).
    pub fn block(&mut self, block: &[u8]) {
        self.cues.add(block);
    }

    /// Ends the line, whose last visible byte is `ends[1]` (0 for none), the byte before it
    /// `ends[0]` (0 where not known), and whose last block `tail` has not been counted yet.
    /// Returns what it was and whether it counts as structured for the line detectors
    /// (anything but prose, list items and headings, or an indented line); the next line
    /// starts afresh, in the region this one leaves.
    pub fn end_line(&mut self, tail: &[u8], ends: [u8; 2]) -> (LineKind, bool) {
        self.cues.add(tail);
        let lead = &self.lead[..self.lead_len as usize];
        let fence = lead == b"```" || lead == b"~~~";
        self.in_table = lead.first() == Some(&b'|');
        let kind = self.kind(ends, fence);
        let structured = fence
            || self.structured()
            || !matches!(
                kind,
                LineKind::Prose | LineKind::ListItem | LineKind::Heading | LineKind::Blank
            );
        if fence {
            self.in_fence = !self.in_fence;
        }
        match kind {
            LineKind::Code => self.code_run = self.code_run.saturating_add(1),
            // A comment, a decorator or a tag between two lines of code does not end the code.
            LineKind::Blank | LineKind::Comment | LineKind::Data | LineKind::Markup => {}
            _ => self.code_run = 0,
        }
        if kind != LineKind::Blank {
            self.after_structured = kind.is_structured()
                || matches!(kind, LineKind::Data | LineKind::Field | LineKind::Rule);
            self.after_data = kind == LineKind::Data;
        }
        if fence && !self.in_fence {
            // A closing fence ends its code: the next line is judged on its own.
            self.code_run = 0;
            self.after_structured = false;
        }
        self.lead_len = 0;
        self.lead_rule = false;
        self.indent = 0;
        self.first_word_open = true;
        self.first_word_colon = false;
        self.first_word_star = false;
        self.cues = LineCues::default();
        self.judge_head();
        (kind, structured)
    }

    /// The kind of the line that is ending, whose last visible bytes are `ends`.
    fn kind(&self, ends: [u8; 2], fence: bool) -> LineKind {
        let [before_last, last] = ends;
        let c = &self.cues;
        let lead = &self.lead[..self.lead_len as usize];
        if c.visible == 0 {
            return LineKind::Blank;
        }
        if fence || self.in_fence {
            return LineKind::Code;
        }
        if self.in_table || lead.first() == Some(&b'|') {
            return LineKind::TableRow;
        }
        if self.lead_rule {
            return LineKind::Rule;
        }
        if matches!(
            lead,
            [b'/', b'/', ..] | [b'-', b'-', b' ' | b'-'] | [b'/', b'*', ..]
        ) || matches!(lead, [b'#', b' ' | b'!' | b'#', ..] if self.code_run > 0)
            || matches!(lead, [b';', ..] | [b'*', b'*', ..] | [b'*', b' ', ..] if self.code_run > 0)
        {
            return LineKind::Comment;
        }
        // A row that opens with a hex literal (`0xffffffff, 0xffffffff,`) is numbers, though
        // its digits above 9 are letters.
        let hex_row = matches!(lead, [b'0', b'x' | b'X', h] if h.is_ascii_hexdigit());
        if (c.digits > c.letters || hex_row) && c.digits >= 4 {
            return LineKind::Data;
        }
        // A preprocessor directive (`#define NAME 0x11`, `#include`, `#ifdef`): `#` and a
        // word at once, where a markdown heading has a space.
        if matches!(lead, [b'#', b'a'..=b'z', ..]) {
            return LineKind::Code;
        }
        // Code: a line that ends a statement or opens or closes a block, or with at least
        // three brackets and operators making one in eight of its visible bytes; an indented
        // line in a run of code.
        let code_end = matches!(last, b';' | b'{' | b'}' | b'(' | b'[' | b']' | b'\\');
        // A form of a Lisp (`(defconstant cs-opt-on 1)`, `(define-test f32.4<= …)`): a line
        // at the margin that opens a parenthesis right before a name and closes one at its
        // end, where prose in parentheses ends its sentence first (`(See below.)`).
        let form = self.indent == 0
            && matches!(lead, [b'(', b'a'..=b'z' | b'A'..=b'Z', ..])
            && last == b')'
            && !matches!(before_last, b'.' | b'!' | b'?');
        // `name = value` at the head of a line: an assignment, a setting.
        let assignment = c.assigns && self.indent == 0 && !self.first_word_star;
        let marked = c.code_marks >= 3 && c.code_marks as u32 * 8 >= c.visible as u32;
        // A name shaped as only code writes one (`assert_type(`, `U_co`), not quoted: prose
        // puts a space before its brackets and joins its words with spaces.
        let named = c.named && !c.quoted;
        let columns = c.columns == ALIGNED;
        if code_end
            || form
            || marked
            || assignment
            || named
            || columns
            || (self.indent > 0 && self.code_run > 0)
        {
            return if opens_markup(lead) {
                LineKind::Markup
            } else {
                LineKind::Code
            };
        }
        if self.first_word_colon && !self.first_word_star {
            return LineKind::Field;
        }
        if self.bullet {
            return LineKind::ListItem;
        }
        // A line that opens something with a colon: in a run of code a label or a block
        // (`case 3:`, `default:`, `else:`), elsewhere a heading.
        if last == b':' {
            return if self.code_run > 0 {
                LineKind::Code
            } else {
                LineKind::Heading
            };
        }
        if opens_markup(lead) || lead.starts_with(b">>") {
            return LineKind::Markup;
        }
        LineKind::Prose
    }
}

/// A line that opens with a tag or other markup (`<`, `@`), or with a string that opens with a
/// tag (`'<option value="13">13</option>'`, `"</td>"`): markup written in code is markup.
fn opens_markup(lead: &[u8]) -> bool {
    match lead {
        [b'<' | b'@', ..] => true,
        [b'\'' | b'"', b'<', c] => c.is_ascii_alphabetic() || matches!(c, b'/' | b'!'),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The line, read in two blocks cut at `cut`, is shaped as code.
    fn named(line: &str, cut: usize) -> bool {
        let mut c = LineCues::default();
        c.add(&line.as_bytes()[..cut]);
        c.add(&line.as_bytes()[cut..]);
        c.named
    }

    /// However the line is cut into blocks, it is shaped as code (or never is).
    fn always_named(line: &str) -> bool {
        (0..=line.len()).all(|cut| named(line, cut))
    }

    fn never_named(line: &str) -> bool {
        (0..=line.len()).all(|cut| !named(line, cut))
    }

    #[test]
    fn pattern_escapes_are_code_and_latex_paths_and_markdown_are_not() {
        for code in [
            r#"syn match logPid "\d\+=""#,
            r"if re.match(r'\s*$', s) then",
            r"a list of [\w.]+ at least",
            r"syn match scalaName /[a-zA-Z0-9$]\+\>/ contained",
        ] {
            assert!(always_named(code), "{code}");
        }
        for text in [
            r"The area is $\sqrt{2}$ and $\delta$ is small, $\sum$ of all.",
            r"Copy it to C:\Windows\System32 and C:\data\sets first.",
            r"Five \* three is fifteen, and 1\. is not a list.",
        ] {
            assert!(never_named(text), "{text}");
        }
    }

    #[test]
    fn paths_joined_by_two_colons_are_code() {
        for code in [
            "    internal::None, internal::None, internal::None,",
            "use of Foo::Bar for every record",
            "std::vector",
        ] {
            assert!(always_named(code), "{code}");
        }
        for text in [
            "Note: the time is 10:30, and a reST example follows::",
            "The host is fe80::1 on the link, see https://example.org/a.",
        ] {
            assert!(never_named(text), "{text}");
        }
    }

    #[test]
    fn a_row_that_opens_with_a_hex_literal_is_data() {
        let kind = |line: &str| {
            let mut s = Structure::new();
            s.head(line.trim_start().split(' ').next().unwrap().as_bytes());
            s.end_line(line.as_bytes(), [b',', b',']).0
        };
        assert_eq!(
            kind("0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff,"),
            LineKind::Data
        );
        assert_eq!(
            kind("0x00000000, 0x00000000, 0x00000000, 0x00000000,"),
            LineKind::Data
        );
        assert_ne!(
            kind("offset of the deadbeef header, in bytes,"),
            LineKind::Data
        );
    }

    #[test]
    fn a_string_that_opens_with_a_tag_is_markup() {
        for yes in [&b"<op"[..], b"@me", b"'<o", b"\"</", b"'<!"] {
            assert!(opens_markup(yes), "{:?}", String::from_utf8_lossy(yes));
        }
        for no in [&b"'< "[..], b"\"<=", b"'<1", b"x <", b"'<", b"\"a<"] {
            assert!(!opens_markup(no), "{:?}", String::from_utf8_lossy(no));
        }
    }
}
