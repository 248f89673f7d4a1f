//! The string `format`s that the API server checks in custom resources (kube-openapi's
//! `strfmt` registry, as the apiextensions apiserver uses it). Formats it does not know are not
//! checked, by it or here. The common ones are checked here; the rare ones (`isbn`,
//! `creditcard`, `ssn`, `hexcolor`, `rgbcolor`, `bsonobjectid`) are not, which the fake's
//! documentation says.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::str::FromStr;

use k8s_openapi::jiff;

/// Whether `text` is valid in `format`; true for formats that are not checked.
pub(super) fn is_valid(format: &str, text: &str) -> bool {
    match format {
        "date-time" | "datetime" => is_date_time(text),
        "date" => jiff::civil::Date::from_str(text).is_ok() && text.len() == 10,
        "duration" => is_duration(text),
        "uuid" | "uuid3" | "uuid4" | "uuid5" => is_uuid(format, text),
        "byte" => is_base64(text),
        "ipv4" => Ipv4Addr::from_str(text).is_ok(),
        "ipv6" => Ipv6Addr::from_str(text).is_ok(),
        "cidr" => is_cidr(text),
        "mac" => is_mac(text),
        "hostname" => is_hostname(text),
        "email" => is_email(text),
        "uri" => text.contains(':') && !text.contains(char::is_whitespace),
        _ => true,
    }
}

/// RFC 3339, with or without fractional seconds and offset (strfmt's layouts).
fn is_date_time(text: &str) -> bool {
    jiff::Timestamp::from_str(text).is_ok()
        || (text.contains('T') && jiff::civil::DateTime::from_str(text).is_ok())
}

/// Go's `time.ParseDuration` syntax (`1h30m`, `-1.5s`, `300ms`), plus the days and weeks of
/// strfmt (`2d`, `1w`) and its spaced form (`3 days`).
fn is_duration(text: &str) -> bool {
    const UNITS: &[&str] = &[
        "ns",
        "us",
        "µs",
        "ms",
        "s",
        "m",
        "h",
        "d",
        "w",
        "nanoseconds",
        "nanosecond",
        "microseconds",
        "microsecond",
        "milliseconds",
        "millisecond",
        "seconds",
        "second",
        "minutes",
        "minute",
        "hours",
        "hour",
        "days",
        "day",
        "weeks",
        "week",
    ];
    let text = text.strip_prefix(['-', '+']).unwrap_or(text);
    if text == "0" {
        return true;
    }
    let mut rest = text.trim();
    if rest.is_empty() {
        return false;
    }
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !c.is_ascii_digit() && c != '.')
            .unwrap_or(rest.len());
        if digits == 0 || rest[..digits].parse::<f64>().is_err() {
            return false;
        }
        rest = rest[digits..].trim_start();
        let unit = rest
            .find(|c: char| c.is_ascii_digit() || c == '.' || c.is_whitespace())
            .unwrap_or(rest.len());
        let name = &rest[..unit];
        if !UNITS.contains(&name) {
            return false;
        }
        rest = rest[unit..].trim_start();
    }
    true
}

fn is_uuid(format: &str, text: &str) -> bool {
    let bytes = text.as_bytes();
    let shaped = bytes.len() == 36
        && bytes.iter().enumerate().all(|(index, byte)| match index {
            8 | 13 | 18 | 23 => *byte == b'-',
            _ => byte.is_ascii_hexdigit(),
        });
    let version = match format {
        "uuid3" => Some(b'3'),
        "uuid4" => Some(b'4'),
        "uuid5" => Some(b'5'),
        _ => None,
    };
    shaped && version.is_none_or(|version| bytes[14] == version)
}

/// Standard base64 with padding, as Go's `base64.StdEncoding`.
fn is_base64(text: &str) -> bool {
    let bytes = text.as_bytes();
    let padding = bytes.iter().rev().take_while(|byte| **byte == b'=').count();
    bytes.len().is_multiple_of(4)
        && padding <= 2
        && bytes[..bytes.len() - padding]
            .iter()
            .all(|byte| byte.is_ascii_alphanumeric() || *byte == b'+' || *byte == b'/')
}

fn is_cidr(text: &str) -> bool {
    let Some((address, bits)) = text.split_once('/') else {
        return false;
    };
    let Ok(bits) = bits.parse::<u8>() else {
        return false;
    };
    match IpAddr::from_str(address) {
        Ok(IpAddr::V4(_)) => bits <= 32,
        Ok(IpAddr::V6(_)) => bits <= 128,
        Err(_) => false,
    }
}

fn is_mac(text: &str) -> bool {
    let groups: Vec<&str> = text.split([':', '-']).collect();
    matches!(groups.len(), 6 | 8 | 20)
        && groups
            .iter()
            .all(|group| group.len() == 2 && group.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// RFC 1123 host names: dot-separated labels of letters, digits and hyphens.
fn is_hostname(text: &str) -> bool {
    text.len() <= 255
        && text.split('.').all(|label| {
            !label.is_empty()
                && label.len() <= 63
                && !label.starts_with('-')
                && !label.ends_with('-')
                && label
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-')
        })
}

fn is_email(text: &str) -> bool {
    match text.rsplit_once('@') {
        Some((local, domain)) => !local.is_empty() && is_hostname(domain),
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        let valid = [
            ("date-time", "2024-05-01T10:00:00Z"),
            ("date-time", "2024-05-01T10:00:00.5+02:00"),
            ("date", "2024-05-01"),
            ("duration", "1h30m"),
            ("duration", "2d"),
            ("uuid", "0b1c2d3e-0000-4000-8000-000000000001"),
            ("byte", "aGVsbG8="),
            ("ipv4", "10.0.0.1"),
            ("ipv6", "::1"),
            ("cidr", "10.0.0.0/8"),
            ("hostname", "example.com"),
            ("email", "a@example.com"),
            ("int32", "anything: formats of numbers are not checked"),
        ];
        for (format, text) in valid {
            assert!(is_valid(format, text), "{format} {text}");
        }
        let invalid = [
            ("date-time", "yesterday"),
            ("date-time", "2024-13-01T10:00:00Z"),
            ("date", "2024-05-01T10:00:00Z"),
            ("duration", "forever"),
            ("uuid4", "0b1c2d3e-0000-3000-8000-000000000001"),
            ("byte", "not base64!"),
            ("ipv4", "10.0.0.256"),
            ("cidr", "10.0.0.0/33"),
            ("hostname", "-bad.example"),
            ("email", "nobody"),
        ];
        for (format, text) in invalid {
            assert!(!is_valid(format, text), "{format} {text}");
        }
    }
}
