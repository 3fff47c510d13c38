/**
 * A private single-member etcd (the distribution's `etcd` binary) on free loopback ports, in a
 * data dir of its own, for the etcd3 peer. Killed and its dir removed on close or bench exit.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, waitForPort } from '@conclave/test-harness/tools';
import { onCleanup, trackChild } from '../util';

export const ETCD_BINARY = process.env.ETCD_BINARY ?? '/usr/bin/etcd';

export interface EtcdServer {
  port: number;
  /** Sum of etcd's grpc_server_msg_received_total (messages received, stream messages included), from /metrics. */
  receivedMessages(): Promise<number>;
  /** The server's version, from /version. */
  version(): Promise<string>;
  close(): Promise<void>;
}

export function etcdAvailable(): boolean {
  return existsSync(ETCD_BINARY);
}

function get(port: number, path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, timeout: 5000 }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve(body));
    });
    req.on('timeout', () => req.destroy(new Error(`etcd ${path} timed out`)));
    req.on('error', reject);
    req.end();
  });
}

export async function startEtcd(): Promise<EtcdServer> {
  const dir = mkdtempSync(join(tmpdir(), 'conclave-bench-etcd-'));
  const port = await freePort();
  const peerPort = await freePort();
  const client = `http://127.0.0.1:${port}`;
  const peer = `http://127.0.0.1:${peerPort}`;
  const child = spawn(
    ETCD_BINARY,
    [
      '--name', 'bench',
      '--data-dir', dir,
      '--listen-client-urls', client,
      '--advertise-client-urls', client,
      '--listen-peer-urls', peer,
      '--initial-advertise-peer-urls', peer,
      '--initial-cluster', `bench=${peer}`,
      '--log-level', 'error',
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  trackChild(child);
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-2000)));
  const close = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      await new Promise<void>((resolve) => {
        child.once('exit', () => resolve());
        child.kill('SIGKILL');
      });
    }
    rmSync(dir, { recursive: true, force: true });
  };
  const remove = onCleanup(close);
  const exited = new Promise<never>((_, reject) =>
    child.once('exit', (code, signal) => reject(new Error(`etcd exited (${code ?? signal}) before listening: ${stderr}`))),
  );
  exited.catch(() => undefined);
  try {
    await Promise.race([waitForPort(port, '127.0.0.1', 30_000), exited]);
  } catch (err) {
    remove();
    await close();
    throw err;
  }
  return {
    port,
    async receivedMessages() {
      const text = await get(port, '/metrics');
      let n = 0;
      for (const m of text.matchAll(/^grpc_server_msg_received_total\{[^}]*\} (\d+(?:\.\d+)?(?:e\+\d+)?)$/gm)) n += Number(m[1]);
      return n;
    },
    async version() {
      return `etcd ${(JSON.parse(await get(port, '/version')) as { etcdserver?: string }).etcdserver ?? 'unknown'}`;
    },
    async close() {
      remove();
      await close();
    },
  };
}
