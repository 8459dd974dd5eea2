#!/usr/bin/env bash
# Checks the wire contracts, as CI does. Run from the repository root:
#   tools/check-contracts.sh
# 1. buf lint (rules in buf.yaml).
# 2. buf breaking against the main branch, once main has protos to compare with.
# 3. Regenerates libs/contracts/src/gen and fails if that changes anything git tracks: the
#    committed generated code must match the protos.
# Works offline: buf and protoc-gen-es come from node_modules.
set -euo pipefail

if [[ ! -f buf.yaml || ! -d proto ]]; then
  echo "check-contracts: run me from the repository root (no buf.yaml or proto/ here)" >&2
  exit 2
fi

BUF=node_modules/.bin/buf
GEN_DIR=libs/contracts/src/gen

echo "==> buf lint"
"$BUF" lint

echo "==> buf breaking"
# The very first commit of proto/ has nothing to compare with, and a clone without a local
# main branch (a shallow CI checkout) cannot compare; say so instead of failing.
if ! git rev-parse --verify --quiet refs/heads/main >/dev/null; then
  echo "    skipped: no local 'main' branch to compare with"
elif [[ -z "$(git ls-tree -r --name-only main -- proto | grep '\.proto$' || true)" ]]; then
  echo "    skipped: 'main' has no proto/ yet (first contracts commit), nothing to compare with"
elif ! git cat-file -e main:buf.yaml 2>/dev/null; then
  echo "    skipped: 'main' has proto/ but no buf.yaml, so buf cannot read it as a module"
else
  "$BUF" breaking --against '.git#branch=main'
  echo "    no breaking changes against main"
fi

echo "==> generated code up to date"
"$BUF" generate
if [[ -n "$(git status --porcelain -- "$GEN_DIR")" ]]; then
  echo "check-contracts: $GEN_DIR does not match the protos:" >&2
  git status --porcelain -- "$GEN_DIR" >&2
  echo "Run 'npm run generate' and commit the result." >&2
  exit 1
fi
echo "    $GEN_DIR matches the protos"
