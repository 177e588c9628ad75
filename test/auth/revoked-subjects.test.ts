// Revoked users and clients over the real database (PGlite by default, PostgreSQL with
// TEST_DATABASE_URL): what operators' commands record (src/auth/revoked-subjects.store.ts) and the
// resource server's copy of it (src/http/subject-revocations.ts): every token refused while
// disabled, those issued before once enabled again, a re-read that sees an enable, rows dropped
// and purged once no token can need them.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, test } from 'node:test';
import { MAX_SIGNED_TOKEN_LIFETIME_SECONDS } from '../../src/auth/keys.store.ts';
import {
  findSubjectRevocations,
  listRevokedSubjectsSince,
  purgeExpiredRevokedSubjects,
  recordSubjectDeleted,
  recordSubjectDisabled,
  recordSubjectRestored,
  REVOKED_SUBJECT_KEPT_SECONDS,
} from '../../src/auth/revoked-subjects.store.ts';
import type { SubjectRevocation } from '../../src/core/subject-revocation.ts';
import { createSubjectRevocations } from '../../src/http/subject-revocations.ts';
import { setUpPerFile } from '../helpers/app.ts';
import { createTestDatabase, serverUrl } from '../helpers/db.ts';

const newSubject = (): string => `client:op_${randomUUID()}`;
const nowSeconds = () => Math.floor(Date.now() / 1000);

describe(`revoked subjects (${serverUrl ? 'PostgreSQL' : 'PGlite'})`, () => {
  const database = setUpPerFile(createTestDatabase, (started) => started.drop());

  async function stored(subject: string): Promise<(SubjectRevocation & { kept: number | null }) | undefined> {
    const { rows } = await database.db.query<SubjectRevocation & { kept: number | null }>(
      `SELECT subject, revoked_at AS "revokedAt", restored_at AS "restoredAt", expires_at AS "expiresAt", changed_at AS "changedAt",
         extract(epoch FROM expires_at - coalesce(restored_at, revoked_at))::int AS kept
       FROM revoked_subjects WHERE subject = $1`,
      [subject],
    );
    return rows[0];
  }

  /** Moves a row `seconds` into the past, as if that time had gone by. */
  async function age(subject: string, seconds: number): Promise<void> {
    await database.db.query(
      `UPDATE revoked_subjects SET revoked_at = revoked_at - make_interval(secs => $2), restored_at = restored_at - make_interval(secs => $2),
         expires_at = expires_at - make_interval(secs => $2), changed_at = changed_at - make_interval(secs => $2)
       WHERE subject = $1`,
      [subject, seconds],
    );
  }

  describe('what the commands record', () => {
    test('a row is kept as long as any token lives: the longest `tokens issue` signs for, plus skew', () => {
      assert.equal(REVOKED_SUBJECT_KEPT_SECONDS, MAX_SIGNED_TOKEN_LIFETIME_SECONDS);
    });

    test('disabled: no expiry; enabled again: kept from then; disabled again: no expiry, a new revoked_at', async () => {
      const subject = newSubject();
      await recordSubjectDisabled(database.db, subject);
      const disabled = await stored(subject);
      assert.deepEqual(
        { ...disabled, revokedAt: undefined, changedAt: undefined },
        {
          subject,
          revokedAt: undefined,
          restoredAt: null,
          expiresAt: null,
          changedAt: undefined,
          kept: null,
        },
      );
      await age(subject, 10);
      await recordSubjectRestored(database.db, subject);
      const restored = (await stored(subject))!;
      assert.equal(restored.revokedAt, new Date(Date.parse(disabled!.revokedAt) - 10_000).toISOString(), 'revoked_at is kept');
      assert.ok(restored.restoredAt !== null && restored.kept === REVOKED_SUBJECT_KEPT_SECONDS);
      assert.ok(Date.parse(restored.changedAt) > Date.parse(disabled!.changedAt) - 10_000);

      await recordSubjectRestored(database.db, subject);
      assert.deepEqual(await stored(subject), restored, 'restoring a restored subject changes nothing');

      await recordSubjectDisabled(database.db, subject);
      const again = (await stored(subject))!;
      assert.equal(again.restoredAt, null);
      assert.equal(again.expiresAt, null);
      assert.ok(Date.parse(again.revokedAt) > Date.parse(restored.revokedAt));
    });

    test('deleted: every token refused, kept as long as any token lives, whatever it was before', async () => {
      const subject = newSubject();
      await recordSubjectDisabled(database.db, subject);
      await recordSubjectDeleted(database.db, subject);
      const deleted = (await stored(subject))!;
      assert.equal(deleted.restoredAt, null);
      assert.equal(deleted.kept, REVOKED_SUBJECT_KEPT_SECONDS);
    });

    test('the purge deletes expired rows only, never a disabled subject', async () => {
      const expired = newSubject();
      const live = newSubject();
      const disabled = newSubject();
      for (const subject of [expired, live]) await recordSubjectDeleted(database.db, subject);
      await recordSubjectDisabled(database.db, disabled);
      await age(expired, REVOKED_SUBJECT_KEPT_SECONDS + 1);
      await age(disabled, 10 * 365 * 24 * 3600);
      assert.ok((await purgeExpiredRevokedSubjects(database.db)) >= 1);
      assert.equal(await stored(expired), undefined);
      assert.ok(await stored(live));
      assert.ok(await stored(disabled));
    });
  });

  describe('reading', () => {
    test('listRevokedSubjectsSince: rows changed after the bound that a token can still need', async () => {
      const old = newSubject();
      const recent = newSubject();
      const expired = newSubject();
      for (const subject of [old, recent, expired]) await recordSubjectDeleted(database.db, subject);
      await age(old, 120);
      await age(expired, REVOKED_SUBJECT_KEPT_SECONDS + 1);
      const subjects = (rows: SubjectRevocation[]) => new Set(rows.map((row) => row.subject));
      const all = subjects(await listRevokedSubjectsSince(database.db, undefined));
      assert.ok(all.has(old) && all.has(recent) && !all.has(expired));
      const lately = subjects(await listRevokedSubjectsSince(database.db, new Date(Date.now() - 60_000).toISOString()));
      assert.ok(!lately.has(old) && lately.has(recent) && !lately.has(expired));
    });

    test("findSubjectRevocations: the live rows of a token's subjects, nothing else", async () => {
      const user = `user:${Date.now()}`;
      const client = newSubject();
      const expired = newSubject();
      await recordSubjectDisabled(database.db, user);
      await recordSubjectDeleted(database.db, expired);
      await age(expired, REVOKED_SUBJECT_KEPT_SECONDS + 1);
      const found = await findSubjectRevocations(database.db, [user, client, expired]);
      assert.deepEqual(
        found.map((row) => row.subject),
        [user],
      );
    });
  });

  describe("the resource server's copy (createSubjectRevocations)", () => {
    // How often it reads, the read shared by concurrent checks, rows committed late and failed
    // reads are the copy's own (src/http/revocation-copy.ts), tested with revoked grants
    // (test/auth/revoked-grants.test.ts). Here: what a subject's row means for a token.
    const createCopy = (now?: () => Date) =>
      createSubjectRevocations({ loadChangedSince: (since) => listRevokedSubjectsSince(database.db, since), intervalMs: 0, now });

    test('a disabled subject refuses every token, whichever of the subjects it is', async () => {
      const revocations = createCopy();
      const user = `user:${Date.now() + 1}`;
      const client = newSubject();
      assert.equal(await revocations.isRevoked([user, client], nowSeconds()), false);
      await recordSubjectDisabled(database.db, client);
      assert.equal(await revocations.isRevoked([user, client], nowSeconds() - 60), true, 'an earlier token');
      assert.equal(await revocations.isRevoked([user, client], nowSeconds() + 60), true, 'a later one too');
      assert.equal(await revocations.isRevoked([user], nowSeconds()), false);
    });

    test('an enable is read too: tokens issued before stay refused, those since count', async () => {
      const revocations = createCopy();
      const client = newSubject();
      await recordSubjectDisabled(database.db, client);
      await age(client, 10);
      assert.equal(await revocations.isRevoked([client], nowSeconds()), true);
      await recordSubjectRestored(database.db, client);
      assert.equal(await revocations.isRevoked([client], nowSeconds()), false);
      assert.equal(await revocations.isRevoked([client], nowSeconds() - 11), true);
    });

    test('isRevokedNow answers as isRevoked while the copy is fresh, and nothing once it is stale', async () => {
      const clock = { elapsedMs: 0 };
      const revocations = createSubjectRevocations({
        loadChangedSince: (since) => listRevokedSubjectsSince(database.db, since),
        intervalMs: 1000,
        elapsed: () => clock.elapsedMs,
      });
      const user = `user:${Date.now() + 2}`;
      const client = newSubject();
      await recordSubjectDisabled(database.db, client);
      assert.equal(revocations.isRevokedNow([user, client], nowSeconds()), undefined, 'nothing read yet');
      assert.equal(await revocations.isRevoked([user, client], nowSeconds()), true);
      assert.equal(revocations.isRevokedNow([user, client], nowSeconds()), true, 'whichever of the subjects it is');
      assert.equal(revocations.isRevokedNow([user], nowSeconds()), false);
      clock.elapsedMs = 1000;
      assert.equal(revocations.isRevokedNow([user], nowSeconds()), undefined);
    });

    test('a row is forgotten once it has expired by the copy’s clock', async () => {
      const clock = { now: new Date() };
      const client = newSubject();
      await recordSubjectDeleted(database.db, client);
      const revocations = createCopy(() => clock.now);
      assert.equal(await revocations.isRevoked([client], nowSeconds()), true);
      clock.now = new Date(Date.now() + (REVOKED_SUBJECT_KEPT_SECONDS + 5) * 1000);
      assert.equal(await revocations.isRevoked([client], nowSeconds()), false);
    });
  });
});
