//! `operator-rs bundle validate <dir>`: print each problem of a bundle on its own line; errors
//! make the command fail, warnings do not (as with operator-sdk).

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Result, bail};

use crate::cli::BundleValidateArgs;
use crate::olm::validate::{self, Options, Severity, suites};

pub fn validate(args: &BundleValidateArgs, cwd: &Path) -> Result<()> {
    if args.list_optional {
        print!("{}", suites::list());
        return Ok(());
    }
    let json = match args.output.as_str() {
        "text" => false,
        "json-alpha1" => true,
        other => bail!("--output {other:?}: text or json-alpha1"),
    };
    let options = Options {
        select_optional: args.select_optional.clone(),
        optional_values: optional_values(&args.optional_values)?,
        olmv1: args.olmv1,
    };
    let dir = cwd.join(&args.dir);
    let shown = args.dir.to_string_lossy();
    if !dir.exists() && (shown.contains(':') || shown.contains('@')) {
        bail!(
            "{shown} is not a folder: operator-sdk also validates bundle images, operator-rs \
             validates bundle folders offline and pulls no images (unpack the image with docker \
             create, then docker cp <id>:/ ./bundle, and validate ./bundle)"
        );
    }
    let problems = validate::validate(&dir, &options)?;
    let errors = problems
        .iter()
        .filter(|p| p.severity == Severity::Error)
        .count();
    if json {
        let outputs: Vec<serde_json::Value> = problems
            .iter()
            .map(|p| {
                let level = match p.severity {
                    Severity::Error => "error",
                    Severity::Warning => "warning",
                };
                serde_json::json!({"type": level, "message": p.to_string()})
            })
            .collect();
        let result = serde_json::json!({"passed": errors == 0, "outputs": outputs});
        println!("{}", serde_json::to_string_pretty(&result)?);
    } else {
        for problem in &problems {
            println!("{problem}");
        }
    }
    if errors > 0 {
        bail!(
            "bundle {} is not valid: {errors} error{}",
            args.dir.display(),
            if errors == 1 { "" } else { "s" }
        );
    }
    if !json {
        println!("All validation tests have completed successfully");
    }
    Ok(())
}

fn optional_values(pairs: &[String]) -> Result<BTreeMap<String, String>> {
    pairs
        .iter()
        .filter(|p| !p.trim().is_empty())
        .map(|pair| match pair.split_once('=') {
            Some((key, value)) if !key.trim().is_empty() => {
                Ok((key.trim().to_string(), value.trim().to_string()))
            }
            _ => bail!("--optional-values {pair:?}: write key=value, e.g. k8s-version=1.30"),
        })
        .collect()
}
