// The oidc-provider storage adapter over the real database (PGlite by default, PostgreSQL with
// TEST_DATABASE_URL): the adapter contract of oidc-provider (example/my_adapter.js), hashed
// identifiers, expiry by the injected clock, single-use consumption, grant revocation, purge.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { AdapterConstructor, AdapterPayload } from 'oidc-provider';
import { createOidcAdapter, digestOidcIdentifier, purgeExpiredOidcPayloads } from '../../src/auth/oidc.adapter.ts';
import type { Db } from '../../src/db/db.ts';
import { createTestDatabase, serverUrl, type TestDatabase } from '../helpers/db.ts';

interface StoredRow {
  id: string;
  payload: AdapterPayload;
  grant_id: string | null;
  uid: string | null;
  user_code: string | null;
  expires_at: string | null;
  consumed_at: string | null;
}

/** An opaque identifier as oidc-provider makes them (nanoid, 256 bits). */
const newId = (): string => randomBytes(32).toString('base64url');
const epochSeconds = (at: Date): number => Math.floor(at.getTime() / 1000);
const seconds = (at: Date, n: number): Date => new Date(at.getTime() + n * 1000);

describe(`oidc-provider adapter over the Db (${serverUrl ? 'PostgreSQL' : 'PGlite'})`, () => {
  let database: TestDatabase;
  let db: Db;
  let clock = new Date();
  let Adapter: AdapterConstructor;

  before(async () => {
    database = await createTestDatabase();
    db = database.db;
    Adapter = createOidcAdapter(db, () => clock);
  });
  after(() => database.drop());

  /** The row as the table holds it, looked up by the digest of the real identifier. */
  async function storedRow(model: string, id: string): Promise<StoredRow | undefined> {
    const { rows } = await db.query<StoredRow>(
      'SELECT id, payload, grant_id, uid, user_code, expires_at, consumed_at FROM oidc_payloads WHERE model = $1 AND id = $2',
      [model, digestOidcIdentifier(id)],
    );
    return rows[0];
  }

  /** A payload shaped like oidc-provider's for a grant-bound token. */
  function tokenPayload(kind: string, jti: string, grantId: string): AdapterPayload {
    const iat = epochSeconds(clock);
    return { iat, exp: iat + 60, jti, kind, grantId, clientId: 'client-1', accountId: '42', scope: 'openid orders:read' };
  }

  describe('upsert and find (adapter contract): the payload round-trips', () => {
    test('find returns what upsert stored, with jti, and an upsert of the same id replaces it', async () => {
      const codes = new Adapter('AuthorizationCode');
      const jti = newId();
      const payload = {
        ...tokenPayload('AuthorizationCode', jti, newId()),
        codeChallenge: 'abc',
        codeChallengeMethod: 'S256',
        redirectUri: 'http://127.0.0.1:8080/cb',
      };
      await codes.upsert(jti, payload, 60);
      assert.deepEqual(await codes.find(jti), payload);

      const replaced = { ...payload, scope: 'openid' };
      await codes.upsert(jti, replaced, 30);
      assert.deepEqual(await codes.find(jti), replaced);
      assert.equal(Date.parse((await storedRow('AuthorizationCode', jti))!.expires_at!), seconds(clock, 30).getTime());
    });

    test('ids are per model: the same id under another model is another row, and an unknown id is undefined', async () => {
      const jti = newId();
      await new Adapter('AccessToken').upsert(jti, tokenPayload('AccessToken', jti, newId()), 60);
      assert.equal(await new Adapter('RefreshToken').find(jti), undefined);
      assert.equal(await new Adapter('AccessToken').find(newId()), undefined);
    });
  });

  describe('RFC 6819 §5.1.4.1.3 no cleartext credentials: id, uid and user_code stored as SHA-256 digests', () => {
    test('a token row holds the digest of its id and the id nowhere, yet find by the real id works', async () => {
      const jti = newId();
      const grantId = newId();
      await new Adapter('RefreshToken').upsert(jti, tokenPayload('RefreshToken', jti, grantId), 3600);

      const row = (await storedRow('RefreshToken', jti))!;
      assert.equal(row.id, digestOidcIdentifier(jti));
      assert.match(row.id, /^[A-Za-z0-9_-]{43}$/);
      assert.notEqual(row.id, jti);
      assert.equal(row.payload.jti, undefined);
      assert.equal(row.grant_id, grantId);
      const { rows } = await db.query('SELECT 1 FROM oidc_payloads WHERE id = $1 OR payload::text LIKE $2', [jti, `%${jti}%`]);
      assert.deepEqual(rows, []);
      assert.equal((await new Adapter('RefreshToken').find(jti))?.jti, jti);
    });

    test('a Session keeps its id (the cookie value) nowhere, and its uid column is a digest', async () => {
      const jti = newId();
      const uid = newId();
      await new Adapter('Session').upsert(
        jti,
        { iat: epochSeconds(clock), exp: epochSeconds(clock) + 600, jti, uid, kind: 'Session', accountId: '42' },
        600,
      );
      const row = (await storedRow('Session', jti))!;
      assert.equal(row.uid, digestOidcIdentifier(uid));
      const { rows } = await db.query('SELECT 1 FROM oidc_payloads WHERE id = $1 OR uid = $1 OR payload::text LIKE $2', [jti, `%${jti}%`]);
      assert.deepEqual(rows, []);
    });

    test('an Interaction does not keep the session cookie value it was started from', async () => {
      const uid = newId();
      const sessionId = newId();
      const session = { accountId: '42', uid: newId(), cookie: sessionId };
      await new Adapter('Interaction').upsert(
        uid,
        { iat: epochSeconds(clock), exp: epochSeconds(clock) + 600, jti: uid, kind: 'Interaction', session },
        600,
      );
      const row = (await storedRow('Interaction', uid))!;
      assert.deepEqual(row.payload.session, { accountId: '42', uid: session.uid });
      assert.equal(JSON.stringify(row.payload).includes(sessionId), false);
      assert.deepEqual((await new Adapter('Interaction').find(uid))?.session, { accountId: '42', uid: session.uid });
    });

    test('a DeviceCode stores its user_code as a digest', async () => {
      const jti = newId();
      await new Adapter('DeviceCode').upsert(jti, { ...tokenPayload('DeviceCode', jti, newId()), userCode: 'BCDFGHJK' }, 600);
      assert.equal((await storedRow('DeviceCode', jti))?.user_code, digestOidcIdentifier('BCDFGHJK'));
    });
  });

  describe('expiry by the injected clock: find* ignore rows past expires_at, purged or not', () => {
    test('a row is found until now + expiresIn and not from then on', async () => {
      const start = clock;
      const codes = new Adapter('AuthorizationCode');
      const jti = newId();
      await codes.upsert(jti, tokenPayload('AuthorizationCode', jti, newId()), 60);
      try {
        clock = seconds(start, 59);
        assert.equal((await codes.find(jti))?.jti, jti);
        clock = seconds(start, 60);
        assert.equal(await codes.find(jti), undefined);
        assert.ok(await storedRow('AuthorizationCode', jti), 'the row itself is still there, only hidden');
      } finally {
        clock = start;
      }
    });

    test('without expiresIn a row has no expiry', async () => {
      const start = clock;
      const grants = new Adapter('Grant');
      const jti = newId();
      await grants.upsert(jti, { iat: epochSeconds(clock), jti, kind: 'Grant', accountId: '42', clientId: 'client-1' });
      assert.equal((await storedRow('Grant', jti))?.expires_at, null);
      try {
        clock = seconds(start, 10 * 365 * 86400);
        assert.equal((await grants.find(jti))?.jti, jti);
      } finally {
        clock = start;
      }
    });

    test('findByUid and findByUserCode honour expiry too', async () => {
      const start = clock;
      const uid = newId();
      const sessionId = newId();
      const deviceCode = newId();
      await new Adapter('Session').upsert(sessionId, { iat: epochSeconds(clock), jti: sessionId, uid, kind: 'Session' }, 60);
      await new Adapter('DeviceCode').upsert(deviceCode, { ...tokenPayload('DeviceCode', deviceCode, newId()), userCode: 'XWZRTPQM' }, 60);
      try {
        clock = seconds(start, 61);
        assert.equal(await new Adapter('Session').findByUid(uid), undefined);
        assert.equal(await new Adapter('DeviceCode').findByUserCode('XWZRTPQM'), undefined);
      } finally {
        clock = start;
      }
    });
  });

  describe('findByUid and findByUserCode: lookups by the hashed secondary identifiers', () => {
    test('a Session is found by its uid (without its id, which is not stored); another uid finds nothing', async () => {
      const sessionId = newId();
      const uid = newId();
      const payload = {
        iat: epochSeconds(clock),
        exp: epochSeconds(clock) + 600,
        jti: sessionId,
        uid,
        kind: 'Session',
        accountId: '42',
        authorizations: { 'client-1': { sid: newId(), grantId: newId() } },
      };
      await new Adapter('Session').upsert(sessionId, payload, 600);
      const { jti, ...withoutId } = payload;
      assert.deepEqual(await new Adapter('Session').findByUid(uid), withoutId);
      assert.equal(await new Adapter('Session').findByUid(newId()), undefined);
      assert.equal(await new Adapter('Interaction').findByUid(uid), undefined, 'the lookup is scoped to the model');
    });

    test('a DeviceCode is found by its user code, with its id (oidc-provider saves it again under that id)', async () => {
      const jti = newId();
      const payload = {
        ...tokenPayload('DeviceCode', jti, newId()),
        userCode: 'MNPQRSTV',
        params: { client_id: 'client-1', scope: 'openid' },
      };
      await new Adapter('DeviceCode').upsert(jti, payload, 600);
      assert.deepEqual(await new Adapter('DeviceCode').findByUserCode('MNPQRSTV'), payload);
      assert.equal(await new Adapter('DeviceCode').findByUserCode('MNPQRSTW'), undefined);
    });
  });

  describe('consume (RFC 6749 §4.1.2, single use): one atomic UPDATE, and find shows `consumed`', () => {
    test('consume sets consumed_at and payload.consumed (epoch seconds of the clock); find returns it', async () => {
      const codes = new Adapter('AuthorizationCode');
      const jti = newId();
      const payload = tokenPayload('AuthorizationCode', jti, newId());
      await codes.upsert(jti, payload, 60);
      assert.equal((await codes.find(jti))?.consumed, undefined);

      await codes.consume(jti);
      assert.deepEqual(await codes.find(jti), { ...payload, consumed: epochSeconds(clock) });
      const row = (await storedRow('AuthorizationCode', jti))!;
      assert.equal(Date.parse(row.consumed_at!), clock.getTime());
    });

    test('a second consume, or one of a row that is gone, is denied with invalid_grant', async () => {
      const tokens = new Adapter('RefreshToken');
      const jti = newId();
      await tokens.upsert(jti, tokenPayload('RefreshToken', jti, newId()), 600);
      await tokens.consume(jti);
      await assert.rejects(tokens.consume(jti), { name: 'InvalidGrant', message: 'invalid_grant' });
      await assert.rejects(tokens.consume(newId()), { name: 'InvalidGrant', message: 'invalid_grant' });
    });

    test('a later upsert of a stale copy does not make a consumed row unconsumed', async () => {
      const tokens = new Adapter('RefreshToken');
      const jti = newId();
      const payload = tokenPayload('RefreshToken', jti, newId());
      await tokens.upsert(jti, payload, 600);
      await tokens.consume(jti);
      const consumed = epochSeconds(clock);
      await tokens.upsert(jti, { ...payload, rotations: 1 }, 600);
      assert.deepEqual(await tokens.find(jti), { ...payload, rotations: 1, consumed });
      assert.notEqual((await storedRow('RefreshToken', jti))?.consumed_at, null);
    });

    test('10 concurrent consumes of one code: exactly one wins, every caller then sees the same consumed row', async () => {
      const start = clock;
      let ticks = 0;
      // Every reading of this clock is a second later, so each consume would write a different time.
      const ConcurrentAdapter = createOidcAdapter(db, () => seconds(start, ++ticks));
      const codes = new ConcurrentAdapter('AuthorizationCode');
      const jti = newId();
      await codes.upsert(jti, tokenPayload('AuthorizationCode', jti, newId()), 600);

      const outcomes = await Promise.all(
        Array.from({ length: 10 }, async () => {
          const consumed = await codes.consume(jti).then(
            () => 'won',
            (error: Error) => error.name,
          );
          return { consumed, seen: await codes.find(jti) };
        }),
      );

      assert.deepEqual(outcomes.map((o) => o.consumed).sort(), [
        'InvalidGrant',
        'InvalidGrant',
        'InvalidGrant',
        'InvalidGrant',
        'InvalidGrant',
        'InvalidGrant',
        'InvalidGrant',
        'InvalidGrant',
        'InvalidGrant',
        'won',
      ]);
      const row = (await storedRow('AuthorizationCode', jti))!;
      assert.equal(
        row.payload.consumed,
        epochSeconds(new Date(row.consumed_at!)),
        'consumed_at and payload.consumed come from the same write',
      );
      for (const { seen } of outcomes) assert.equal(seen?.consumed, row.payload.consumed);
    });
  });

  describe('destroy (adapter contract): the row is gone, and only that row', () => {
    test('find after destroy is undefined; the same id under another model stays', async () => {
      const jti = newId();
      const sessions = new Adapter('Session');
      await sessions.upsert(jti, { iat: epochSeconds(clock), jti, uid: newId(), kind: 'Session' }, 600);
      await new Adapter('Interaction').upsert(jti, { iat: epochSeconds(clock), jti, kind: 'Interaction' }, 600);

      await sessions.destroy(jti);
      assert.equal(await sessions.find(jti), undefined);
      assert.equal(await storedRow('Session', jti), undefined);
      assert.equal((await new Adapter('Interaction').find(jti))?.jti, jti);
      await sessions.destroy(newId());
    });
  });

  describe('revokeByGrantId (RFC 6749 §4.1.2 and §10.4, code reuse and refresh token reuse): every token of the grant, and only of it', () => {
    test('access, refresh, code and device rows of the grant go, whichever model is asked; other grants, the Grant and its Interaction stay', async () => {
      const grantId = newId();
      const otherGrantId = newId();
      const models = ['AccessToken', 'RefreshToken', 'AuthorizationCode', 'DeviceCode'];
      const revoked: Array<[string, string]> = [];
      const kept: Array<[string, string]> = [];
      for (const model of models) {
        const mine = newId();
        const other = newId();
        await new Adapter(model).upsert(mine, tokenPayload(model, mine, grantId), 600);
        await new Adapter(model).upsert(other, tokenPayload(model, other, otherGrantId), 600);
        revoked.push([model, mine]);
        kept.push([model, other]);
      }
      await new Adapter('Grant').upsert(
        grantId,
        { iat: epochSeconds(clock), jti: grantId, kind: 'Grant', accountId: '42', clientId: 'client-1' },
        600,
      );
      const interactionId = newId();
      await new Adapter('Interaction').upsert(
        interactionId,
        { iat: epochSeconds(clock), jti: interactionId, kind: 'Interaction', grantId },
        600,
      );
      kept.push(['Grant', grantId], ['Interaction', interactionId]);

      await new Adapter('RefreshToken').revokeByGrantId(grantId);

      for (const [model, id] of revoked) {
        assert.equal(await new Adapter(model).find(id), undefined, `${model} of the revoked grant`);
        assert.equal(await storedRow(model, id), undefined);
      }
      for (const [model, id] of kept) assert.equal((await new Adapter(model).find(id))?.jti, id, `${model} kept`);
    });
  });

  describe('Client (registered with `orderpay clients`): find reads oauth_clients, writes are refused', () => {
    test('find returns the metadata with the client_id column; an unknown client is undefined', async () => {
      const clientId = `client-${newId()}`;
      const metadata = {
        redirect_uris: ['http://127.0.0.1:8080/cb'],
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: 'none',
        scope: 'openid orders:read',
      };
      await db.query('INSERT INTO oauth_clients (client_id, client_name, metadata) VALUES ($1, $2, $3)', [
        clientId,
        'Test app',
        JSON.stringify(metadata),
      ]);

      const clients = new Adapter('Client');
      // A client registered before API versions were pinned has the column's default, 1.
      assert.deepEqual(await clients.find(clientId), { ...metadata, client_id: clientId, api_version: 1 });
      assert.equal(await clients.find(`client-${newId()}`), undefined);

      // The pinned version is the column's, whatever the metadata says (extraClientMetadata in provider.ts).
      await db.query('UPDATE oauth_clients SET api_version = 2, metadata = metadata || \'{"api_version": 7}\' WHERE client_id = $1', [
        clientId,
      ]);
      assert.equal((await clients.find(clientId))?.api_version, 2);
    });

    test('the pinned API version is a positive integer (CHECK)', async () => {
      for (const version of [0, -1]) {
        await assert.rejects(
          db.query('INSERT INTO oauth_clients (client_id, client_name, metadata, api_version) VALUES ($1, $2, $3, $4)', [
            `client-${newId()}`,
            'Bad version',
            '{}',
            version,
          ]),
          (error: { code?: string }) => error.code === '23514',
        );
      }
    });

    test('upsert and destroy of a Client throw a clear error', async () => {
      const clients = new Adapter('Client');
      await assert.rejects(
        clients.upsert('c', { client_id: 'c' }),
        /Client upsert is not supported; clients are registered with `orderpay clients`/,
      );
      await assert.rejects(clients.destroy('c'), /Client destroy is not supported/);
    });
  });

  describe('purgeExpiredOidcPayloads: deletes rows expired longer than the grace period, nothing else', () => {
    test('only rows expired more than an hour ago go, consumed or not; live, recently expired and unexpiring rows stay', async () => {
      const start = clock;
      // A clock decades back, so no row of another test is old enough to count.
      clock = new Date('2001-02-03T04:05:06Z');
      try {
        const codes = new Adapter('AuthorizationCode');
        const ids = { longExpired: newId(), longExpiredConsumed: newId(), recentlyExpired: newId(), live: newId(), liveConsumed: newId() };
        await codes.upsert(ids.longExpired, tokenPayload('AuthorizationCode', ids.longExpired, newId()), 60);
        await codes.upsert(ids.longExpiredConsumed, tokenPayload('AuthorizationCode', ids.longExpiredConsumed, newId()), 60);
        await codes.consume(ids.longExpiredConsumed);
        await codes.upsert(ids.recentlyExpired, tokenPayload('AuthorizationCode', ids.recentlyExpired, newId()), 3600);
        await codes.upsert(ids.live, tokenPayload('AuthorizationCode', ids.live, newId()), 7200);
        await codes.upsert(ids.liveConsumed, tokenPayload('AuthorizationCode', ids.liveConsumed, newId()), 7200);
        await codes.consume(ids.liveConsumed);
        const unexpiring = newId();
        await new Adapter('Grant').upsert(unexpiring, { iat: epochSeconds(clock), jti: unexpiring, kind: 'Grant' });

        const purgeAt = seconds(clock, 60 + 3600 + 1);
        assert.equal(await purgeExpiredOidcPayloads(db, { now: () => purgeAt }), 2);

        assert.equal(await storedRow('AuthorizationCode', ids.longExpired), undefined);
        assert.equal(await storedRow('AuthorizationCode', ids.longExpiredConsumed), undefined);
        for (const id of [ids.recentlyExpired, ids.live, ids.liveConsumed]) assert.ok(await storedRow('AuthorizationCode', id));
        assert.ok(await storedRow('Grant', unexpiring));
        assert.equal(await purgeExpiredOidcPayloads(db, { now: () => purgeAt }), 0, 'a second run finds nothing more');
      } finally {
        clock = start;
      }
    });
  });
});
