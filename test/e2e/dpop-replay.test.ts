// RFC 9449 §11.1: a DPoP proof is accepted once, by whichever process sees it first. Two processes of
// one deployment share the jti they accepted in PostgreSQL, or in Redis when REDIS_URL is set; a
// store that cannot be reached refuses every proof (fail closed) and leaves Bearer tokens alone. At
// the token endpoint, oidc-provider's own replay detection holds on our adapter, concurrent requests
// included.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { Redis } from 'ioredis';
import { calculateJwkThumbprint, exportJWK } from 'jose';
import * as client from 'openid-client';
import { createConfidentialClient } from '../../src/auth/clients.store.ts';
import { recordDpopProof } from '../../src/db/dpop-proofs.ts';
import { createDpopReplayStore } from '../../src/http/dpop-replay-stores.ts';
import { backgroundJobs } from '../../src/jobs/jobs.ts';
import { makeProof, signAccessToken } from '../helpers/dpop.ts';
import { discoverClient, startAuthServer, startSecondInstance, type AuthServer } from '../helpers/oauth.ts';
import { dropRedisKeys, TEST_REDIS_URL, UNREACHABLE_REDIS_URL, uniqueRedisPrefix } from '../helpers/redis.ts';

interface Deployment {
  first: AuthServer;
  second: FastifyInstance;
  service: client.Configuration;
  secret: string;
  keyPair: client.CryptoKeyPair;
  token: string;
}

/** A deployment of two processes over one database, a service client and a DPoP-bound token for it. */
async function startDeployment(port: number, env: Record<string, string> = {}): Promise<Deployment> {
  const first = await startAuthServer(port, env);
  const second = await startSecondInstance(first, port + 1);
  const registered = await createConfidentialClient(first.db, { name: 'Two-process service', scopes: ['orders:read'] });
  const service = await discoverClient(
    first,
    registered.clientId,
    client.ClientSecretBasic(registered.clientSecret),
    registered.clientSecret,
  );
  const keyPair = await client.randomDPoPKeyPair('ES256');
  const { access_token: token } = await client.clientCredentialsGrant(
    service,
    { scope: 'orders:read' },
    { DPoP: client.getDPoPHandle(service, keyPair) },
  );
  return { first, second, service, secret: registered.clientSecret, keyPair, token };
}

async function stopDeployment(deployment: Deployment | undefined): Promise<void> {
  await deployment?.second.close();
  await deployment?.first.close();
}

/** GET /v2/orders at the process on port, with a proof made for PUBLIC_URL (the first process's), as behind a load balancer. */
function listOrdersAt(deployment: Deployment, port: number, proof: string): Promise<Response> {
  return fetch(`http://127.0.0.1:${port}/v2/orders`, { headers: { authorization: `DPoP ${deployment.token}`, dpop: proof } });
}

/** The same proof at one process, then at the other: accepted once. */
async function assertReplayRefusedAcross(deployment: Deployment, port: number): Promise<void> {
  const url = `${deployment.first.baseUrl}/v2/orders`;
  const proof = await makeProof(deployment.keyPair, { method: 'GET', url, accessToken: deployment.token });
  assert.equal((await listOrdersAt(deployment, port, proof)).status, 200);
  const replayed = await listOrdersAt(deployment, port + 1, proof);
  assert.equal(replayed.status, 401);
  assert.match(
    String(replayed.headers.get('www-authenticate')),
    /error="invalid_dpop_proof", error_description="the DPoP proof was used before \(jti\)"/,
  );
  assert.equal(((await replayed.json()) as { code: string }).code, 'AUTH_DPOP_PROOF_INVALID');
  // And the other way: a fresh proof at the second, replayed at the first.
  const fresh = await makeProof(deployment.keyPair, { method: 'GET', url, accessToken: deployment.token });
  assert.equal((await listOrdersAt(deployment, port + 1, fresh)).status, 200);
  assert.equal((await listOrdersAt(deployment, port, fresh)).status, 401);
}

describe('RFC 9449 §11.1: a jti used at one process is refused at the other (PostgreSQL)', () => {
  const PORT = 29_902;
  let deployment: Deployment;
  before(async () => {
    deployment = await startDeployment(PORT);
  });
  after(() => stopDeployment(deployment));

  test('the proof is refused at the second process, and the other way round', async () => {
    await assertReplayRefusedAcross(deployment, PORT);
    const { rows } = await deployment.first.db.query<{ count: number }>('SELECT count(*)::int AS count FROM dpop_proofs');
    assert.ok(rows[0]!.count >= 2, 'the jti are kept in dpop_proofs');
  });

  test('the purge job drops the proofs no process could accept any more, and keeps the others', async () => {
    const db = deployment.first.db;
    const now = new Date();
    await recordDpopProof(db, 'purge-jkt', 'expired', new Date(now.getTime() - 1000), now);
    await recordDpopProof(db, 'purge-jkt', 'live', new Date(now.getTime() + 60_000), now);
    const job = backgroundJobs(db, deployment.first.config, {}).find((j) => j.name === 'purge-dpop-proofs');
    assert.ok(job, 'purge-dpop-proofs is scheduled');
    await job.run();
    const { rows } = await db.query<{ jti: string }>(`SELECT jti FROM dpop_proofs WHERE jkt = 'purge-jkt'`);
    assert.deepEqual(
      rows.map((row) => row.jti),
      ['live'],
    );
    // An expired row does not stand in the way of the same jti (it could not be accepted any more anyway).
    assert.equal(await recordDpopProof(db, 'purge-jkt', 'live', new Date(now.getTime() + 60_000), now), false);
  });

  test('the proofs of one turn go in one statement: each answered for itself, a repeat within the turn a replay', async () => {
    const db = deployment.first.db;
    const store = await createDpopReplayStore(db, { redisUrl: undefined, redisKeyPrefix: '', now: () => new Date(), log: console });
    const iat = Math.floor(Date.now() / 1000);
    assert.equal(await store.recordFirstUse('batch-jkt', 'seen-before', iat), true);
    // Asked in one turn: new ones, one seen in an earlier turn, the same proof twice, the same jti under another key.
    const answers = await Promise.all([
      store.recordFirstUse('batch-jkt', 'a', iat),
      store.recordFirstUse('batch-jkt', 'seen-before', iat),
      store.recordFirstUse('batch-jkt', 'twice', iat),
      store.recordFirstUse('batch-jkt', 'twice', iat),
      store.recordFirstUse('other-jkt', 'a', iat),
    ]);
    assert.deepEqual(answers, [true, false, true, false, true]);
    const { rows } = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM dpop_proofs WHERE jkt IN ('batch-jkt', 'other-jkt')`);
    assert.equal(rows[0]!.n, 4);
  });

  test('at the token endpoint, oidc-provider refuses a proof used before, and one of two sent at once', async () => {
    const tokenUrl = `${deployment.first.issuer}/token`;
    const clientId = deployment.service.clientMetadata().client_id;
    const tokenRequest = (proof: string) =>
      fetch(tokenUrl, {
        method: 'POST',
        headers: {
          authorization: `Basic ${Buffer.from(`${clientId}:${deployment.secret}`).toString('base64')}`,
          'content-type': 'application/x-www-form-urlencoded',
          dpop: proof,
        },
        body: 'grant_type=client_credentials&scope=orders%3Aread',
      });
    const proof = await makeProof(deployment.keyPair, { method: 'POST', url: tokenUrl });
    assert.equal((await tokenRequest(proof)).status, 200);
    const replayed = await tokenRequest(proof);
    assert.equal(replayed.status, 400);
    assert.deepEqual(await replayed.json(), { error: 'invalid_grant', error_description: 'grant request is invalid' });
    const together = await makeProof(deployment.keyPair, { method: 'POST', url: tokenUrl });
    const statuses = (await Promise.all([tokenRequest(together), tokenRequest(together), tokenRequest(together)])).map((r) => r.status);
    assert.deepEqual(statuses.sort(), [200, 400, 400]);
  });
});

describe('RFC 9449 §11.1: a jti used at one process is refused at the other (Redis)', () => {
  const PORT = 29_904;
  const prefix = uniqueRedisPrefix();
  let deployment: Deployment;
  before(async () => {
    deployment = await startDeployment(PORT, { REDIS_URL: TEST_REDIS_URL, ORDERPAY_RATE_LIMIT_REDIS_PREFIX: prefix });
  });
  after(async () => {
    await stopDeployment(deployment);
    await dropRedisKeys(prefix);
  });

  test('the proof is refused at the second process; the jti are in Redis under the prefix, with an expiry', async () => {
    await assertReplayRefusedAcross(deployment, PORT);
    const redis = new Redis(TEST_REDIS_URL);
    try {
      const keys = await redis.keys(`${prefix}dpop:*`);
      assert.equal(keys.length, 2);
      for (const key of keys) {
        const ttl = await redis.pttl(key);
        assert.ok(ttl > 300_000 && ttl <= 360_000, `${key} expires in ${ttl} ms`);
      }
    } finally {
      redis.disconnect();
    }
    const { rows } = await deployment.first.db.query<{ count: number }>('SELECT count(*)::int AS count FROM dpop_proofs');
    assert.equal(rows[0]!.count, 0, 'nothing in the database');
  });
});

describe('a store that cannot be reached: proofs are refused (fail closed), Bearer tokens are not', () => {
  const PORT = 29_906;
  let server: AuthServer | undefined;
  before(async () => {
    server = await startAuthServer(PORT, { REDIS_URL: UNREACHABLE_REDIS_URL, ORDERPAY_RATE_LIMIT_REDIS_PREFIX: uniqueRedisPrefix() });
  });
  after(() => server?.close());

  test('a valid proof → 503 AUTH_DPOP_UNAVAILABLE with Retry-After; a bearer token → 200', async () => {
    // Signed with the issuer's key: the token endpoint's own limits cannot be counted either.
    const keyPair = await client.randomDPoPKeyPair('ES256');
    const jkt = await calculateJwkThumbprint(await exportJWK(keyPair.publicKey));
    const url = `${server!.baseUrl}/v2/orders`;
    const token = await signAccessToken(server!, 'unreachable-store-service', { cnf: { jkt } });
    const proof = await makeProof(keyPair, { method: 'GET', url, accessToken: token });
    const refused = await fetch(url, { headers: { authorization: `DPoP ${token}`, dpop: proof } });
    assert.equal(refused.status, 503);
    assert.equal(refused.headers.get('retry-after'), '1');
    const problem = (await refused.json()) as { code: string; detail: string };
    assert.equal(problem.code, 'AUTH_DPOP_UNAVAILABLE');
    assert.equal(problem.detail, 'DPoP proofs cannot be checked just now; nothing was done. Retry shortly with a new proof.');
    const bearer = await signAccessToken(server!, 'unreachable-store-service', {});
    assert.equal((await fetch(url, { headers: { authorization: `Bearer ${bearer}` } })).status, 200);
  });
});
