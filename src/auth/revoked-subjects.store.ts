// revoked_subjects: users and clients whose access tokens are refused (src/core/subject-revocation.ts
// holds the rule). Operators' commands write (src/auth/accounts.service.ts, clients.service.ts);
// every resource server reads what changed (src/http/subject-revocations.ts), introspection reads
// the rows of one token's subjects.
import type { SubjectRevocation } from '../core/subject-revocation.ts';
import type { Queryable } from '../db/db.ts';
import { MAX_SIGNED_TOKEN_LIFETIME_SECONDS } from './keys.store.ts';

/**
 * How long a deleted or re-enabled subject's row is kept: the longest any token lives (`orderpay
 * tokens issue` signs for up to an hour), plus clock skew. A disabled subject's row is kept as
 * long as it stays disabled.
 */
export const REVOKED_SUBJECT_KEPT_SECONDS = MAX_SIGNED_TOKEN_LIFETIME_SECONDS;

const COLUMNS = `subject, revoked_at AS "revokedAt", restored_at AS "restoredAt", expires_at AS "expiresAt", changed_at AS "changedAt"`;

/** Refuses every token of the subject from now on, until recordSubjectRestored. */
export async function recordSubjectDisabled(db: Queryable, subject: string): Promise<void> {
  await db.query(
    `INSERT INTO revoked_subjects (subject, revoked_at, changed_at) VALUES ($1, now(), now())
     ON CONFLICT (subject) DO UPDATE SET revoked_at = now(), restored_at = NULL, expires_at = NULL, changed_at = now()`,
    [subject],
  );
}

/** A deleted subject: every token refused until none issued before now can be live. */
export async function recordSubjectDeleted(db: Queryable, subject: string): Promise<void> {
  await db.query(
    `INSERT INTO revoked_subjects (subject, revoked_at, expires_at, changed_at)
     VALUES ($1, now(), now() + make_interval(secs => $2), now())
     ON CONFLICT (subject) DO UPDATE SET
       revoked_at = now(), restored_at = NULL, expires_at = EXCLUDED.expires_at, changed_at = now()`,
    [subject, REVOKED_SUBJECT_KEPT_SECONDS],
  );
}

/** Enabled again: tokens issued from the disable on count again; those before it stay refused until they expire. */
export async function recordSubjectRestored(db: Queryable, subject: string): Promise<void> {
  await db.query(
    `UPDATE revoked_subjects SET restored_at = now(), expires_at = now() + make_interval(secs => $2), changed_at = now()
     WHERE subject = $1 AND restored_at IS NULL`,
    [subject, REVOKED_SUBJECT_KEPT_SECONDS],
  );
}

/** Rows changed after `since` (all, when undefined) that a token can still need. */
export async function listRevokedSubjectsSince(db: Queryable, since: string | undefined): Promise<SubjectRevocation[]> {
  const { rows } = await db.query<SubjectRevocation>(
    `SELECT ${COLUMNS} FROM revoked_subjects
     WHERE changed_at > $1 AND (expires_at IS NULL OR expires_at > now())`,
    [since ?? '-infinity'],
  );
  return rows;
}

/** The live rows of these subjects, read now: introspection (RFC 7662) answers for the moment it is asked. */
export async function findSubjectRevocations(db: Queryable, subjects: readonly string[]): Promise<SubjectRevocation[]> {
  const { rows } = await db.query<SubjectRevocation>(
    `SELECT ${COLUMNS} FROM revoked_subjects
     WHERE subject = ANY($1::text[]) AND (expires_at IS NULL OR expires_at > now())`,
    [subjects],
  );
  return rows;
}

/** Deletes rows no token can need any more; returns how many. */
export async function purgeExpiredRevokedSubjects(db: Queryable): Promise<number> {
  const { rowCount } = await db.query('DELETE FROM revoked_subjects WHERE expires_at < now()');
  return rowCount;
}
