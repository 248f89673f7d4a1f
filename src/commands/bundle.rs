//! `operator-rs bundle validate <dir>`: print each problem of a bundle on its own line; errors
//! make the command fail.

use std::path::Path;

use anyhow::{Result, bail};

use crate::olm::validate::{self, Severity};

pub fn validate(dir: &Path) -> Result<()> {
    let problems = validate::validate(dir)?;
    for problem in &problems {
        println!("{problem}");
    }
    let errors = problems
        .iter()
        .filter(|p| p.severity == Severity::Error)
        .count();
    if errors > 0 {
        bail!(
            "bundle {} is not valid: {errors} error{}",
            dir.display(),
            if errors == 1 { "" } else { "s" }
        );
    }
    println!("All validation tests have completed successfully");
    Ok(())
}
