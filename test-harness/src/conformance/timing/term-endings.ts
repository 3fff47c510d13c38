import type { Elector, RevokeReason } from '@conclave/core';
import type { ControlledBackend } from '../../controlled-backend';
import type { SuiteContext } from '../suite-context';

/** One way a leader's term can end, and what the suite expects of it. */
export type Ending = {
  name: string;
  reason: RevokeReason;
  /** Ends a's term; resolves when the ending call returned (not when the term is over). */
  end(args: { c: SuiteContext; a: Elector; aBackend: ControlledBackend; election: string }): Promise<void> | void;
  /** The signal must already be aborted when `end` returns (the term ends in the call itself). */
  atOnce: boolean;
};

export const ENDINGS: Ending[] = [
  { name: 'stepDown()', reason: 'stepped-down', atOnce: true, end: ({ a }) => a.stepDown() },
  { name: 'pause()', reason: 'paused', atOnce: true, end: ({ a }) => a.pause() },
  {
    name: 'stop()',
    reason: 'stopped',
    atOnce: true,
    end: ({ a }) => {
      // The term ends in the synchronous part of stop(); the release follows.
      void a.stop();
    },
  },
  {
    name: 'forceLeader() to another candidate (lease lost)',
    reason: 'lease-lost',
    atOnce: false,
    // forceLeader returns once the new term started, so the signal may abort during the call.
    end: async ({ c, election }) => {
      await (await c.backend()).admin!.forceLeader(election, 'b');
    },
  },
  {
    name: 'clearLeader() (lease lost)',
    reason: 'lease-lost',
    atOnce: false,
    end: async ({ c, election }) => {
      await (await c.backend()).admin!.clearLeader(election);
    },
  },
  {
    name: 'renewals answered too late (lease expired)',
    reason: 'lease-expired',
    atOnce: false,
    end: ({ aBackend }) => aBackend.holdReplies(['renew']),
  },
  {
    name: 'a connection that went silent (lost contact)',
    reason: 'lease-expired',
    atOnce: false,
    end: ({ c, aBackend }) => c.freeze(aBackend),
  },
  {
    name: 'a connection that refuses every call (lost contact)',
    reason: 'lease-expired',
    atOnce: false,
    end: ({ c, aBackend }) => c.freeze(aBackend, 'refuse'),
  },
];

/** The admin calls that take the lease from its holder. */
export const adminEndings = [
  ['forceLeader()', (admin: ControlledBackend, election: string) => admin.admin!.forceLeader(election, 'b').then(() => undefined)],
  ['clearLeader()', (admin: ControlledBackend, election: string) => admin.admin!.clearLeader(election)],
] as const;
