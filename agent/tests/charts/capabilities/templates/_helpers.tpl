{{- define "capabilities.printed" -}}
{{ .Capabilities.KubeVersion }} {{ .Capabilities.HelmVersion }} {{ .Capabilities }}
{{- end -}}
