//! The standard `process_*` metrics of Prometheus client libraries (as Go operators export them),
//! read from `/proc/self` on every scrape. On other systems, or when `/proc` is not readable, the
//! metrics that cannot be read are left out instead of failing the scrape.

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric as _};
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;

/// Clock ticks per second of the times in `/proc/self/stat`. It is 100 on every Linux platform
/// Kubernetes runs on (Prometheus' Go procfs library makes the same assumption), which spares a
/// `libc::sysconf` call.
const CLOCK_TICKS_PER_SECOND: f64 = 100.0;

/// Reads the process metrics on each scrape.
#[derive(Debug, Default)]
pub(super) struct ProcessCollector;

/// One reading of `/proc/self`; `None` for what could not be read.
#[derive(Debug, Default, PartialEq)]
struct Reading {
    cpu_seconds: Option<f64>,
    resident_memory_bytes: Option<f64>,
    virtual_memory_bytes: Option<f64>,
    open_fds: Option<f64>,
    max_fds: Option<f64>,
    start_time_seconds: Option<f64>,
}

impl Collector for ProcessCollector {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let reading = read();
        if let Some(seconds) = reading.cpu_seconds {
            let counter = ConstCounter::new(seconds);
            let help = "Total user and system CPU time spent in seconds.";
            let metric = encoder.encode_descriptor(
                "process_cpu_seconds",
                help,
                None,
                counter.metric_type(),
            )?;
            counter.encode(metric)?;
        }
        let gauges = [
            (
                "process_resident_memory_bytes",
                "Resident memory size in bytes.",
                reading.resident_memory_bytes,
            ),
            (
                "process_virtual_memory_bytes",
                "Virtual memory size in bytes.",
                reading.virtual_memory_bytes,
            ),
            (
                "process_open_fds",
                "Number of open file descriptors.",
                reading.open_fds,
            ),
            (
                "process_max_fds",
                "Maximum number of open file descriptors.",
                reading.max_fds,
            ),
            (
                "process_start_time_seconds",
                "Start time of the process since unix epoch in seconds.",
                reading.start_time_seconds,
            ),
        ];
        for (name, help, value) in gauges {
            if let Some(value) = value {
                let gauge = ConstGauge::new(value);
                let metric = encoder.encode_descriptor(name, help, None, gauge.metric_type())?;
                gauge.encode(metric)?;
            }
        }
        Ok(())
    }
}

/// Reads everything from `/proc`; missing files give `None`s.
fn read() -> Reading {
    let file = |path: &str| std::fs::read_to_string(path).ok();
    let stat = file("/proc/self/stat");
    let status = file("/proc/self/status");
    let mut reading = Reading {
        open_fds: std::fs::read_dir("/proc/self/fd")
            .ok()
            // The directory handle used for listing is itself one of the entries; leave it out.
            .map(|entries| entries.count().saturating_sub(1) as f64),
        max_fds: file("/proc/self/limits")
            .as_deref()
            .and_then(max_open_files),
        ..Reading::default()
    };
    if let Some(status) = status.as_deref() {
        reading.resident_memory_bytes = status_kilobytes(status, "VmRSS:").map(|kb| kb * 1024.0);
        reading.virtual_memory_bytes = status_kilobytes(status, "VmSize:").map(|kb| kb * 1024.0);
    }
    if let Some(stat) = stat.as_deref() {
        let (cpu_seconds, start_ticks) = parse_stat(stat);
        reading.cpu_seconds = cpu_seconds;
        let boot_time = file("/proc/stat").as_deref().and_then(boot_time);
        reading.start_time_seconds = start_ticks
            .zip(boot_time)
            .map(|(ticks, boot)| boot + ticks / CLOCK_TICKS_PER_SECOND);
    }
    reading
}

/// CPU seconds (user + system) and the start time in ticks after boot, from `/proc/self/stat`.
/// The command name (field 2) may contain spaces and parentheses, so fields are counted after the
/// last `)`.
fn parse_stat(stat: &str) -> (Option<f64>, Option<f64>) {
    let Some((_, rest)) = stat.rsplit_once(')') else {
        return (None, None);
    };
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // `fields[0]` is field 3 (state): utime is field 14, stime 15, starttime 22.
    let number = |index: usize| fields.get(index)?.parse::<f64>().ok();
    let cpu = number(11)
        .zip(number(12))
        .map(|(user, system)| (user + system) / CLOCK_TICKS_PER_SECOND);
    (cpu, number(19))
}

/// A `Key:   1234 kB` line of `/proc/self/status`, in kB.
fn status_kilobytes(status: &str, key: &str) -> Option<f64> {
    status
        .lines()
        .find_map(|line| line.strip_prefix(key))?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// The soft limit of `Max open files` in `/proc/self/limits`.
fn max_open_files(limits: &str) -> Option<f64> {
    let line = limits
        .lines()
        .find_map(|line| line.strip_prefix("Max open files"))?;
    line.split_whitespace().next()?.parse().ok()
}

/// The `btime` line of `/proc/stat`: when the system booted, in seconds since the epoch.
fn boot_time(stat: &str) -> Option<f64> {
    stat.lines()
        .find_map(|line| line.strip_prefix("btime "))?
        .trim()
        .parse()
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_proc_formats() {
        let stat = "42 (my (odd) name) S 1 42 42 0 -1 4194560 1000 0 0 0 250 150 0 0 20 0 \
                    4 0 5000 123456789 2000 18446744073709551615";
        assert_eq!(parse_stat(stat), (Some(4.0), Some(5000.0)));
        assert_eq!(parse_stat("garbage"), (None, None));

        let status = "Name:\tmanager\nVmSize:\t  123456 kB\nVmRSS:\t    2048 kB\n";
        assert_eq!(status_kilobytes(status, "VmRSS:"), Some(2048.0));
        assert_eq!(status_kilobytes(status, "VmSwap:"), None);

        let limits = "Limit                     Soft Limit           Hard Limit           Units\n\
                      Max open files            1024                 1048576              files\n";
        assert_eq!(max_open_files(limits), Some(1024.0));
        assert_eq!(
            boot_time("cpu  1 2 3\nbtime 1700000000\n"),
            Some(1_700_000_000.0)
        );
    }
}
