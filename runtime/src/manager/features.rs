//! What the manager is asked for that its build left out: the capabilities behind the runtime's
//! features (see `Cargo.toml`), refused at startup with the feature that has them, rather than
//! ignored. `operator-rs` turns on the features a project's code needs; these are the flags (and
//! registrations) that only a deployment or a hand-edited manifest can add.

use anyhow::anyhow;

use super::flags::{Flags, WebhookCerts};

/// One capability behind a feature: what asks for it, the feature, and whether this build has it.
struct Gated {
    asked_by: &'static str,
    feature: &'static str,
    built: bool,
    asked: fn(&Flags, &Registered) -> bool,
}

/// What the project registered with the manager, besides its flags.
pub struct Registered {
    /// It gave storage migrations to run (`Manager::storage_migrations`).
    pub storage_migrations: bool,
    /// It gave webhooks to serve (`Manager::webhooks`), and `ENABLE_WEBHOOKS` is not `false`.
    pub webhooks: bool,
}

const GATED: &[Gated] = &[
    Gated {
        asked_by: "the webhooks of Manager::webhooks (or ENABLE_WEBHOOKS=false)",
        feature: "webhooks",
        built: cfg!(feature = "webhooks"),
        asked: |_, registered| registered.webhooks,
    },
    Gated {
        asked_by: "--webhook-certs=self-signed",
        feature: "webhooks",
        built: cfg!(feature = "webhooks"),
        asked: |flags, _| flags.webhook_certs == WebhookCerts::SelfSigned,
    },
    Gated {
        asked_by: "--webhook-url",
        feature: "webhooks",
        built: cfg!(feature = "webhooks"),
        asked: |flags, _| flags.webhook_url.is_some(),
    },
    Gated {
        asked_by: "--migrate-storage-versions-and-exit",
        feature: "migration",
        built: cfg!(feature = "migration"),
        asked: |flags, _| flags.migrate_storage_versions_and_exit,
    },
    Gated {
        asked_by: "the storage migrations of Manager::storage_migrations (or --migrate-storage-versions=false)",
        feature: "migration",
        built: cfg!(feature = "migration"),
        asked: |flags, registered| flags.migrate_storage_versions && registered.storage_migrations,
    },
    Gated {
        asked_by: "--sharding",
        feature: "sharding",
        built: cfg!(feature = "sharding"),
        asked: |flags, _| flags.sharding,
    },
];

/// Refuses what `flags` and `registered` ask for that this build of the runtime left out.
pub fn check(flags: &Flags, registered: &Registered) -> anyhow::Result<()> {
    match GATED
        .iter()
        .find(|gated| !gated.built && (gated.asked)(flags, registered))
    {
        Some(gated) => Err(anyhow!(
            "{} needs operator-rs-runtime's `{}` feature, which this manager was built without: \
             add it to the features of operator-rs-runtime in Cargo.toml",
            gated.asked_by,
            gated.feature
        )),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flags(args: &[&str]) -> Flags {
        let args = std::iter::once("manager").chain(args.iter().copied());
        Flags::try_parse_with("lease", args).unwrap()
    }

    const NOTHING: Registered = Registered {
        storage_migrations: false,
        webhooks: false,
    };

    /// Each gated flag is refused exactly when its feature is off, naming the feature.
    #[test]
    fn refuses_what_the_build_left_out() {
        let cases = [
            (
                &["--webhook-certs=self-signed"][..],
                "webhooks",
                cfg!(feature = "webhooks"),
            ),
            (
                &["--webhook-url=https://10.0.0.1:9443"],
                "webhooks",
                cfg!(feature = "webhooks"),
            ),
            (
                &["--migrate-storage-versions-and-exit"],
                "migration",
                cfg!(feature = "migration"),
            ),
            (
                &["--sharding", "--leader-elect"],
                "sharding",
                cfg!(feature = "sharding"),
            ),
        ];
        for (args, feature, built) in cases {
            let checked = check(&flags(args), &NOTHING);
            match checked {
                Ok(()) => assert!(built, "{args:?} accepted without `{feature}`"),
                Err(error) => {
                    assert!(!built, "{args:?} refused with `{feature}`: {error}");
                    let message = error.to_string();
                    assert!(
                        message.contains(&format!("`{feature}` feature")),
                        "{message}"
                    );
                    let flag = args[0].split('=').next().unwrap();
                    assert!(message.starts_with(flag), "{message}");
                }
            }
        }
    }

    /// Registered storage migrations need the `migration` feature, unless turned off by flag;
    /// a manager with none and the default flags needs no feature at all.
    #[test]
    fn storage_migrations_need_the_migration_feature_unless_turned_off() {
        assert!(check(&flags(&[]), &NOTHING).is_ok());
        let some = Registered {
            storage_migrations: true,
            ..NOTHING
        };
        assert_eq!(
            check(&flags(&[]), &some).is_ok(),
            cfg!(feature = "migration")
        );
        assert!(check(&flags(&["--migrate-storage-versions=false"]), &some).is_ok());
    }

    /// Webhooks to serve need the `webhooks` feature (the webhook server); none need nothing.
    #[test]
    fn webhooks_to_serve_need_the_webhooks_feature() {
        let some = Registered {
            webhooks: true,
            ..NOTHING
        };
        let checked = check(&flags(&[]), &some);
        assert_eq!(checked.is_ok(), cfg!(feature = "webhooks"));
        if let Err(error) = checked {
            assert!(error.to_string().contains("`webhooks` feature"), "{error}");
        }
    }
}
