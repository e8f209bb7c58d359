//! JSON Lines input with a cap on the length of a line: a line longer than the cap is skipped
//! (and said to be) without ever being held whole, so a file with no newline in it (or
//! `/dev/zero`) costs constant memory instead of aborting the process.

use std::io::{self, BufRead};

/// The default cap: far above any real record (a 1 MiB record holds ~150,000 tokens).
pub const DEFAULT_MAX_LINE: usize = 64 << 20;

/// What one read gave.
#[derive(Debug, PartialEq, Eq)]
pub enum Line {
    /// A line is in the buffer (without its newline); `bytes` were read for it.
    Read { bytes: usize },
    /// The line was longer than the cap: `bytes` were read and dropped, the buffer is empty.
    TooLong { bytes: u64 },
    /// The input is over.
    End,
}

/// Reads the next line of `input` into `line` (cleared first), holding at most `max` bytes.
pub fn read_line(input: &mut impl BufRead, line: &mut Vec<u8>, max: usize) -> io::Result<Line> {
    line.clear();
    let mut dropped: u64 = 0;
    loop {
        let buf = match input.fill_buf() {
            Ok(buf) => buf,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if buf.is_empty() {
            return Ok(match (dropped, line.len()) {
                (0, 0) => Line::End,
                (0, n) => Line::Read { bytes: n },
                (d, _) => Line::TooLong { bytes: d },
            });
        }
        let (take, done) = match buf.iter().position(|&b| b == b'\n') {
            Some(i) => (i + 1, true),
            None => (buf.len(), false),
        };
        let content = if done { &buf[..take - 1] } else { &buf[..take] };
        if dropped == 0 && line.len() + content.len() <= max {
            line.extend_from_slice(content);
        } else {
            // Over the cap: count what the line held so far, then drop the rest as it comes.
            dropped += (line.len() + take) as u64;
            line.clear();
            line.shrink_to(max.min(1 << 20));
        }
        input.consume(take);
        if done {
            return Ok(if dropped > 0 {
                Line::TooLong { bytes: dropped }
            } else {
                Line::Read {
                    bytes: line.len() + 1,
                }
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{BufReader, Read};

    fn lines(input: &[u8], max: usize, buf: usize) -> Vec<Result<String, u64>> {
        let mut r = BufReader::with_capacity(buf, input);
        let mut line = Vec::new();
        let mut out = Vec::new();
        loop {
            match read_line(&mut r, &mut line, max).unwrap() {
                Line::Read { .. } => out.push(Ok(String::from_utf8(line.clone()).unwrap())),
                Line::TooLong { bytes } => out.push(Err(bytes)),
                Line::End => return out,
            }
        }
    }

    #[test]
    fn lines_within_the_cap_are_read_and_longer_ones_skipped() {
        for buf in [1, 3, 64] {
            let got = lines(b"ab\nabcdefgh\n\nxyz", 4, buf);
            assert_eq!(
                got,
                vec![Ok("ab".into()), Err(9), Ok(String::new()), Ok("xyz".into())],
                "buffer of {buf}"
            );
        }
        assert_eq!(lines(b"abcdef", 4, 2), vec![Err(6)]);
        assert_eq!(lines(b"", 4, 2), Vec::<Result<String, u64>>::new());
    }

    /// An endless line without a newline is read in constant memory.
    #[test]
    fn an_endless_line_holds_no_more_than_the_cap() {
        let mut r = BufReader::new(io::repeat(0).take(50 << 20));
        let mut line = Vec::new();
        assert_eq!(
            read_line(&mut r, &mut line, 1 << 20).unwrap(),
            Line::TooLong { bytes: 50 << 20 }
        );
        assert!(line.capacity() <= 2 << 20, "{}", line.capacity());
    }
}
