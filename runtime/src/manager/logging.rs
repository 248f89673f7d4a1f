//! Logging setup: `tracing` events printed to stderr as text or JSON.
//!
//! The filter is tracing-subscriber's `Targets`: a default level and levels per module
//! (`info,my_operator=debug,kube=warn`), the syntax of RUST_LOG without `EnvFilter`'s span and
//! field directives, whose regular-expression matcher would add 0.17 MB to every manager.

use tracing_subscriber::filter::{ParseError, Targets};
use tracing_subscriber::layer::SubscriberExt as _;
use tracing_subscriber::util::{SubscriberInitExt as _, TryInitError};

use super::flags::LogFormat;

/// The filter used when neither `--log-level` nor RUST_LOG is given.
pub const DEFAULT_LOG_FILTER: &str = "info";

/// Why logging could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum LoggingError {
    /// RUST_LOG (or `--log-level`) is not a valid `tracing` filter.
    #[error("invalid log filter: {0}")]
    Filter(#[from] ParseError),
    /// A global logger was already installed (only possible when called twice).
    #[error("could not install the logger: {0}")]
    Init(#[from] TryInitError),
}

/// Installs the global logger.
///
/// `level` (the `--log-level` flag) wins over the RUST_LOG environment variable, which wins over
/// [`DEFAULT_LOG_FILTER`]. Logs go to stderr, like those of kubebuilder's managers.
pub fn init(format: LogFormat, level: Option<&str>) -> Result<(), LoggingError> {
    let filter = filter(level, std::env::var("RUST_LOG").ok().as_deref())?;
    // Every level reaches the formatter; the filter, layered over it, decides.
    let builder = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::TRACE)
        .with_writer(std::io::stderr);
    match format {
        LogFormat::Text => builder.finish().with(filter).try_init()?,
        LogFormat::Json => builder.json().finish().with(filter).try_init()?,
    }
    Ok(())
}

/// Picks the log filter: the flag, else RUST_LOG, else [`DEFAULT_LOG_FILTER`].
fn filter(flag: Option<&str>, env: Option<&str>) -> Result<Targets, ParseError> {
    let directives = flag
        .or(env.filter(|value| !value.is_empty()))
        .unwrap_or(DEFAULT_LOG_FILTER);
    directives.parse()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flag_wins_over_rust_log_which_wins_over_default() {
        let pick = |flag, env| filter(flag, env).unwrap().to_string();
        assert_eq!(pick(Some("debug"), Some("warn")), "debug");
        assert_eq!(pick(None, Some("warn")), "warn");
        assert_eq!(pick(None, Some("")), DEFAULT_LOG_FILTER);
        assert_eq!(pick(None, None), DEFAULT_LOG_FILTER);
    }

    #[test]
    fn rejects_invalid_filters() {
        assert!(filter(Some("=["), None).is_err());
    }
}
