//! Base64 as Go's `encoding/base64` standard encoding reads and writes it for `[]byte` fields
//! (a Secret's `data`, a ConfigMap's `binaryData`): written with padding, and read with Go's
//! error for the first byte that is not base64 (`illegal base64 data at input byte 3`).
//! Written here because the runtime has no base64 crate among its dependencies.

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// `bytes` in the standard encoding, padded.
pub(in super::super) fn encode(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for index in 0..4 {
            if index <= chunk.len() {
                out.push(char::from(
                    ALPHABET[((n >> (18 - 6 * index)) & 63) as usize],
                ));
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// Go's error for `text` if it is not standard base64 (newlines are skipped, as Go skips them).
pub(in super::super) fn check(text: &str) -> Result<(), String> {
    let illegal = |at: usize| Err(format!("illegal base64 data at input byte {at}"));
    let bytes: Vec<(usize, u8)> = text
        .bytes()
        .enumerate()
        .filter(|(_, byte)| !matches!(byte, b'\r' | b'\n'))
        .collect();
    let mut quantum = 0;
    for (position, (at, byte)) in bytes.iter().enumerate() {
        if *byte == b'=' {
            // Padding only in the last two places of the last quantum, then nothing more.
            let rest = &bytes[position..];
            let padding = rest.iter().take_while(|(_, b)| *b == b'=').count();
            let valid = quantum >= 2 && quantum + padding == 4 && padding == rest.len();
            return if valid { Ok(()) } else { illegal(*at) };
        }
        if !ALPHABET.contains(byte) {
            return illegal(*at);
        }
        quantum = (quantum + 1) % 4;
    }
    match quantum {
        0 => Ok(()),
        _ => illegal(text.len()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodes_and_checks_as_go() {
        assert_eq!(encode(b"bee"), "YmVl");
        assert_eq!(encode(b"a"), "YQ==");
        assert_eq!(encode(b"ab"), "YWI=");
        assert_eq!(check("YQ=="), Ok(()));
        assert_eq!(
            check("not base64!").unwrap_err(),
            "illegal base64 data at input byte 3"
        );
        assert_eq!(
            check("YQ").unwrap_err(),
            "illegal base64 data at input byte 2"
        );
    }
}
