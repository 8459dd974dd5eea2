// Fails when two source files share a name, so that a name found in a log, a stack trace or a
// search leads to one file. The entry files every package has by convention are exempt.
import { execFileSync } from 'node:child_process';
import path from 'node:path';

const CONVENTIONAL = new Set(['main.ts', 'index.ts', 'config.ts', 'config.spec.ts', 'project.json']);
const isConventional = (name) => CONVENTIONAL.has(name) || /^[a-z-]+\.(module|service)\.ts$/.test(name);

const tracked = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '--', 'services', 'libs', 'launcher', 'e2e', 'bench'], {
  cwd: path.resolve(import.meta.dirname, '..'),
  encoding: 'utf8',
})
  .split('\n')
  .filter((file) => /\.(ts|mts|mjs)$/.test(file) && !file.includes('/gen/') && !file.includes('/migrations/'));

const byName = new Map();
for (const file of tracked) {
  const name = path.basename(file);
  if (isConventional(name)) continue;
  byName.set(name, [...(byName.get(name) ?? []), file]);
}
const shared = [...byName].filter(([, files]) => files.length > 1);
for (const [name, files] of shared) console.error(`check-file-names: ${name} is the name of ${files.join(', ')}`);
if (shared.length > 0) process.exit(1);
console.log(`check-file-names: ${tracked.length} files, no two share a name`);
