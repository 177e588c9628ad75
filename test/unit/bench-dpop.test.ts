// The bench's scenario (ap), DPoP (RFC 9449): the proofs it makes pass the API's own checks, each
// run gets enough of them in a file per wrk thread, and wrk sends each proof once, then stops.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createDpopKey, makeProof, proofsFor, sliceSizes, writeProofFiles } from '../../bench/dpop.ts';
import { renderDpopSection } from '../../bench/dpop-report.ts';
import { chooseLoadGenerator, proofScript } from '../../bench/load.ts';
import { aggregate, type Measurement, type RunInfo } from '../../bench/report.ts';
import { accessTokenHash, verifyDpopProof } from '../../src/http/dpop.ts';

const PUBLIC_URL = 'http://127.0.0.1:8080';
/** The stand-in server wrk loads (README: tests listen on fixed ports, one range per file). */
const PORT = 29_940;
const TOKEN = 'header.payload.signature';

const jtiOf = (proof: string) => (JSON.parse(Buffer.from(proof.split('.')[1]!, 'base64url').toString()) as { jti: string }).jti;

describe('the bench makes DPoP proofs as a client does (RFC 9449 §4.2)', () => {
  test('a proof passes every check of the API, for its path, token and key', async () => {
    const key = await createDpopKey();
    const nowSeconds = Math.floor(Date.now() / 1000);
    const proof = makeProof(key, { htu: `${PUBLIC_URL}/orders/7`, ath: accessTokenHash(TOKEN), iat: nowSeconds });
    const expected = { method: 'GET', url: `${PUBLIC_URL}/orders/7`, accessToken: TOKEN, jkt: key.jkt, nowSeconds };
    const checked = await verifyDpopProof(proof, expected);
    assert.equal(checked.iat, nowSeconds);
    assert.match(checked.jti, /^[\w-]{43}$/);
    await assert.rejects(verifyDpopProof(proof, { ...expected, url: `${PUBLIC_URL}/orders/8` }), /htu/);
    await assert.rejects(verifyDpopProof(proof, { ...expected, jkt: (await createDpopKey()).jkt }), /cnf\.jkt/);
  });

  test('a proof per line, `<path> <proof>`, for a path of the sample, each with its own jti, in a file per thread', async () => {
    const key = await createDpopKey();
    const paths = ['/orders/1', '/orders/2', '/orders/3'];
    const { files, discard } = await writeProofFiles({ key, token: TOKEN, publicUrl: PUBLIC_URL }, paths, 2_501, 2);
    try {
      const lines = files.map((file) => readFileSync(file, 'utf8').split('\n').slice(0, -1));
      assert.deepEqual(
        lines.map((l) => l.length),
        [1_251, 1_250],
      );
      const all = lines.flat();
      const jtis = new Set(all.map((line) => jtiOf(line.split(' ')[1]!)));
      assert.equal(jtis.size, all.length);
      const [requestPath, proof] = all.at(-1)!.split(' ') as [string, string];
      assert.ok(paths.includes(requestPath));
      const nowSeconds = Date.now() / 1000;
      await verifyDpopProof(proof, { method: 'GET', url: PUBLIC_URL + requestPath, accessToken: TOKEN, jkt: key.jkt, nowSeconds });
    } finally {
      discard();
    }
    assert.equal(existsSync(files[0]!), false);
  });

  test("a run's proofs: twice its column's best rate so far, or 20,000 a second before its first run", () => {
    assert.equal(proofsFor(10, 3_000), 60_100);
    assert.equal(proofsFor(2, undefined), 40_100);
  });

  test('threads get contiguous slices, the first ones one longer; none gets nothing', () => {
    assert.deepEqual(sliceSizes(10, 1), [10]);
    assert.deepEqual(sliceSizes(10, 3), [4, 3, 3]);
    assert.throws(() => sliceSizes(1, 2), /each of 2 wrk threads/);
  });
});

describe("wrk's script for requests with DPoP proofs", () => {
  test('thread n reads file n, sends its last line, then stops; later turns send nothing', () => {
    const script = proofScript({ method: 'GET', proofFiles: ['/tmp/a.txt', '/tmp/b.txt'], expectStatus: 200 });
    assert.match(script, /local files = \{ "\/tmp\/a.txt", "\/tmp\/b.txt" \}/);
    assert.match(script, /thread:set\("proof_file", files\[#threads\]\)/);
    assert.match(script, /if following == nil then return "" end/);
    assert.match(script, /stopped_us = now_us\(\)\n {4}wrk\.thread:stop\(\)/);
    assert.match(script, /if status ~= 200 then unexpected = unexpected \+ 1 end/);
  });

  // CI installs wrk (.ci/run): there, a missing one fails (chooseLoadGenerator throws) rather than skips.
  const hasWrk = spawnSync('wrk', ['--version']).error === undefined;
  test('sends every proof at most once and reports the rate over the time the load lasted', {
    skip: !hasWrk && process.env.CI !== 'true' && 'wrk is not installed (apt-get install wrk)',
  }, async () => {
    const seen = new Map<string, number>();
    let replays = 0;
    const server = createServer((request, response) => {
      const proof = String(request.headers.dpop);
      seen.set(proof, (seen.get(proof) ?? 0) + 1);
      if (seen.get(proof)! > 1) replays++;
      const ok = request.headers.authorization === 'DPoP bound' && request.url === `/orders/${proof.split('-')[1]}`;
      response.writeHead(ok ? 200 : 400).end();
    });
    await new Promise<void>((resolve) => server.listen(PORT, '127.0.0.1', resolve));
    // Proofs the server can match to their line's path: `proof-<id>-<line>`.
    const dir = mkdtempSync(path.join(tmpdir(), 'bench-dpop-test-'));
    const file = path.join(dir, 'proofs-1.txt');
    // 1,000 proofs in 4 s: 250 requests a second suffice to send them all, even on a loaded machine.
    writeFileSync(file, Array.from({ length: 1_000 }, (_, i) => `/orders/${i % 7} proof-${i % 7}-${i}\n`).join(''));
    try {
      const wrk = await chooseLoadGenerator(() => {});
      const result = await wrk.run({
        url: `http://127.0.0.1:${PORT}`,
        requests: { method: 'GET', proofFiles: [file], expectStatus: 200 },
        headers: { authorization: 'DPoP bound' },
        connections: 8,
        seconds: 4,
      });
      assert.equal(replays, 0);
      assert.equal(result.proofsRanOut, true);
      assert.equal(result.errors, 0);
      assert.equal(result.unexpected, 0);
      // Every line at most once (wrk's check of the script before the run reads the first one and
      // sends nothing); all answered but those in flight when the thread stopped.
      assert.ok(seen.size >= 999 && seen.size <= 1_000, `${seen.size} proofs`);
      assert.ok(result.requests >= seen.size - 8 && result.requests <= seen.size, `${result.requests} responses`);
      // Over the time the load lasted, not wrk's 4 s.
      assert.ok(result.requestsPerSecond > result.requests / 4, `${result.requestsPerSecond} req/s`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
      server.close();
    }
  });
});

describe("the page's section on (ap)", () => {
  const run = (requestsPerSecond: number, serverCpuUs: number, postgresCpuUs: number, proofsRanOut?: true): Measurement => ({
    requests: requestsPerSecond * 10,
    requestsPerSecond,
    p50Ms: 32_000 / requestsPerSecond,
    p99Ms: 128_000 / requestsPerSecond,
    errors: 0,
    unexpected: 0,
    serverCpuUs,
    postgresCpuUs,
    ...(proofsRanOut ? { proofsRanOut } : {}),
  });
  const info = {
    date: '2026-12-02T10:00:00.000Z',
    command: 'BENCH_SCENARIOS=ap npm run bench',
    orders: 1_000_000,
    connections: 32,
    rounds: 2,
    seconds: 10,
    warmupSeconds: 5,
    interference: { others: 0.01, steal: 0 },
  } as RunInfo;

  test('bearer and DPoP side by side with their ratio, what DPoP adds per request, and each round', () => {
    const section = renderDpopSection({
      info,
      result: {
        scenario: { key: 'ap', title: '(a) with DPoP', labels: ['DPoP', 'bearer'], orderpayRequest: '', baselineRequest: '' },
        orderpay: aggregate([run(8_000, 150, 40), run(8_000, 150, 40, true)]),
        baseline: aggregate([run(24_000, 35, 6), run(24_000, 35, 6)]),
      },
    });
    assert.match(section, /^## What DPoP costs$/m);
    assert.match(section, /\| bearer token \| 24,000 \| 1\.33 \| 5\.33 \| 35 \| 6 \|/);
    assert.match(section, /\| DPoP-bound token \+ a proof \| 8,000 \| 4\.00 \| 16\.00 \| 150 \| 40 \|/);
    assert.match(section, /\| DPoP ÷ bearer \| 0\.33× \| 3\.00× \| 3\.00× \| 4\.29× \| 6\.67× \|/);
    assert.match(section, /DPoP adds 115 µs of\norderpay's Node CPU and 34 µs of PostgreSQL's/);
    assert.match(section, /In 1 of the 2 rounds the proofs ran out/);
    assert.match(section, /`BENCH_SCENARIOS=ap npm run bench` on 2026-12-02T10:00:00\.000Z/);
    assert.match(section, /\| 2 \| 8,000 \| 4\.00 \| 16\.00 \| 24,000 \| 1\.33 \| 5\.33 \| 0\.33× \|/);
  });

  test('without figures it says which command measures them', () => {
    assert.match(renderDpopSection(undefined), /Not measured yet: `BENCH_SCENARIOS=ap npm run bench` \(1M orders\)/);
  });
});
