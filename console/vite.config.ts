import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { brotliCompressSync, gzipSync } from 'node:zlib';
import react from '@vitejs/plugin-react';
import { defineConfig, type Plugin } from 'vite';

const here = import.meta.dirname;

/**
 * Writes `<file>.br` and `<file>.gz` beside each text file of the build, which the gateway
 * serves to browsers that accept them (@fastify/static `preCompressed`): compressed once at
 * build time instead of on every request.
 */
function precompress(): Plugin {
  return {
    name: 'runline-precompress',
    apply: 'build',
    async writeBundle(options, bundle) {
      for (const name of Object.keys(bundle)) {
        if (!/\.(js|css|html|svg|json)$/.test(name)) continue;
        const file = path.join(options.dir!, name);
        const content = await readFile(file);
        await writeFile(`${file}.gz`, gzipSync(content, { level: 9 }));
        await writeFile(`${file}.br`, brotliCompressSync(content));
      }
    },
  };
}

// The console is a static single-page app the gateway serves at /console/ (dist/console).
export default defineConfig({
  root: here,
  base: '/console/',
  plugins: [react(), precompress()],
  resolve: {
    // The typed client is compiled from its TypeScript source, like every other consumer does.
    alias: { '@runline/api-client': path.join(here, '..', 'libs', 'api-client', 'src', 'index.ts') },
  },
  build: {
    outDir: path.join(here, '..', 'dist', 'console'),
    emptyOutDir: true,
    // The gateway's Content-Security-Policy allows no inline script; the polyfill is not needed
    // by the browsers the console supports.
    modulePreload: { polyfill: false },
    reportCompressedSize: false,
  },
});
