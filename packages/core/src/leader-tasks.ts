import type { LeaderTask } from './elector-types';
import type { ElectorSetup } from './elector-setup';
import { trackTermWork } from './term-work';

/** One term's token, and the controller of the signal its work receives. */
export interface TermWork {
  token: number;
  controller: AbortController;
}

/**
 * The `whileLeader` tasks of one Elector: each runs once per term, with the term's token and a
 * signal that aborts when the term ends. A task that throws is logged, never rethrown. A running
 * task counts as the term's work (term-work.ts): a voluntary end of the term awaits it.
 */
export class LeaderTasks {
  private readonly tasks = new Set<LeaderTask>();

  constructor(private readonly setup: ElectorSetup) {}

  /** Registers `task` for the terms to come; returns the function that unregisters it. */
  add(task: LeaderTask): () => void {
    this.tasks.add(task);
    return () => {
      this.tasks.delete(task);
    };
  }

  /** Runs every task for a term that has just begun, while it is still the current one. */
  runAll(term: TermWork, isCurrent: () => boolean): void {
    for (const task of this.tasks) {
      if (isCurrent()) this.run(task, term);
    }
  }

  run(task: LeaderTask, term: TermWork): void {
    const { token, controller } = term;
    const run = Promise.resolve()
      .then(() => task({ token, signal: controller.signal }))
      .catch((err: unknown) => {
        // A task that stops because its term ended has not failed.
        if (controller.signal.aborted && err === controller.signal.reason) return;
        this.setup.log.error({ ...this.setup.context(), token, err }, 'whileLeader task failed');
      });
    trackTermWork(controller.signal, run);
  }
}
