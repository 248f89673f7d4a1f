//! `--license`, `--license-file`, `--owner`: the license header of the project's Rust files.

use anyhow::{Result, bail};

use super::rust_files;
use crate::boilerplate::{self, BOILERPLATE_FILE, License};
use crate::cli::EditArgs;
use crate::scaffold::Plan;

/// The header that `--license`, `--license-file` or `--owner` ask for, if any.
pub(super) fn new_header(args: &EditArgs, old_header: &str, year: i64) -> Result<Option<String>> {
    if let Some(file) = &args.license_file {
        return Ok(Some(boilerplate::from_license_file(file)?));
    }
    let owner = match &args.owner {
        Some(owner) => owner.clone(),
        None => current_owner(old_header),
    };
    let license = match (args.license, &args.owner) {
        (Some(license), _) => license,
        (None, None) => return Ok(None),
        (None, Some(_)) => {
            if old_header.contains("Licensed under the Apache License") {
                License::Apache2
            } else if old_header.trim().is_empty() {
                bail!(
                    "the project has no license header ({BOILERPLATE_FILE} is missing); pass \
                     --license apache2 or --license copyright with --owner"
                );
            } else if old_header.lines().count() == 1 && old_header.starts_with("// Copyright ") {
                License::Copyright
            } else {
                bail!(
                    "{BOILERPLATE_FILE} is not a header operator-rs wrote, so --owner has no place \
                     in it; pass --license apache2|copyright, or --license-file"
                );
            }
        }
    };
    Ok(Some(boilerplate::header(license, &owner, year)))
}

/// The owner named in a header operator-rs wrote (`// Copyright <year> <owner>.`).
fn current_owner(header: &str) -> String {
    boilerplate::owner_and_year(header)
        .map(|(_, owner)| owner)
        .unwrap_or_default()
}

/// Replaces the license header on top of the project's Rust files: files that start with the
/// current header (a `YEAR` in it standing for the year each was written) get the new one, its
/// `YEAR` replaced by `year` (none: every Rust file gets it), and `hack/boilerplate.rs.txt` is
/// rewritten as the new header is, `YEAR` kept (removed for no header).
pub(super) fn rewrite_headers(plan: &mut Plan, old: &str, new: &str, year: i64) -> Result<()> {
    let as_written = |header: &str| {
        if header.trim().is_empty() {
            String::new()
        } else {
            format!("{header}\n")
        }
    };
    let (old_top, new_top) = (as_written(old), as_written(new));
    if old_top == new_top {
        return Ok(());
    }
    let new_top = boilerplate::with_year(&new_top, year);
    for path in rust_files(plan) {
        let Some(text) = plan.read(&path)? else {
            continue;
        };
        if let Some(rest) = boilerplate::strip_header(&text, &old_top) {
            plan.edit(&path, |_| Ok(format!("{new_top}{rest}")))?;
        }
    }
    if new.trim().is_empty() {
        plan.delete(BOILERPLATE_FILE)?;
    } else {
        plan.write(BOILERPLATE_FILE, new.to_string())?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn owners_are_read_back() {
        assert_eq!(
            current_owner(&boilerplate::header(License::Apache2, "Acme Corp", 2026)),
            "Acme Corp"
        );
        assert_eq!(
            current_owner(&boilerplate::header(License::Copyright, "", 2026)),
            ""
        );
    }
}
