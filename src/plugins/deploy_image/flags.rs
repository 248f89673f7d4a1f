//! The deploy-image plugin's flags, and the rules of their values.

use anyhow::{Result, bail};
use clap::Args;

use super::PLUGIN_SHORT;
use crate::names::InvalidInput;

/// `create api`'s flags of the plugin, under one heading of `--help`.
#[derive(Debug, Default, Args)]
#[command(next_help_heading = "Plugin deploy-image/v1-alpha")]
pub struct Flags {
    /// Container image that the controller runs for each custom resource (deploy-image plugin).
    #[arg(long, value_name = "IMAGE", allow_hyphen_values = true)]
    pub image: Option<String>,

    /// Command of the container, comma-separated, e.g. "memcached,--memory-limit=64,-v".
    #[arg(
        long,
        value_name = "ARGS",
        allow_hyphen_values = true,
        requires = "image"
    )]
    pub image_container_command: Option<String>,

    /// Port the container listens on; adds `spec.containerPort` to the kind.
    #[arg(
        long,
        value_name = "PORT",
        allow_hyphen_values = true,
        requires = "image"
    )]
    pub image_container_port: Option<String>,

    /// User ID the container runs as (not root: the pods run with runAsNonRoot).
    #[arg(
        long,
        value_name = "UID",
        allow_hyphen_values = true,
        requires = "image"
    )]
    pub run_as_user: Option<String>,
}

/// The plugin's options, validated: what its flags asked for, or what PROJECT recorded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    pub image: String,
    /// `--image-container-command` as given (PROJECT records it so), and split at commas.
    pub command_flag: Option<String>,
    pub command: Vec<String>,
    pub port: Option<u16>,
    pub run_as_user: Option<u32>,
}

impl Options {
    /// The options the flags ask for, if the plugin runs (`--image`, or `selected`: `--plugins`
    /// named it).
    pub fn from_flags(flags: &Flags, selected: bool) -> Result<Option<Self>> {
        let Some(image) = &flags.image else {
            if selected {
                bail!(
                    "missing --image: the {PLUGIN_SHORT} plugin runs a container image for each custom \
                     resource; you MUST inform the image that will be used in the reconciliation \
                     (e.g. --image=memcached:1.6.26-alpine3.19)"
                );
            }
            return Ok(None);
        };
        Ok(Some(Self::parse(
            image,
            flags.image_container_command.as_deref(),
            flags.image_container_port.as_deref(),
            flags.run_as_user.as_deref(),
        )?))
    }

    /// The options from their values as flags take them (and PROJECT records them).
    pub fn parse(
        image: &str,
        command: Option<&str>,
        port: Option<&str>,
        run_as_user: Option<&str>,
    ) -> Result<Self, InvalidInput> {
        check_image(image)?;
        Ok(Self {
            image: image.to_string(),
            command_flag: command.map(str::to_string),
            command: command.map(parse_command).transpose()?.unwrap_or_default(),
            port: port.map(parse_port).transpose()?,
            run_as_user: run_as_user.map(parse_run_as_user).transpose()?,
        })
    }
}

/// A container image reference: `[registry[:port]/]path[:tag][@algorithm:digest]`, with a
/// lowercase repository path (the rules of the distribution reference grammar).
pub(super) fn check_image(image: &str) -> Result<(), InvalidInput> {
    let invalid = |rule: &str| InvalidInput::new("--image", image, rule);
    const RULE: &str = "must be a container image reference like memcached:1.6.26-alpine3.19 or \
                        registry.example.com/team/memcached:1.6 (lowercase repository, optional :tag \
                        and @sha256:digest)";
    if image.is_empty() {
        return Err(invalid(
            "must not be empty: the deploy-image plugin needs an image",
        ));
    }
    if image.len() > MAX_IMAGE {
        return Err(invalid(
            "must be at most 512 characters (a repository name has at most 255)",
        ));
    }
    let (name_tag, digest) = match image.split_once('@') {
        Some((n, d)) => (n, Some(d)),
        None => (image, None),
    };
    if digest.is_some_and(|digest| !digest_ok(digest)) {
        return Err(invalid(RULE));
    }
    let last_slash = name_tag.rfind('/').map_or(0, |i| i + 1);
    let (name, tag) = match name_tag[last_slash..].rfind(':') {
        Some(i) => (
            &name_tag[..last_slash + i],
            Some(&name_tag[last_slash + i + 1..]),
        ),
        None => (name_tag, None),
    };
    if tag.is_some_and(|tag| !tag_ok(tag)) {
        return Err(invalid(RULE));
    }
    let mut components: Vec<&str> = name.split('/').collect();
    // The first component is a registry host if it looks like one (has a dot or a port, or is
    // localhost); hosts may have uppercase letters and a port.
    let has_host = components.len() > 1
        && (components[0].contains(['.', ':']) || components[0] == "localhost");
    let host = has_host.then(|| components.remove(0));
    if host.is_some_and(|host| !host_ok(host)) {
        return Err(invalid(RULE));
    }
    if components.is_empty() || !components.iter().all(|c| component_ok(c)) || name.len() > 255 {
        return Err(invalid(RULE));
    }
    Ok(())
}

/// A digest: `algorithm:hex`, the algorithm lowercase, the hex of at least 32 digits.
fn digest_ok(digest: &str) -> bool {
    digest.split_once(':').is_some_and(|(algorithm, hex)| {
        !algorithm.is_empty()
            && algorithm
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "+._-".contains(c))
            && hex.len() >= 32
            && hex.chars().all(|c| c.is_ascii_hexdigit())
    })
}

/// A tag: at most 128 word characters, dots and dashes, not starting with either of the last two.
fn tag_ok(tag: &str) -> bool {
    tag.len() <= 128
        && tag
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
        && tag
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_.-".contains(c))
}

/// A registry host: DNS labels, any case, and an optional numeric port.
fn host_ok(host: &str) -> bool {
    let (hostname, port) = match host.split_once(':') {
        Some((h, p)) => (h, Some(p)),
        None => (host, None),
    };
    !hostname.is_empty()
        && hostname.split('.').all(|label| {
            !label.is_empty()
                && label.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
                && !label.starts_with('-')
                && !label.ends_with('-')
        })
        && port.is_none_or(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()))
}

/// A component of the repository path: lowercase alphanumerics joined by single separators.
fn component_ok(c: &str) -> bool {
    let chars: Vec<char> = c.chars().collect();
    !chars.is_empty()
        && chars
            .iter()
            .all(|&c| c.is_ascii_lowercase() || c.is_ascii_digit() || "._-".contains(c))
        && chars.first().is_some_and(|c| c.is_ascii_alphanumeric())
        && chars.last().is_some_and(|c| c.is_ascii_alphanumeric())
        && !c.contains("..")
        && !c.contains("___")
}

/// The longest `--image`: a repository name of 255 characters, a tag of 128 and a digest.
const MAX_IMAGE: usize = 512;

/// The longest `--image-container-command`.
const MAX_COMMAND: usize = 4096;

/// The command, split at commas. Each argument becomes a Rust string literal
/// ([`rust_str_literal`] escapes what it must) and the whole a PROJECT value ([`yaml_str`]), so
/// any visible text is fine; control characters (line breaks) are refused as the typing mistakes
/// they are.
pub(super) fn parse_command(flag: &str) -> Result<Vec<String>, InvalidInput> {
    if flag.chars().count() > MAX_COMMAND {
        return Err(InvalidInput::new(
            "--image-container-command",
            flag,
            format!("must be at most {MAX_COMMAND} characters"),
        ));
    }
    let args: Vec<String> = flag.split(',').map(str::to_string).collect();
    if args
        .iter()
        .any(|a| a.is_empty() || a.chars().any(char::is_control))
    {
        return Err(InvalidInput::new(
            "--image-container-command",
            flag,
            "must be the container's command and arguments separated by commas, none of them empty \
             (e.g. \"memcached,--memory-limit=64,-v\")",
        ));
    }
    Ok(args)
}

pub(super) fn parse_port(value: &str) -> Result<u16, InvalidInput> {
    match value.parse::<u16>() {
        Ok(port) if port >= 1 => Ok(port),
        _ => Err(InvalidInput::new(
            "--image-container-port",
            value,
            "must be a port number from 1 to 65535",
        )),
    }
}

pub(super) fn parse_run_as_user(value: &str) -> Result<u32, InvalidInput> {
    match value.parse::<u32>() {
        Ok(uid) if (1..=i32::MAX as u32).contains(&uid) => Ok(uid),
        Ok(0) => Err(InvalidInput::new(
            "--run-as-user",
            value,
            "must not be 0 (root): the generated pods run with runAsNonRoot, which refuses root; \
             use a user ID from 1 to 2147483647",
        )),
        _ => Err(InvalidInput::new(
            "--run-as-user",
            value,
            "must be a user ID from 1 to 2147483647",
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn images() {
        for good in [
            "memcached:1.6.26-alpine3.19",
            "busybox",
            "docker.io/library/busybox:1.36.1",
            "localhost:5000/team/app",
            "localhost/app:dev",
            "Registry.Example.com:443/a/b_c__d:v1",
            "memcached@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
            "quay.io/x/y:1.0@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
        ] {
            assert_eq!(check_image(good), Ok(()), "{good}");
        }
        for bad in [
            "",
            "Memcached:1",
            "memcached:",
            "memcached:-x",
            "mem cached",
            "/memcached",
            "memcached/",
            "memcached@sha256:xyz",
            "a..b",
            "memcached:1.6\"",
        ] {
            assert!(check_image(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn commands_ports_and_users() {
        assert_eq!(
            parse_command("memcached,--memory-limit=64,-o,modern,-v").unwrap(),
            ["memcached", "--memory-limit=64", "-o", "modern", "-v"]
        );
        assert!(parse_command("memcached,,-v").is_err());
        assert!(parse_command("").is_err());
        assert_eq!(parse_port("11211").unwrap(), 11211);
        for bad in ["0", "65536", "-1", "http", ""] {
            assert!(parse_port(bad).is_err(), "{bad}");
        }
        assert_eq!(parse_run_as_user("1001").unwrap(), 1001);
        for bad in ["0", "-1", "2147483648", "root"] {
            assert!(parse_run_as_user(bad).is_err(), "{bad}");
        }
        let root = parse_run_as_user("0").unwrap_err().to_string();
        assert!(root.contains("runAsNonRoot"), "{root}");
    }
}
