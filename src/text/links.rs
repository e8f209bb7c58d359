//! Web addresses, followed across the pieces of a token stream or the symbols of a text: from
//! the piece that completes `://` to the one that ends the address. Links are references:
//! people cite one address again and again, so the symbols of an address never count towards
//! a near loop, with token pieces or as text alike.

/// Where a stream stands in a web address, read across pieces: `://` may come in pieces of
/// its own (`:`, `/`, `/`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Url {
    Out,
    Colon,
    ColonSlash,
    In,
}

/// Whether a token is part of a web address, and where the next one starts: from the piece
/// that completes `://` (its colon at an end of its piece) to the one that ends the address with white space or a closing
/// bracket or quote. Links are references: people cite one address again and again (a
/// changelog links the same advisory in every section), so their tokens never count towards a
/// near loop; a model repeating links verbatim is still an exact loop.
#[inline]
pub(crate) fn in_url(state: Url, piece: &[u8]) -> (bool, Url) {
    // The common case, two compares: outside an address, a piece can begin one only with the
    // colon of `://` at one of its ends (tokenizers cut `https`, `://` and `github` apart, or
    // `:`, `/`, `/`).
    if state == Url::Out && piece.first() != Some(&b':') && piece.last() != Some(&b':') {
        return (false, Url::Out);
    }
    let mut url = state == Url::In;
    let mut state = state;
    for &b in piece {
        state = match (state, b) {
            (Url::In, b' ' | b'\t' | b'\n' | b'\r' | b')' | b'>' | b'"' | b'\'') => Url::Out,
            (Url::In, _) => Url::In,
            (_, b':') => Url::Colon,
            (Url::Colon, b'/') => Url::ColonSlash,
            (Url::ColonSlash, b'/') => Url::In,
            _ => Url::Out,
        };
        url |= state == Url::In;
    }
    (url, state)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The tokens of a web address, however `://` is cut into pieces, from the piece that
    /// completes it to the one that ends the address.
    #[test]
    fn web_addresses_are_followed_across_pieces() {
        let marks = |pieces: &[&str]| {
            let mut state = Url::Out;
            pieces
                .iter()
                .map(|p| {
                    let (url, next) = in_url(state, p.as_bytes());
                    state = next;
                    url
                })
                .collect::<Vec<bool>>()
        };
        let link = [
            "See", " [", "x", "](", "https", "://", "github", ".com", "/a", ")", " for",
        ];
        assert_eq!(
            marks(&link),
            [false, false, false, false, false, true, true, true, true, true, false]
        );
        let cut = ["https", ":", "/", "/", "example", ".org", " and", " more"];
        assert_eq!(
            marks(&cut),
            [false, false, false, true, true, true, true, false]
        );
        // A colon alone, or `:/` without the second slash, is no address.
        assert_eq!(marks(&["Note", ":", " the", " a:/b"]), [false; 4]);
        assert_eq!(marks(&["x:", "//y z", " next"]), [false, true, false]);
    }
}
