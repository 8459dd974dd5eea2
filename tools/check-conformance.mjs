#!/usr/bin/env node
// Checks that docs/conformance.md cites only test and source files that exist (npm run
// check:conformance). A citation is a code span (`…`) whose text, or whose part before the first
// ` › ` (`file › describe › test`), is a path to a .ts, .tsx or .mjs file:
//   - with a folder (`e2e/polling.e2e-spec.ts`, `services/x/src/y.spec.ts`): that path from the
//     repository's root; `*` in it stands for any name within one folder (`libs/outbound/src/*.spec.ts`)
//     and must match at least one file;
//   - a bare file name (`run-plan.spec.ts › …`): exactly one file of that name in the repository
//     (tools/check-file-names.mjs keeps source file names unique).
// Short names (`external-pipeline › …`) and the letters a section defines (`C › …`, where
// `C` = `e2e/callbacks.e2e-spec.ts › …` is itself checked) name no path and are left alone.
// Fails naming each citation that does not resolve, with its line.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');
const DOCUMENT = 'docs/conformance.md';
const SKIPPED_FOLDERS = new Set(['node_modules', 'dist', 'coverage']);
const CITED_FILE = /^[\w.*/-]+\.(?:ts|tsx|mjs)$/;

const text = readFileSync(path.join(root, DOCUMENT), 'utf8');
const files = repositoryFiles(root);
const fileSet = new Set(files);
const byName = new Map();
for (const file of files) byName.set(path.posix.basename(file), [...(byName.get(path.posix.basename(file)) ?? []), file]);

const problems = [];
let citations = 0;
for (const { code, line } of codeSpans(text)) {
  const cited = code.split('›')[0].trim();
  if (!CITED_FILE.test(cited)) continue;
  citations += 1;
  const problem = resolve(cited);
  if (problem) problems.push(`${DOCUMENT}:${line}: ${cited}: ${problem}`);
}

if (problems.length > 0) {
  for (const problem of problems) console.error(`check-conformance: ${problem}`);
  console.error(`check-conformance: ${problems.length} of ${citations} cited files do not exist; cite the test that covers the row now, or mark the row as not covered`);
  process.exit(1);
}
console.log(`check-conformance: the ${citations} files ${DOCUMENT} cites exist`);

/** Why `cited` names no file of the repository, or null when it does. */
function resolve(cited) {
  if (!cited.includes('/')) {
    const found = byName.get(cited) ?? [];
    if (found.length === 0) return 'no file of that name in the repository';
    return found.length === 1 ? null : `${found.length} files have that name (${found.join(', ')}): give its path`;
  }
  if (cited.includes('*')) {
    const pattern = new RegExp(`^${cited.split('*').map(escapeRegExp).join('[^/]*')}$`);
    return files.some((file) => pattern.test(file)) ? null : 'matches no file';
  }
  return fileSet.has(cited) ? null : 'does not exist';
}

/**
 * The inline code spans of a Markdown text, as CommonMark reads them: a run of n backticks opens
 * a span that the next run of exactly n closes (so ``a `b` c`` is one span); a span may go on
 * over a line break. `line` is where the span starts.
 */
function codeSpans(markdown) {
  const spans = [];
  const runs = [...markdown.matchAll(/`+/g)];
  for (let i = 0; i < runs.length; i += 1) {
    const open = runs[i];
    const close = runs.findIndex((run, j) => j > i && run[0].length === open[0].length);
    if (close === -1) continue;
    const start = open.index + open[0].length;
    const code = markdown.slice(start, runs[close].index).replace(/\n/g, ' ');
    spans.push({ code: code.startsWith(' ') && code.endsWith(' ') && code.trim() !== '' ? code.slice(1, -1) : code, line: lineOf(markdown, open.index) });
    i = close;
  }
  return spans;
}

function lineOf(markdown, offset) {
  let line = 1;
  for (let i = 0; i < offset; i += 1) if (markdown.charCodeAt(i) === 10) line += 1;
  return line;
}

function escapeRegExp(value) {
  return value.replace(/[.+?^${}()|[\]\\]/g, '\\$&');
}

/** Every file of ours, as a path from the root with / between folders: not dependencies, builds or hidden folders. */
function repositoryFiles(dir, prefix = '') {
  const found = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name.startsWith('.') || SKIPPED_FOLDERS.has(entry.name)) continue;
    const relative = prefix ? `${prefix}/${entry.name}` : entry.name;
    if (entry.isDirectory()) found.push(...repositoryFiles(path.join(dir, entry.name), relative));
    else found.push(relative);
  }
  return found;
}
