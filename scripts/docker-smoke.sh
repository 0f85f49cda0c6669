#!/usr/bin/env bash
# Build the placer image, start a container, check /healthz, the HEALTHCHECK, a CP-SAT and a
# CBC placement and the non-root user, then stop and remove the container.
#
# With a working Docker engine (`docker info` succeeds) it uses docker. Without one (this
# kind of machine: no engine, no registry) it follows ENVIRONMENT.md "Containers": buildah
# and podman from Debian, the base image debian:bookworm-slim built locally with debootstrap
# (cached in $PLACER_SMOKE_CACHE), overlay storage, the host's CA bundle bind-mounted for pip,
# and the runc runtime. SMOKE_CLI=docker instead drives the plain `docker build` / `docker run`
# commands the README gives users, against `podman system service` (podman's Docker API).
# Not part of the CI test suite (minutes, not seconds).
#
#   scripts/docker-smoke.sh     # env: IMAGE, PORT, SMOKE_CLI, PLACER_SMOKE_CACHE, DEBIAN_MIRROR
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
IMAGE=${IMAGE:-localhost/placer:smoke}
PORT=${PORT:-18080}
NAME=placer-smoke-$$
CACHE=${PLACER_SMOKE_CACHE:-/var/tmp/placer-smoke}
BASE=docker.io/library/debian:bookworm-slim

say() { printf '==> %s\n' "$*" >&2; }
fail() { printf 'FAIL: %s\n' "$*" >&2; exit 1; }
# The Debian mirror comes from DEBIAN_MIRROR or this machine's own apt sources, never from this
# file: the first main-archive URI (not -security) in deb822 *.sources, else in one-line *.list.
machine_mirror() {
  { cat /etc/apt/sources.list.d/*.sources 2>/dev/null || true; } \
    | awk '/^URIs:/ { for (i = 2; i <= NF; i++) if ($i !~ /security/) { print $i; exit } }' | grep . && return
  { cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null || true; } \
    | awk '$1 == "deb" { for (i = 2; i <= NF; i++) if ($i ~ /^[a-z]+:\/\//) { if ($i !~ /security/) { print $i; exit } break } }'
}
CTL=()
SERVICE_PID=
cleanup() {
  if [ ${#CTL[@]} -gt 0 ]; then "${CTL[@]}" rm -f "$NAME" >/dev/null 2>&1 || true; fi
  if [ -n "$SERVICE_PID" ]; then kill "$SERVICE_PID" 2>/dev/null || true; fi
}
trap cleanup EXIT

if command -v docker >/dev/null && docker info >/dev/null 2>&1; then
  ENGINE=docker
  BUILD=(docker build)
  RUN=(docker run)
  CTL=(docker)
else
  ENGINE=podman
  if ! command -v buildah >/dev/null || ! command -v podman >/dev/null || ! command -v debootstrap >/dev/null; then
    [ "$(id -u)" = 0 ] || fail "need buildah, podman, runc and debootstrap (apt-get install as root)"
    say "installing buildah podman runc debootstrap"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq buildah podman runc debootstrap >/dev/null
  fi
  STORAGE=(--storage-driver overlay)
  mkdir -p "$CACHE"
  if ! podman "${STORAGE[@]}" image exists "$BASE"; then
    MIRROR=${DEBIAN_MIRROR:-$(machine_mirror)}
    [ -n "$MIRROR" ] || fail "no Debian mirror in this machine's apt sources (/etc/apt/sources.list, /etc/apt/sources.list.d/): set DEBIAN_MIRROR=<your Debian mirror URL> (for example the one your apt uses)"
    if [ ! -f "$CACHE/rootfs.tar" ]; then
      say "building the base image $BASE with debootstrap from $MIRROR (a few minutes, once)"
      rm -rf "$CACHE/rootfs"
      debootstrap --variant=minbase bookworm "$CACHE/rootfs" "$MIRROR" >"$CACHE/debootstrap.log" 2>&1 \
        || fail "debootstrap failed, see $CACHE/debootstrap.log"
      # as the official slim image: no apt lists, no docs
      rm -rf "$CACHE/rootfs/var/lib/apt/lists/"* "$CACHE/rootfs/usr/share/doc/"* "$CACHE/rootfs/usr/share/man/"*
      tar -C "$CACHE/rootfs" -cf "$CACHE/rootfs.tar" .
    fi
    printf 'FROM scratch\nADD rootfs.tar /\nCMD ["bash"]\n' >"$CACHE/Containerfile.base"
    buildah "${STORAGE[@]}" bud --isolation chroot --pull=false --format docker \
      -f "$CACHE/Containerfile.base" -t "$BASE" "$CACHE" >"$CACHE/base-build.log" 2>&1 \
      || { tail -30 "$CACHE/base-build.log" >&2; fail "base image build failed"; }
  fi
  # pip inside build steps must trust the CA that re-signs outbound HTTPS here.
  printf '[global]\ncert = /run/host-ca.crt\n' >"$CACHE/pip.conf"
  BUILD=(buildah "${STORAGE[@]}" bud --isolation chroot --pull=false --layers --format docker
         -v /etc/ssl/certs/ca-certificates.crt:/run/host-ca.crt:ro -v "$CACHE/pip.conf:/etc/pip.conf:ro")
  # No systemd here to time periodic health checks (podman says so on stderr, harmlessly);
  # `podman healthcheck run` below runs the image's HEALTHCHECK once instead.
  RUN=(podman "${STORAGE[@]}" run --runtime runc --cgroup-manager cgroupfs
       --ulimit nofile=4096:4096 --ulimit nproc=4096:4096)
  CTL=(podman "${STORAGE[@]}" --runtime runc --cgroup-manager cgroupfs)
  if [ "${SMOKE_CLI:-}" = docker ]; then
    # the same settings, for the Docker API that podman serves to the docker CLI
    cat >"$CACHE/containers.conf" <<CONF
[containers]
default_ulimits = ["nofile=4096:4096", "nproc=4096:4096"]
volumes = ["/etc/ssl/certs/ca-certificates.crt:/run/host-ca.crt:ro", "$CACHE/pip.conf:/etc/pip.conf:ro"]
[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
CONF
    rm -f "$CACHE/docker.sock"
    CONTAINERS_CONF="$CACHE/containers.conf" podman "${STORAGE[@]}" system service --time=0 \
      "unix://$CACHE/docker.sock" >"$CACHE/podman-service.log" 2>&1 &
    SERVICE_PID=$!
    export DOCKER_HOST="unix://$CACHE/docker.sock"
    for _ in $(seq 1 50); do docker info >/dev/null 2>&1 && break; sleep 0.2; done
    docker info >/dev/null 2>&1 || fail "podman system service did not come up, see $CACHE/podman-service.log"
    ENGINE=docker
    BUILD=(docker build)
    RUN=(docker run)
    CTL=(docker)
  fi
fi

mkdir -p "$CACHE"
say "building $IMAGE with $ENGINE (log: $CACHE/build.log)"
started=$(date +%s)
"${BUILD[@]}" -t "$IMAGE" "$ROOT" >"$CACHE/build.log" 2>&1 || { tail -30 "$CACHE/build.log" >&2; fail "image build failed"; }
say "built in $(( $(date +%s) - started )) s"


say "starting container $NAME on 127.0.0.1:$PORT"
"${RUN[@]}" -d --name "$NAME" -p "127.0.0.1:$PORT:8000" -e PLACER_WORKERS=2 "$IMAGE" >/dev/null 2>"$CACHE/run.err" \
  || { cat "$CACHE/run.err" >&2; fail "the container did not start"; }

URL=http://127.0.0.1:$PORT
for _ in $(seq 1 120); do
  curl -fsS "$URL/healthz" >/dev/null 2>&1 && break
  sleep 0.5
done
health=$(curl -fsS "$URL/healthz") || { "${CTL[@]}" logs "$NAME" >&2 || true; fail "/healthz does not answer"; }
say "healthz: $health"
python3 - "$health" <<'PY' || fail "healthz is not ok or a back end is missing"
import json, sys
h = json.loads(sys.argv[1])
assert h["status"] == "ok", h
assert h["solvers"] == {"cpsat": True, "cbc": True, "highs": True}, h["solvers"]
PY

place() {
  curl -fsS -X POST "$URL/v1/placements" -H 'Content-Type: application/json' -d @- <<JSON
{"graph": {"ops": [{"id": "a", "time_ms": 1}, {"id": "b", "time_ms": 4}, {"id": "c", "time_ms": 4}, {"id": "d", "time_ms": 1}],
           "edges": [{"src": "a", "dst": "b", "bytes": 25000000}, {"src": "a", "dst": "c", "bytes": 25000000},
                     {"src": "b", "dst": "d", "bytes": 25000000}, {"src": "c", "dst": "d", "bytes": 25000000}]},
 "hardware": {"devices": [{"id": "gpu0"}, {"id": "gpu1"}],
              "links": [{"a": "gpu0", "b": "gpu1", "bandwidth_gb_per_s": 25, "latency_us": 5}]},
 "options": {"solver": "$1", "time_limit_s": 10}}
JSON
}
for solver in cpsat cbc; do
  reply=$(place "$solver") || fail "placement with $solver failed"
  python3 - "$reply" "$solver" <<'PY' || fail "placement with $solver: wrong answer"
import json, sys
r = json.loads(sys.argv[1])
assert r["status"] == "optimal" and abs(r["makespan_ms"] - 7.005) < 1e-9, r
print(f"==> {sys.argv[2]}: {r['status']}, makespan {r['makespan_ms']} ms, speedup {r['speedup']:.3f}", file=sys.stderr)
PY
done

uid=$("${CTL[@]}" exec "$NAME" id -u)
[ "$uid" != 0 ] || fail "the service runs as root"
say "service runs as uid $uid"
if [ "$ENGINE" = podman ]; then
  "${CTL[@]}" healthcheck run "$NAME" || fail "the image's HEALTHCHECK fails"
  say "HEALTHCHECK passes"
else
  inspect=$(docker inspect --format '{{json .Config.Healthcheck}}' "$NAME")
  [ "$inspect" != null ] || fail "the image has no HEALTHCHECK"
fi

size=$("${CTL[@]}" image inspect --format '{{.Size}}' "$IMAGE" 2>/dev/null || echo '?')
say "image size: $size bytes"
"${CTL[@]}" stop -t 15 "$NAME" >/dev/null 2>&1 || fail "the container did not stop"
# uvicorn re-raises SIGTERM after its graceful shutdown, so 143 (128 + 15) is a clean exit too;
# the service's own "stopped" log line says the shutdown ran (running jobs marked interrupted).
code=$("${CTL[@]}" inspect --format '{{.State.ExitCode}}' "$NAME" 2>/dev/null)
"${CTL[@]}" logs "$NAME" 2>&1 | grep -q '"msg": "placer service stopped"' && { [ "$code" = 0 ] || [ "$code" = 143 ]; } \
  || fail "the service did not shut down cleanly on SIGTERM (exit code $code)"
say "SIGTERM: graceful shutdown (exit code $code)"
say "PASS: image $IMAGE builds, serves /healthz and placements (CP-SAT, CBC), runs as non-root"
