//! Which templates of the chart are still as operator-rs made them. Each one it makes starts
//! with a comment that holds a checksum of the rest of the file: a file whose rest still has that
//! checksum is operator-rs's, and `make helm-chart` rewrites it (or removes it when config/ no
//! longer renders its object); a file without the comment, or edited since, is the user's and is
//! kept as it is. No record outside the file is needed, so a chart copied elsewhere or checked
//! out again keeps working.

/// The start of the first line of a template operator-rs made.
const MARK: &str = "{{- /* Made by operator-rs (helm/v2-alpha) from config/; `make helm-chart` \
                    rewrites this file until you edit it, then keeps it. checksum ";

/// `body` with its first line.
pub fn with_header(body: &str) -> String {
    format!("{MARK}{:016x} */}}}}\n{body}", checksum(body))
}

/// Whether `text` (a file on disk) is a template operator-rs made and nobody has edited since.
pub fn is_unedited(text: &str) -> bool {
    let text = crate::scaffold::line_endings::to_lf(text);
    let Some((first, body)) = text.split_once('\n') else {
        return false;
    };
    let Some(rest) = first.strip_prefix(MARK) else {
        return false;
    };
    let Some(sum) = rest.strip_suffix(" */}}") else {
        return false;
    };
    u64::from_str_radix(sum, 16).is_ok_and(|sum| sum == checksum(body))
}

/// FNV-1a, 64 bits: a change detector for text the user may edit by hand, not a defence against
/// anyone (a file that should be the user's can be made so by deleting its first line); small
/// enough not to need a hashing crate.
fn checksum(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_edit_makes_the_file_the_users() {
        let made = with_header("kind: Service\n");
        assert!(is_unedited(&made));
        assert!(is_unedited(&made.replace('\n', "\r\n")));
        assert!(!is_unedited(&made.replace("Service", "Secret")));
        assert!(!is_unedited("kind: Service\n"));
        let sum = made.split("checksum ").nth(1).unwrap()[..16].to_string();
        let other = format!("{:016x}", u64::from_str_radix(&sum, 16).unwrap() ^ 1);
        assert!(!is_unedited(&made.replace(&sum, &other)));
    }
}
