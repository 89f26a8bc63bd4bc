#!/bin/sh
# The entry point of the operator's image (deploy/Dockerfile): `kopf run` with the narrowest
# permissions an operator needs in a pod — no -A.
#
#   --allow-read   the operator's files (the working directory: the bundle's chunks, dist/, are
#                  imported when first used) and the pod's service account (token, CA, namespace)
#   --allow-env    where the API server is, the pod's name and namespace (the identity in peering
#                  and Leases, the sharding namespace), KUBECONFIG (unset in a pod: then the
#                  service account is used), kopf run's KOPF_RUN_PEERING, and the proxy variables
#                  with KOPF_HTTP_CLIENT (when they can be read and name no proxy for the API
#                  server, the lean HTTP/1.1 client is used; otherwise Deno's fetch)
#   --allow-net    the API server (KUBERNETES_SERVICE_HOST:KUBERNETES_SERVICE_PORT, as Kubernetes
#                  sets them in every pod) and what the operator listens on: KOPF_LISTEN, by
#                  default the probes of --liveness=http://0.0.0.0:8080/healthz; add an admission
#                  webhook server's address there (comma-separated), e.g. 0.0.0.0:8080,0.0.0.0:9443
#   --v8-flags     V8's heap sized for an operator's memory rather than its speed: a young generation
#                  of 2 MiB semi-spaces (Deno's grow to 16 MiB), an old generation let grow 25 % past
#                  what the last full collection kept alive (not up to 4x) — peak RSS in bursts of
#                  2,000 and 10,000 objects about 155 -> 102 and 258 -> 122 MiB, for 30-50 % more
#                  CPU per object (docs/deployment.md, "Memory"); and V8's efficiency mode for
#                  its TurboFan after 3x the calls, with the collector's background threads kept
#                  (--no-single-threaded-gc-in-background): about 15 % less CPU per object in a
#                  10,000 burst, and lower peaks (88 and 113 MiB in bursts of 2,000 and 10,000)
#   --no-code-cache  no V8 code cache: Deno would keep the compiled code of every module it loaded
#                  (and the cache database's pages) for the life of the process, ~2-3 MiB of an
#                  idle operator's RSS; V8 compiles the functions it runs instead, once, at start
#
# dist/main.js is `kopf bundle handlers.ts` (the Dockerfile): kopf run with the handlers built in.
# The arguments are kopf run's (the image's CMD, or the Deployment's args).
set -eu
host="${KUBERNETES_SERVICE_HOST:-kubernetes.default.svc}"
case "$host" in *:*) host="[$host]" ;; esac
port="${KUBERNETES_SERVICE_PORT:-443}"
exec deno run --cached-only --no-code-cache \
  --v8-flags=--max-semi-space-size=2,--heap-growing-percent=25,--efficiency-mode,--no-single-threaded-gc-in-background \
  --allow-read=.,/var/run/secrets/kubernetes.io/serviceaccount \
  --allow-env=KUBECONFIG,KUBERNETES_SERVICE_HOST,KUBERNETES_SERVICE_PORT,POD_ID,POD_NAMESPACE,KOPF_RUN_PEERING,KOPF_HTTP_CLIENT,HTTPS_PROXY,https_proxy,HTTP_PROXY,http_proxy,ALL_PROXY,all_proxy,NO_PROXY,no_proxy \
  --allow-net="$host:$port,${KOPF_LISTEN:-0.0.0.0:8080}" \
  dist/main.js "$@"
