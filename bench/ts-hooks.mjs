// Module hooks for bench/register.mjs. Type checking is `npx tsc -p tsconfig.json`'s job; here
// each file is only transpiled (types erased), so loading stays fast.
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const compilerOptions = {
  module: ts.ModuleKind.ESNext,
  target: ts.ScriptTarget.ES2023,
  inlineSourceMap: true,
  inlineSources: true,
};

/** Under NodeNext, `./x.js` in a .ts file names `./x.ts`: map it when only the .ts exists. */
export async function resolve(specifier, context, nextResolve) {
  const parent = context.parentURL;
  if (parent?.startsWith('file:') && parent.endsWith('.ts') && /^\.{1,2}\//.test(specifier) && specifier.endsWith('.js')) {
    const asTypeScript = new URL(specifier.slice(0, -'.js'.length) + '.ts', parent);
    if (!existsSync(new URL(specifier, parent)) && existsSync(asTypeScript)) {
      return { url: asTypeScript.href, shortCircuit: true };
    }
  }
  return nextResolve(specifier, context);
}

export async function load(url, context, nextLoad) {
  if (!url.startsWith('file:') || !url.endsWith('.ts')) return nextLoad(url, context);
  const fileName = fileURLToPath(url);
  const { outputText } = ts.transpileModule(await readFile(fileName, 'utf8'), { fileName, compilerOptions });
  return { format: 'module', source: outputText, shortCircuit: true };
}
