import { readFileSync, readdirSync } from 'node:fs';
import type { ChildProcess } from 'node:child_process';

/**
 * SIGSTOP, then waits until every thread of the process is stopped. kill(2) returns before a
 * thread running on another core has stopped, and a multi-threaded server (MariaDB) can answer a
 * query sent in that window; a test that freezes a server and then expects silence must wait.
 * Resolves at once where /proc cannot tell (not Linux, or the process is gone).
 */
export async function freezeProcess(child: ChildProcess, timeoutMs = 5000): Promise<void> {
  const pid = child.pid;
  child.kill('SIGSTOP');
  if (pid === undefined) return;
  const until = Date.now() + timeoutMs;
  while (!allThreadsStopped(pid)) {
    if (Date.now() > until) throw new Error(`process ${pid} did not stop within ${timeoutMs} ms of SIGSTOP`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** Whether every thread of `pid` is in state T (stopped); true when /proc has nothing to say. */
function allThreadsStopped(pid: number): boolean {
  let threads: string[];
  try {
    threads = readdirSync(`/proc/${pid}/task`);
  } catch {
    return true;
  }
  return threads.every((tid) => {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      // "pid (comm) S ...": the state follows the last ')' (comm may hold spaces and parentheses).
      const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
      return state === 'T' || state === 't' || state === 'Z' || state === 'X';
    } catch {
      return true; // the thread ended
    }
  });
}
