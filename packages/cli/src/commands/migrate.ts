import { consoleLogger, isConclaveError, type Logger } from '@conclave/core';
import { assertElectionName, redactText, type ElectionBackend } from '@conclave/core/spi';
import type { ParsedCommand } from '../cli-args';
import { EXIT, exitCodeFor } from '../cli-errors';
import { warnLine, writeLine } from '../cli-context';
import { assertMigrationUrls, createBackend } from '../backend-url';
import { assessMigration, type MigrationAssessment, type SideReading } from '../migration-assessment';

/** `conclave migrate SUBCOMMAND`; `status` is the only one (the parser rejects others). */
export function migrateCommand(parsed: ParsedCommand): Promise<number> {
  return migrateStatusCommand(parsed);
}

/** What one side answered, with the error kept for the message and the exit code. */
interface SideResult {
  kind: string;
  reading: SideReading;
  error: unknown;
}

/**
 * `conclave migrate status`: reads the leader (and the candidates, where the backend lists them)
 * on both sides, prints them with what `assessMigration` concludes. Exits 0 when both sides
 * answered, else with the exit code of the first error (the report is printed all the same).
 */
export async function migrateStatusCommand(parsed: ParsedCommand): Promise<number> {
  // Everything that can be checked without a server first: flags (parser), name, URLs.
  const election = parsed.election;
  assertElectionName(election);
  assertMigrationUrls(parsed.from!, parsed.to!);
  const logger = consoleLogger(parsed.logLevel);
  const from = createBackend(parsed.from!);
  let to: ElectionBackend | undefined;
  try {
    to = createBackend(parsed.to!);
    // Both at once: a side that does not answer costs its timeout once, not twice.
    const [fromResult, toResult] = await Promise.all([readSide(from, election), readSide(to, election)]);
    const assessment = assessMigration(fromResult.reading, toResult.reading);
    if (parsed.json) writeLine(JSON.stringify(toJson(election, fromResult, toResult, assessment)));
    else printText(election, fromResult, toResult, assessment);

    const failed = [
      { side: 'from', ...fromResult },
      { side: 'to', ...toResult },
    ].filter((r) => !r.reading.ok);
    if (failed.length === 0) return EXIT.OK;
    warnLine(failed.map((r) => `${r.side} (${r.kind}) could not be read: ${errorMessage(r.error)}`).join('; '));
    return exitCodeFor(failed[0]!.error);
  } finally {
    await Promise.all([closeQuietly(from, election, logger), to && closeQuietly(to, election, logger)]);
  }
}

async function readSide(backend: ElectionBackend, election: string): Promise<SideResult> {
  try {
    const leader = await backend.getLeader(election);
    const candidates = backend.candidates ? await backend.candidates.list(election) : null;
    return {
      kind: backend.kind,
      reading: { ok: true, leader: leader && { candidateId: leader.candidateId, token: leader.token }, candidates },
      error: null,
    };
  } catch (err) {
    return { kind: backend.kind, reading: { ok: false, code: isConclaveError(err) ? err.code : 'BACKEND_ERROR' }, error: err };
  }
}

/** The --json object; its shape is documented in the README. */
function toJson(election: string, from: SideResult, to: SideResult, assessment: MigrationAssessment): object {
  const side = ({ kind, reading, error }: SideResult) => ({
    backend: kind,
    leaderId: reading.ok ? (reading.leader?.candidateId ?? null) : null,
    token: reading.ok ? (reading.leader?.token ?? null) : null,
    candidates: reading.ok ? reading.candidates : null,
    error: reading.ok ? null : { code: reading.code, message: errorMessage(error) },
  });
  return { election, from: side(from), to: side(to), candidates: assessment.candidates, next: assessment.next };
}

function printText(election: string, from: SideResult, to: SideResult, assessment: MigrationAssessment): void {
  writeLine(`election:        ${election}`);
  for (const [name, { kind, reading }] of [
    ['from', from],
    ['to', to],
  ] as const) {
    const label = `${name}:`.padEnd(17);
    const listLabel = `${name} candidates:`.padEnd(17);
    if (!reading.ok) {
      writeLine(`${label}${kind}, could not be read (${reading.code})`);
      continue;
    }
    writeLine(`${label}${kind}, ${reading.leader ? `leader ${reading.leader.candidateId} (token ${reading.leader.token})` : 'no leader'}`);
    writeLine(
      `${listLabel}${
        reading.candidates === null
          ? `(${kind} cannot list candidates: its leader only)`
          : reading.candidates.length > 0
            ? reading.candidates.join(', ')
            : '(none)'
      }`,
    );
  }
  const phases = assessment.candidates.map(({ id, phase }) => `${id} ${phase}`).join(', ');
  writeLine(`phases:          ${phases ? `${phases} (inferred)` : '(no candidate seen)'}`);
  writeLine(`next:            ${assessment.next.reason}`);
}

/** One line, with any URL password hidden. */
function errorMessage(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  return redactText(message.replace(/\s*\n\s*/g, ' ').trim());
}

async function closeQuietly(backend: ElectionBackend, election: string, logger: Logger): Promise<void> {
  try {
    await backend.close();
  } catch (err) {
    logger.debug({ election, err }, 'closing the backend failed');
  }
}
