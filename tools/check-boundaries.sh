#!/usr/bin/env bash
# Proves that the lint boundary rules in eslint.config.js still bite.
#
# Writes a few files that break the rules, and a few that must stay clean, into the tree; lints
# only those files; always removes them again; and fails unless ESLint reports the expected rule
# on each violating file and nothing on the clean ones. The lead's CI calls it. Run from anywhere:
#   tools/check-boundaries.sh
# Exit status: 0 = every rule bites; 1 = a rule stayed silent or a clean file was flagged;
# 2 = ESLint itself failed.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

# Unique names, so a concurrent run or a real file is never touched.
tag="zz-boundary-check-$$"
created_files=()
created_dirs=()

cleanup() {
  local f d i
  for f in "${created_files[@]}"; do rm -f -- "$f"; done
  # Only directories this script created, deepest first, and only if still empty.
  for ((i = ${#created_dirs[@]} - 1; i >= 0; i--)); do
    d="${created_dirs[i]}"
    rmdir -- "$d" 2>/dev/null || true
  done
}
trap cleanup EXIT
# A signal ends the script through `exit`, which runs the EXIT trap above.
trap 'exit 129' HUP
trap 'exit 130' INT
trap 'exit 143' TERM

# put <path> <content>: write a probe file, remembering what to remove.
put() {
  local path="$1" dir i
  dir="$(dirname "$path")"
  local missing=()
  while [[ ! -d "$dir" ]]; do missing+=("$dir"); dir="$(dirname "$dir")"; done
  for ((i = ${#missing[@]} - 1; i >= 0; i--)); do
    mkdir -- "${missing[i]}"
    created_dirs+=("${missing[i]}")
  done
  if [[ -e "$path" ]]; then
    echo "check-boundaries: refusing to overwrite existing $path" >&2
    exit 2
  fi
  created_files+=("$path")
  printf '%s\n' "$2" >"$path"
}

# Each case: file | expected rule id, optionally `~` and a piece of its message, or "clean" for
# a file that must lint without errors.
cases=()
probe() { put "$1" "$3"; cases+=("$1|$2"); }

probe "services/scheduler/src/$tag-relative.ts" '@nx/enforce-module-boundaries~relative or absolute path' \
  "import { probe } from '../../gateway/src/$tag.js';
export const relativeIntoAnotherService = probe;"

probe "services/scheduler/src/$tag-deep.ts" 'no-restricted-imports~public index' \
  "import { probe } from '@runline/bus/src/bus.js';
export const deepImportIntoLib = probe;"

probe "services/scheduler/src/$tag-testing.ts" 'no-restricted-imports~for test code only' \
  "import { probe } from '@runline/testing';
export const testingInProductionCode = probe;"

probe "libs/bus/src/$tag-service.ts" '@nx/enforce-module-boundaries~relative or absolute path' \
  "import { probe } from '../../../services/gateway/src/$tag.js';
export const libImportsService = probe;"

probe "libs/contracts/src/$tag-contracts.ts" '@nx/enforce-module-boundaries' \
  "import { probe } from '@runline/bus';
export const contractsDependOnNothing = probe;"

probe "libs/bus/src/$tag-bus-db.ts" '@nx/enforce-module-boundaries' \
  "import { probe } from '@runline/db';
export const busUsesNoOtherLib = probe;"

probe "libs/signatures/src/$tag-signatures.ts" '@nx/enforce-module-boundaries' \
  "import { probe } from '@runline/contracts';
export const signaturesDependOnNothing = probe;"

probe "libs/bus/src/$tag-self.ts" '@nx/enforce-module-boundaries~use relative imports' \
  "import { probe } from '@runline/bus';
export const ownIndexFromInside = probe;"

probe "services/scheduler/src/$tag-deep.spec.ts" 'no-restricted-imports~public index' \
  "import { probe } from '@runline/bus/src/bus.js';
export const deepImportInTest = probe;"

# The gateway by feature: a feature uses another only through its index.ts, platform/ uses no
# feature, and a handler imports nothing of HTTP.
probe "services/gateway/src/runs/$tag-internals.ts" 'no-restricted-imports~only through its index.ts' \
  "import { probe } from '../templates/template-rules.js';
export const featureImportsAnotherFeaturesFile = probe;"

probe "services/gateway/src/platform/errors/$tag-up.ts" 'no-restricted-imports~imports no feature' \
  "import { probe } from '../../runs/index.js';
export const platformImportsFeature = probe;"

probe "services/gateway/src/runs/$tag-exception.handler.ts" 'no-restricted-imports~handler speaks no HTTP' \
  "import { NotFoundException } from '@nestjs/common';
export const handlerThrowsHttp = NotFoundException;"

probe "services/gateway/src/runs/$tag-decorator.handler.ts" 'no-restricted-imports~handler speaks no HTTP' \
  "import { Body } from '@nestjs/common';
export const handlerUsesHttpDecorator = Body;"

probe "services/gateway/src/runs/$tag-guard.handler.ts" 'no-restricted-imports~handler speaks no HTTP' \
  "import { probe } from '../platform/http-guards/console-auth.guard.js';
export const handlerUsesGuard = probe;"

probe "services/gateway/src/runs/$tag-fastify.handler.ts" 'no-restricted-imports~handler speaks no HTTP' \
  "import type { FastifyRequest } from 'fastify';
export type HandlerReadsRequest = FastifyRequest;"

# One persistence habit: raw SQL in repositories, nothing of TypeORM's entity layer.
probe "services/scheduler/src/$tag-entity.ts" 'no-restricted-syntax~Persistence is raw SQL' \
  "import { Column, Entity, PrimaryColumn } from 'typeorm';
export const entityDecorators = [Column, Entity, PrimaryColumn];"

probe "libs/db/src/$tag-find-operator.ts" 'no-restricted-syntax~Persistence is raw SQL' \
  "import { IsNull, type Repository } from 'typeorm';
export type EntityRepository = Repository<object>;
export const findOperator = IsNull;"

probe "services/scheduler/src/$tag-get-repository.repository.ts" 'no-restricted-syntax~Persistence is raw SQL' \
  "import type { DataSource } from 'typeorm';
export const byEntity = (dataSource: DataSource) => dataSource.getRepository('scheduled_jobs').findOneBy({ name: 'x' });"

probe "services/gateway/test/$tag-inject.int-spec.ts" 'no-restricted-syntax~Persistence is raw SQL' \
  "import { InjectRepository } from '@nestjs/typeorm';
export const nestTypeorm = InjectRepository;"

# Controls: without them a rule that flags everything would pass this check.
probe "services/scheduler/src/$tag-clean.ts" clean \
  "import { probe } from '@runline/bus';
export const publicIndexImport = probe;"

probe "services/scheduler/src/$tag-clean.int-spec.ts" clean \
  "import { probe } from '@runline/testing';
import { other } from '@runline/bus';
export const testsMayUseTesting = [probe, other];"

probe "services/gateway/src/hooks/$tag-index.handler.ts" clean \
  "import { Injectable } from '@nestjs/common';
import { probe } from '../runs/index.js';
import { other } from '../platform/errors/domain-error.js';
export const handlerUsesIndexAndPlatform = [Injectable, probe, other];"

probe "libs/bus/src/$tag-self.spec.ts" clean \
  "import { probe } from '@runline/bus';
export const specTestsOwnPublicIndex = probe;"

probe "services/scheduler/src/$tag-sql.repository.ts" clean \
  "import type { EntityManager } from 'typeorm';
import { returningRows } from '@runline/db';
export const byName = async (manager: EntityManager, name: string) =>
  returningRows<{ status: string }>(await manager.query('SELECT status FROM scheduled_jobs WHERE name = \$1 FOR UPDATE SKIP LOCKED', [name]));"

probe "services/scheduler/src/migrations/$tag-migration.ts" clean \
  "import { Index, type MigrationInterface, type QueryRunner } from 'typeorm';
export class Probe implements MigrationInterface {
  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('SELECT 1');
  }
  async down(): Promise<void> {}
}
export const migrationsAreOutsideTheRule = Index;"

probe "services/scheduler/test/$tag-helper.ts" clean \
  "import { probe } from '@runline/testing';
export const testHelpersMayUseTesting = probe;"

# Once services get path aliases (so the launcher can import them), also check the tag
# constraints through an alias: a service or a lib importing a service must be refused.
service_alias="$(node -e '
  const { compilerOptions } = JSON.parse(require("fs").readFileSync("tsconfig.base.json", "utf8"));
  const hit = Object.entries(compilerOptions.paths ?? {})
    .find(([, targets]) => targets.some((t) => /^(\.\/)?services\/gateway\//.test(t)));
  if (hit) process.stdout.write(hit[0]);
')"
if [[ -n "$service_alias" ]]; then
  probe "services/scheduler/src/$tag-alias.ts" '@nx/enforce-module-boundaries~"type:service" can only depend' \
    "import { probe } from '$service_alias';
export const serviceImportsService = probe;"
  probe "libs/engine/src/$tag-alias.ts" '@nx/enforce-module-boundaries' \
    "import { probe } from '$service_alias';
export const libImportsServiceByAlias = probe;"
  probe "launcher/src/$tag-alias.ts" clean \
    "import { probe } from '$service_alias';
export const launcherImportsService = probe;"
fi

files=()
for c in "${cases[@]}"; do files+=("${c%%|*}"); done

set +e
report="$(node_modules/.bin/eslint --no-warn-ignored --format json -- "${files[@]}")"
status=$?
set -e
if [[ $status -gt 1 || -z "$report" ]]; then
  echo "check-boundaries: ESLint failed (exit $status)" >&2
  exit 2
fi

# Compare what ESLint said with what each case expects.
CASES="$(printf '%s\n' "${cases[@]}")" REPORT="$report" ROOT="$root" node --input-type=module -e '
  import path from "node:path";
  const results = JSON.parse(process.env.REPORT);
  const byFile = new Map(results.map((r) => [path.relative(process.env.ROOT, r.filePath), r.messages]));
  let failed = 0;
  for (const line of process.env.CASES.trim().split("\n")) {
    const [file, expected] = line.split("|");
    const errors = (byFile.get(file) ?? []).filter((m) => m.severity === 2);
    const rules = errors.map((m) => m.ruleId ?? `fatal: ${m.message}`);
    const [rule, text = ""] = expected.split("~");
    const ok = expected === "clean"
      ? errors.length === 0
      : errors.some((m) => m.ruleId === rule && m.message.includes(text));
    if (!ok) failed++;
    const said = rules.length ? rules.join(", ") : "no errors";
    console.log(`${ok ? "ok  " : "FAIL"} ${file}: expected ${expected}, ESLint said ${said}`);
    if (!ok) for (const m of errors) console.log(`       ${m.line}:${m.column} ${m.message.split("\n")[0]}`);
  }
  if (failed) {
    console.error(`check-boundaries: ${failed} case(s) failed; the lint boundary rules do not hold.`);
    process.exit(1);
  }
  console.log("check-boundaries: every boundary rule reported its violation.");
'
