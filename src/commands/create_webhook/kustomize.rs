//! The blocks of kubebuilder's `config/default/kustomization.yaml` that webhooks need: `init`
//! writes them commented out (kubebuilder's text), and `create webhook` uncomments them, or
//! inserts them at their markers, for the webhooks it adds.

/// The converted CRD as a target of the CA injection (cert-manager's `inject-ca-from`
/// annotation is `<namespace>/<certificate>`: index 0 and 1). Unlike kubebuilder, which inserts
/// these commented out and uncomments them with their header (which only works for the first
/// CRD), operator-rs uncomments the headers once and inserts live targets for every CRD.
pub const CA_INJECTION_TARGET_NAMESPACE: &str = "     - select:
         kind: CustomResourceDefinition
         name: {{ plural }}.{{ qualified_group }}
       fieldPaths:
         - .metadata.annotations.[cert-manager.io/inject-ca-from]
       options:
         delimiter: '/'
         index: 0
         create: true";
pub const CA_INJECTION_TARGET_NAME: &str = "     - select:
         kind: CustomResourceDefinition
         name: {{ plural }}.{{ qualified_group }}
       fieldPaths:
         - .metadata.annotations.[cert-manager.io/inject-ca-from]
       options:
         delimiter: '/'
         index: 1
         create: true";

/// Blocks of `config/default/kustomization.yaml` that init ships commented out (kubebuilder's
/// text), uncommented by every webhook.
pub const DEFAULT_UNCOMMENTS: &[&str] = &[
    "- ../webhook",
    "- ../certmanager",
    "- path: manager_webhook_patch.yaml\n  target:\n    kind: Deployment",
    "replacements:",
    ANY_WEBHOOK_REPLACEMENTS,
];

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
