// Module hooks that let Node 20 run this repository's TypeScript directly (benchmarks, test
// child processes): `./x.js` imported from a .ts file resolves to `./x.ts`, and .ts files are
// transpiled with the project's compiler settings (types erased, decorators kept) without type
// checking, which is `npm run typecheck`'s job. Registered by bench/register.mjs and
// libs/db/test/support/ts-register.mjs.
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const root = new URL('../', import.meta.url);

export async function resolve(specifier, context, nextResolve) {
  // `@runline/<lib>` and `@runline/<name>-service` are the sources' own index files, as in
  // jest.preset.js (the compiled build links them under dist/node_modules instead).
  const alias = /^@runline\/([a-z-]+)$/.exec(specifier);
  if (alias && context.parentURL?.endsWith('.ts')) {
    const name = alias[1];
    const index = new URL(name.endsWith('-service') ? `services/${name.slice(0, -'-service'.length)}/src/index.ts` : `libs/${name}/src/index.ts`, root);
    if (existsSync(fileURLToPath(index))) return { url: index.href, shortCircuit: true };
  }
  const relative = specifier.startsWith('./') || specifier.startsWith('../');
  if (relative && specifier.endsWith('.js') && context.parentURL?.endsWith('.ts')) {
    const url = new URL(`${specifier.slice(0, -3)}.ts`, context.parentURL);
    if (existsSync(fileURLToPath(url))) return { url: url.href, shortCircuit: true };
  }
  return nextResolve(specifier, context);
}

export async function load(url, context, nextLoad) {
  if (!url.startsWith('file:') || !url.endsWith('.ts')) return nextLoad(url, context);
  const fileName = fileURLToPath(url);
  const { outputText } = ts.transpileModule(await readFile(fileName, 'utf8'), {
    fileName,
    compilerOptions: {
      module: ts.ModuleKind.ESNext,
      target: ts.ScriptTarget.ES2023,
      experimentalDecorators: true,
      emitDecoratorMetadata: true,
      useDefineForClassFields: false,
      inlineSourceMap: true,
      inlineSources: true,
    },
  });
  return { format: 'module', source: outputText, shortCircuit: true };
}
