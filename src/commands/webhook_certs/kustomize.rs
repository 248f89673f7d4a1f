//! The blocks of kubebuilder's `config/default/kustomization.yaml` that webhooks need: `init`
//! writes them commented out (kubebuilder's text), and the project's webhooks and their
//! certificate mode decide which are active (see [`super::sync_kustomization`]).

/// The CA injection targets of a converted CRD (cert-manager's `inject-ca-from` annotation is
/// `<namespace>/<certificate>`: index 0 goes below [`CONVERSION_NAMESPACE_SOURCE`], index 1 below
/// [`CONVERSION_NAME_SOURCE`]). Unlike kubebuilder, which inserts these commented out and
/// uncomments them with their header (which only works for the first CRD), operator-rs inserts a
/// pair for every CRD, live while the project uses cert-manager.
pub fn ca_injection_target(crd: &str, index: u8) -> String {
    format!(
        "     - select:
         kind: CustomResourceDefinition
         name: {crd}
       fieldPaths:
         - .metadata.annotations.[cert-manager.io/inject-ca-from]
       options:
         delimiter: '/'
         index: {index}
         create: true"
    )
}

/// The markers below which [`ca_injection_target`]s go, by index.
pub const CA_INJECTION_MARKERS: [&str; 2] =
    ["crdkustomizecainjectionns", "crdkustomizecainjectionname"];

/// Blocks of `config/default/kustomization.yaml` that init ships commented out (kubebuilder's
/// text), active once the project has a webhook, whatever its certificates.
pub const WEBHOOK_BLOCKS: &[&str] = &[
    "- ../webhook",
    "- path: manager_webhook_patch.yaml\n  target:\n    kind: Deployment",
];

/// The same, active while cert-manager issues the certificates.
pub const CERT_MANAGER_BLOCKS: &[&str] = &[
    "- ../certmanager",
    "replacements:",
    ANY_WEBHOOK_REPLACEMENTS,
];

/// The same, active while the manager makes its own certificates.
pub const SELF_SIGNED_BLOCKS: &[&str] = &["- ../webhook-certs"];

/// Every webhook: the webhook Service's name and namespace in the serving certificate's DNS names.
pub const ANY_WEBHOOK_REPLACEMENTS: &str = r#" - source: # Uncomment the following block if you have any webhook
     kind: Service
     version: v1
     name: webhook-service
     fieldPath: .metadata.name # Name of the service
   targets:
     - select:
         kind: Certificate
         group: cert-manager.io
         version: v1
         name: serving-cert
       fieldPaths:
         - .spec.dnsNames.0
         - .spec.dnsNames.1
       options:
         delimiter: '.'
         index: 0
         create: true
 - source:
     kind: Service
     version: v1
     name: webhook-service
     fieldPath: .metadata.namespace # Namespace of the service
   targets:
     - select:
         kind: Certificate
         group: cert-manager.io
         version: v1
         name: serving-cert
       fieldPaths:
         - .spec.dnsNames.0
         - .spec.dnsNames.1
       options:
         delimiter: '.'
         index: 1
         create: true"#;

/// `--defaulting`: the CA injection annotation of the MutatingWebhookConfiguration.
pub const DEFAULTING_REPLACEMENTS: &str = r#" - source: # Uncomment the following block if you have a DefaultingWebhook (--defaulting )
     kind: Certificate
     group: cert-manager.io
     version: v1
     name: serving-cert
     fieldPath: .metadata.namespace # Namespace of the certificate CR
   targets:
     - select:
         kind: MutatingWebhookConfiguration
       fieldPaths:
         - .metadata.annotations.[cert-manager.io/inject-ca-from]
       options:
         delimiter: '/'
         index: 0
         create: true
 - source:
     kind: Certificate
     group: cert-manager.io
     version: v1
     name: serving-cert
     fieldPath: .metadata.name
   targets:
     - select:
         kind: MutatingWebhookConfiguration
       fieldPaths:
         - .metadata.annotations.[cert-manager.io/inject-ca-from]
       options:
         delimiter: '/'
         index: 1
         create: true"#;

/// `--programmatic-validation`: the CA injection annotation of the ValidatingWebhookConfiguration.
pub const VALIDATION_REPLACEMENTS: &str = r#" - source: # Uncomment the following block if you have a ValidatingWebhook (--programmatic-validation)
     kind: Certificate
     group: cert-manager.io
     version: v1
     name: serving-cert # This name should match the one in certificate.yaml
     fieldPath: .metadata.namespace # Namespace of the certificate CR
   targets:
     - select:
         kind: ValidatingWebhookConfiguration
       fieldPaths:
         - .metadata.annotations.[cert-manager.io/inject-ca-from]
       options:
         delimiter: '/'
         index: 0
         create: true
 - source:
     kind: Certificate
     group: cert-manager.io
     version: v1
     name: serving-cert
     fieldPath: .metadata.name
   targets:
     - select:
         kind: ValidatingWebhookConfiguration
       fieldPaths:
         - .metadata.annotations.[cert-manager.io/inject-ca-from]
       options:
         delimiter: '/'
         index: 1
         create: true"#;

/// `--conversion`: the source of the CRDs' CA injection (certificate namespace); targets are inserted below it.
pub const CONVERSION_NAMESPACE_SOURCE: &str = r#" - source: # Uncomment the following block if you have a ConversionWebhook (--conversion)
     kind: Certificate
     group: cert-manager.io
     version: v1
     name: serving-cert
     fieldPath: .metadata.namespace # Namespace of the certificate CR
   targets: # Do not remove or uncomment the following scaffold marker; required to generate code for target CRD."#;

/// `--conversion`: the same for the certificate name.
pub const CONVERSION_NAME_SOURCE: &str = r#" - source:
     kind: Certificate
     group: cert-manager.io
     version: v1
     name: serving-cert
     fieldPath: .metadata.name
   targets: # Do not remove or uncomment the following scaffold marker; required to generate code for target CRD."#;
