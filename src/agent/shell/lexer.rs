//! The shell reader's lexer: a command line cut into simple commands the way a POSIX shell
//! cuts it — quotes, escapes, comments, the operators `;` `&&` `||` `|` `&` and parentheses,
//! redirections and here-documents (their bodies read from the lines that follow), `$(…)` and
//! backquotes kept inside their word. No expansion of any kind.

/// A simple command: its words (quotes removed, escapes resolved) and what its redirections
/// and here-documents say.
#[derive(Debug, Default)]
pub(super) struct Simple {
    pub(super) words: Vec<String>,
    /// Output redirected into something other than `/dev/…` or a file descriptor.
    pub(super) writes_file: bool,
    /// The files its standard output goes to, in order, and whether each is appended to
    /// (`>>`) rather than written whole (`>`, `>|`, `&>`).
    pub(super) outputs: Vec<(String, bool)>,
    /// Output of another descriptor (`2>`) went to a file.
    pub(super) other_outputs: bool,
    /// The bodies of its here-documents and here-strings (the script a `python - <<EOF`
    /// runs).
    pub(super) stdin: String,
}

/// Cuts a command line into simple commands.
pub(super) fn split(line: &str) -> Vec<Simple> {
    Lexer {
        s: line.as_bytes(),
        text: line,
        i: 0,
        heredocs: Vec::new(),
    }
    .commands()
}

/// A here-document waiting for its body: the command it belongs to, its delimiter, and
/// whether leading tabs are stripped (`<<-`).
struct Pending {
    command: usize,
    delimiter: String,
    strip_tabs: bool,
}

struct Lexer<'a> {
    s: &'a [u8],
    text: &'a str,
    i: usize,
    heredocs: Vec<Pending>,
}

/// What the lexer read.
enum Token {
    Word(String),
    /// `;`, `&&`, `||`, `|`, `&`, `(` or `)`: the simple command ends.
    Separator,
    /// A newline: the simple command ends, and pending here-documents begin on the next line.
    Newline,
    /// A redirection operator; the next word is its target.
    Redirect(Redirect),
    End,
}

#[derive(Clone, Copy)]
enum Redirect {
    /// `>`, `>>`, `>|`, `&>`, `&>>`: output into the target (a write unless it is `/dev/…`);
    /// `append` for `>>`, `stdout` unless a descriptor other than 1 is named (`2>`).
    Output { append: bool, stdout: bool },
    /// `<`: input from the target.
    Input,
    /// `<<` (`strip_tabs` for `<<-`): a here-document; the target is its delimiter.
    HereDoc { strip_tabs: bool },
    /// `<<<`: the target is the command's input.
    HereString,
}

impl Lexer<'_> {
    fn commands(mut self) -> Vec<Simple> {
        let mut out: Vec<Simple> = vec![Simple::default()];
        loop {
            let current = out.len() - 1;
            match self.token() {
                Token::End => break,
                Token::Separator => out.push(Simple::default()),
                Token::Newline => {
                    out.push(Simple::default());
                    self.read_heredocs(&mut out);
                }
                Token::Word(w) => {
                    let body_follows = out[current].words.is_empty() && is_editor_with_body(&w);
                    out[current].words.push(w);
                    if body_follows {
                        // SWE-agent's `edit N:M` takes the following lines as the new text,
                        // up to `end_of_edit`: they are file content, not commands.
                        break;
                    }
                }
                Token::Redirect(r) => {
                    let Token::Word(target) = self.token() else {
                        continue; // `>` with nothing after it: a syntax error the shell reports
                    };
                    let c = &mut out[current];
                    match r {
                        Redirect::Output { append, stdout } => {
                            if !target.starts_with("/dev/") {
                                c.writes_file = true;
                                if stdout {
                                    c.outputs.push((target, append));
                                } else {
                                    c.other_outputs = true;
                                }
                            }
                        }
                        Redirect::Input => {}
                        Redirect::HereString => c.stdin.push_str(&target),
                        Redirect::HereDoc { strip_tabs } => self.heredocs.push(Pending {
                            command: current,
                            delimiter: target,
                            strip_tabs,
                        }),
                    }
                }
            }
        }
        out.retain(|c| !c.words.is_empty() || c.writes_file);
        out
    }

    /// Reads the bodies of the pending here-documents, which begin at `self.i`.
    fn read_heredocs(&mut self, out: &mut [Simple]) {
        for h in std::mem::take(&mut self.heredocs) {
            let start = self.i;
            let (mut end, mut next, mut at) = (self.s.len(), self.s.len(), start);
            while at < self.s.len() {
                let eol = memchr::memchr(b'\n', &self.s[at..]).map_or(self.s.len(), |k| at + k);
                let line = &self.text[at..eol];
                let line = if h.strip_tabs {
                    line.trim_start_matches('\t')
                } else {
                    line
                };
                if line == h.delimiter {
                    (end, next) = (at, (eol + 1).min(self.s.len()));
                    break;
                }
                at = eol + 1;
            }
            out[h.command]
                .stdin
                .push_str(&self.text[start..end.min(self.s.len())]);
            self.i = next;
        }
    }

    fn peek(&self, k: usize) -> u8 {
        self.s.get(self.i + k).copied().unwrap_or(0)
    }

    fn token(&mut self) -> Token {
        // Blanks, line continuations and comments.
        while self.i < self.s.len() {
            match self.s[self.i] {
                b' ' | b'\t' | b'\r' => self.i += 1,
                b'\\' if self.peek(1) == b'\n' => self.i += 2,
                b'#' => {
                    self.i = memchr::memchr(b'\n', &self.s[self.i..])
                        .map_or(self.s.len(), |k| self.i + k);
                }
                _ => break,
            }
        }
        if self.i >= self.s.len() {
            return Token::End;
        }
        let c = self.s[self.i];
        match c {
            b'\n' => {
                self.i += 1;
                return Token::Newline;
            }
            b';' | b'(' | b')' => {
                self.i += 1;
                return Token::Separator;
            }
            b'&' if self.peek(1) == b'>' => {
                let append = self.peek(2) == b'>';
                self.i += if append { 3 } else { 2 };
                return Token::Redirect(Redirect::Output {
                    append,
                    stdout: true,
                });
            }
            b'&' | b'|' => {
                self.i += if matches!(self.peek(1), b'&' | b'|') {
                    2
                } else {
                    1
                };
                return Token::Separator;
            }
            _ => {}
        }
        // A redirection, with an optional file-descriptor number before it (`2>`).
        let digits = self.s[self.i..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count();
        let op = self.peek(digits);
        if op != b'>' && op != b'<' {
            return Token::Word(self.word());
        }
        let stdout = digits == 0 || &self.s[self.i..self.i + digits] == b"1";
        self.i += digits + 1;
        if op == b'<' && self.peek(0) == b'<' {
            if self.peek(1) == b'<' {
                self.i += 2;
                return Token::Redirect(Redirect::HereString);
            }
            self.i += 1;
            let strip_tabs = self.peek(0) == b'-';
            self.i += strip_tabs as usize;
            return Token::Redirect(Redirect::HereDoc { strip_tabs });
        }
        let append = op == b'>' && self.peek(0) == b'>';
        if op == b'>' && matches!(self.peek(0), b'>' | b'|') {
            self.i += 1;
        }
        if self.peek(0) == b'&' {
            // `>&2`, `2>&1`, `<&0`: a file descriptor, not a file. Skip it whole.
            self.i += 1;
            if let Token::Word(_) = self.token() {}
            return self.token();
        }
        Token::Redirect(if op == b'>' {
            Redirect::Output { append, stdout }
        } else {
            Redirect::Input
        })
    }

    /// One word: up to unquoted white space or an operator, quotes removed and escapes
    /// resolved; `$(…)` and backquotes stay inside it.
    fn word(&mut self) -> String {
        let mut w = String::new();
        let mut from = self.i;
        while self.i < self.s.len() {
            match self.s[self.i] {
                b' ' | b'\t' | b'\r' | b'\n' | b';' | b'&' | b'|' | b'<' | b'>' | b'(' | b')' => {
                    break
                }
                b'\'' => {
                    w.push_str(&self.text[from..self.i]);
                    let end = memchr::memchr(b'\'', &self.s[self.i + 1..])
                        .map_or(self.s.len(), |k| self.i + 1 + k);
                    w.push_str(&self.text[self.i + 1..end]);
                    self.i = (end + 1).min(self.s.len());
                    from = self.i;
                }
                b'"' => {
                    w.push_str(&self.text[from..self.i]);
                    self.i += 1;
                    from = self.i;
                    while self.i < self.s.len() && self.s[self.i] != b'"' {
                        if self.s[self.i] == b'\\' && self.i + 1 < self.s.len() {
                            w.push_str(&self.text[from..self.i]);
                            from = self.i + 1;
                            self.i += 1 + utf8_len(self.s[self.i + 1]);
                            continue;
                        }
                        self.i += utf8_len(self.s[self.i]);
                    }
                    let end = self.i.min(self.s.len());
                    w.push_str(&self.text[from..end]);
                    self.i = (end + 1).min(self.s.len());
                    from = self.i;
                }
                b'\\' => {
                    w.push_str(&self.text[from..self.i]);
                    self.i += 1;
                    from = self.i;
                    if self.i < self.s.len() {
                        self.i += utf8_len(self.s[self.i]);
                    }
                }
                b'$' if self.peek(1) == b'(' => {
                    // A command substitution stays inside the word, parentheses balanced.
                    let mut depth = 0usize;
                    while self.i < self.s.len() {
                        match self.s[self.i] {
                            b'(' => depth += 1,
                            b')' => {
                                depth -= 1;
                                if depth == 0 {
                                    self.i += 1;
                                    break;
                                }
                            }
                            _ => {}
                        }
                        self.i += 1;
                    }
                }
                b'`' => {
                    let end = memchr::memchr(b'`', &self.s[self.i + 1..])
                        .map_or(self.s.len(), |k| self.i + 1 + k);
                    self.i = (end + 1).min(self.s.len());
                }
                b => self.i += utf8_len(b),
            }
        }
        let end = self.i.min(self.s.len());
        w.push_str(&self.text[from..end]);
        self.i = end;
        w
    }
}

/// Editor commands of agent harnesses whose following lines are the text they write
/// (SWE-agent's `edit N:M` … `end_of_edit`).
fn is_editor_with_body(word: &str) -> bool {
    word == "edit"
}

/// Bytes in the UTF-8 character that begins with `b` (1 for a stray continuation byte), so
/// that the lexer only ever stops on character boundaries.
fn utf8_len(b: u8) -> usize {
    match b {
        0xf0..=0xff => 4,
        0xe0..=0xef => 3,
        0xc0..=0xdf => 2,
        _ => 1,
    }
}
