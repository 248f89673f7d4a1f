//! `templates/_helpers.tpl`: the named templates the chart's templates include, kubebuilder's
//! (`<chart>.name`, `.fullname`, `.resourceName`, `.serviceAccountName`, with its semantics of
//! `nameOverride`, `fullnameOverride` and `serviceAccount`) and the labels every object gets
//! (`<chart>.labels`). The file is the user's once written: a later run only appends the
//! templates it lacks, so that the templates made from config/ always find theirs.

/// The named templates: their name after `<chart>.`, and their text (`CHART` for the chart's
/// name).
const DEFINES: &[(&str, &str)] = &[
    (
        "labels",
        r#"{{/*
The labels of Helm's conventions, which every template of the chart adds to config/'s labels.
*/}}
{{- define "CHART.labels" -}}
helm.sh/chart: {{ .Chart.Name }}-{{ .Chart.Version | replace "+" "_" }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}
"#,
    ),
    (
        "name",
        r#"{{/*
The chart's name (nameOverride): the value of the app.kubernetes.io/name labels and selectors.
*/}}
{{- define "CHART.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}
"#,
    ),
    (
        "fullname",
        r#"{{/*
The prefix of the objects' names: fullnameOverride, else the release's name followed by the
chart's (nameOverride), or the release's name alone when it holds the chart's. `helm install
CHART` names the objects as config/ does.
*/}}
{{- define "CHART.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}
"#,
    ),
    (
        "resourceName",
        r#"{{/*
An object's name: the fullname and config/'s name after its prefix (.suffix), cut to 63
characters. Takes a dict of suffix and context (the root context).
*/}}
{{- define "CHART.resourceName" -}}
{{- $fullname := include "CHART.fullname" .context }}
{{- $maxLen := sub 62 (len .suffix) | int }}
{{- if gt (len $fullname) $maxLen }}
{{- printf "%s-%s" (trunc $maxLen $fullname | trimSuffix "-") .suffix | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" $fullname .suffix | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
"#,
    ),
    (
        "serviceAccountName",
        r#"{{/*
The manager's ServiceAccount: the chart's (serviceAccount.enabled), else serviceAccount.name,
which must then be set ("default" for the namespace's default ServiceAccount).
*/}}
{{- define "CHART.serviceAccountName" -}}
{{- if .Values.serviceAccount.enabled }}
{{- include "CHART.resourceName" (dict "suffix" "controller-manager" "context" .) }}
{{- else }}
{{- required "serviceAccount.name is required when serviceAccount.enabled=false (set name: default explicitly to use the namespace default ServiceAccount)" .Values.serviceAccount.name }}
{{- end }}
{{- end }}
"#,
    ),
];

/// The first lines of the file.
const HEADER: &str = "{{/*
Named templates of the chart. Yours once written: `make helm-chart` keeps this file, and only
appends the templates the chart's own need and it lacks.
*/}}
";

/// The file as first written, for the chart `chart`.
pub fn initial(chart: &str) -> String {
    let mut text = HEADER.to_string();
    for (_, define) in DEFINES {
        text.push('\n');
        text.push_str(&define.replace("CHART", chart));
    }
    text
}

/// The user's file with the named templates it lacks appended (unchanged if it has them all).
pub fn complete(existing: &str, chart: &str) -> String {
    let mut text = existing.to_string();
    for (name, define) in DEFINES {
        if !existing.contains(&format!("define \"{chart}.{name}\"")) {
            if !text.is_empty() && !text.ends_with('\n') {
                text.push('\n');
            }
            text.push('\n');
            text.push_str(&define.replace("CHART", chart));
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_users_file_gets_only_what_it_lacks() {
        let first = initial("memc");
        for name in [
            "labels",
            "name",
            "fullname",
            "resourceName",
            "serviceAccountName",
        ] {
            assert!(
                first.contains(&format!("{{{{- define \"memc.{name}\" -}}}}")),
                "{name}"
            );
        }
        assert!(!first.contains("CHART"));
        assert_eq!(complete(&first, "memc"), first);
        // A file of an earlier operator-rs, with the labels only (and edited).
        let old = "{{- define \"memc.labels\" -}}\nmine: yes\n{{- end }}";
        let completed = complete(old, "memc");
        assert!(completed.starts_with(old), "{completed}");
        assert_eq!(completed.matches("define \"memc.labels\"").count(), 1);
        assert!(
            completed.contains("define \"memc.resourceName\""),
            "{completed}"
        );
    }
}
