//! Image references as operator-framework reads `relatedImages` (podman's docker/reference
//! `ParseNormalizedNamed`, whose grammar is distribution's), and digests as go-digest checks
//! them. Written with that grammar's regular expressions, so a reference OLM would refuse is
//! refused here with the same reason.

use std::sync::LazyLock;

use regex::Regex;

const ALPHA_NUMERIC: &str = "[a-z0-9]+";
const SEPARATOR: &str = "(?:[._]|__|[-]*)";
const DOMAIN_COMPONENT: &str = "(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])";
const TAG: &str = "[0-9A-Za-z_][0-9A-Za-z_.-]{0,127}";
const DIGEST: &str = "[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*[:][0-9A-Fa-f]{32,}";

/// `name[:tag][@digest]`, with the name's, tag's and digest's captures.
static REFERENCE: LazyLock<Regex> = LazyLock::new(|| {
    let component = format!("{ALPHA_NUMERIC}(?:(?:{SEPARATOR}{ALPHA_NUMERIC})+)?");
    let domain = format!("{DOMAIN_COMPONENT}(?:(?:\\.{DOMAIN_COMPONENT})+)?(?::[0-9]+)?");
    let name = format!("(?:{domain}/)?{component}(?:(?:/{component})+)?");
    Regex::new(&format!("^({name})(?::({TAG}))?(?:@({DIGEST}))?$")).expect("a valid grammar")
});

static IDENTIFIER: LazyLock<Regex> =
    LazyLock::new(|| Regex::new("^[a-f0-9]{64}$").expect("a valid pattern"));

/// The parts of a reference OLM can pull.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImageRef {
    /// `domain/path`, normalized (`memcached` is `docker.io/library/memcached`).
    pub name: String,
    pub tag: Option<String>,
    pub digest: Option<String>,
}

/// `ParseNormalizedNamed`: why `reference` is not an image OLM can pull, if it is not.
pub fn parse(reference: &str) -> Result<ImageRef, String> {
    if IDENTIFIER.is_match(reference) {
        return Err(format!(
            "invalid repository name ({reference}), cannot specify 64-byte hexadecimal strings"
        ));
    }
    let (domain, remainder) = split_domain(reference);
    let remote = remainder.split(':').next().unwrap_or(&remainder);
    if remote.to_lowercase() != remote {
        return Err("invalid reference format: repository name must be lowercase".into());
    }
    let full = format!("{domain}/{remainder}");
    let Some(captures) = REFERENCE.captures(&full) else {
        if full.is_empty() {
            return Err("repository name must have at least one component".into());
        }
        if REFERENCE.is_match(&full.to_lowercase()) {
            return Err("repository name must be lowercase".into());
        }
        return Err("invalid reference format".into());
    };
    let name = captures.get(1).map_or("", |m| m.as_str());
    if name.len() > 255 {
        return Err("repository name must not be more than 255 characters".into());
    }
    let digest = captures.get(3).map(|m| m.as_str().to_string());
    if let Some(digest) = &digest {
        check_digest(digest)?;
    }
    Ok(ImageRef {
        name: name.to_string(),
        tag: captures.get(2).map(|m| m.as_str().to_string()),
        digest,
    })
}

/// distribution's `splitDockerDomain`: a first component with `.` or `:`, or `localhost`, is
/// a registry; otherwise Docker Hub, with `library/` for official images.
fn split_domain(name: &str) -> (String, String) {
    let (mut domain, mut remainder) = match name.split_once('/') {
        Some((first, rest)) if first.contains(['.', ':']) || first == "localhost" => {
            (first.to_string(), rest.to_string())
        }
        _ => ("docker.io".to_string(), name.to_string()),
    };
    if domain == "index.docker.io" {
        domain = "docker.io".into();
    }
    if domain == "docker.io" && !remainder.contains('/') {
        remainder = format!("library/{remainder}");
    }
    (domain, remainder)
}

/// go-digest's `Parse`: a known algorithm, and its hex encoding of the right length.
pub fn check_digest(digest: &str) -> Result<(), String> {
    let Some((algorithm, encoded)) = digest.split_once(':') else {
        return Err("invalid checksum digest format".into());
    };
    let length = match algorithm {
        "sha256" => 64,
        "sha384" => 96,
        "sha512" => 128,
        _ => return Err("unsupported digest algorithm".into()),
    };
    let lower_hex = encoded
        .bytes()
        .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
    if encoded.len() != length || !lower_hex {
        return Err("invalid checksum digest format".into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEX: &str = "abcd1234abcd1234abcd1234abcd1234abcd1234abcd1234abcd1234abcd1234";

    /// The cases of operator-framework/api's TestValidateRelatedImages (bundle_test.go).
    #[test]
    fn references_are_read_as_operator_framework_reads_them() {
        for good in [
            "quay.io/operator-framework/my-operator:v1.0.0".to_string(),
            format!("quay.io/operator-framework/my-operator@sha256:{HEX}"),
            format!("quay.io/operator-framework/my-operator:v1.0.0@sha256:{HEX}"),
            "quay.io/operator-framework/my-operator".to_string(),
            format!("gcr.io/my-project/my-operand@sha256:{HEX}"),
            "docker.io/library/busybox:latest".to_string(),
            "memcached:1.6.26-alpine3.19".to_string(),
            "localhost:5000/demo".to_string(),
        ] {
            parse(&good).unwrap_or_else(|e| panic!("{good}: {e}"));
        }
        for bad in [
            "invalid image name".to_string(),
            "quay.io/Operator-Framework/my-operator:v1.0.0".to_string(),
            "quay.io/operator-framework/my-operator:v1.0.0!".to_string(),
            format!("quay.io/operator-framework/my-operator@ssha256:{HEX}"),
            format!(
                "quay.io/operator-framework/my-operator@sha256:{}",
                &HEX[..40]
            ),
            HEX.to_string(),
        ] {
            assert!(parse(&bad).is_err(), "{bad}");
        }
        let memcached = parse("memcached:1.6").unwrap();
        assert_eq!(memcached.name, "docker.io/library/memcached");
        assert_eq!(memcached.tag.as_deref(), Some("1.6"));
    }
}
