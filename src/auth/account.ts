// Accounts for oidc-provider: our users, their claims, and the roles claim of access tokens.
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

/** oidc-provider's findAccount: claims by scope (openid → sub, email, profile → name). */
export function accountFinder(db: Queryable) {
  return async function findAccount(_ctx: unknown, sub: string) {
    const user = await findAccountRow(db, sub);
    if (!user) return undefined;
    return {
      accountId: String(user.id),
      async claims() {
        return { sub: String(user.id), email: user.email, email_verified: false, name: user.name };
      },
    };
  };
}
