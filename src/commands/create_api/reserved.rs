//! The type names a kind of the project's own cannot have.

use crate::names::reserved::RESERVED_TYPES;
use crate::names::{InvalidInput, Kind};

/// Refuses a kind of the project's own whose Rust type, or the `<Kind>Spec` and `<Kind>Status`
/// types generated with it, would clash with a name of [`RESERVED_TYPES`].
pub fn check_reserved_kind(kind: &Kind) -> Result<(), InvalidInput> {
    let clash = [
        kind.type_name().to_string(),
        format!("{}Spec", kind.type_name()),
        format!("{}Status", kind.type_name()),
    ]
    .into_iter()
    .find(|name| RESERVED_TYPES.contains(&name.as_str()));
    match clash {
        None => Ok(()),
        Some(name) if name == kind.type_name() => Err(InvalidInput::new(
            "--kind",
            kind.as_str(),
            "is a name the generated Rust code already uses (imported from kube, k8s-openapi, serde, \
             the runtime crate, or Rust's prelude); choose another kind",
        )),
        Some(name) => Err(InvalidInput::new(
            "--kind",
            kind.as_str(),
            format!(
                "its generated type {name} is a name the generated Rust code already uses; choose another kind"
            ),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reserved_kinds_and_their_generated_types_are_refused() {
        let kind = Kind::parse("Pod").unwrap();
        assert!(check_reserved_kind(&kind).is_err());
        let kind = Kind::parse("Deployment").unwrap();
        assert!(check_reserved_kind(&kind).is_err());
        // `PodSpec` is imported: a kind Pod would clash through its own PodSpec too.
        assert!(RESERVED_TYPES.contains(&"PodSpec"));
        let kind = Kind::parse("Captain").unwrap();
        assert!(check_reserved_kind(&kind).is_ok());
        // DeploymentSpec is imported, so a kind Deployment clashes through its spec type too;
        // Condition is imported, so ConditionSpec is fine but Condition is not.
        for name in ["Option", "Serialize", "Webhook", "Denial", "Context"] {
            assert!(
                check_reserved_kind(&Kind::parse(name).unwrap()).is_err(),
                "{name}"
            );
        }
    }
}
