//! The fields of the manager's Deployment that `values.yaml` sets as they are (kubebuilder's
//! `manager.*` values of the same names): where each is, how the template writes it, and what
//! `values.yaml` says when config/ does not set it.

use serde_yaml::Value;

/// Where a field is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    /// The Deployment's spec.
    Deployment,
    /// The pod template's spec.
    Pod,
    /// The manager container.
    Container,
}

/// How the template writes a field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    /// A mapping or list, as `toYaml` writes it; left out when empty.
    Block,
    /// A string, quoted; left out when empty.
    Text,
    /// A number, 0 included; left out when not set.
    Number,
}

/// A field of the manager's Deployment set by `manager.<value>`.
#[derive(Debug)]
pub struct Field {
    /// Its key under `manager` in values.yaml.
    pub value: &'static str,
    /// Its key in the object.
    pub field: &'static str,
    pub place: Place,
    pub form: Form,
    /// The comment above it in values.yaml.
    pub comment: &'static str,
    /// values.yaml's lines when config/ does not set it (at the manager block's indentation).
    pub absent: &'static str,
}

/// kubebuilder's fields, in the order of its values.yaml.
pub const FIELDS: &[Field] = &[
    Field {
        value: "imagePullSecrets",
        field: "imagePullSecrets",
        place: Place::Pod,
        form: Form::Block,
        comment: "Image pull secrets",
        absent: "# imagePullSecrets:\n#   - name: myregistrykey",
    },
    Field {
        value: "podSecurityContext",
        field: "securityContext",
        place: Place::Pod,
        form: Form::Block,
        comment: "Pod-level security settings",
        absent: "# podSecurityContext:\n#   runAsNonRoot: true\n#   seccompProfile:\n#     type: RuntimeDefault",
    },
    Field {
        value: "securityContext",
        field: "securityContext",
        place: Place::Container,
        form: Form::Block,
        comment: "Container-level security settings",
        absent: "# securityContext:\n#   allowPrivilegeEscalation: false\n#   capabilities:\n#     drop:\n#     - ALL",
    },
    Field {
        value: "resources",
        field: "resources",
        place: Place::Container,
        form: Form::Block,
        comment: "Resource limits and requests",
        absent: "# resources:\n#   limits:\n#     cpu: 500m\n#     memory: 128Mi\n#   requests:\n#     cpu: 10m\n#     memory: 64Mi",
    },
    Field {
        value: "affinity",
        field: "affinity",
        place: Place::Pod,
        form: Form::Block,
        comment: "Manager pod's affinity",
        absent: "affinity: {}",
    },
    Field {
        value: "nodeSelector",
        field: "nodeSelector",
        place: Place::Pod,
        form: Form::Block,
        comment: "Manager pod's node selector",
        absent: "nodeSelector: {}",
    },
    Field {
        value: "tolerations",
        field: "tolerations",
        place: Place::Pod,
        form: Form::Block,
        comment: "Manager pod's tolerations",
        absent: "tolerations: []",
    },
    Field {
        value: "strategy",
        field: "strategy",
        place: Place::Deployment,
        form: Form::Block,
        comment: "Deployment strategy",
        absent: "# strategy:\n#   type: RollingUpdate\n#   rollingUpdate:\n#     maxSurge: 25%\n#     maxUnavailable: 25%",
    },
    Field {
        value: "priorityClassName",
        field: "priorityClassName",
        place: Place::Pod,
        form: Form::Text,
        comment: "Priority class name",
        absent: "# priorityClassName: \"\"",
    },
    Field {
        value: "topologySpreadConstraints",
        field: "topologySpreadConstraints",
        place: Place::Pod,
        form: Form::Block,
        comment: "Topology spread constraints",
        absent: "# topologySpreadConstraints: []",
    },
    Field {
        value: "terminationGracePeriodSeconds",
        field: "terminationGracePeriodSeconds",
        place: Place::Pod,
        form: Form::Number,
        comment: "Termination grace period seconds",
        absent: "# terminationGracePeriodSeconds: 10",
    },
];

impl Field {
    /// The template's lines for the field at `indent`.
    pub fn lines(&self, indent: &str) -> Vec<String> {
        let (field, value) = (self.field, self.value);
        let path = format!(".Values.manager.{value}");
        match self.form {
            Form::Block => vec![
                format!("{indent}{{{{- with {path} }}}}"),
                format!("{indent}{field}:"),
                format!(
                    "{indent}  {{{{- toYaml . | nindent {} }}}}",
                    indent.len() + 2
                ),
                format!("{indent}{{{{- end }}}}"),
            ],
            Form::Text => vec![
                format!("{indent}{{{{- with {path} }}}}"),
                format!("{indent}{field}: {{{{ . | quote }}}}"),
                format!("{indent}{{{{- end }}}}"),
            ],
            Form::Number => vec![
                format!("{indent}{{{{- if not (kindIs \"invalid\" {path}) }}}}"),
                format!("{indent}{field}: {{{{ {path} }}}}"),
                format!("{indent}{{{{- end }}}}"),
            ],
        }
    }

    /// Whether `value`, config/'s, is what values.yaml writes as set (an empty mapping or list
    /// and a null are not: values.yaml says what [`Field::absent`] says).
    pub fn is_set(value: &Value) -> bool {
        match value {
            Value::Null => false,
            Value::Mapping(m) => !m.is_empty(),
            Value::Sequence(s) => !s.is_empty(),
            Value::String(s) => !s.is_empty(),
            _ => true,
        }
    }
}
