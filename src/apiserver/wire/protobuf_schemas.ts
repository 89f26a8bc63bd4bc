/**
 * The protobuf schemas of the kinds kubectl and typical clients send as
 * protobuf: per message, field number → JSON name and type (the numbers are
 * Kubernetes' `generated.proto` ones, checked against kubectl 1.33's own
 * bodies), and the top-level kinds by `apiVersion/kind`.
 *
 * @module
 */

/** How a field's value becomes JSON. */
type Type =
  | "string"
  | "int"
  | "bool"
  | "bytes" // base64 in JSON
  | "map" // map<string, string>
  | "bytesMap" // map<string, bytes>, values base64
  | "quantityMap" // map<string, Quantity>
  | "intOrString"
  | "quantity"
  | "ignored" // known, and dropped (e.g. a client-sent creationTimestamp)
  | Schema;

/** One field of a message. */
export interface FieldDef {
  name: string;
  type: Type;
  repeated: boolean;
  /** A Go pointer: written only when set, so its zero value is a value. */
  pointer: boolean;
}

/** A message: its fields by number. */
export interface Schema {
  fields: Map<number, FieldDef>;
}

/**
 * Builds a schema from a compact table: `"name"` is a string, `"name:int"` an int, a trailing
 * `[]` repeats it, a trailing `*` marks a pointer (or a field whose zero JSON keeps); a
 * `[spec, schema]` pair is a nested message, merged into its parent when named `inline`.
 */
function message(table: Record<number, string | [string, Schema]>): Schema {
  const schema: Schema = { fields: new Map() };
  for (const [no, entry] of Object.entries(table)) {
    const [spec, nested] = typeof entry === "string" ? [entry, undefined] : entry;
    const m = /^([A-Za-z]+)(?::([A-Za-z]+))?(\[\])?(\*)?$/.exec(spec);
    if (!m) throw new Error(`bad schema entry ${spec}`);
    const type = nested ?? ((m[2] ?? "string") as Type);
    schema.fields.set(Number(no), {
      name: m[1]!,
      type,
      repeated: !!m[3],
      pointer: !!m[4],
    });
  }
  return schema;
}

const OwnerReference = message({
  1: "kind",
  3: "name",
  4: "uid",
  5: "apiVersion",
  6: "controller:bool*",
  7: "blockOwnerDeletion:bool*",
});

const ObjectMeta = message({
  1: "name",
  2: "generateName",
  3: "namespace",
  4: "selfLink",
  5: "uid",
  6: "resourceVersion",
  7: "generation:int",
  8: "creationTimestamp:ignored",
  9: "deletionTimestamp:ignored",
  10: "deletionGracePeriodSeconds:int*",
  11: "labels:map",
  12: "annotations:map",
  13: ["ownerReferences[]", OwnerReference],
  14: "finalizers[]",
});

const LabelSelector = message({
  1: "matchLabels:map",
  2: ["matchExpressions[]", message({ 1: "key", 2: "operator", 3: "values[]" })],
});

const LocalObjectReference = message({ 1: "name" });
const ObjectReference = message({
  1: "kind",
  2: "namespace",
  3: "name",
  4: "uid",
  5: "apiVersion",
  6: "resourceVersion",
  7: "fieldPath",
});

const KeySelector = message({ 1: ["localObjectReference", LocalObjectReference], 2: "key" });
const EnvVar = message({
  1: "name",
  2: "value",
  3: [
    "valueFrom",
    message({
      1: ["fieldRef", message({ 1: "apiVersion", 2: "fieldPath" })],
      2: [
        "resourceFieldRef",
        message({ 1: "containerName", 2: "resource", 3: "divisor:quantity" }),
      ],
      3: ["configMapKeyRef", KeySelector],
      4: ["secretKeyRef", KeySelector],
    }),
  ],
});

const Container = message({
  1: "name",
  2: "image",
  3: "command[]",
  4: "args[]",
  5: "workingDir",
  6: [
    "ports[]",
    message({ 1: "name", 2: "hostPort:int", 3: "containerPort:int", 4: "protocol", 5: "hostIP" }),
  ],
  7: ["env[]", EnvVar],
  8: ["resources", message({ 1: "limits:quantityMap", 2: "requests:quantityMap" })],
  9: [
    "volumeMounts[]",
    message({ 1: "name", 2: "readOnly:bool", 3: "mountPath", 4: "subPath" }),
  ],
  13: "terminationMessagePath",
  14: "imagePullPolicy",
  16: "stdin:bool",
  17: "stdinOnce:bool",
  18: "tty:bool",
  20: "terminationMessagePolicy",
});

const PodSpec = message({
  1: [
    "volumes[]",
    message({
      1: "name",
      // VolumeSource is embedded inline in JSON; only the common sources are known here.
    }),
  ],
  2: ["containers[]", Container],
  3: "restartPolicy",
  4: "terminationGracePeriodSeconds:int*",
  5: "activeDeadlineSeconds:int*",
  6: "dnsPolicy",
  7: "nodeSelector:map",
  8: "serviceAccountName",
  9: "serviceAccount",
  10: "nodeName",
  11: "hostNetwork:bool",
  12: "hostPID:bool",
  13: "hostIPC:bool",
  15: ["imagePullSecrets[]", LocalObjectReference],
  16: "hostname",
  17: "subdomain",
  19: "schedulerName",
  20: ["initContainers[]", Container],
  24: "priorityClassName",
});

const PodTemplateSpec = message({ 1: ["metadata", ObjectMeta], 2: ["spec", PodSpec] });

const IntOrStringPair = message({
  1: "maxUnavailable:intOrString",
  2: "maxSurge:intOrString",
});

const DeploymentSpec = message({
  1: "replicas:int*",
  2: ["selector", LabelSelector],
  3: ["template", PodTemplateSpec],
  4: ["strategy", message({ 1: "type", 2: ["rollingUpdate", IntOrStringPair] })],
  5: "minReadySeconds:int",
  6: "revisionHistoryLimit:int*",
  7: "paused:bool",
  9: "progressDeadlineSeconds:int*",
});

const JobSpec = message({
  1: "parallelism:int*",
  2: "completions:int*",
  3: "activeDeadlineSeconds:int*",
  4: ["selector", LabelSelector],
  5: "manualSelector:bool*",
  6: ["template", PodTemplateSpec],
  7: "backoffLimit:int*",
  8: "ttlSecondsAfterFinished:int*",
  9: "completionMode*",
  10: "suspend:bool*",
});

const CronJobSpec = message({
  1: "schedule",
  2: "startingDeadlineSeconds:int*",
  3: "concurrencyPolicy",
  4: "suspend:bool*",
  5: ["jobTemplate", message({ 1: ["metadata", ObjectMeta], 2: ["spec", JobSpec] })],
  6: "successfulJobsHistoryLimit:int*",
  7: "failedJobsHistoryLimit:int*",
  8: "timeZone*",
});

const ServiceSpec = message({
  1: [
    "ports[]",
    message({
      1: "name",
      2: "protocol",
      3: "port:int",
      4: "targetPort:intOrString",
      5: "nodePort:int",
      6: "appProtocol*",
    }),
  ],
  2: "selector:map",
  3: "clusterIP",
  4: "type",
  5: "externalIPs[]",
  7: "sessionAffinity",
  8: "loadBalancerIP",
  9: "loadBalancerSourceRanges[]",
  10: "externalName",
  11: "externalTrafficPolicy",
  13: "publishNotReadyAddresses:bool",
  18: "clusterIPs[]",
  19: "ipFamilies[]",
  17: "ipFamilyPolicy*",
  21: "loadBalancerClass*",
  22: "internalTrafficPolicy*",
});

const PolicyRule = message({
  1: "verbs[]",
  2: "apiGroups[]",
  3: "resources[]",
  4: "resourceNames[]",
  5: "nonResourceURLs[]",
});
const Subject = message({ 1: "kind", 2: "apiGroup", 3: "name", 4: "namespace" });
const RoleRef = message({ 1: "apiGroup", 2: "kind", 3: "name" });
const Status = message({}); // a client's status is not stored on create: only its zeros are accepted

/** The spec of (Self|Local)SubjectAccessReview: what is asked about, and for whom. */
const AccessReviewSpec = message({
  1: [
    "resourceAttributes",
    message({
      1: "namespace",
      2: "verb",
      3: "group",
      4: "version",
      5: "resource",
      6: "subresource",
      7: "name",
    }),
  ],
  2: ["nonResourceAttributes", message({ 1: "path", 2: "verb" })],
  3: "user",
  4: "groups[]",
  6: "uid",
});

const ServiceBackendPort = message({ 1: "name", 2: "number:int" });
const IngressBackend = message({
  3: ["resource", message({ 1: "apiGroup*", 2: "kind", 3: "name" })],
  4: ["service", message({ 1: "name", 2: ["port", ServiceBackendPort] })],
});
const IngressSpec = message({
  1: ["defaultBackend", IngressBackend],
  2: ["tls[]", message({ 1: "hosts[]", 2: "secretName" })],
  3: [
    "rules[]",
    message({
      1: "host",
      2: [
        "inline",
        message({
          1: [
            "http",
            message({
              1: [
                "paths[]",
                message({ 1: "path", 2: ["backend", IngressBackend], 3: "pathType*" }),
              ],
            }),
          ],
        }),
      ],
    }),
  ],
  4: "ingressClassName*",
});

const PodDisruptionBudgetSpec = message({
  1: "minAvailable:intOrString*",
  2: ["selector", LabelSelector],
  3: "maxUnavailable:intOrString*",
  4: "unhealthyPodEvictionPolicy*",
});

/** The top-level kinds: apiVersion/kind → the object's fields (field 1 is always metadata). */
export const KINDS: Record<string, Schema> = {
  "v1/Namespace": message({
    1: ["metadata", ObjectMeta],
    2: ["spec", message({ 1: "finalizers[]" })],
    3: ["status", Status],
  }),
  "v1/ConfigMap": message({
    1: ["metadata", ObjectMeta],
    2: "data:map",
    3: "binaryData:bytesMap",
    4: "immutable:bool*",
  }),
  "v1/Secret": message({
    1: ["metadata", ObjectMeta],
    2: "data:bytesMap",
    3: "type",
    4: "stringData:map",
    5: "immutable:bool*",
  }),
  "v1/ResourceQuota": message({
    1: ["metadata", ObjectMeta],
    2: ["spec", message({ 1: "hard:quantityMap", 2: "scopes[]" })],
    3: ["status", Status],
  }),
  "scheduling.k8s.io/v1/PriorityClass": message({
    1: ["metadata", ObjectMeta],
    2: "value:int*", // not omitempty in JSON: 0 is written
    3: "globalDefault:bool",
    4: "description",
    5: "preemptionPolicy*",
  }),
  "policy/v1/PodDisruptionBudget": message({
    1: ["metadata", ObjectMeta],
    2: ["spec", PodDisruptionBudgetSpec],
    3: ["status", Status],
  }),
  "networking.k8s.io/v1/Ingress": message({
    1: ["metadata", ObjectMeta],
    2: ["spec", IngressSpec],
    3: ["status", Status],
  }),
  "v1/ServiceAccount": message({
    1: ["metadata", ObjectMeta],
    2: ["secrets[]", ObjectReference],
    3: ["imagePullSecrets[]", LocalObjectReference],
    4: "automountServiceAccountToken:bool*",
  }),
  "v1/Service": message({
    1: ["metadata", ObjectMeta],
    2: ["spec", ServiceSpec],
    3: ["status", Status],
  }),
  "apps/v1/Deployment": message({
    1: ["metadata", ObjectMeta],
    2: ["spec", DeploymentSpec],
    3: ["status", Status],
  }),
  "batch/v1/Job": message({
    1: ["metadata", ObjectMeta],
    2: ["spec", JobSpec],
    3: ["status", Status],
  }),
  "batch/v1/CronJob": message({
    1: ["metadata", ObjectMeta],
    2: ["spec", CronJobSpec],
    3: ["status", Status],
  }),
  "rbac.authorization.k8s.io/v1/Role": message({
    1: ["metadata", ObjectMeta],
    2: ["rules[]", PolicyRule],
  }),
  "rbac.authorization.k8s.io/v1/ClusterRole": message({
    1: ["metadata", ObjectMeta],
    2: ["rules[]", PolicyRule],
    3: ["aggregationRule", message({ 1: ["clusterRoleSelectors[]", LabelSelector] })],
  }),
  "rbac.authorization.k8s.io/v1/RoleBinding": message({
    1: ["metadata", ObjectMeta],
    2: ["subjects[]", Subject],
    3: ["roleRef", RoleRef],
  }),
  "rbac.authorization.k8s.io/v1/ClusterRoleBinding": message({
    1: ["metadata", ObjectMeta],
    2: ["subjects[]", Subject],
    3: ["roleRef", RoleRef],
  }),
  // The reviews of `kubectl auth can-i` (`--list`), `auth whoami`, and their kin.
  "authorization.k8s.io/v1/SelfSubjectAccessReview": message({
    1: ["metadata", ObjectMeta],
    2: ["spec", AccessReviewSpec],
    3: ["status", Status],
  }),
  "authorization.k8s.io/v1/SubjectAccessReview": message({
    1: ["metadata", ObjectMeta],
    2: ["spec", AccessReviewSpec],
    3: ["status", Status],
  }),
  "authorization.k8s.io/v1/LocalSubjectAccessReview": message({
    1: ["metadata", ObjectMeta],
    2: ["spec", AccessReviewSpec],
    3: ["status", Status],
  }),
  "authorization.k8s.io/v1/SelfSubjectRulesReview": message({
    1: ["metadata", ObjectMeta],
    2: ["spec", message({ 1: "namespace" })],
    3: ["status", Status],
  }),
  "authentication.k8s.io/v1/SelfSubjectReview": message({
    1: ["metadata", ObjectMeta],
    2: ["status", Status],
  }),
  "authentication.k8s.io/v1/TokenReview": message({
    1: ["metadata", ObjectMeta],
    2: ["spec", message({ 1: "token", 2: "audiences[]" })],
    3: ["status", Status],
  }),
  // `kubectl create token` (1.33) posts it to serviceaccounts/<name>/token.
  "authentication.k8s.io/v1/TokenRequest": message({
    1: ["metadata", ObjectMeta],
    2: [
      "spec",
      message({
        1: "audiences[]",
        3: ["boundObjectRef", message({ 1: "kind", 2: "apiVersion", 3: "name", 4: "uid" })],
        4: "expirationSeconds:int*",
      }),
    ],
    3: ["status", Status],
  }),
};
