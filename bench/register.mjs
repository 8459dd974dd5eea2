// Lets Node 20 run the benchmark's TypeScript directly: `node --import ./bench/register.mjs
// bench/<file>.ts`. Node 20 cannot strip types itself, and we add no package for it; the hooks
// transpile each .ts file on load with the TypeScript compiler the project already has.
import { register } from 'node:module';

register('../tools/ts-hooks.mjs', import.meta.url);
