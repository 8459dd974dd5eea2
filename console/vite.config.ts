import path from 'node:path';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

const here = import.meta.dirname;

// The console is a static single-page app the gateway serves at /console/ (dist/console).
export default defineConfig({
  root: here,
  base: '/console/',
  plugins: [react()],
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
