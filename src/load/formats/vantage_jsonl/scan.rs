//! Where a JSON string ends, each escape checked as `serde_json` decodes it (a `\u` surrogate only
//! as the first of a pair) and a control character refused, as `serde_json` refuses it.
//!
//! 64 bytes at a time where the build has the block scan: the quotes, backslashes and control
//! characters of a block found with SIMD compares (`wide`, which gives SSE2 or NEON, without
//! `unsafe` here), and the escaped bytes of the block found from its backslashes without a branch
//! (simdjson's method, `json_escape_scanner`). A step-dense log has an escape every 25 bytes or
//! so: a scan that stops at each one mispredicted a branch there, which was most of the string
//! scan's time. Up to a `\u` escape, and elsewhere, a word at a time: where the target has no SIMD
//! compares (the web build, without `simd128`) a block's compares would be byte by byte, and in an
//! unoptimized build (but for the unit tests) each compare is a call, both slower than words.

/// The place of the closing quote of the string whose inside starts at `from` in `bytes`, and
/// whether the string holds an escape; `None` when it is not a JSON string (a control character,
/// a bad escape, no closing quote).
pub fn string_end(bytes: &[u8], from: usize) -> Option<(usize, bool)> {
    #[cfg(all(
        any(target_feature = "sse2", target_feature = "neon", target_feature = "simd128"),
        any(not(debug_assertions), test)
    ))]
    let from = match block_scan::string_end(bytes, from) {
        block_scan::End::Quote { quote, escaped } => return Some((quote, escaped)),
        block_scan::End::ReadOn { from } => from,
        block_scan::End::Invalid => return None,
    };
    by_words(bytes, from)
}

/// [`string_end`] a word at a time to each special byte, each escape checked as it is decoded.
fn by_words(bytes: &[u8], from: usize) -> Option<(usize, bool)> {
    let mut at = from;
    let mut escaped = false;
    loop {
        at = special_from(bytes, at);
        match *bytes.get(at)? {
            b'"' => return Some((at, escaped)),
            b'\\' => {
                escaped = true;
                at += match ESCAPE[usize::from(*bytes.get(at + 1)?)] {
                    SHORT => 2,
                    UNICODE => crate::model::decode_escape(bytes, at)?.1,
                    _ => return None,
                };
            }
            _ => return None,
        }
    }
}

/// The first place at or after `from` holding a `"`, a `\` or a control character (the end when
/// none): eight bytes at a time, as `serde_json` scans a string.
fn special_from(bytes: &[u8], from: usize) -> usize {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let mut at = from;
    while let Some(word) = bytes.get(at..at + 8) {
        let x = u64::from_le_bytes(word.try_into().unwrap_or_default());
        let quote = x ^ (ONES * u64::from(b'"'));
        let backslash = x ^ (ONES * u64::from(b'\\'));
        // A byte that is zero in `quote` or `backslash`, or below 0x20 in `x`: its high bit set.
        // Bits above the first such byte may be wrong (a borrow carries), the first one never is.
        let found = (quote.wrapping_sub(ONES) & !quote
            | backslash.wrapping_sub(ONES) & !backslash
            | x.wrapping_sub(ONES * 0x20) & !x)
            & HIGH;
        if found != 0 {
            return at + (found.trailing_zeros() / 8) as usize;
        }
        at += 8;
    }
    while let Some(&b) = bytes.get(at) {
        if b == b'"' || b == b'\\' || b < 0x20 {
            return at;
        }
        at += 1;
    }
    at
}

/// What the byte after an escaping backslash makes of the escape: one of the short escapes
/// ([`SHORT`]), the start of a `\u` escape ([`UNICODE`]), or a bad escape ([`BAD`]). A table
/// rather than a `match`: the kinds of escape in a text follow no pattern a branch predictor
/// learns.
const ESCAPE: [u8; 256] = {
    let mut table = [BAD; 256];
    let short = *b"\"\\/bfnrt";
    let mut i = 0;
    while i < short.len() {
        table[short[i] as usize] = SHORT;
        i += 1;
    }
    table[b'u' as usize] = UNICODE;
    table
};
const SHORT: u8 = 0;
const UNICODE: u8 = 1;
const BAD: u8 = 2;

/// The block scan.
#[cfg(all(
    any(target_feature = "sse2", target_feature = "neon", target_feature = "simd128"),
    any(not(debug_assertions), test)
))]
mod block_scan {
    use super::{BAD, ESCAPE, UNICODE};
    use wide::u8x16;

    /// How the string starting at a place ends, as far as the block scan finds it.
    #[derive(Debug, PartialEq, Eq)]
    pub enum End {
        /// At the closing quote at `quote`; `escaped` when it holds an escape.
        Quote { quote: usize, escaped: bool },
        /// Read on a word at a time from `from`: a `\u` escape lies ahead (`from` is the start of
        /// its block, or of the escape that ran into it).
        ReadOn { from: usize },
        /// Not a JSON string: a control character, a bad escape, or no closing quote.
        Invalid,
    }

    /// The bytes a block holds.
    const BLOCK: usize = 64;

    /// The end of the string whose inside starts at `from` in `bytes`.
    pub fn string_end(bytes: &[u8], from: usize) -> End {
        // Most strings are names and labels: a string that ends within 16 bytes without an escape is
        // found with one compare of each kind (a block of 64 costs four, for every short string).
        if let Some(head) = bytes.get(from..from + 16).and_then(|b| <[u8; 16]>::try_from(b).ok()) {
            let lane = Masks::of_lane(head);
            let first_quote = lane.quote & lane.quote.wrapping_neg();
            if first_quote != 0 && (lane.backslash | lane.control) & (first_quote - 1) == 0 {
                return End::Quote { quote: from + first_quote.trailing_zeros() as usize, escaped: false };
            }
        }
        let mut at = from;
        let mut escapes = Escapes::default();
        let mut escaped_any = false;
        loop {
            let tail;
            let block = if let Some(block) = bytes.get(at..at + BLOCK).and_then(|b| <&[u8; BLOCK]>::try_from(b).ok()) {
                block
            } else {
                tail = padded(bytes.get(at..).unwrap_or_default());
                &tail
            };
            let masks = Masks::of(block);
            let carried = escapes.next_is_escaped;
            let escaped = escapes.next(masks.backslash);
            let quotes = masks.quote & !escaped;
            // The bits before the first closing quote (all of them when the block has none).
            let inside = quotes.wrapping_sub(1) & !quotes;
            if masks.control & inside != 0 {
                return End::Invalid;
            }
            let mut codes = escaped & inside;
            escaped_any |= codes != 0;
            let mut kinds = 0;
            while codes != 0 {
                kinds |= block.get(codes.trailing_zeros() as usize).map_or(BAD, |&b| ESCAPE[usize::from(b)]);
                codes &= codes - 1;
            }
            if kinds & BAD != 0 {
                return End::Invalid;
            }
            if kinds & UNICODE != 0 {
                return End::ReadOn { from: at - carried as usize };
            }
            if quotes != 0 {
                return End::Quote { quote: at + quotes.trailing_zeros() as usize, escaped: escaped_any };
            }
            // Not past the input: a padded block has ended the scan (a quote, or the zeros after it).
            at += BLOCK;
        }
    }

    /// The last bytes of the input, then zeros: a control character, so a string without its closing
    /// quote there is invalid, as it is, and the scan ends in this block.
    #[cold]
    fn padded(rest: &[u8]) -> [u8; BLOCK] {
        let mut block = [0; BLOCK];
        if let Some(head) = block.get_mut(..rest.len()) {
            head.copy_from_slice(rest);
        }
        block
    }

    /// A block's quotes, backslashes and control characters, bit `i` for byte `i`.
    struct Masks {
        quote: u64,
        backslash: u64,
        control: u64,
    }

    impl Masks {
        fn of(block: &[u8; BLOCK]) -> Self {
            let (lanes, _) = block.as_chunks::<16>();
            let mut masks = Self { quote: 0, backslash: 0, control: 0 };
            for (i, lane) in lanes.iter().enumerate() {
                let lane = Self::of_lane(*lane);
                let shift = 16 * i;
                masks.quote |= lane.quote << shift;
                masks.backslash |= lane.backslash << shift;
                masks.control |= lane.control << shift;
            }
            masks
        }

        /// The masks of 16 bytes.
        fn of_lane(lane: [u8; 16]) -> Self {
            let v = u8x16::new(lane);
            Self {
                quote: u64::from(v.simd_eq(u8x16::splat(b'"')).to_bitmask()),
                backslash: u64::from(v.simd_eq(u8x16::splat(b'\\')).to_bitmask()),
                control: u64::from(v.min(u8x16::splat(0x1f)).simd_eq(v).to_bitmask()),
            }
        }
    }

    /// Which bytes are escaped, block after block: simdjson's `json_escape_scanner::next`.
    #[derive(Default)]
    struct Escapes {
        /// 1 when the last block ended on a backslash that escapes the next block's first byte.
        next_is_escaped: u64,
    }

    impl Escapes {
        /// The escaped bytes of a block (each byte right after an escaping backslash) from its
        /// backslashes: in a run of backslashes every other one escapes the next, from the run's
        /// start; the run's parity is found by subtraction, whose borrow crosses each run.
        fn next(&mut self, backslash: u64) -> u64 {
            const ODD_BITS: u64 = 0xAAAA_AAAA_AAAA_AAAA;
            let potential_escape = backslash & !self.next_is_escaped;
            let maybe_escaped = potential_escape << 1;
            let escape_and_terminal_code = (maybe_escaped | ODD_BITS).wrapping_sub(potential_escape) ^ ODD_BITS;
            let escaped = escape_and_terminal_code ^ (backslash | self.next_is_escaped);
            let escape = escape_and_terminal_code & backslash;
            self.next_is_escaped = escape >> 63;
            escaped
        }
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        /// The closing quote and whether there was an escape, byte by byte (`None`: not a string);
        /// a `\u` escape taken when four hex digits follow. Apart from [`super::super::by_words`]
        /// on purpose: the oracle shares no code with the scans it checks.
        fn reference(bytes: &[u8], from: usize) -> Option<(usize, bool)> {
            let mut at = from;
            let mut escaped = false;
            loop {
                match *bytes.get(at)? {
                    b'"' => return Some((at, escaped)),
                    b'\\' => {
                        escaped = true;
                        at += match *bytes.get(at + 1)? {
                            b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => 2,
                            b'u' if bytes.get(at + 2..at + 6)?.iter().all(u8::is_ascii_hexdigit) => 6,
                            _ => return None,
                        };
                    }
                    b if b >= 0x20 => at += 1,
                    _ => return None,
                }
            }
        }

        #[test]
        fn the_end_is_where_a_byte_by_byte_reading_finds_it() {
            // Runs of backslashes of every length, quotes, escape codes, `\u` escapes good and bad,
            // control and multi-byte characters at every place around the blocks' edges, from a small
            // deterministic generator.
            let alphabet: [&[u8]; 11] =
                [b"a", b"\\", b"\\\\", b"\"", b"n", b"u", b"\x01", "é".as_bytes(), b"u00e9", b"/", b"t"];
            let mut state = 0x9e37_79b9_7f4a_7c15_u64;
            let mut next = move |n: usize| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                (state % n as u64) as usize
            };
            for case in 0..20_000 {
                let len = next(200);
                let mut text = Vec::new();
                while text.len() < len {
                    // Mostly plain bytes, so that ends fall at every place of a block.
                    let piece = if next(4) == 0 { alphabet[next(alphabet.len())] } else { b"x" };
                    text.extend_from_slice(piece);
                }
                for from in [0, 1, next(len.max(1))] {
                    let from = from.min(text.len());
                    let got = match string_end(&text, from) {
                        End::Quote { quote, escaped } => Some((quote, escaped)),
                        End::Invalid => None,
                        End::ReadOn { from: resume } => {
                            // The place to read on from starts a block or the escape running into it.
                            assert!(resume >= from && (resume + 1 - from) % BLOCK <= 1, "case {case}");
                            reference(&text, resume).map(|(quote, _)| (quote, true))
                        }
                    };
                    let want = reference(&text, from);
                    assert_eq!(got, want, "case {case} from {from}: {:?}", String::from_utf8_lossy(&text));
                }
            }
        }

        #[test]
        fn a_run_of_backslashes_across_blocks_keeps_its_parity() {
            for run in 0..140 {
                for start in 0..70 {
                    let mut text = vec![b'x'; start];
                    text.extend(std::iter::repeat_n(b'\\', run));
                    text.extend_from_slice(b"\"tail\"");
                    let want = if run % 2 == 0 { start + run } else { start + run + 5 };
                    assert_eq!(
                        string_end(&text, 0),
                        End::Quote { quote: want, escaped: run > 0 },
                        "{run} backslashes after {start} bytes"
                    );
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_special_bytes_are_found_where_they_are() {
        let mut texts: Vec<String> =
            ["", "abc", "abcdefgh\"", "abcdefghijklmnop\\", "a\u{1}", "ééééééé\"", "\u{1f}bcdefghi"]
                .map(String::from)
                .into();
        // Each special byte at each place of a 40-byte text, after ones that only look near it.
        for special in ['"', '\\', '\n', '\u{1f}'] {
            for at in 0..40 {
                let mut text: String = "!#[]ab é\u{7f}".chars().cycle().take(40).collect();
                text.replace_range(text.char_indices().nth(at).map_or(0, |(i, _)| i)..text.len(), "");
                text.push(special);
                text.push_str("tail\"");
                texts.push(text);
            }
        }
        for text in &texts {
            let bytes = text.as_bytes();
            let expected = bytes.iter().position(|&b| b == b'"' || b == b'\\' || b < 0x20).unwrap_or(bytes.len());
            for from in 0..bytes.len().min(3) {
                let expected = bytes[from..]
                    .iter()
                    .position(|&b| b == b'"' || b == b'\\' || b < 0x20)
                    .map_or(bytes.len(), |p| p + from);
                assert_eq!(special_from(bytes, from), expected, "{text:?} from {from}");
            }
            assert_eq!(special_from(bytes, 0), expected, "{text:?}");
        }
    }
}
