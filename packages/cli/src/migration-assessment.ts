/**
 * What `conclave migrate status` concludes from one reading of each side of a migration. Pure: no
 * I/O, no clock, so every combination of facts can be tested without servers.
 *
 * The conclusions are inferences from two reads that are not taken at the same instant, and from
 * what each phase of `@conclave/migrate` can hold:
 * - an old process campaigns on `from` only; a `to-only` one on `to` only;
 * - a `dual` one leads only while holding both leases, and campaigns on `to` only once it is at
 *   the head of `from`'s queue; while it waits there it is seen on `from` only;
 * - a dual term's `to` token is at least its `from` token (it raises `to`'s floor to the `from`
 *   token − 1 before taking `to`; every backend the CLI opens supports that).
 */

/** A leader as read from one side. */
export interface SideLeader {
  candidateId: string;
  token: number;
}

/**
 * One side's answer: its leader (`null`: nobody holds a live lease) and its candidates (`null`:
 * the backend cannot list them) — or the error it answered with (`ok: false`).
 */
export type SideReading =
  | { ok: true; leader: SideLeader | null; candidates: string[] | null }
  | { ok: false; code: string };

/**
 * A candidate's inferred phase: on both sides → `dual`; on `to` only → `to-only`; on `from`
 * only → `from` (an old process, or a dual one waiting in `from`'s queue); `unknown` when a side
 * could not be read.
 */
export type CandidatePhase = 'dual' | 'to-only' | 'from' | 'unknown';

/**
 * The furthest step the facts support: `to-only` — deploying to-only processes is safe; `dual` —
 * keep deploying dual, not to-only yet; `wait` — the facts prove nothing, check again after a
 * lease; `none` — a side could not be read, no step is safe until it answers.
 */
export type SafeStep = 'to-only' | 'dual' | 'wait' | 'none';

/** Which case the facts fell into; stable, for scripts (the reason text may be reworded). */
export type MigrationSituation =
  | 'dual-leads-both'
  | 'tokens-out-of-order'
  | 'from-leader-not-on-to'
  | 'to-leads-alone'
  | 'no-leader'
  | 'unreadable';

export interface MigrationAssessment {
  /** Every candidate seen on either side (from's first, in its order), with its inferred phase. */
  candidates: Array<{ id: string; phase: CandidatePhase }>;
  next: { safe: SafeStep; situation: MigrationSituation; reason: string };
}

/** Concludes from one reading of `from` and one of `to` of the same election. */
export function assessMigration(from: SideReading, to: SideReading): MigrationAssessment {
  return { candidates: inferPhases(from, to), next: nextStep(from, to) };
}

/** The candidates a side is known to have: its list when it keeps one, else its leader only. */
function knownCandidates(side: SideReading): string[] {
  if (!side.ok) return [];
  const ids = [...new Set(side.candidates ?? [])];
  // The two reads of one side are not atomic either: a leader missing from the list still counts.
  if (side.leader && !ids.includes(side.leader.candidateId)) ids.unshift(side.leader.candidateId);
  return ids;
}

function inferPhases(from: SideReading, to: SideReading): MigrationAssessment['candidates'] {
  const onFrom = knownCandidates(from);
  const onTo = knownCandidates(to);
  const ids = [...onFrom, ...onTo.filter((id) => !onFrom.includes(id))];
  return ids.map((id) => {
    if (!from.ok || !to.ok) return { id, phase: 'unknown' };
    const f = onFrom.includes(id);
    const t = onTo.includes(id);
    return { id, phase: f && t ? 'dual' : t ? 'to-only' : 'from' };
  });
}

function nextStep(from: SideReading, to: SideReading): MigrationAssessment['next'] {
  if (!from.ok || !to.ok) {
    const reason =
      !from.ok && !to.ok
        ? `neither from (${from.code}) nor to (${to.code}) could be read: no step is safe until both answer`
        : !from.ok
          ? `from could not be read (${from.code}): no step is safe until it answers`
          : `to could not be read (${(to as { code: string }).code}): no step is safe until it answers`;
    return { safe: 'none', situation: 'unreadable', reason };
  }
  const f = from.leader;
  const t = to.leader;
  if (f && t && f.candidateId === t.candidateId) {
    if (t.token < f.token) {
      return {
        safe: 'wait',
        situation: 'tokens-out-of-order',
        reason:
          `${f.candidateId} leads on both sides but to's token ${t.token} is below from's ${f.token}, which no dual term ` +
          `shows (two processes with one id, or the leaders changed between the two reads): wait a lease and check again`,
      };
    }
    return {
      safe: 'to-only',
      situation: 'dual-leads-both',
      reason:
        `a dual candidate leads on both sides (from token ${f.token}, to token ${t.token}): ` +
        `once no old process is left, deploying to-only is safe`,
    };
  }
  if (f) {
    const other = t
      ? `; to is led by another candidate, ${t.candidateId}: if ${f.candidateId} is an old process, old and to-only ` +
        `processes run together, which they must never do`
      : '';
    return {
      safe: 'dual',
      situation: 'from-leader-not-on-to',
      reason:
        `the leader on from is not leading on to (an old process, or a dual one between its two leases): ` +
        `keep deploying dual; do not deploy to-only yet${other}`,
    };
  }
  if (t) {
    return {
      safe: 'to-only',
      situation: 'to-leads-alone',
      reason:
        'only to has a leader: dual or to-only processes lead; deploying to-only is safe; ' +
        'after the last dual process is gone from can be retired',
    };
  }
  return { safe: 'wait', situation: 'no-leader', reason: 'no leader on either side: wait a lease and check again' };
}
