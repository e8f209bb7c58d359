//! Server-sent events, as OpenAI-compatible servers stream them: events separated by a blank
//! line, each with `data:` lines. The splitter keeps every event's bytes exactly as they came,
//! so that an event the proxy does not change is forwarded byte for byte.

/// Bytes of one event, separator included, and its `data` joined by newlines.
#[derive(Debug, PartialEq, Eq)]
pub struct Event {
    pub raw: Vec<u8>,
    pub data: String,
}

/// Cuts a byte stream into events as the bytes arrive.
#[derive(Default)]
pub struct Splitter {
    buf: Vec<u8>,
}

/// An event longer than this without a separator is malformed (a server streams tokens, not
/// megabytes): the stream is ended with an error rather than held.
pub const MAX_EVENT: usize = 8 << 20;

impl Splitter {
    /// Adds `bytes` and returns the events they complete, or an error when an event grows
    /// past `MAX_EVENT` bytes.
    pub fn push(&mut self, bytes: &[u8]) -> Result<Vec<Event>, String> {
        self.buf.extend_from_slice(bytes);
        let mut out = Vec::new();
        while let Some(end) = separator_end(&self.buf) {
            let raw: Vec<u8> = self.buf.drain(..end).collect();
            out.push(Event {
                data: data_of(&raw),
                raw,
            });
        }
        if self.buf.len() > MAX_EVENT {
            return Err(format!(
                "an upstream event exceeds {MAX_EVENT} bytes without a blank line"
            ));
        }
        Ok(out)
    }

    /// What is left when the stream ends: an event without its final blank line, if any.
    pub fn finish(&mut self) -> Option<Event> {
        if self.buf.iter().all(u8::is_ascii_whitespace) {
            return None;
        }
        let raw = std::mem::take(&mut self.buf);
        Some(Event {
            data: data_of(&raw),
            raw,
        })
    }
}

/// The end of the first blank line (`\n\n`, `\r\n\r\n` or `\r\r`) in `buf`.
fn separator_end(buf: &[u8]) -> Option<usize> {
    let mut i = 0;
    while i < buf.len() {
        match buf[i] {
            b'\n' if buf.get(i + 1) == Some(&b'\n') => return Some(i + 2),
            b'\r' if buf.get(i + 1) == Some(&b'\n') => {
                if buf.get(i + 2) == Some(&b'\r') && buf.get(i + 3) == Some(&b'\n') {
                    return Some(i + 4);
                }
                if buf.get(i + 2) == Some(&b'\n') {
                    return Some(i + 3);
                }
                i += 2;
                continue;
            }
            b'\r' if buf.get(i + 1) == Some(&b'\r') => return Some(i + 2),
            _ => {}
        }
        i += 1;
    }
    None
}

/// The `data` field of an event: its `data:` lines, one leading space removed, joined by
/// newlines. Comments and other fields are left out.
fn data_of(raw: &[u8]) -> String {
    let text = String::from_utf8_lossy(raw);
    let mut data = String::new();
    let mut first = true;
    for line in text.split(['\n', '\r']) {
        if let Some(rest) = line.strip_prefix("data:") {
            if !first {
                data.push('\n');
            }
            first = false;
            data.push_str(rest.strip_prefix(' ').unwrap_or(rest));
        }
    }
    data
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_are_cut_at_blank_lines_whatever_the_chunks() {
        let stream =
            b"data: {\"a\":1}\n\n: keep-alive\n\ndata: x\r\ndata: y\r\n\r\ndata: [DONE]\n\n";
        for size in [1, 2, 3, 7, stream.len()] {
            let mut s = Splitter::default();
            let mut events = Vec::new();
            for chunk in stream.chunks(size) {
                events.extend(s.push(chunk).unwrap());
            }
            assert!(s.finish().is_none());
            let data: Vec<&str> = events.iter().map(|e| e.data.as_str()).collect();
            assert_eq!(
                data,
                ["{\"a\":1}", "", "x\ny", "[DONE]"],
                "chunks of {size}"
            );
            let raw: Vec<u8> = events.iter().flat_map(|e| e.raw.clone()).collect();
            assert_eq!(raw, stream, "bytes kept exactly");
        }
    }

    #[test]
    fn an_unterminated_event_is_returned_at_the_end() {
        let mut s = Splitter::default();
        assert!(s.push(b"data: {\"b\":2}").unwrap().is_empty());
        assert_eq!(s.finish().unwrap().data, "{\"b\":2}");
    }

    #[test]
    fn an_endless_event_is_an_error() {
        let mut s = Splitter::default();
        let chunk = vec![b'x'; 1 << 20];
        let mut result = Ok(Vec::new());
        for _ in 0..9 {
            result = s.push(&chunk);
            if result.is_err() {
                break;
            }
        }
        assert!(result.unwrap_err().contains("exceeds"));
    }
}
