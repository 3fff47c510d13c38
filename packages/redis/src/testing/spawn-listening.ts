import { spawn, type ChildProcess } from 'node:child_process';
import { waitForPort } from '@conclave/test-harness/tools';

/**
 * Starts a server process and resolves once it listens on `port` on 127.0.0.1. `onSpawn` gets the
 * process at once (a kill meanwhile must reach it). If it exits first, or does not listen within
 * 15 s, it is killed and the promise rejects with its last stderr, naming it as `what`.
 */
export async function spawnListening(
  binary: string,
  args: readonly string[],
  port: number,
  what: string,
  onSpawn: (child: ChildProcess) => void,
): Promise<void> {
  const child = spawn(binary, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-2000);
  });
  const exited = new Promise<never>((_, reject) => {
    child.once('error', reject);
    child.once('exit', (code, signal) => reject(new Error(`${what} on port ${port} exited (${code ?? signal}) before listening: ${stderr}`)));
  });
  exited.catch(() => undefined);
  onSpawn(child);
  try {
    await Promise.race([waitForPort(port, '127.0.0.1', 15_000), exited]);
  } catch (err) {
    child.kill('SIGKILL');
    throw err;
  }
}
