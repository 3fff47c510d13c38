import type { ChildProcess } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { freePort } from '@conclave/test-harness/tools';
import { spawnListening } from './spawn-listening';

export interface SentinelServerOptions {
  /** Directory for its configuration file (Sentinel rewrites it with what it learns). */
  dir: string;
  /** The master's name, as clients ask for it. */
  masterName: string;
  masterPort: number;
  /** How long a silent master takes to be judged down, ms. */
  downAfterMs: number;
  /** Sentinel's failover-timeout, ms: also how long before it fails the same master over again (twice this). */
  failoverTimeoutMs: number;
  /** The ACL user and password Sentinel logs in to the servers with; default the `default` user, no password. */
  auth?: { user: string; password: string };
  /** Path of the redis-server binary (run with `--sentinel`). Default `redis-server` (or `REDIS_SERVER` env). */
  binary?: string;
}

/**
 * A private Redis Sentinel for tests, on a free 127.0.0.1 port, monitoring one master with a
 * quorum of 1 (it alone decides). Run as `redis-server <conf> --sentinel`, so no other package is
 * needed. `kill()` / `restart()` keep its configuration file, as a restarted Sentinel would.
 */
export class SentinelServer {
  private child: ChildProcess | null = null;

  private constructor(
    readonly port: number,
    private readonly configPath: string,
    private readonly binary: string,
  ) {}

  static async start(options: SentinelServerOptions): Promise<SentinelServer> {
    const port = await freePort();
    const configPath = join(options.dir, `sentinel-${port}.conf`);
    const m = options.masterName;
    await writeFile(
      configPath,
      [
        `port ${port}`,
        'bind 127.0.0.1',
        'protected-mode no',
        `dir ${options.dir}`,
        `sentinel monitor ${m} 127.0.0.1 ${options.masterPort} 1`,
        `sentinel down-after-milliseconds ${m} ${options.downAfterMs}`,
        `sentinel failover-timeout ${m} ${options.failoverTimeoutMs}`,
        `sentinel parallel-syncs ${m} 1`,
        ...(options.auth ? [`sentinel auth-user ${m} ${options.auth.user}`, `sentinel auth-pass ${m} ${options.auth.password}`] : []),
        '',
      ].join('\n'),
    );
    const server = new SentinelServer(port, configPath, options.binary ?? process.env.REDIS_SERVER ?? 'redis-server');
    await server.launch();
    return server;
  }

  get running(): boolean {
    return this.child !== null;
  }

  /** SIGKILL; resolves once it has exited. Idempotent. */
  kill(): Promise<void> {
    const child = this.child;
    if (!child) return Promise.resolve();
    return new Promise<void>((resolve) => {
      child.once('exit', () => resolve());
      child.kill('SIGKILL');
    }).then(() => {
      if (this.child === child) this.child = null;
    });
  }

  /** Starts it again (after `kill()`) on the same port, from its rewritten configuration. */
  async restart(): Promise<void> {
    await this.kill();
    await this.launch();
  }

  private async launch(): Promise<void> {
    try {
      await spawnListening(this.binary, [this.configPath, '--sentinel'], this.port, 'redis sentinel', (child) => {
        this.child = child;
        child.once('exit', () => {
          if (this.child === child) this.child = null;
        });
      });
    } catch (err) {
      this.child = null;
      throw err;
    }
  }
}
