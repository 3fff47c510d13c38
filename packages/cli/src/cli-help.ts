/** What `conclave --help` and `conclave COMMAND --help` print. */
import { BACKEND_PROVIDERS } from './backend-providers';
import type { CommandName } from './cli-commands';

/** Each registered provider's URL forms: the form, then what it is (on its own line when the form is long). */
function urlLines(): string {
  const column = 48;
  return BACKEND_PROVIDERS.flatMap((p) => p.urlForms ?? [])
    .map(({ form, what }) => (form.length + 4 <= column ? `  ${form.padEnd(column - 2)}${what}` : `  ${form}\n${' '.repeat(column)}${what}`))
    .join('\n');
}

const URLS = `Backend URLs (--backend; migrate status: --from, --to):
${urlLines()}
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
  campaign: `Usage: conclave campaign --backend URL --election NAME [--id ID] [--lease-ms N] [--value STRING] [--json]

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
  --value STRING       published with the candidacy (e.g. this host's address), shown by
                       "conclave status" while this candidate leads; at most 1024 UTF-8 bytes
  --json               JSON lines instead of text

${URLS}

${EXIT_CODES}
`,
  run: `Usage: conclave run --backend URL --election NAME [--id ID] [--lease-ms N] [--value STRING] [--grace-ms N] -- CMD [ARGS…]
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
  --value STRING       published with the candidacy, shown by "conclave status"; ≤ 1024 bytes
  --grace-ms N         time between SIGTERM and SIGKILL, ms
                       [default and maximum: (lease − renew interval − safety margin) / 2,
                        and at most 5000 by default: 3233 for the default lease]
  --once               a scheduled job (cron, a timer) fired on several hosts: campaign for up to
                       --wait; if elected run CMD once, keep the lease until --hold-at-least after
                       CMD started, release, and exit with CMD's code; if not, exit 75
                       with one line on stderr saying who leads
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

Prints whether the election exists (has ever been used on this backend: a misspelt name does
not), the current leader and its fencing token, the leader metadata the backend keeps (the value
the leader published with --value, since when it leads, when it last renewed, when its lease ends,
how many terms the election has had; times are the server's, shown with their distance from this
host's clock), and the candidates when the backend keeps a list (Redis, ZooKeeper, memory).
With --json: {"election":…,"exists":true|false|null,"leaderId":…|null,"token":…|null,
"value":…|null,"since":…|null,"renewedAt":…|null,"leaseEndsAt":…|null,"transitions":…|null,
"candidates":[…]|null}; times are ms since the epoch, and null means none, or that the backend
cannot tell. Exits 0 whether or not there is a leader, and whether or not the election exists.

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
  force: `Usage: conclave force --backend URL --election NAME --leader ID [--allow-absent] [--lease-ms N]

Admin: makes ID the leader in a new term with a greater fencing token. The previous leader's
lease is revoked at once (it learns at its next renewal and steps down); ID's term starts only
once the revoked lease could have ended, so the two never lead together and this may take up to
one lease. Unless candidate ID runs and renews it, the forced lease ends after --lease-ms
(default: the backend's default lease).

ID must be one of the election's current candidates where the backend lists them (Redis,
ZooKeeper, etcd, memory): any other id is refused (exit 2, naming the candidates), since a leader
no process runs leaves the election without one for the forced lease. Where the backend cannot
list them (MySQL, PostgreSQL) a warning on stderr says ID could not be checked, and it is forced.

Options:
${COMMON}
  --leader ID          the candidate to make leader                      [required]
  --allow-absent       force ID even when it is not a current candidate
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
