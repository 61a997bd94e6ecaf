{{- define "paddlejob.labels" -}}
app.kubernetes.io/component: training
app.kubernetes.io/instance: {{ .Values.name }}
app.kubernetes.io/managed-by: helm
app.kubernetes.io/name: {{ .Values.name }}
app.kubernetes.io/part-of: paddlepaddle
{{- end }}

{{- define "paddlejob.pvName" -}}
{{ .Release.Namespace }}-{{ .Values.name }}-{{ .Values.volume.name }}
{{- end }}

{{- define "paddlejob.claimName" -}}
{{ .Values.name }}-{{ .Values.volume.name }}
{{- end }}

{{- define "paddlejob.podTemplate" -}}
metadata:
  labels:
    {{- include "paddlejob.labels" . | nindent 4 }}
  annotations:
    scheduling.k8s.io/group-name: {{ .Values.name }}
spec:
  schedulerName: volcano
  automountServiceAccountToken: false
  containers:
  - name: paddle
    image: {{ .Values.image | quote }}
    command: {{ toJson .Values.command }}
    env: {{ toJson .Values.env }}
    resources: {{ toJson .Values.resources }}
    securityContext:
      allowPrivilegeEscalation: false
      capabilities: {drop: [ALL]}
      seccompProfile: {type: RuntimeDefault}
    volumeMounts:
    - name: {{ .Values.volume.name }}
      mountPath: {{ .Values.volume.mountPath | quote }}
  volumes:
  - name: {{ .Values.volume.name }}
    persistentVolumeClaim:
      claimName: {{ include "paddlejob.claimName" . }}
{{- end }}
