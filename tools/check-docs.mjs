#!/usr/bin/env node
// Checks the repository's Markdown (npm run check:docs):
//   1. every relative link and image (README.md, docs/**, bench/, deploy/, every other *.md of
//      ours) names a file or folder inside the repository that exists, and an anchor (#…) names a
//      heading of that file: a cloned repository has nothing outside itself, so a link to
//      ../shared/… is a broken link for every reader but us;
//   2. docs/spec/invocation-api.md, the vendored public API contract, is the same as
//      ../shared/spec/invocation-api.md when that file is next to the repository.
// Absolute links (https://…, mailto:…) are not fetched. `--refresh-spec` copies the contract in.
import { copyFileSync, existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');
const VENDORED_SPEC = 'docs/spec/invocation-api.md';
const SHARED_SPEC = path.resolve(root, '..', 'shared', 'spec', 'invocation-api.md');
const SKIPPED_FOLDERS = new Set(['node_modules', 'dist', 'coverage']);

if (process.argv.includes('--refresh-spec')) {
  if (!existsSync(SHARED_SPEC)) fail([`${SHARED_SPEC} is not there: nothing to copy`]);
  copyFileSync(SHARED_SPEC, path.join(root, VENDORED_SPEC));
  console.log(`check-docs: copied ${path.relative(root, SHARED_SPEC)} to ${VENDORED_SPEC}`);
}

const problems = [];
const files = markdownFiles(root);
const anchorsByFile = new Map();
let links = 0;

for (const file of files) {
  const text = readFileSync(file, 'utf8');
  for (const { target, line } of linksOf(text)) {
    links += 1;
    const problem = checkLink(file, target);
    if (problem) problems.push(`${path.relative(root, file)}:${line}: ${target}: ${problem}`);
  }
}

if (!existsSync(path.join(root, VENDORED_SPEC))) {
  problems.push(`${VENDORED_SPEC} is missing: run \`npm run check:docs -- --refresh-spec\` next to ../shared`);
} else if (existsSync(SHARED_SPEC) && readFileSync(SHARED_SPEC, 'utf8') !== readFileSync(path.join(root, VENDORED_SPEC), 'utf8')) {
  problems.push(
    `${VENDORED_SPEC} differs from ${path.relative(root, SHARED_SPEC)}: refresh it with ` +
      `\`npm run check:docs -- --refresh-spec\` (or cp ../shared/spec/invocation-api.md ${VENDORED_SPEC}), then commit it`,
  );
}

if (problems.length > 0) fail(problems);
const specNote = existsSync(SHARED_SPEC) ? `; ${VENDORED_SPEC} matches ../shared` : `; ../shared is not here, the vendored spec was not compared`;
console.log(`check-docs: ${links} relative links in ${files.length} Markdown files resolve${specNote}`);

function fail(lines) {
  for (const line of lines) console.error(`check-docs: ${line}`);
  process.exit(1);
}

/** Every *.md of ours: not dependencies, builds or hidden folders (.git, .runline, .nx). */
function markdownFiles(dir) {
  const found = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name.startsWith('.') || SKIPPED_FOLDERS.has(entry.name)) continue;
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) found.push(...markdownFiles(full));
    else if (entry.name.endsWith('.md')) found.push(full);
  }
  return found.sort();
}

/** Relative link targets with their line numbers, outside fenced code and code spans. */
function linksOf(text) {
  const found = [];
  let fence;
  text.split('\n').forEach((raw, index) => {
    const opening = /^\s*(`{3,}|~{3,})/.exec(raw);
    if (fence) {
      if (opening && opening[1][0] === fence[0] && opening[1].length >= fence.length) fence = undefined;
      return;
    }
    if (opening) {
      fence = opening[1];
      return;
    }
    const line = raw.replace(/(`+)[\s\S]*?\1/g, '');
    const targets = [
      ...[...line.matchAll(/!?\[(?:[^\]]|\][^(])*?\]\(\s*(<[^>]*>|[^\s)]+)(?:\s+(?:"[^"]*"|'[^']*'))?\s*\)/g)].map((m) => m[1]),
      ...[...line.matchAll(/^\s{0,3}\[[^\]]+\]:\s*(<[^>]*>|\S+)/g)].map((m) => m[1]),
      ...[...line.matchAll(/<(?:a|img)\s[^>]*?(?:href|src)="([^"]+)"/gi)].map((m) => m[1]),
    ];
    for (const target of targets) {
      const unwrapped = target.replace(/^<(.*)>$/, '$1');
      if (/^[a-z][a-z0-9+.-]*:/i.test(unwrapped)) continue; // https:, mailto:: not ours to check
      found.push({ target: unwrapped, line: index + 1 });
    }
  });
  return found;
}

/** Why a relative link does not resolve inside the repository, or undefined when it does. */
function checkLink(file, target) {
  const hashAt = target.indexOf('#');
  const linkPath = decodeURIComponent(hashAt === -1 ? target : target.slice(0, hashAt));
  const anchor = hashAt === -1 ? undefined : decodeURIComponent(target.slice(hashAt + 1));
  const resolved = linkPath === '' ? file : linkPath.startsWith('/') ? path.join(root, linkPath) : path.resolve(path.dirname(file), linkPath);
  const inside = path.relative(root, resolved);
  if (inside.startsWith('..') || path.isAbsolute(inside)) return 'points outside the repository (a clone has nothing there)';
  if (!existsSync(resolved)) return `no such file or folder (${inside})`;
  if (anchor === undefined || anchor === '') return undefined;
  if (!resolved.endsWith('.md') || statSync(resolved).isDirectory()) return undefined; // anchors into code files: GitHub's line anchors
  if (!anchorsOf(resolved).has(anchor)) return `no heading with the anchor #${anchor} in ${inside}`;
  return undefined;
}

/** The anchors GitHub makes for a Markdown file: one per heading (duplicates get -1, -2, …), and explicit ids. */
function anchorsOf(file) {
  if (anchorsByFile.has(file)) return anchorsByFile.get(file);
  const anchors = new Set();
  const counts = new Map();
  let fence;
  for (const raw of readFileSync(file, 'utf8').split('\n')) {
    const opening = /^\s*(`{3,}|~{3,})/.exec(raw);
    if (fence) {
      if (opening && opening[1][0] === fence[0] && opening[1].length >= fence.length) fence = undefined;
      continue;
    }
    if (opening) {
      fence = opening[1];
      continue;
    }
    for (const match of raw.matchAll(/<a\s[^>]*?(?:id|name)="([^"]+)"/gi)) anchors.add(match[1]);
    const heading = /^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(raw);
    if (!heading) continue;
    const slug = slugOf(heading[1]);
    const seen = counts.get(slug) ?? 0;
    counts.set(slug, seen + 1);
    anchors.add(seen === 0 ? slug : `${slug}-${seen}`);
  }
  anchorsByFile.set(file, anchors);
  return anchors;
}

/** GitHub's heading slug: the text as rendered, lower case, punctuation dropped, each space a hyphen. */
function slugOf(headingText) {
  const rendered = headingText
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1') // links and images: their text
    .replace(/`([^`]*)`/g, '$1') // code spans: their content
    .replace(/<[^>]+>/g, '') // inline HTML
    .replace(/(\*\*|__|\*)(.+?)\1/g, '$2'); // emphasis
  return rendered
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, '')
    .replace(/ /g, '-');
}
