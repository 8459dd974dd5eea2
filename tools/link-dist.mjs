// After `tsc -p tsconfig.build.json`: lets compiled code resolve `@runline/<name>` imports and
// gives every service the entry point `node dist/services/<name>/main.js`.
// tsc keeps path aliases as written, so each alias gets a tiny ESM package under
// dist/node_modules that re-exports the compiled index. Node finds it by its normal lookup.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');
const dist = path.join(root, 'dist');
const { paths } = JSON.parse(readFileSync(path.join(root, 'tsconfig.base.json'), 'utf8')).compilerOptions;

for (const [alias, [target]] of Object.entries(paths)) {
  // Test helpers and the examples are run from source, never built.
  if (alias === '@runline/testing' || alias.endsWith('-example')) continue;
  const packageDir = path.join(dist, 'node_modules', alias);
  const compiled = path.join(dist, target.replace(/\.ts$/, '.js'));
  mkdirSync(packageDir, { recursive: true });
  writeFileSync(path.join(packageDir, 'package.json'), JSON.stringify({ name: alias, type: 'module', main: 'index.js' }, null, 2) + '\n');
  const relative = path.relative(packageDir, compiled).split(path.sep).join('/');
  writeFileSync(path.join(packageDir, 'index.js'), `export * from '${relative}';\n`);
}

for (const service of ['gateway', 'invocation', 'scheduler', 'polling', 'dead-letter', 'callback', 'webhook']) {
  writeFileSync(path.join(dist, 'services', service, 'main.js'), "import './src/main.js';\n");
}
writeFileSync(path.join(dist, 'launcher', 'main.js'), "import './src/main.js';\n");
