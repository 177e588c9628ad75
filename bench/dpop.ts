// Scenario (ap): what DPoP (RFC 9449) costs the API. (a)'s lookup on orderpay twice: with a token
// bound to an ES256 key (cnf.jkt) and a proof by that key made for each request, and with (a)'s
// bearer token. A proof is valid once and for five minutes, so the proofs are made just before each
// run, one per request, and written to a file per wrk thread that wrk reads through once
// (bench/load.ts): the load generator's cost per request is reading a line, not signing.
import { generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';
import { closeSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { calculateJwkThumbprint, type JWK } from 'jose';
import type { Db } from '../src/db/db.ts';
import { accessTokenHash, DPOP_PROOF_MAX_AGE_SECONDS } from '../src/http/dpop.ts';
import { WRK_THREADS, type ProofRequests, type RequestMix, type RequestsPerRun } from './load.ts';
import type { Target } from './processes.ts';
import type { Scenario } from './report.ts';

export interface DpopWorkload {
  kind: 'dpop';
  scenario: Scenario;
  /** (a)'s id paths: the bearer column draws one at random per request, the proofs one each. */
  paths: string[];
  /** The client's key and the token bound to it, made once the servers run (prepareDpop). */
  client?: DpopClient;
}

/** A client of the API holding an ES256 key, a token bound to it, and the URL its proofs name. */
interface DpopClient {
  key: DpopKey;
  token: string;
  /** orderpay's PUBLIC_URL: a proof's htu is it followed by the request's path (RFC 9449 §4.3 item 11). */
  publicUrl: string;
}

/** What prepareDpop needs of the run: orderpay's PUBLIC_URL and a token bound to a key. */
export interface DpopIssuer {
  publicUrl: string;
  /** A token for the bench's staff user, as (a)'s, with cnf.jkt (RFC 9449 §6.1). */
  issueToken(jkt: string): Promise<string>;
}

/** The scenario's key; its figures are kept apart from the rest (bench/results/dpop.json). */
export const DPOP_SCENARIO = 'ap';

export const isDpopWorkload = (workload: object): workload is DpopWorkload => (workload as { kind?: string }).kind === 'dpop';

export function dpopWorkload(paths: string[]): DpopWorkload {
  return {
    kind: 'dpop',
    scenario: {
      key: DPOP_SCENARIO,
      title: 'GET /orders/{id} with DPoP',
      labels: ['DPoP', 'bearer'],
      orderpayRequest: 'GET /orders/{id} + Authorization: DPoP <token bound to an ES256 key> + DPoP: a proof made for this request',
      baselineRequest: "(a)'s GET /orders/{id} + bearer token (the same user and scopes, unbound)",
    },
    paths,
  };
}

/** An ES256 key pair and what every proof by it repeats. */
export interface DpopKey {
  privateKey: KeyObject;
  /** The proofs' protected header, base64url: typ, alg and the public jwk (RFC 9449 §4.2). */
  header: string;
  /** RFC 7638 thumbprint of the public key: the bound token's cnf.jkt. */
  jkt: string;
}

const base64url = (json: object) => Buffer.from(JSON.stringify(json)).toString('base64url');

export async function createDpopKey(): Promise<DpopKey> {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const { kty, crv, x, y } = publicKey.export({ format: 'jwk' });
  const jwk: JWK = { kty, crv, x, y };
  return { privateKey, header: base64url({ typ: 'dpop+jwt', alg: 'ES256', jwk }), jkt: await calculateJwkThumbprint(jwk) };
}

/** RFC 9449 §4.2: a proof for one GET, as openid-client makes one (ES256; a random 32-byte jti). */
export function makeProof(key: DpopKey, claims: { htu: string; ath: string; iat: number }): string {
  const payload = base64url({ iat: claims.iat, jti: randomBytes(32).toString('base64url'), htm: 'GET', htu: claims.htu, ath: claims.ath });
  const input = `${key.header}.${payload}`;
  return `${input}.${sign('sha256', Buffer.from(input), { key: key.privateKey, dsaEncoding: 'ieee-p1363' }).toString('base64url')}`;
}

/** The proofs of a run before any of its own: more than orderpay has sustained per second with DPoP. */
const FIRST_RUN_RATE = 20_000;
/** Over the column's fastest run so far: a later run may be much faster than a short, cold warm-up. */
const RATE_MARGIN = 2;

/**
 * How many proofs a run of seconds gets: its column's fastest rate so far, with a margin. Too few
 * end the run early (a thread stops when its proofs are done), which leaves its figures valid.
 */
export function proofsFor(seconds: number, fastestRate: number | undefined): number {
  return Math.ceil((fastestRate === undefined ? FIRST_RUN_RATE : fastestRate * RATE_MARGIN) * seconds) + 100;
}

/** A run's proofs must all be younger than DPOP_PROOF_MAX_AGE_SECONDS when sent: the run, and a minute to make them. */
const MAX_RUN_SECONDS = DPOP_PROOF_MAX_AGE_SECONDS - 60;

/** How many of count lines each of threads files gets: contiguous slices, the first ones one longer. */
export function sliceSizes(count: number, threads: number): number[] {
  if (count < threads) throw new Error(`${count} proofs cannot give each of ${threads} wrk threads one`);
  return Array.from({ length: threads }, (_, i) => Math.floor(count / threads) + (i < count % threads ? 1 : 0));
}

/** Lines written per write. */
const CHUNK = 2_000;

/**
 * count requests, each `<path> <proof>` for a path drawn from paths, written to a file per wrk thread
 * in a new temporary directory; the proofs' iat is now.
 */
export async function writeProofFiles(
  client: DpopClient,
  paths: readonly string[],
  count: number,
  threads = WRK_THREADS,
): Promise<{ files: string[]; discard(): void }> {
  const dir = mkdtempSync(path.join(tmpdir(), 'orderpay-bench-dpop-'));
  const discard = () => rmSync(dir, { recursive: true, force: true });
  try {
    const ath = accessTokenHash(client.token);
    const iat = Math.floor(Date.now() / 1000);
    const files: string[] = [];
    for (const [thread, size] of sliceSizes(count, threads).entries()) {
      const file = path.join(dir, `proofs-${thread + 1}.txt`);
      const fd = openSync(file, 'w');
      try {
        for (let written = 0; written < size; written += CHUNK) {
          let chunk = '';
          for (let i = written; i < Math.min(size, written + CHUNK); i++) {
            const requestPath = paths[Math.floor(Math.random() * paths.length)]!;
            chunk += `${requestPath} ${makeProof(client.key, { htu: client.publicUrl + requestPath, ath, iat })}\n`;
          }
          writeSync(fd, chunk);
          // Signing is synchronous: let the bench's timers (memory sampling) run between chunks.
          await nextTurn();
        }
      } finally {
        closeSync(fd);
      }
      files.push(file);
    }
    return { files, discard };
  } catch (error) {
    discard();
    throw error;
  }
}

/** The DPoP column's requests of one run: fresh proofs for as many requests as it may make. */
function proofsPerRun(workload: DpopWorkload, client: DpopClient): RequestsPerRun {
  return async ({ seconds, fastestRate }) => {
    if (seconds > MAX_RUN_SECONDS)
      throw new Error(
        `(${workload.scenario.key}) runs of at most ${MAX_RUN_SECONDS} s: a DPoP proof is valid for ${DPOP_PROOF_MAX_AGE_SECONDS} s`,
      );
    const count = proofsFor(seconds, fastestRate);
    const started = performance.now();
    const { files, discard } = await writeProofFiles(client, workload.paths, count);
    const requests: ProofRequests = { method: 'GET', proofFiles: files, expectStatus: 200 };
    const took = (performance.now() - started) / 1000;
    return {
      requests,
      made: `${count.toLocaleString('en-US')} proofs made in ${took.toFixed(1)} s (${Math.round((took * 1e6) / count)} µs each)`,
      discard,
    };
  };
}

/** The two columns' targets and requests: DPoP (a bound token, a proof per request), then bearer. */
export function dpopColumns(workload: DpopWorkload, orderpay: Target): { target: Target; requests: RequestMix | RequestsPerRun }[] {
  const { client } = workload;
  if (!client) throw new Error(`(${workload.scenario.key}) needs its key and token: prepareDpop first`);
  return [
    { target: { ...orderpay, headers: { authorization: `DPoP ${client.token}` } }, requests: proofsPerRun(workload, client) },
    { target: orderpay, requests: { method: 'GET', paths: workload.paths, expectStatus: 200 } },
  ];
}

async function get(url: string, headers: Record<string, string>): Promise<{ status: number; body: string; challenge: string | null }> {
  const response = await fetch(url, { headers });
  return { status: response.status, body: await response.text(), challenge: response.headers.get('www-authenticate') };
}

/**
 * The workload with a new key and a token bound to it, once orderpay answers a proofed request as
 * it answers the bearer one, and refuses the same proof a second time.
 */
export async function prepareDpop(workload: DpopWorkload, orderpay: Target, issuer: DpopIssuer): Promise<DpopWorkload> {
  const key = await createDpopKey();
  const client: DpopClient = { key, token: await issuer.issueToken(key.jkt), publicUrl: issuer.publicUrl };
  const requestPath = workload.paths[0]!;
  const url = orderpay.server.url + requestPath;
  const proof = makeProof(key, {
    htu: client.publicUrl + requestPath,
    ath: accessTokenHash(client.token),
    iat: Math.floor(Date.now() / 1000),
  });
  const headers = { authorization: `DPoP ${client.token}`, dpop: proof };
  const [bearer, first, replay] = [await get(url, orderpay.headers), await get(url, headers), await get(url, headers)];
  const fail = (what: string) => new Error(`(${workload.scenario.key}) GET ${requestPath} ${what}`);
  if (bearer.status !== 200 || first.status !== 200)
    throw fail(`answered ${bearer.status} with the bearer token, ${first.status} with DPoP: ${first.body}`);
  if (first.body !== bearer.body) throw fail('answered otherwise with DPoP than with the bearer token');
  if (replay.status !== 401 || !replay.challenge?.includes('invalid_dpop_proof'))
    throw fail(`answered a replayed proof with ${replay.status}`);
  return { ...workload, client };
}

/** Every run with (ap) starts from an empty table of used proofs, so that each inserts into one of the same size. */
export async function resetDpopProofs(db: Db): Promise<void> {
  await db.query('TRUNCATE dpop_proofs');
}
