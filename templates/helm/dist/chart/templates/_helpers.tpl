{% raw %}{{/*
The labels of Helm's conventions, which every template of the chart adds to config/'s labels.
Yours once written: `make helm-chart` keeps this file.
*/}}
{{- define "{% endraw %}{{ project_name }}{% raw %}.labels" -}}
helm.sh/chart: {{ .Chart.Name }}-{{ .Chart.Version | replace "+" "_" }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}{% endraw %}
