// Accounts for oidc-provider and /oauth/userinfo: our users, their claims, and the roles claim of
// access tokens.
import type { Queryable } from '../db/db.ts';

interface AccountRow {
  id: number;
  email: string;
  name: string;
  role: 'customer' | 'staff';
}

/**
 * The account, unless it is disabled: oidc-provider then treats a session of it as signed out and
 * refuses its codes and refresh tokens (invalid_grant), whatever a row left behind would allow.
 */
export async function findAccountRow(db: Queryable, accountId: string): Promise<AccountRow | undefined> {
  if (!/^[1-9]\d{0,15}$/.test(accountId)) return undefined;
  const { rows } = await db.query<AccountRow>('SELECT id, email, name, role FROM users WHERE id = $1 AND disabled_at IS NULL', [
    Number(accountId),
  ]);
  return rows[0];
}

/**
 * Every claim an account has (OpenID Connect Core §5.1); which of them a token may see is the
 * scopes' business (SCOPE_CLAIMS). No address is ever verified: email_verified is always false.
 */
export function accountClaims(user: AccountRow) {
  return { sub: String(user.id), email: user.email, email_verified: false, name: user.name };
}

/** oidc-provider's findAccount: the ID token's claims, masked by the provider to the granted scopes. */
export function accountFinder(db: Queryable) {
  return async function findAccount(_ctx: unknown, sub: string) {
    const user = await findAccountRow(db, sub);
    if (!user) return undefined;
    return {
      accountId: String(user.id),
      async claims() {
        return accountClaims(user);
      },
    };
  };
}
