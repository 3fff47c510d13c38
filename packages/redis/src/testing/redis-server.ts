import type { ChildProcess } from 'node:child_process';
import { freePort, freezeProcess } from '@conclave/test-harness/tools';
import { spawnListening } from './spawn-listening';

export interface RedisServerOptions {
  /** Port to listen on; default a free one. It stays the same across `restart()`. */
  port?: number;
  /** Path of the redis-server binary. Default `redis-server` (or `REDIS_SERVER` env). */
  binary?: string;
  /** Extra command-line arguments, e.g. `['--maxmemory', '10mb']`. */
  args?: string[];
}

/**
 * A private, throw-away redis-server for tests: 127.0.0.1 only, no persistence (a restart loses
 * every key, which is what restart tests want), on a free port. `stop()` ends it with SIGTERM,
 * `kill()` with SIGKILL (a crash), `restart()` starts it again on the same port; `pause()` /
 * `resume()` freeze it with SIGSTOP/SIGCONT (a hung server that keeps its sockets open).
 */
export class RedisServer {
  private child: ChildProcess | null = null;
  private paused = false;

  private constructor(
    readonly port: number,
    private readonly binary: string,
    private readonly args: string[],
  ) {}

  static async start(options: RedisServerOptions = {}): Promise<RedisServer> {
    const port = options.port ?? (await freePort());
    const server = new RedisServer(port, options.binary ?? process.env.REDIS_SERVER ?? 'redis-server', options.args ?? []);
    await server.launch();
    return server;
  }

  /** `redis://127.0.0.1:<port>` */
  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  get running(): boolean {
    return this.child !== null;
  }

  /** Graceful stop (SIGTERM); resolves when the process has exited. Idempotent. */
  stop(): Promise<void> {
    return this.end('SIGTERM');
  }

  /** Crash (SIGKILL); resolves when the process has exited. Idempotent. */
  kill(): Promise<void> {
    return this.end('SIGKILL');
  }

  /** Stops (SIGKILL unless `graceful`) and starts again on the same port, with no data. */
  async restart(graceful = false): Promise<void> {
    await this.end(graceful ? 'SIGTERM' : 'SIGKILL');
    await this.launch();
  }

  /** Freezes the process (SIGSTOP): connections stay open, nothing answers. Resolves once it has stopped. */
  async pause(): Promise<void> {
    if (this.child && !this.paused) {
      this.paused = true;
      await freezeProcess(this.child);
    }
  }

  resume(): void {
    if (this.child && this.paused) {
      this.child.kill('SIGCONT');
      this.paused = false;
    }
  }

  private async launch(): Promise<void> {
    if (this.child) return;
    const args = ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--protected-mode', 'no', ...this.args];
    try {
      await spawnListening(this.binary, args, this.port, 'redis-server', (child) => {
        this.child = child;
        this.paused = false;
        child.once('exit', () => {
          if (this.child === child) this.child = null;
        });
      });
    } catch (err) {
      this.child = null;
      throw err;
    }
  }

  private end(signal: NodeJS.Signals): Promise<void> {
    const child = this.child;
    if (!child) return Promise.resolve();
    return new Promise<void>((resolve) => {
      child.once('exit', () => resolve());
      if (this.paused) child.kill('SIGCONT');
      this.paused = false;
      child.kill(signal);
    }).then(() => {
      if (this.child === child) this.child = null;
    });
  }
}

/** Starts `count` private servers (a Redlock quorum in tests). */
export function startRedisServers(count: number, options: Omit<RedisServerOptions, 'port'> = {}): Promise<RedisServer[]> {
  return Promise.all(Array.from({ length: count }, () => RedisServer.start(options)));
}
