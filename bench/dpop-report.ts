// The page's section on (ap), "What DPoP costs": rendered from bench/results/dpop.json, which a run
// at 1M orders that measured (ap) writes (bench/results.ts), or saying how to measure it.
import { int, markdownTable, ms, pct } from './markdown.ts';
import type { Aggregate, RunInfo, ScenarioResult } from './report.ts';

/** (ap)'s figures and the run that measured them. */
export interface DpopResults {
  info: RunInfo;
  /** orderpay's columns: DPoP first, bearer second (as the "baseline"). */
  result: ScenarioResult;
}

const ratio = (dpop: number, bearer: number) => `${(dpop / bearer).toFixed(2)}×`;

const row = (label: string, a: Aggregate) => [
  label,
  int(a.requestsPerSecond),
  ms(a.p50Ms),
  ms(a.p99Ms),
  int(a.serverCpuUs),
  int(a.postgresCpuUs),
];

function figures({ info, result }: DpopResults): string {
  const { orderpay: dpop, baseline: bearer } = result;
  const table = markdownTable(
    ['(ap) GET /orders/{id}', 'req/s', 'p50 ms', 'p99 ms', 'node µs/req', 'pg µs/req'],
    [
      row('bearer token', bearer),
      row('DPoP-bound token + a proof', dpop),
      [
        'DPoP ÷ bearer',
        ratio(dpop.requestsPerSecond, bearer.requestsPerSecond),
        ratio(dpop.p50Ms, bearer.p50Ms),
        ratio(dpop.p99Ms, bearer.p99Ms),
        ratio(dpop.serverCpuUs, bearer.serverCpuUs),
        ratio(dpop.postgresCpuUs, bearer.postgresCpuUs),
      ],
    ],
  );
  const rounds = markdownTable(
    ['round', 'DPoP req/s', 'p50 ms', 'p99 ms', 'bearer req/s', 'p50 ms', 'p99 ms', 'DPoP ÷ bearer'],
    dpop.rounds.map((d, i) => {
      const b = bearer.rounds[i]!;
      return [
        String(i + 1),
        int(d.requestsPerSecond),
        ms(d.p50Ms),
        ms(d.p99Ms),
        int(b.requestsPerSecond),
        ms(b.p50Ms),
        ms(b.p99Ms),
        ratio(d.requestsPerSecond, b.requestsPerSecond),
      ];
    }),
  );
  const ranOut = dpop.rounds.filter((r) => r.proofsRanOut).length;
  const checked =
    dpop.errors + bearer.errors === 0
      ? 'Every response was a 200 (wrk counts any other status, and the bench stops on one: a replayed proof would be a 401).'
      : `**Errors occurred** (DPoP ${dpop.errors}, bearer ${bearer.errors}).`;
  return `From \`bench/results/dpop.json\`: \`${info.command}\` on ${info.date}
(${int(info.orders)} orders, ${info.connections} connections, ${info.rounds} rounds of ${info.seconds} s per column after a
${info.warmupSeconds} s warm-up, the columns taking turns to go first; other processes used
${pct(info.interference.others)} of the machine's CPU time).

${table}

req/s is the mean of the rounds, p50 the median of the rounds' p50, p99 the worst round's, CPU per
request as in [CPU per request](#cpu-per-request). Per request, DPoP adds ${int(dpop.serverCpuUs - bearer.serverCpuUs)} µs of
orderpay's Node CPU and ${int(dpop.postgresCpuUs - bearer.postgresCpuUs)} µs of PostgreSQL's.
${checked}${ranOut ? ` In ${ranOut} of the ${dpop.rounds.length} rounds the proofs ran out before the run's time (below).` : ''}

${rounds}
`;
}

/** The section; without (ap)'s figures, what it will show and the command that measures them. */
export function renderDpopSection(results: DpopResults | undefined): string {
  return `
## What DPoP costs

(ap) is (a)'s lookup on orderpay with a DPoP-bound token and a proof per request (RFC 9449), beside
the same lookup with (a)'s bearer token.

${
  results
    ? figures(results)
    : `Not measured yet: \`BENCH_SCENARIOS=ap npm run bench\` (1M orders) measures it and keeps its
figures in \`bench/results/dpop.json\`, which this section shows.
`
}
Both columns are orderpay as [set up](#set-up) for the other scenarios, for the bench's staff user
with the same scopes: the bearer token is (a)'s; the other is the same token bound to an ES256 key
(\`cnf.jkt\`, signed by the bench as it signs (a)'s: \`issueTokenFor\` in src/auth/access-token.ts),
sent as \`Authorization: DPoP\` with a \`DPoP\` header holding a proof made for its request. In both
columns the token is verified once and memoised
([above](#why-authentication-costs-little-per-request)); a proof cannot be, each being new. What the
DPoP path adds to a request (src/http/token-binding.ts, src/http/dpop.ts): the proof's header read
and checked, its ES256 signature verified (jose, WebCrypto) with the public key the header carries
(imported, and its RFC 7638 thumbprint computed, once per key: a client signs every proof with
the same one), its claims checked (\`htm\`, \`htu\` against \`PUBLIC_URL\`, \`iat\`, and \`ath\`: a
SHA-256 of the token), the thumbprint compared with \`cnf.jkt\`, and the proof's \`jti\` recorded: an \`INSERT … ON CONFLICT\` into the UNLOGGED \`dpop_proofs\` table that the bearer lookup
does not send, one statement for the proofs of a turn of the event loop (as the order lookups of a
turn share theirs: [Where the time goes](#where-the-time-goes)).

The bench makes the proofs just before each run (bench/dpop.ts), one for each request the run may
send, as openid-client makes them: ES256, a random 32-byte \`jti\` each, \`htm\` GET, \`htu\`
orderpay's \`PUBLIC_URL\` and the request's path (an id drawn at random from (a)'s sample), \`ath\`
of the token, \`iat\` when they were made (a proof is valid for 300 s; a run lasts at most 240).
wrk reads them from a file per thread, line by line, and sends each once; a thread whose proofs
are done stops, so that a run ends early rather than replay one, and its req/s is then over the
time its load lasted, its CPU per request over the requests answered. Their number is the run's
seconds times twice the best req/s of the column's runs so far (20,000 a second before its
first run); making them, in the bench's own process, is not in the measured time. Every run
with (ap) empties \`dpop_proofs\` first; during it the table gains a row per request (each kept
360 s after its \`iat\`, purged every minute). A full \`npm run bench\` measures (ap) too; at another
size than 1M its figures are printed, not kept, and \`npm run bench:check\` does not run it.
`;
}
