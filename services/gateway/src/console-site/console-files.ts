import { existsSync } from 'node:fs';
import path from 'node:path';

/**
 * The built console (`dist/console`, from `npm run build`). Found from this file's place, which
 * is `dist/services/gateway/...` when the gateway runs compiled and `services/gateway/...` when
 * tests run it from source: walking up reaches a `dist` folder or the folder holding it.
 */
export function findConsoleFiles(from: string = import.meta.dirname): string | null {
  for (let folder = from; ; folder = path.dirname(folder)) {
    const candidates = path.basename(folder) === 'dist' ? [path.join(folder, 'console')] : [path.join(folder, 'dist', 'console')];
    for (const candidate of candidates) if (existsSync(path.join(candidate, 'index.html'))) return candidate;
    if (path.dirname(folder) === folder) return null;
  }
}
