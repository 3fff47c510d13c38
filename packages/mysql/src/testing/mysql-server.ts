import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort, freezeProcess, waitForPort } from '@conclave/test-harness/tools';

const run = promisify(execFile);

export interface MariadbServer {
  port: number;
  /** `mysql://root@127.0.0.1:<port>/test` */
  uri: string;
  datadir: string;
  /** SIGKILL: a crash, the server's sessions vanish without a goodbye. Resolves when the process is gone. */
  kill(): Promise<void>;
  /** SIGSTOP: a frozen server; connections open but nothing answers. Resolves once every thread has stopped. */
  pause(): Promise<void>;
  /** SIGCONT after pause(). */
  resume(): void;
  /** Starts the server again on the same port and datadir (after kill() or a stop without cleanup). */
  restart(): Promise<void>;
  /** SIGTERM, wait, and delete the datadir. Idempotent. */
  stop(): Promise<void>;
}

export interface StartMariadbOptions {
  /** Binary of the server, default `mariadbd` (found on PATH or in /usr/sbin). */
  mariadbd?: string;
  /** Default `mariadb-install-db`. */
  installDb?: string;
  /** Longest wait for the server to accept connections, ms. Default 60 000. */
  startTimeoutMs?: number;
  /**
   * A server of a replicated pair (`server_id`, distinct in each): with a binary log that also
   * holds what it replicates (`log_slave_updates`), so it can be a primary or a replica, and a
   * replica of it can start from its first event. Default: no binary log.
   */
  replicationServerId?: number;
  /**
   * Whether to create the `test` database once it serves. Default true; false for a replica,
   * which receives it from its primary.
   */
  createTestDatabase?: boolean;
}

/**
 * A private MariaDB for tests that kill and restart the server: its own datadir and tmpdir under
 * /tmp (`mariadb-install-db`), a free port on 127.0.0.1, a socket inside the datadir, no grant
 * tables (root, any password), small buffers so it starts fast on a small machine.
 */
export async function startMariadb(options: StartMariadbOptions = {}): Promise<MariadbServer> {
  const mariadbd = options.mariadbd ?? findBinary('mariadbd');
  const installDb = options.installDb ?? findBinary('mariadb-install-db');
  const startTimeoutMs = options.startTimeoutMs ?? 60_000;
  const datadir = await mkdtemp(join(tmpdir(), 'conclave-mariadb-'));
  // A tmpdir of its own: a starting server deletes every `#sql*` file in its tmpdir, so servers
  // sharing /tmp destroy each other's temporary tables (a bootstrap beside another start fails
  // with "Unknown table 'mysql.tmp_user_sys'").
  const ownTmp = await mkdtemp(join(tmpdir(), 'conclave-mariadb-tmp-'));
  await run(
    installDb,
    [
      '--no-defaults',
      `--datadir=${datadir}`,
      `--tmpdir=${ownTmp}`,
      '--user=root',
      '--auth-root-authentication-method=normal',
      '--skip-test-db',
      '--skip-name-resolve',
    ],
    { timeout: startTimeoutMs },
  );
  const serverId = options.replicationServerId;
  // Statement-based where safe (MIXED, the default): the format under which a write's server
  // identity must travel in a user variable (see serverIdentitySql).
  const binlog =
    serverId === undefined
      ? ['--skip-log-bin']
      : [`--server-id=${serverId}`, `--log-bin=${join(datadir, 'binlog')}`, '--log-slave-updates', '--binlog-format=MIXED', '--skip-slave-start', `--relay-log=${join(datadir, 'relay')}`];
  const port = await freePort();
  let child: ChildProcess | null = null;
  let stopped = false;

  const start = async () => {
    const proc = spawn(
      mariadbd,
      [
        '--no-defaults',
        `--datadir=${datadir}`,
        `--tmpdir=${ownTmp}`,
        `--port=${port}`,
        '--bind-address=127.0.0.1',
        `--socket=${join(datadir, 'mysqld.sock')}`,
        `--pid-file=${join(datadir, 'mysqld.pid')}`,
        `--log-error=${join(datadir, 'error.log')}`,
        '--user=root',
        '--skip-networking=0',
        '--skip-grant-tables',
        '--skip-name-resolve',
        ...binlog,
        '--innodb-buffer-pool-size=16M',
        '--innodb-log-file-size=16M',
        '--max-connections=300',
      ],
      { stdio: 'ignore' },
    );
    proc.on('error', () => undefined);
    child = proc;
    await waitForPort(port, '127.0.0.1', startTimeoutMs);
    // The port opens a moment before the server answers queries; create the test database.
    await runSql(port, options.createTestDatabase === false ? 'SELECT 1' : 'CREATE DATABASE IF NOT EXISTS test', startTimeoutMs);
  };

  const exited = (proc: ChildProcess | null) =>
    new Promise<void>((resolve) => {
      if (!proc || proc.exitCode !== null || proc.signalCode !== null) return resolve();
      proc.once('exit', () => resolve());
    });

  await start();

  return {
    port,
    uri: `mysql://root@127.0.0.1:${port}/test`,
    datadir,
    async kill() {
      const proc = child;
      child = null;
      proc?.kill('SIGKILL');
      await exited(proc);
    },
    async pause() {
      if (child) await freezeProcess(child);
    },
    resume() {
      child?.kill('SIGCONT');
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
        proc.kill('SIGCONT');
        proc.kill('SIGTERM');
        const timer = setTimeout(() => proc.kill('SIGKILL'), 20_000);
        await exited(proc);
        clearTimeout(timer);
      }
      await rm(datadir, { recursive: true, force: true });
      await rm(ownTmp, { recursive: true, force: true });
    },
  };
}

function findBinary(name: string): string {
  for (const dir of (process.env.PATH ?? '').split(':').concat(['/usr/sbin', '/usr/local/sbin', '/usr/bin'])) {
    if (!dir) continue;
    try {
      accessSync(join(dir, name), constants.X_OK);
      return join(dir, name);
    } catch {
      // not here
    }
  }
  return name;
}

/** Runs one statement with the `mariadb` client, retrying while the server is still starting. */
async function runSql(port: number, sql: string, timeoutMs: number): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    try {
      await run(findBinary('mariadb'), ['--no-defaults', '-h127.0.0.1', `-P${port}`, '-uroot', '-e', sql], { timeout: 10_000 });
      return;
    } catch (err) {
      if (Date.now() > until) throw err;
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}
