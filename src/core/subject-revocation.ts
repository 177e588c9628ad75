// Users and clients whose access tokens are refused because an operator disabled, erased or deleted
// them (docs/decisions/0112-disabling-and-erasing.md): the keys they are recorded under, and the
// rule a resource server judges a token by. Pure, so the API's copy and introspection agree.
import type { Principal } from './principal.ts';

export const userSubject = (userId: number): string => `user:${userId}`;
export const clientSubject = (clientId: string): string => `client:${clientId}`;

/** The subjects a token speaks for: its client, and its user when it has one. */
export function subjectsOf(principal: Principal): string[] {
  const client = clientSubject(principal.clientId);
  return principal.kind === 'user' ? [userSubject(principal.userId), client] : [client];
}

/** A revoked subject as stored (timestamps RFC 3339, the database's clock). */
export interface SubjectRevocation {
  subject: string;
  /** When it was last disabled or deleted. */
  revokedAt: string;
  /** When it was enabled again; null while disabled (or deleted). */
  restoredAt: string | null;
  /** When no token it concerns can still be live; null while disabled. */
  expiresAt: string | null;
  /** When the row last changed: what resource servers read from. */
  changedAt: string;
}

/**
 * Whether a token issued at `issuedAt` (the `iat` claim, epoch seconds) is refused. Disabled or
 * deleted: every token. Enabled again: tokens issued before the second it was disabled in. `iat`
 * counts whole seconds, so a token of that very second cannot be told from one issued just after
 * it; such a token is refused while the subject stays disabled, and honoured once it is enabled.
 */
export function refusesTokenIssuedAt(revocation: Pick<SubjectRevocation, 'revokedAt' | 'restoredAt'>, issuedAt: number): boolean {
  if (revocation.restoredAt === null) return true;
  return issuedAt < Math.floor(Date.parse(revocation.revokedAt) / 1000);
}
