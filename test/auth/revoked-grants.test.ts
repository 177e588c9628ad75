// Revoked grants over the real database (PGlite by default, PostgreSQL with TEST_DATABASE_URL):
// what the adapter records (src/auth/revoked-grants.store.ts), and the resource server's copy
// (src/http/grant-revocations.ts): read at most once per interval by an injected clock, one read
// shared by concurrent checks, late-committed rows not missed, expired ones forgotten.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { createOidcAdapter, digestOidcIdentifier } from '../../src/auth/oidc.adapter.ts';
import {
  listRevokedGrantsSince,
  purgeExpiredRevokedGrants,
  recordRevokedGrant,
  REVOKED_GRANT_KEPT_SECONDS,
  type RevokedGrant,
} from '../../src/auth/revoked-grants.store.ts';
import { TOKEN_TTL } from '../../src/auth/token-lifetimes.ts';
import type { Db } from '../../src/db/db.ts';
import { createGrantRevocations } from '../../src/http/grant-revocations.ts';
import { createTestDatabase, serverUrl, type TestDatabase } from '../helpers/db.ts';

const newDigest = (): string => digestOidcIdentifier(randomBytes(32).toString('base64url'));

describe(`revoked grants (${serverUrl ? 'PostgreSQL' : 'PGlite'})`, () => {
  let database: TestDatabase;
  let db: Db;

  before(async () => {
    database = await createTestDatabase();
    db = database.db;
  });
  after(() => database.drop());

  /** A revocation row written directly, `ageSeconds` in the past, kept `keptSeconds` from then. */
  async function insertRevocation(grantDigest: string, ageSeconds: number, keptSeconds = REVOKED_GRANT_KEPT_SECONDS): Promise<void> {
    await db.query(
      `INSERT INTO revoked_grants (grant_digest, revoked_at, expires_at)
       VALUES ($1, now() - make_interval(secs => $2), now() - make_interval(secs => $2) + make_interval(secs => $3))`,
      [grantDigest, ageSeconds, keptSeconds],
    );
  }

  async function storedRevocation(grantDigest: string): Promise<{ revoked_at: string; kept: number } | undefined> {
    const { rows } = await db.query<{ revoked_at: string; kept: number }>(
      'SELECT revoked_at, extract(epoch FROM expires_at - revoked_at)::int AS kept FROM revoked_grants WHERE grant_digest = $1',
      [grantDigest],
    );
    return rows[0];
  }

  describe('what the authorization server records', () => {
    test('a revocation is kept for an access token lifetime plus 5 minutes of clock skew', () => {
      assert.equal(REVOKED_GRANT_KEPT_SECONDS, TOKEN_TTL.AccessToken + 300);
    });

    test('revokeByGrantId records the digest of the grant id, once however many models ask at once', async () => {
      const Adapter = createOidcAdapter(db);
      const grantId = randomBytes(32).toString('base64url');
      // lib/helpers/revoke.js: AccessToken, RefreshToken and AuthorizationCode, concurrently.
      await Promise.all(['AccessToken', 'RefreshToken', 'AuthorizationCode'].map((model) => new Adapter(model).revokeByGrantId(grantId)));
      const { rows } = await db.query<{ grant_digest: string }>('SELECT grant_digest FROM revoked_grants WHERE grant_digest IN ($1, $2)', [
        digestOidcIdentifier(grantId),
        grantId,
      ]);
      assert.deepEqual(rows, [{ grant_digest: digestOidcIdentifier(grantId) }]);
      assert.equal((await storedRevocation(digestOidcIdentifier(grantId)))?.kept, REVOKED_GRANT_KEPT_SECONDS);
    });

    test('recording a grant again keeps its first revoked_at', async () => {
      const digest = newDigest();
      await insertRevocation(digest, 60);
      const first = await storedRevocation(digest);
      await recordRevokedGrant(db, digest);
      assert.deepEqual(await storedRevocation(digest), first);
    });

    test('the purge deletes expired revocations only', async () => {
      const expired = newDigest();
      const live = newDigest();
      await insertRevocation(expired, REVOKED_GRANT_KEPT_SECONDS + 1);
      await insertRevocation(live, REVOKED_GRANT_KEPT_SECONDS - 60);
      assert.ok((await purgeExpiredRevokedGrants(db)) >= 1);
      assert.equal(await storedRevocation(expired), undefined);
      assert.ok(await storedRevocation(live));
    });
  });

  describe('listRevokedGrantsSince', () => {
    test('everything live without a bound; with one, only what was revoked after it; never the expired', async () => {
      const old = newDigest();
      const recent = newDigest();
      const expired = newDigest();
      await insertRevocation(old, 120);
      await insertRevocation(recent, 1);
      await insertRevocation(expired, 120, 60);
      const digests = (rows: RevokedGrant[]) => new Set(rows.map((row) => row.grantDigest));

      const all = digests(await listRevokedGrantsSince(db, undefined));
      assert.ok(all.has(old) && all.has(recent) && !all.has(expired));
      const since = new Date(Date.now() - 60_000).toISOString();
      const lately = digests(await listRevokedGrantsSince(db, since));
      assert.ok(!lately.has(old) && lately.has(recent) && !lately.has(expired));
    });
  });

  describe("the resource server's copy (createGrantRevocations)", () => {
    /** A copy over the real table with a hand-driven monotonic clock, counting its reads. */
    function createCopy(intervalMs: number) {
      const clock = { elapsedMs: 0 };
      const reads: Array<string | undefined> = [];
      const revocations = createGrantRevocations({
        loadRevokedSince(since) {
          reads.push(since);
          return listRevokedGrantsSince(db, since);
        },
        intervalMs,
        elapsed: () => clock.elapsedMs,
      });
      return { revocations, clock, reads };
    }

    test('reads at most once per interval; a revocation shows once the interval has passed', async () => {
      const { revocations, clock, reads } = createCopy(1000);
      const digest = newDigest();
      assert.equal(await revocations.isRevoked(digest), false);
      await recordRevokedGrant(db, digest);
      clock.elapsedMs = 999;
      assert.equal(await revocations.isRevoked(digest), false, 'still within the interval: no read');
      assert.equal(reads.length, 1);
      clock.elapsedMs = 1000;
      assert.equal(await revocations.isRevoked(digest), true);
      assert.equal(reads.length, 2);
    });

    test('isRevokedNow answers as isRevoked from a fresh copy, and nothing before a read or once stale; it never reads', async () => {
      const { revocations, clock, reads } = createCopy(1000);
      const digest = newDigest();
      assert.equal(revocations.isRevokedNow(digest), undefined, 'nothing read yet');
      await recordRevokedGrant(db, digest);
      assert.equal(await revocations.isRevoked(digest), true);
      assert.equal(revocations.isRevokedNow(digest), true);
      assert.equal(revocations.isRevokedNow(newDigest()), false);
      clock.elapsedMs = 1000;
      assert.equal(revocations.isRevokedNow(digest), undefined, 'stale: isRevoked must read first');
      assert.equal(reads.length, 1);
    });

    test('checks that find the copy stale together share one read', async () => {
      const { revocations, reads } = createCopy(1000);
      const digest = newDigest();
      await recordRevokedGrant(db, digest);
      const answers = await Promise.all(Array.from({ length: 20 }, () => revocations.isRevoked(digest)));
      assert.deepEqual(new Set(answers), new Set([true]));
      assert.equal(reads.length, 1);
    });

    test('with interval 0 every check reads, each from just before the newest revocation seen', async () => {
      const { revocations, reads } = createCopy(0);
      const digest = newDigest();
      await recordRevokedGrant(db, digest);
      assert.equal(await revocations.isRevoked(digest), true);
      assert.equal(await revocations.isRevoked(newDigest()), false);
      assert.equal(reads.length, 2);
      assert.equal(reads[0], undefined);
      // The second read starts 30 s before the newest revoked_at seen, never after it.
      const newest = Date.parse((await storedRevocation(digest))!.revoked_at);
      assert.ok(Date.parse(reads[1]!) <= newest - 30_000, `read from ${reads[1]}`);
    });

    test('a row committed late with an older revoked_at than one already read is still picked up', async () => {
      const { revocations } = createCopy(0);
      const newer = newDigest();
      const committedLate = newDigest();
      await recordRevokedGrant(db, newer);
      assert.equal(await revocations.isRevoked(newer), true);
      // As if its INSERT had begun 5 s earlier and only committed now.
      await insertRevocation(committedLate, 5);
      assert.equal(await revocations.isRevoked(committedLate), true);
    });

    test('a failed read fails the check (no stale answer), and the next check reads again', async () => {
      let fail = true;
      const digest = newDigest();
      await recordRevokedGrant(db, digest);
      const revocations = createGrantRevocations({
        loadRevokedSince: (since) => (fail ? Promise.reject(new Error('database unavailable')) : listRevokedGrantsSince(db, since)),
        intervalMs: 1000,
      });
      await assert.rejects(revocations.isRevoked(digest), /database unavailable/);
      fail = false;
      assert.equal(await revocations.isRevoked(digest), true);
    });
  });
});
