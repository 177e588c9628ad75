// Signing in with an email and a password, as a checklist of named steps: count the attempt, refuse
// while blocked, find the credentials, verify the password (and that the account is not disabled),
// give the attempt back. Knows no HTTP:
// the interaction route renders the result.
import type { Queryable } from '../db/db.ts';
import type { Counters } from '../http/rate-limit/counters.ts';
import { findUserCredentials } from '../users/users.store.ts';
import { DUMMY_PASSWORD_HASH, verifyPassword } from './passwords.ts';
import { countSignInAttempt, type SignInAttempt } from './rate-limits.ts';

interface SignInCommand {
  /** As typed (trimmed): the limits count it whether or not an account has it. */
  email: string;
  password: string;
  ip: string;
}

type SignInResult =
  | { kind: 'signed-in'; accountId: string }
  | { kind: 'blocked'; retryAfterSeconds: number }
  | { kind: 'unavailable'; retryAfterSeconds: number; cause: unknown }
  | { kind: 'refused' };

export type SignInRefusal = Exclude<SignInResult, { kind: 'signed-in' }>;

type Credentials = Awaited<ReturnType<typeof findUserCredentials>>;

export async function signIn(db: Queryable, counters: Counters, command: SignInCommand): Promise<SignInResult> {
  const attempt = await countAttempt(counters, command);
  if ('cause' in attempt) return { kind: 'unavailable', retryAfterSeconds: 1, cause: attempt.cause };
  if (attempt.blocked) return { kind: 'blocked', retryAfterSeconds: attempt.blocked.retryAfterSeconds };
  const credentials = await findCredentials(db, command.email);
  const accountId = await verifyCredentials(credentials, command.password);
  if (!accountId) return { kind: 'refused' };
  await giveAttemptBack(attempt);
  return { kind: 'signed-in', accountId };
}

/**
 * Counted before the password is checked, so parallel guesses cannot all pass the limit while the
 * first ones are still hashing. The failure when the counters cannot be reached: no password is
 * checked without its limit.
 */
function countAttempt(counters: Counters, { email, ip }: SignInCommand): Promise<SignInAttempt | { cause: unknown }> {
  return countSignInAttempt(counters, email, ip).catch((cause: unknown) => ({ cause }));
}

async function findCredentials(db: Queryable, email: string): Promise<Credentials> {
  return email ? await findUserCredentials(db, email) : undefined;
}

/**
 * The account id when the password matches and the account is not disabled. An unknown email, an
 * account without a password and a disabled one cost the same scrypt work and get the same answer
 * as a wrong password: the page reveals neither which accounts exist nor which are disabled.
 */
async function verifyCredentials(credentials: Credentials, password: string): Promise<string | undefined> {
  const valid = await verifyPassword(credentials?.passwordHash ?? DUMMY_PASSWORD_HASH, password);
  return credentials?.passwordHash && valid && !credentials.disabled ? String(credentials.id) : undefined;
}

/**
 * Only failures use up the budget. Should the counters fail just now, the attempt stays counted
 * like a failure: the sign-in itself goes through.
 */
function giveAttemptBack(attempt: SignInAttempt): Promise<void> {
  return attempt.succeeded().catch(() => undefined);
}
