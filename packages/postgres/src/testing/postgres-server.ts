import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { chown, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Client } from 'pg';
import { freePort, freezeProcess } from '@conclave/test-harness/tools';

const run = promisify(execFile);

export interface PostgresServer {
  port: number;
  /** `postgres://root@127.0.0.1:<port>/test` (`root:<password>@…` with the `password` option) */
  uri: string;
  datadir: string;
  /** SIGKILL to the postmaster and its backends: a crash, sessions vanish without a goodbye. Resolves when the postmaster is gone. */
  kill(): Promise<void>;
  /** SIGSTOP to the postmaster and its backends: a frozen server; connections open but nothing answers. */
  pause(): Promise<void>;
  /** SIGCONT after pause(). */
  resume(): void;
  /** Starts the server again on the same port and data directory (after kill()). */
  restart(): Promise<void>;
  /** Fast shutdown, wait, and delete the data directory. Idempotent. */
  stop(): Promise<void>;
}

export interface StartPostgresOptions {
  /** Directory of `initdb` and `postgres`. Default `/usr/lib/postgresql/15/bin` (Debian), or CONCLAVE_PG_BIN. */
  binDir?: string;
  /** Longest wait for the server to accept connections, ms. Default 60 000. */
  startTimeoutMs?: number;
  /** Load pg_stat_statements (the bench counts statements with it). Default false. */
  statStatements?: boolean;
  /**
   * The superuser's password. When given, connections over TCP must authenticate with it
   * (`scram-sha-256` in pg_hba.conf), as on a production server; default: trust, no password.
   */
  password?: string;
  /**
   * Make the server a streaming standby of the primary on 127.0.0.1:<port> instead of a new
   * cluster: its data directory is a `pg_basebackup -R` of that primary, so it replicates from
   * that port (a proxy in front of the primary, to stall the link). Not with `password`.
   */
  standbyOf?: number;
}

/**
 * A private PostgreSQL for tests that kill and restart the server, or need password
 * authentication: its own data directory under /tmp (`initdb`, superuser `root`, trust
 * authentication unless `password` is given), a free port on 127.0.0.1, its socket inside the
 * data directory, no fsync. PostgreSQL refuses to run as root, so when this process is root the
 * server runs as the `postgres` user.
 */
export async function startPostgres(options: StartPostgresOptions = {}): Promise<PostgresServer> {
  const binDir = options.binDir ?? process.env.CONCLAVE_PG_BIN ?? '/usr/lib/postgresql/15/bin';
  const startTimeoutMs = options.startTimeoutMs ?? 60_000;
  const owner = process.getuid?.() === 0 ? await userIds('postgres') : null;
  const datadir = await mkdtemp(join(tmpdir(), 'conclave-postgres-'));
  if (owner) await chown(datadir, owner.uid, owner.gid);
  const as = owner ? { uid: owner.uid, gid: owner.gid } : {};
  const password = options.password;
  // initdb reads the password from a file: one of its own, readable by the server's user only.
  const pwdir = password === undefined ? null : await mkdtemp(join(tmpdir(), 'conclave-postgres-pw-'));
  const auth = ['--auth=trust'];
  if (pwdir !== null) {
    const pwfile = join(pwdir, 'pw');
    await writeFile(pwfile, `${password}\n`, { mode: 0o600 });
    if (owner) {
      await chown(pwdir, owner.uid, owner.gid);
      await chown(pwfile, owner.uid, owner.gid);
    }
    auth.push('--auth-host=scram-sha-256', `--pwfile=${pwfile}`);
  }
  try {
    if (options.standbyOf !== undefined) {
      // -c fast: no wait for a spread checkpoint; -R: standby.signal and primary_conninfo.
      await run(join(binDir, 'pg_basebackup'), ['-h', '127.0.0.1', '-p', String(options.standbyOf), '-U', 'root', '-D', datadir, '-R', '-X', 'stream', '-c', 'fast', '--no-sync'], {
        ...as,
        timeout: startTimeoutMs,
      });
    } else await run(join(binDir, 'initdb'), ['-D', datadir, ...auth, '-U', 'root', '--no-sync', '-E', 'UTF8', '--no-instructions'], {
      ...as,
      timeout: startTimeoutMs,
    });
  } finally {
    if (pwdir !== null) await rm(pwdir, { recursive: true, force: true });
  }
  const port = await freePort();
  const args = [
    '-D', datadir,
    '-p', String(port),
    '-c', 'listen_addresses=127.0.0.1',
    '-c', `unix_socket_directories=${datadir}`,
    '-c', 'fsync=off',
    '-c', 'full_page_writes=off',
    '-c', 'max_connections=300',
    '-c', 'shared_buffers=16MB',
    ...(options.statStatements ? ['-c', 'shared_preload_libraries=pg_stat_statements'] : []),
    // A standby whose first attempt to stream failed tries again after this (default 5 s).
    ...(options.standbyOf !== undefined ? ['-c', 'wal_retrieve_retry_interval=200ms'] : []),
  ];
  let child: ChildProcess | null = null;
  let stopped = false;

  const exited = (proc: ChildProcess | null) =>
    new Promise<void>((resolve) => {
      if (!proc || proc.exitCode !== null || proc.signalCode !== null) return resolve();
      proc.once('exit', () => resolve());
    });

  // The postmaster first (it forks no new backend once stopped or dead), then its children: each
  // backend is a session leader of its own, so a process-group signal would miss them.
  const signal = (proc: ChildProcess, sig: NodeJS.Signals) => {
    if (proc.pid === undefined) return;
    for (const pid of [proc.pid, ...childrenOf(proc.pid)]) {
      try {
        process.kill(pid, sig);
      } catch {
        // already gone
      }
    }
  };

  const start = async () => {
    const until = Date.now() + startTimeoutMs;
    for (;;) {
      const proc = spawn(join(binDir, 'postgres'), args, { ...as, stdio: 'ignore' });
      proc.on('error', () => undefined);
      child = proc;
      // After a kill, the old backends may still hold the shared memory for a moment: the new
      // postmaster then exits at once, and is started again.
      const ready = await untilReady(port, password, proc, until);
      if (ready) break;
      if (Date.now() > until) throw new Error(`postgres did not start on port ${port} within ${startTimeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 200));
    }
    await query(port, password, 'postgres', `SELECT 1`);
    // A standby has its primary's databases, and takes no writes.
    if (options.standbyOf !== undefined) return;
    const exists = await query(port, password, 'postgres', `SELECT 1 FROM pg_database WHERE datname = 'test'`);
    if (exists === 0) await query(port, password, 'postgres', 'CREATE DATABASE test');
    if (options.statStatements) await query(port, password, 'test', 'CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
  };

  await start();

  return {
    port,
    uri: `postgres://root${password === undefined ? '' : `:${encodeURIComponent(password)}`}@127.0.0.1:${port}/test`,
    datadir,
    async kill() {
      const proc = child;
      child = null;
      if (!proc) return;
      signal(proc, 'SIGKILL');
      await exited(proc);
    },
    async pause() {
      if (!child) return;
      signal(child, 'SIGSTOP');
      await freezeProcess(child);
    },
    resume() {
      if (child) signal(child, 'SIGCONT');
    },
    async restart() {
      if (stopped) throw new Error('the server was stopped');
      if (child) return;
      await start();
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      const proc = child;
      child = null;
      if (proc) {
        signal(proc, 'SIGCONT');
        // SIGINT: fast shutdown (SIGTERM would wait for every client to leave).
        signal(proc, 'SIGINT');
        const timer = setTimeout(() => signal(proc, 'SIGKILL'), 20_000);
        await exited(proc);
        clearTimeout(timer);
      }
      await rm(datadir, { recursive: true, force: true });
    },
  };
}

/** The processes whose parent is `pid` (from /proc). */
function childrenOf(pid: number): number[] {
  const out: number[] = [];
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return out;
  }
  for (const entry of entries) {
    if (!/^[0-9]+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // "pid (comm) state ppid …": the fields after the last ')' (comm may hold spaces).
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === pid) out.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

async function userIds(name: string): Promise<{ uid: number; gid: number }> {
  const [uid, gid] = await Promise.all([run('id', ['-u', name]), run('id', ['-g', name])]);
  return { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
}

/** Whether the server answers before `until`; false as soon as the process exits. */
async function untilReady(port: number, password: string | undefined, proc: ChildProcess, until: number): Promise<boolean> {
  while (Date.now() < until) {
    if (proc.exitCode !== null || proc.signalCode !== null) return false;
    try {
      await query(port, password, 'postgres', 'SELECT 1');
      return true;
    } catch {
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  return false;
}

/** Runs one statement on a client of its own; resolves with the number of rows. */
async function query(port: number, password: string | undefined, database: string, sql: string): Promise<number> {
  const client = new Client({ host: '127.0.0.1', port, user: 'root', password, database, connectionTimeoutMillis: 5_000 });
  client.on('error', () => undefined);
  try {
    await client.connect();
    const result = await client.query(sql);
    return result.rowCount ?? 0;
  } finally {
    await client.end().catch(() => undefined);
  }
}
