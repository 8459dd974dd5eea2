// One Node version for the whole project: .nvmrc holds it, and everything else that names a
// Node must agree. Part of `npm run lint`; fails naming each place that drifted.
//   package.json  engines.node (^X.Y.Z), optionalDependencies node-linux-* (X.Y.Z: the binary
//                 npm scripts run on), devDependencies @types/node (major X)
//   package-lock  the node-linux-* versions installed
//   Dockerfile    ARG NODE_IMAGE=node:X.Y.Z-…
//   this process  run through npm, so node_modules/.bin/node: vX.Y.Z (where the platform has
//                 a node-linux-* package)
import { readFileSync } from 'node:fs';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');
const read = (file) => readFileSync(path.join(root, file), 'utf8');
const pinned = read('.nvmrc').trim();
const major = pinned.split('.')[0];
const manifest = JSON.parse(read('package.json'));
const lock = JSON.parse(read('package-lock.json'));

const places = [
  ['package.json engines.node', manifest.engines?.node, `^${pinned}`],
  ['package.json @types/node (major)', manifest.devDependencies?.['@types/node']?.split('.')[0], major],
  ['deploy/Dockerfile NODE_IMAGE', /^ARG NODE_IMAGE=node:([\d.]+)-/m.exec(read('deploy/Dockerfile'))?.[1], pinned],
];
const binaries = Object.keys(manifest.optionalDependencies ?? {}).filter((name) => name.startsWith('node-linux-'));
if (binaries.length === 0) places.push(['package.json optionalDependencies node-linux-*', undefined, pinned]);
for (const name of binaries) {
  places.push([`package.json ${name}`, manifest.optionalDependencies[name], pinned]);
  places.push([`package-lock.json ${name}`, lock.packages?.[`node_modules/${name}`]?.version, pinned]);
}
const platformBinary = `node-linux-${process.arch}`;
if (process.platform === 'linux' && binaries.includes(platformBinary)) {
  places.push(['the Node running this check (npm scripts)', process.versions.node, pinned]);
}

const drifted = places.filter(([, found, expected]) => found !== expected);
for (const [where, found, expected] of drifted) {
  console.error(`check-node-version: ${where} is ${found ?? 'missing'}, .nvmrc says ${expected}`);
}
if (drifted.length > 0) process.exit(1);
console.log(`check-node-version: Node ${pinned} in .nvmrc, ${places.length} places agree`);
