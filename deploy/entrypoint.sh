#!/bin/sh
# Entry point of the Runline image (deploy/Dockerfile). POSIX sh: the slim image has no bash.
#
#   SERVICE=<name>               node dist/services/<name>/main.js "$@"   (serve; or `migrate`)
#   SERVICE=all, argument migrate  every service's migrations, in order, then exit
#
# <name> is one of: gateway invocation scheduler polling dead-letter callback webhook.
set -eu

# The image keeps this script next to dist/; resolving from here keeps it working when a
# Kubernetes workingDir or `docker run -w` changes the current directory.
app_dir=$(CDPATH= cd -- "$(dirname -- "$0")" && pwd)
services="gateway invocation scheduler polling dead-letter callback webhook"
service=${SERVICE:-}

if [ "$service" = "all" ]; then
  if [ "${1:-}" != "migrate" ] || [ "$#" -ne 1 ]; then
    echo "runline: SERVICE=all only runs migrations; start it with the single argument 'migrate'" >&2
    exit 64
  fi
  # One process per service, each in its own schema with its own migrations table. Order
  # follows DESIGN.md (gateway first) so a failure names the first broken schema and stops.
  # Migrations take a per-schema advisory lock and run in one transaction, so a run killed
  # half-way (this shell, as PID 1, does not forward SIGTERM) rolls back cleanly and a
  # concurrent run elsewhere waits instead of colliding.
  for name in $services; do
    node "$app_dir/dist/services/$name/main.js" migrate
  done
  exit 0
fi

case "$service" in
  gateway | invocation | scheduler | polling | dead-letter | callback | webhook) ;;
  *)
    echo "runline: set SERVICE to one of: $services (or 'all' with the argument 'migrate'); got '$service'" >&2
    exit 64
    ;;
esac

# exec: node replaces the shell as PID 1, so SIGTERM from docker/Kubernetes reaches
# runStandalone's handler, which drains and exits.
exec node "$app_dir/dist/services/$service/main.js" "$@"
