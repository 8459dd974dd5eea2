// Lets a plain `node` process run this repository's TypeScript sources (for the crash test's
// child process): `node --import ./ts-register.mjs child.ts`. Node 20 cannot strip types itself.
import { register } from 'node:module';

register('../../../../tools/ts-hooks.mjs', import.meta.url);
