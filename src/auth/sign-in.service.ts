// Signing in with an email and a password, as a checklist of named steps: count the attempt, refuse
// while blocked, find the credentials, verify the password, give the attempt back. Knows no HTTP:
// the interaction route renders the result.
import type { Queryable } from '../db/db.ts';
import { findUserCredentials } from '../users/users.store.ts';
import { DUMMY_PASSWORD_HASH, verifyPassword } from './passwords.ts';
import { countSignInAttempt } from './rate-limits.ts';

interface SignInCommand {
  /** As typed (trimmed): the limits count it whether or not an account has it. */
  email: string;
  password: string;
  ip: string;
  /** Clock of the sign-in limits. */
  now: Date;
}

type SignInResult = { kind: 'signed-in'; accountId: string } | { kind: 'blocked'; retryAfterSeconds: number } | { kind: 'refused' };

export type SignInRefusal = Exclude<SignInResult, { kind: 'signed-in' }>;

type Credentials = Awaited<ReturnType<typeof findUserCredentials>>;
type SignInAttempt = Awaited<ReturnType<typeof countSignInAttempt>>;

export async function signIn(db: Queryable, command: SignInCommand): Promise<SignInResult> {
  const attempt = await countAttempt(db, command);
  if (attempt.blocked) return { kind: 'blocked', retryAfterSeconds: attempt.blocked.resetSeconds };
  const credentials = await findCredentials(db, command.email);
  const accountId = await verifyCredentials(credentials, command.password);
  if (!accountId) return { kind: 'refused' };
  await giveAttemptBack(attempt);
  return { kind: 'signed-in', accountId };
}

/**
 * Counted before the password is checked, so parallel guesses cannot all pass the limit while the
 * first ones are still hashing.
 */
function countAttempt(db: Queryable, { email, ip, now }: SignInCommand): Promise<SignInAttempt> {
  return countSignInAttempt(db, email, ip, now);
}

async function findCredentials(db: Queryable, email: string): Promise<Credentials> {
  return email ? await findUserCredentials(db, email) : undefined;
}

/**
 * The account id when the password matches. An unknown email (or an account without a password)
 * costs the same scrypt work and gets the same answer as a wrong password.
 */
async function verifyCredentials(credentials: Credentials, password: string): Promise<string | undefined> {
  const valid = await verifyPassword(credentials?.passwordHash ?? DUMMY_PASSWORD_HASH, password);
  return credentials?.passwordHash && valid ? String(credentials.id) : undefined;
}

/** Only failures use up the budget. */
function giveAttemptBack(attempt: SignInAttempt): Promise<void> {
  return attempt.succeeded();
}
