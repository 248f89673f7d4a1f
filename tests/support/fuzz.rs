//! The driver of the fuzz targets (`tests/fuzz_<input>.rs`): proptest's generation and shrinking,
//! sized by a number of cases and a time budget instead of a fixed count, so that `hack/fuzz` can
//! give every target its share of two minutes.
//!
//! - `FUZZ_SECONDS`: the time a target may take, checked between cases (default: no limit, and
//!   the target's own number of cases, small enough for `cargo test`; with a time, as many cases
//!   as fit);
//! - `PROPTEST_CASES`: the most cases a target runs, either way.
//!
//! Each target prints `fuzz <name>: <cases> cases in <seconds>s` (seen with `--nocapture`,
//! which hack/fuzz passes); a failing case is shrunk to the smallest input that still fails, and
//! the test panics with it (every such input becomes a regression test).

use std::time::{Duration, Instant};

use proptest::strategy::{Strategy, ValueTree as _};
use proptest::test_runner::{Config, TestCaseResult, TestRunner};

/// How many cases a target runs, and for how long at most.
pub struct Budget {
    pub cases: u32,
    pub time: Option<Duration>,
}

impl Budget {
    /// See the module: `default_cases` unless `FUZZ_SECONDS` or `PROPTEST_CASES` say otherwise.
    pub fn from_env(default_cases: u32) -> Self {
        let number = |name: &str| std::env::var(name).ok()?.trim().parse::<f64>().ok();
        let time = number("FUZZ_SECONDS").map(|s| Duration::from_secs_f64(s.max(0.0)));
        let cases = match (number("PROPTEST_CASES"), time) {
            (Some(n), _) => n.max(1.0) as u32,
            (None, Some(_)) => u32::MAX,
            (None, None) => default_cases,
        };
        Self { cases, time }
    }

    /// Whether there is time for more after `elapsed`.
    pub fn time_left(&self, elapsed: Duration) -> bool {
        self.time.is_none_or(|t| elapsed < t)
    }
}

/// Runs `check` on values of `strategy` within the budget (see the module); panics with the
/// shrunk input of the first failure.
pub fn run<S: Strategy>(
    name: &str,
    default_cases: u32,
    strategy: S,
    check: impl Fn(S::Value) -> TestCaseResult,
) where
    S::Value: std::fmt::Debug,
{
    let budget = Budget::from_env(default_cases);
    let config = Config {
        failure_persistence: None,
        ..Config::default()
    };
    let mut runner = TestRunner::new(config);
    let start = Instant::now();
    let mut cases = 0;
    while cases < budget.cases && budget.time_left(start.elapsed()) {
        let tree = strategy
            .new_tree(&mut runner)
            .unwrap_or_else(|e| panic!("fuzz {name}: no input could be generated: {e}"));
        if let Err(failure) = runner.run_one(tree, &check) {
            panic!("fuzz {name}: failed after {cases} cases: {failure}");
        }
        cases += 1;
    }
    println!(
        "fuzz {name}: {cases} cases in {:.1}s",
        start.elapsed().as_secs_f64()
    );
}

/// Values of `strategy`, `count` of them (for targets that check a batch at once, such as
/// compiling many generated items in one crate).
pub fn sample<S: Strategy>(strategy: &S, count: usize) -> Vec<S::Value> {
    let mut runner = TestRunner::new(Config {
        failure_persistence: None,
        ..Config::default()
    });
    (0..count)
        .map(|_| strategy.new_tree(&mut runner).unwrap().current())
        .collect()
}
