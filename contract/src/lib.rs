//! What operator-rs and its runtime agree on, read from the documentation both follow.
//!
//! The metric families that docs/manager.md's "Metrics" table lists, as the series names a
//! Prometheus scrape shows: the runtime's registry must serve exactly these (this crate's
//! tests/metrics_documented.rs), and the Grafana dashboards operator-rs writes may query only these
//! (tests/grafana_dashboards.rs at the repository's root). A crate of its own so that operator-rs's
//! tests read the table without building the runtime.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// docs/manager.md of this repository.
pub fn manager_md() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/manager.md")
}

/// The series of every family in the Metrics table of `manager_md`: a histogram's `_bucket`,
/// `_sum` and `_count`, any other family's own name (counters are listed with their `_total`).
/// Panics when the file or its table is missing: this crate serves tests.
pub fn documented_series(manager_md: &Path) -> BTreeSet<String> {
    let text = std::fs::read_to_string(manager_md)
        .unwrap_or_else(|error| panic!("{}: {error}", manager_md.display()));
    let section = text
        .split("\n## ")
        .find(|section| section.starts_with("Metrics\n"))
        .expect("docs/manager.md has a \"## Metrics\" section");
    let mut series = BTreeSet::new();
    for row in section.lines().filter(|line| line.starts_with("| `")) {
        let cells: Vec<&str> = row.split('|').map(str::trim).collect();
        let (families, kind) = (cells[1], cells[2]);
        for family in families
            .split(',')
            .map(|name| name.trim().trim_matches('`'))
        {
            if kind == "histogram" {
                for suffix in ["_bucket", "_sum", "_count"] {
                    series.insert(format!("{family}{suffix}"));
                }
            } else {
                series.insert(family.to_owned());
            }
        }
    }
    assert!(
        series.len() > 10,
        "too few families in the table: {series:?}"
    );
    series
}
