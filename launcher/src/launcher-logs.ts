import { chmodSync, existsSync, mkdirSync, renameSync } from 'node:fs';
import path from 'node:path';
import { pino, type DestinationStream, type Level, type LevelWithSilent } from 'pino';

/** Where `npm start` writes the services' log lines, and at which levels. */
export interface LauncherLogs {
  /** The level every logger of the process is made with (the lower of the two destinations'). */
  level: LevelWithSilent;
  destination: DestinationStream;
  /** `<data dir>/runline.log`. */
  file: string;
  /** For the banner: where the lines go, in words. */
  description: string;
}

/** The level each line goes to the file at when LOG_LEVEL is unset, and to the terminal. */
const FILE_LEVEL: Level = 'info';
const TERMINAL_LEVEL: Level = 'warn';

/**
 * Seven services log about two hundred lines while they start: in one process that buried the
 * banner a newcomer needs. So every line at `info` goes to `<data dir>/runline.log` and the
 * terminal shows warnings and errors only. A LOG_LEVEL the user sets is honoured on both (tests
 * and anyone who wants the lines on the terminal set it). The log of the start before is kept
 * as `runline.log.1`.
 */
export function launcherLogs(options: { dataDir: string; logLevel?: LevelWithSilent }): LauncherLogs {
  const file = path.join(options.dataDir, 'runline.log');
  makeTraversable(options.dataDir);
  try {
    renameSync(file, `${file}.1`);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  const fileStream = pino.destination({ dest: file, sync: true });
  const terminal = pino.destination({ dest: 1, sync: true });
  if (options.logLevel) {
    const level = options.logLevel;
    // At `silent` nothing is written; the streams' own level then does not matter.
    const streamLevel: Level = level === 'silent' ? 'fatal' : level;
    return {
      level,
      destination: pino.multistream([
        { stream: fileStream, level: streamLevel },
        { stream: terminal, level: streamLevel },
      ]),
      file,
      description: `${file} and this terminal, at LOG_LEVEL=${level}`,
    };
  }
  return {
    level: FILE_LEVEL,
    destination: pino.multistream([
      { stream: fileStream, level: FILE_LEVEL },
      { stream: terminal, level: TERMINAL_LEVEL },
    ]),
    file,
    description: `${file} (this terminal shows only warnings and errors; LOG_LEVEL=info shows every line here too)`,
  };
}

/**
 * Creates the data directory and any missing parent as 0755 whatever the umask: embedded
 * PostgreSQL, which runs as another user when started as root, must pass through them.
 */
function makeTraversable(dir: string): void {
  const missing: string[] = [];
  for (let current = dir; !existsSync(current); current = path.dirname(current)) missing.unshift(current);
  for (const created of missing) {
    mkdirSync(created);
    chmodSync(created, 0o755);
  }
}
