//! One call of an external plugin: the request on its stdin, its answer read from its stdout,
//! within a time limit. Whatever goes wrong (it cannot start, exits non-zero, runs too long,
//! answers something that is not a PluginResponse, or says `error: true`) is one error line
//! that names the plugin.

use std::io::{Read as _, Write as _};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result, bail};

use super::discovery::Found;
use super::protocol::{PluginRequest, PluginResponse};

/// How long a plugin may take to answer unless `OPERATOR_RS_PLUGIN_TIMEOUT` (seconds) says
/// otherwise: long enough for a plugin that renders many files, short enough that a plugin
/// waiting for input it will never get does not hang a CI job.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

/// Sends `request` to `plugin`, run in `dir`, and returns its answer.
pub fn call(plugin: &Found, request: &PluginRequest, dir: &Path) -> Result<PluginResponse> {
    let key = plugin.key();
    let input = serde_json::to_vec(request).context("encoding the plugin request")?;
    let mut command = Command::new(&plugin.path);
    command
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // A group of its own, so that a plugin that runs too long is stopped with what it started.
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(&mut command, 0);
    let mut child = command
        .spawn()
        .with_context(|| format!("plugin {key}: cannot run {}", plugin.path.display()))?;
    // Written and read on threads of their own, so that a plugin that answers before reading
    // everything, or writes much to stderr, blocks nothing.
    let mut stdin = child.stdin.take().expect("piped");
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    let mut stdout = child.stdout.take().expect("piped");
    let reader = std::thread::spawn(move || {
        let mut out = Vec::new();
        let _ = stdout.read_to_end(&mut out);
        out
    });
    let mut stderr = child.stderr.take().expect("piped");
    let errors = std::thread::spawn(move || {
        let mut out = Vec::new();
        let _ = stderr.read_to_end(&mut out);
        out
    });
    let timeout = timeout();
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break status;
        }
        if started.elapsed() > timeout {
            stop(&mut child);
            bail!(
                "plugin {key} did not answer within {}s (OPERATOR_RS_PLUGIN_TIMEOUT sets the limit)",
                timeout.as_secs()
            );
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let _ = writer.join();
    let out = reader.join().unwrap_or_default();
    let err = errors.join().unwrap_or_default();
    if !status.success() {
        bail!("plugin {key} failed ({status}){}", last_line(&err));
    }
    let response: PluginResponse = serde_json::from_slice(&out).map_err(|e| {
        anyhow::anyhow!(
            "plugin {key} answered something that is not a kubebuilder PluginResponse (JSON): {e}"
        )
    })?;
    if response.error {
        let messages: Vec<&str> = response
            .error_msgs
            .iter()
            .flat_map(|m| m.lines())
            .map(str::trim)
            .filter(|m| !m.is_empty())
            .collect();
        bail!(
            "plugin {key}: {}",
            if messages.is_empty() {
                "it reported an error".to_string()
            } else {
                messages.join("; ")
            }
        );
    }
    Ok(response)
}

/// Stops the plugin and the processes it started (its process group).
fn stop(child: &mut std::process::Child) {
    #[cfg(unix)]
    let _ = Command::new("kill")
        .args(["-KILL", "--", &format!("-{}", child.id())])
        .stderr(Stdio::null())
        .status();
    let _ = child.kill();
    let _ = child.wait();
}

fn timeout() -> Duration {
    std::env::var("OPERATOR_RS_PLUGIN_TIMEOUT")
        .ok()
        .and_then(|s| s.trim().parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s > 0.0)
        .map_or(DEFAULT_TIMEOUT, Duration::from_secs_f64)
}

/// `: <the last line the plugin wrote on stderr>`, if any.
fn last_line(stderr: &[u8]) -> String {
    String::from_utf8_lossy(stderr)
        .lines()
        .map(str::trim)
        .rfind(|l| !l.is_empty())
        .map(|l| format!(": {l}"))
        .unwrap_or_default()
}
