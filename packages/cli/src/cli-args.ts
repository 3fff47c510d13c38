import { parseArgs } from 'node:util';
import { UsageError } from './cli-errors';
import { parseDuration } from './duration';
import { BACKEND_ENV, resolveBackendUrl } from './backend-source';

export const COMMANDS = ['campaign', 'run', 'status', 'watch', 'force', 'clear', 'migrate', 'demo'] as const;
export type CommandName = (typeof COMMANDS)[number];

export const LOG_LEVELS = ['debug', 'info', 'warn', 'error'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

type OptionName =
  | 'backend'
  | 'backend-file'
  | 'from'
  | 'to'
  | 'election'
  | 'id'
  | 'lease-ms'
  | 'json'
  | 'grace-ms'
  | 'interval-ms'
  | 'leader'
  | 'log-level'
  | 'once'
  | 'wait'
  | 'hold-at-least'
  | 'help';

interface OptionSpec {
  type: 'string' | 'boolean';
  short?: string;
}

const OPTION_SPECS: Record<OptionName, OptionSpec> = {
  backend: { type: 'string' },
  'backend-file': { type: 'string' },
  from: { type: 'string' },
  to: { type: 'string' },
  election: { type: 'string' },
  id: { type: 'string' },
  'lease-ms': { type: 'string' },
  json: { type: 'boolean' },
  'grace-ms': { type: 'string' },
  'interval-ms': { type: 'string' },
  leader: { type: 'string' },
  'log-level': { type: 'string' },
  once: { type: 'boolean' },
  wait: { type: 'string' },
  'hold-at-least': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
};

const CONNECTION: OptionName[] = ['backend', 'backend-file', 'election', 'log-level', 'help'];

/** Which options each command accepts; anything else is a usage error. */
const COMMAND_OPTIONS: Record<CommandName, OptionName[]> = {
  campaign: [...CONNECTION, 'id', 'lease-ms', 'json'],
  run: [...CONNECTION, 'id', 'lease-ms', 'grace-ms', 'once', 'wait', 'hold-at-least'],
  status: [...CONNECTION, 'json'],
  watch: [...CONNECTION, 'json', 'interval-ms'],
  force: [...CONNECTION, 'leader', 'lease-ms'],
  clear: [...CONNECTION],
  migrate: ['from', 'to', 'election', 'json', 'log-level', 'help'],
  demo: ['lease-ms', 'help'],
};

/** The subcommands of `conclave migrate`. */
export const MIGRATE_SUBCOMMANDS = ['status'] as const;
export type MigrateSubcommand = (typeof MIGRATE_SUBCOMMANDS)[number];

/** Options of one command after parsing; numbers are validated positive integers. */
export interface ParsedCommand {
  command: CommandName;
  help: boolean;
  backend?: string;
  /** `migrate` only: the subcommand (the first argument after `migrate`). */
  subcommand?: MigrateSubcommand;
  /** `migrate` only: the backend URL the election moves from. */
  from?: string;
  /** `migrate` only: the backend URL the election moves to. */
  to?: string;
  election?: string;
  id?: string;
  leaseMs?: number;
  graceMs?: number;
  intervalMs?: number;
  leader?: string;
  json: boolean;
  logLevel: LogLevel;
  /** `run --once`: run CMD at most once (a scheduled job), with `waitMs` and `holdAtLeastMs`. */
  once: boolean;
  waitMs?: number;
  holdAtLeastMs?: number;
  /** `run` only: CMD and its arguments (everything after `--`). */
  argv: string[];
}

export function isCommand(name: string): name is CommandName {
  return (COMMANDS as readonly string[]).includes(name);
}

/**
 * Parses the arguments that follow the command name, strictly: unknown options, options of
 * another command, missing values and stray positionals are `UsageError`s. The backend URL is
 * `--backend`, else `--backend-file`'s contents, else `env.CONCLAVE_BACKEND`.
 */
export function parseCommand(command: CommandName, args: string[], env: NodeJS.ProcessEnv = process.env): ParsedCommand {
  // Everything after the first `--` belongs to CMD (run) and is never parsed as our options.
  const dashDash = args.indexOf('--');
  const own = dashDash === -1 ? args : args.slice(0, dashDash);
  const rest = dashDash === -1 ? [] : args.slice(dashDash + 1);

  const allowed = COMMAND_OPTIONS[command];
  const options: Record<string, OptionSpec> = {};
  for (const name of allowed) options[name] = OPTION_SPECS[name];

  let values: Record<string, string | boolean | undefined>;
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({ args: own, options, strict: true, allowPositionals: true }) as {
      values: Record<string, string | boolean | undefined>;
      positionals: string[];
    });
  } catch (err) {
    throw new UsageError(describeParseError(err, command), command);
  }

  const parsed: ParsedCommand = {
    command,
    help: values.help === true,
    json: values.json === true,
    logLevel: 'warn',
    once: values.once === true,
    argv: rest,
  };
  if (parsed.help) return parsed;

  if (command === 'migrate') {
    const sub = positionals.shift();
    if (sub === undefined) throw new UsageError('"migrate" needs a subcommand, as in: conclave migrate status …', command);
    if (!(MIGRATE_SUBCOMMANDS as readonly string[]).includes(sub)) {
      throw new UsageError(`unknown migrate subcommand "${sub}" (known: ${MIGRATE_SUBCOMMANDS.join(', ')})`, command);
    }
    parsed.subcommand = sub as MigrateSubcommand;
  }
  if (positionals.length > 0) {
    const hint = command === 'run' ? ': put the command after "--", as in: conclave run … -- CMD ARGS' : '';
    throw new UsageError(`unexpected argument "${positionals[0]}" for "${command}"${hint}`, command);
  }
  if (dashDash !== -1 && command !== 'run') {
    throw new UsageError(`"${command}" takes no arguments after "--"`, command);
  }
  if (command === 'run' && rest.length === 0) {
    throw new UsageError('"run" needs a command to run after "--", as in: conclave run … -- CMD ARGS', command);
  }

  const str = (name: OptionName) => {
    const v = values[name];
    if (typeof v !== 'string') return undefined;
    if (v.trim() === '') throw new UsageError(`--${name} must not be empty`, command);
    return v;
  };
  const int = (name: OptionName) => {
    const v = str(name);
    if (v === undefined) return undefined;
    if (!/^[0-9]+$/.test(v) || !Number.isSafeInteger(Number(v)) || Number(v) <= 0) {
      throw new UsageError(`--${name} must be a positive whole number of milliseconds, got "${v}"`, command);
    }
    return Number(v);
  };

  if (allowed.includes('backend')) {
    parsed.backend = resolveBackendUrl({ flag: str('backend'), file: str('backend-file'), env }, command);
  }
  parsed.from = str('from');
  parsed.to = str('to');
  parsed.election = str('election');
  parsed.id = str('id');
  parsed.leader = str('leader');
  parsed.leaseMs = int('lease-ms');
  parsed.graceMs = int('grace-ms');
  parsed.intervalMs = int('interval-ms');
  const duration = (name: OptionName) => {
    const v = str(name);
    if (v === undefined) return undefined;
    if (!parsed.once) throw new UsageError(`--${name} goes with --once`, command);
    const d = parseDuration(v);
    if ('error' in d) throw new UsageError(`--${name} ${d.error}, got "${v}"`, command);
    return d.ms;
  };
  parsed.waitMs = duration('wait');
  parsed.holdAtLeastMs = duration('hold-at-least');
  const level = str('log-level');
  if (level !== undefined) {
    if (!(LOG_LEVELS as readonly string[]).includes(level)) {
      throw new UsageError(`--log-level must be one of ${LOG_LEVELS.join(', ')}, got "${level}"`, command);
    }
    parsed.logLevel = level as LogLevel;
  }

  if (command === 'migrate') {
    if (parsed.from === undefined) throw new UsageError('"migrate status" needs --from URL', command);
    if (parsed.to === undefined) throw new UsageError('"migrate status" needs --to URL', command);
    if (parsed.election === undefined) throw new UsageError('"migrate status" needs --election NAME', command);
  } else if (command !== 'demo') {
    if (parsed.backend === undefined) {
      throw new UsageError(`"${command}" needs --backend URL (or --backend-file PATH, or ${BACKEND_ENV} in the environment)`, command);
    }
    if (parsed.election === undefined) throw new UsageError(`"${command}" needs --election NAME`, command);
  }
  if (command === 'force' && parsed.leader === undefined) {
    throw new UsageError('"force" needs --leader ID', command);
  }
  return parsed;
}

function describeParseError(err: unknown, command: CommandName): string {
  const code = (err as { code?: string }).code;
  const message = err instanceof Error ? err.message : String(err);
  const quoted = /'(-[^']*)'/.exec(message)?.[1];
  if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' && quoted) {
    return `unknown option ${quoted} for "${command}"`;
  }
  if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE' && quoted) {
    const name = quoted.split(/[ ,]/)[0];
    const spec = OPTION_SPECS[name.replace(/^--/, '') as OptionName];
    if (spec?.type === 'boolean') return `option ${name} takes no value`;
    return `option ${name} needs a value`;
  }
  return message.split('\n')[0];
}

// ---- help texts ---------------------------------------------------------------------------

const URLS = `Backend URLs (--backend; migrate status: --from, --to):
  memory:                                       in this process only (tries, demos)
  mysql://user:pass@host:3306/db[?table=T&connectionLimit=N&ssl=true&sslCa=PATH…]
                                                MySQL / MariaDB lease row (also mariadb://)
  redis://[user:pass@]host:6379[/db][?tokenClockFloor=false]
                                                one Redis master (rediss:// for TLS)
  redis://h1:6379,h2:6379,h3:6379               Redlock quorum over independent masters
  zookeeper://[user:pass@]h1:2181[,h2:2181…][/chroot][?sessionTimeoutMs=N&requestTimeoutMs=N&root=/P]
  migrate:<from-only|dual|to-only>?from=<url>&to=<url>   an election moving between backends
Unknown URL parameters are refused. Percent-encode a password's @ : / % # ?. Messages and logs
show every password as ***.

Keeping the password off the command line (where ps shows it to every user), in this order:
  --backend URL  >  --backend-file PATH (the file's one line; make it readable by you only)
  >  CONCLAVE_BACKEND=URL in the environment (also seen by the command "run" starts)`;

const COMMON = `  --backend URL        where the election is held (see below)          [required*]
  --backend-file PATH  read the backend URL from PATH instead
                       (* or set CONCLAVE_BACKEND; --backend > --backend-file > CONCLAVE_BACKEND)
  --election NAME      the election's name: letters, digits, . _ : -    [required]
  --log-level LEVEL    debug|info|warn|error; logs go to stderr          [default: warn]
  -h, --help           this help`;

const EXIT_CODES = `Exit codes: 0 done (or stopped by SIGINT/SIGTERM/SIGHUP), 1 backend error (unreachable, timed out,
server error), 2 usage or configuration error (bad flag, missing argument, invalid URL or name).`;

export const TOOL_HELP = `conclave — leader election from the command line

Usage: conclave COMMAND --backend URL --election NAME [options]
       conclave migrate status --from URL --to URL --election NAME [--json]
       conclave COMMAND --help
       conclave --version

Commands:
  campaign        campaign for leadership until SIGINT/SIGTERM; print each change (--json: JSON lines)
  run -- CMD …    run CMD only while this process leads; stop it when leadership is lost
  run --once …    a scheduled job on several hosts: the one elected runs CMD once
  status          print the current leader, its fencing token and the candidates
  watch           print each change of leader until SIGINT/SIGTERM
  force           make --leader ID the leader now (admin)
  clear           remove the current leader's lease, so a new election starts (admin)
  migrate status  an election moving between two backends: who leads on each side, which step is safe next
  demo            three candidates on the in-memory backend: hand-over and crash, timed

${URLS}

${EXIT_CODES}
`;

export const COMMAND_HELP: Record<CommandName, string> = {
  campaign: `Usage: conclave campaign --backend URL --election NAME [--id ID] [--lease-ms N] [--json]

Campaigns for leadership until SIGINT, SIGTERM or SIGHUP (or a closed stdout), then steps down,
releases the lease (so another candidate takes over at once) and exits 0. Prints a line for each
transition on stdout:
  elected (token N) | revoked (reason) | leader is now ID (token N) | stopped
With --json, one JSON object per line, written at once:
  {"event":"elected"|"revoked"|"leader"|"stopped","election":"…","id":"…","leaderId":"…"|null,
   "token":N|null,"reason":"…"|null}
"leader" reports each change of the leader this candidate sees (itself included); on election it
comes just before "elected". Revoke reasons: stepped-down, stopped, lease-expired, lease-lost.

Options:
${COMMON}
  --id ID              this candidate's id                    [default: hostname:pid:random]
  --lease-ms N         lease length, ms                                  [default: 10000]
  --json               JSON lines instead of text

${URLS}

${EXIT_CODES}
`,
  run: `Usage: conclave run --backend URL --election NAME [--id ID] [--lease-ms N] [--grace-ms N] -- CMD [ARGS…]
       conclave run --once [--wait DURATION] [--hold-at-least DURATION] --backend URL --election NAME … -- CMD [ARGS…]

Runs CMD only while this process leads the election: CMD starts when this process is elected,
gets SIGTERM the moment leadership is lost (SIGKILL after the grace period), and starts again on
re-election. CMD's stdout and stderr are this process's; its stdin is /dev/null. CMD runs in its
own process group, and every signal goes to that whole group.

CMD never outlives the lease: a small supervisor process between conclave and CMD holds the lease
deadline (refreshed after each renewal). If the renewals stop — backend down, or conclave frozen
(GC pause, SIGSTOP) — it sends SIGTERM grace-ms before the deadline and SIGKILL at the deadline,
which comes safety-margin before the server can elect anyone else. If conclave dies, even by
SIGKILL, the supervisor sees its channel close and stops CMD at once.

On SIGINT/SIGTERM/SIGHUP: CMD gets SIGTERM (SIGKILL after the grace period), then the lease is released
and conclave exits 0. A second signal SIGKILLs CMD's group and exits 130 without releasing.
If CMD exits by itself while leading, conclave releases leadership (another candidate takes over
and starts its CMD) and exits with CMD's code (128+N if CMD was killed by signal N).

Options:
${COMMON}
  --id ID              this candidate's id                    [default: hostname:pid:random]
  --lease-ms N         lease length, ms                                  [default: 10000]
  --grace-ms N         time between SIGTERM and SIGKILL, ms
                       [default and maximum: (lease − renew interval − safety margin) / 2,
                        and at most 5000 by default: 3233 for the default lease]
  --once               a scheduled job (cron, a timer) fired on several hosts: campaign for up to
                       --wait; if elected run CMD once, keep the lease until --hold-at-least after
                       CMD started, release, and exit with CMD's code; if not, exit 75
  --wait DURATION      --once: how long to try to be elected; 0 tries once    [default: 0]
  --hold-at-least DURATION
                       --once: keep the lease this long after CMD started, so hosts that fire a
                       little later find it taken                                 [default: 0]
  DURATION is 0 or a number with a unit: 500ms, 30s, 2m, 1h.

${URLS}

Exit codes: 0 stopped by SIGINT/SIGTERM/SIGHUP; CMD's own code when CMD exits by itself while leading
(--once: whenever CMD ran); 1 backend error; 2 usage or configuration error; 75 --once: not
elected, CMD did not run here; 126 CMD not executable; 127 CMD not found; 130 second signal.
`,
  status: `Usage: conclave status --backend URL --election NAME [--json]

Prints the current leader and its fencing token, and the candidates when the backend keeps a list
(Redis, ZooKeeper, memory). With --json: {"election":…,"leaderId":…|null,"token":…|null,
"candidates":[…]|null}. Exits 0 whether or not there is a leader.

Options:
${COMMON}
  --json               one JSON object instead of text

${URLS}

${EXIT_CODES}
`,
  watch: `Usage: conclave watch --backend URL --election NAME [--interval-ms N] [--json]

Prints the leader now and then a line each time it changes, until SIGINT, SIGTERM or SIGHUP
(then exits 0). Where the backend pushes changes (Redis, ZooKeeper, memory:) the leader is read again on
each change, and with Redis also every max(5000, --interval-ms) ms in case a message was lost; MySQL has
no push and is read every --interval-ms. A leader that changes and changes back between two reads may
not be seen. Backend errors after the first read are reported on stderr and retried.
With --json: {"event":"leader","election":…,"leaderId":…|null,"token":…|null} per line.

Options:
${COMMON}
  --interval-ms N      how often to read the leader without push, ms    [default: 500]
  --json               JSON lines instead of text

${URLS}

${EXIT_CODES}
`,
  force: `Usage: conclave force --backend URL --election NAME --leader ID [--lease-ms N]

Admin: makes ID the leader in a new term with a greater fencing token. The previous leader's
lease is revoked at once (it learns at its next renewal and steps down); ID's term starts only
once the revoked lease could have ended, so the two never lead together and this may take up to
one lease. Unless candidate ID runs and renews it, the forced lease ends after --lease-ms
(default: the backend's default lease).

Options:
${COMMON}
  --leader ID          the candidate to make leader                      [required]
  --lease-ms N         length of the forced lease, ms

${URLS}

${EXIT_CODES}
`,
  clear: `Usage: conclave clear --backend URL --election NAME

Admin: revokes the current leader's lease, so a new election starts. The old leader learns at
its next renewal; the next leader starts only once the revoked lease could have ended, so the two
never lead together. Tokens are not reset: the next leader's token is still greater.

Options:
${COMMON}

${URLS}

${EXIT_CODES}
`,
  migrate: `Usage: conclave migrate status --from URL --to URL --election NAME [--json]

For an election moving between backends with @conclave/migrate (old processes on --from, then
dual, then to-only): reads each side and prints who leads there (id and token, or none), its
candidates when the backend lists them (not MySQL), each candidate's phase, and one "next:" line
saying which step is safe next and why.

Phases are inferred from the two reads, which are not taken at the same instant: seen on both
sides = dual; on --to only = to-only; on --from only = from (an old process, or a dual one waiting
in from's queue: a dual candidate campaigns on --to only once at the head of --from). Where a side
cannot list candidates, only its leader is known.

With --json, one object:
  {"election":…,"from":{"backend":…,"leaderId":…|null,"token":…|null,"candidates":[…]|null,
   "error":null|{"code":…,"message":…}},"to":{…same…},"candidates":[{"id":…,"phase":…}],
   "next":{"safe":"to-only"|"dual"|"wait"|"none","situation":…,"reason":…}}
Exits 0 when both sides answered; 1 when a side could not be read (the report is printed all the
same and says that no step is safe until it answers).

Options:
  --from URL           the backend the election moves from (a backend URL, not migrate:) [required]
  --to URL             the backend the election moves to (another backend URL)          [required]
  --election NAME      the election's name: letters, digits, . _ : -    [required]
  --json               one JSON object instead of text
  --log-level LEVEL    debug|info|warn|error; logs go to stderr          [default: warn]
  -h, --help           this help

${URLS}

${EXIT_CODES}
`,
  demo: `Usage: conclave demo [--lease-ms N]

Three candidates on the in-memory backend (no server needed): a live view of the election, a
graceful hand-over, a crash, and the measured take-over times. Exits 0 when done.

Options:
  --lease-ms N         the candidates' lease, ms                         [default: 1000]
  -h, --help           this help
`,
};
