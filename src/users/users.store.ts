// Users in SQL.
import { emailKey } from '../core/email.ts';
import type { Queryable } from '../db/db.ts';

export type Role = 'customer' | 'staff';

export interface User {
  id: number;
  email: string;
  name: string;
  role: Role;
}

export async function userExists(db: Queryable, id: number): Promise<boolean> {
  const { rows } = await db.query('SELECT 1 FROM users WHERE id = $1', [id]);
  return rows.length > 0;
}

/** The account of an email, by its key (core/email.ts): an address no account can have finds none. */
export async function findUserByEmail(db: Queryable, email: string): Promise<User | undefined> {
  const key = emailKey(email);
  if (key === undefined) return undefined;
  const { rows } = await db.query<User>('SELECT id, email, name, role FROM users WHERE lower(email) = $1', [key]);
  return rows[0];
}

export async function insertUser(db: Queryable, user: { email: string; name: string; role: Role; passwordHash?: string }): Promise<User> {
  const { rows } = await db.query<User>(
    'INSERT INTO users (email, name, role, password_hash) VALUES ($1, $2, $3, $4) RETURNING id, email, name, role',
    [user.email, user.name, user.role, user.passwordHash ?? null],
  );
  return rows[0]!;
}

export async function countUsers(db: Queryable): Promise<number> {
  const { rows } = await db.query<{ n: number }>('SELECT count(*) AS n FROM users');
  return rows[0]?.n ?? 0;
}

/** The password hash of a user, and whether the user is disabled: for sign-in only. */
export async function findUserCredentials(
  db: Queryable,
  email: string,
): Promise<{ id: number; passwordHash: string | null; disabled: boolean } | undefined> {
  const key = emailKey(email);
  if (key === undefined) return undefined;
  const { rows } = await db.query<{ id: number; passwordHash: string | null; disabled: boolean }>(
    'SELECT id, password_hash AS "passwordHash", disabled_at IS NOT NULL AS disabled FROM users WHERE lower(email) = $1',
    [key],
  );
  return rows[0];
}

/** A user as operators' commands see it: the account, and since when it is disabled or erased. */
export interface UserAccount extends User {
  disabledAt: string | null;
  erasedAt: string | null;
}

/** How a command names a user: by id, or by email (its key, core/email.ts). */
export type UserRef = { id: number } | { email: string };

const ACCOUNT_COLUMNS = 'id, email, name, role, disabled_at AS "disabledAt", erased_at AS "erasedAt"';

/** The user, locked for the rest of the transaction when `lock`; undefined when there is none. */
export async function findUserAccount(db: Queryable, ref: UserRef, { lock = false } = {}): Promise<UserAccount | undefined> {
  const [condition, value] = 'id' in ref ? ['id = $1', ref.id] : ['lower(email) = $1', emailKey(ref.email)];
  if (value === undefined) return undefined;
  const { rows } = await db.query<UserAccount>(`SELECT ${ACCOUNT_COLUMNS} FROM users WHERE ${condition}${lock ? ' FOR UPDATE' : ''}`, [
    value,
  ]);
  return rows[0];
}

/** Disables the user (from now) or enables it again. */
export async function setUserDisabled(db: Queryable, id: number, disabled: boolean): Promise<UserAccount> {
  const { rows } = await db.query<UserAccount>(
    `UPDATE users SET disabled_at = CASE WHEN $2::boolean THEN now() END, updated_at = now() WHERE id = $1
     RETURNING ${ACCOUNT_COLUMNS}`,
    [id, disabled],
  );
  return rows[0]!;
}

/** Replaces the user's personal data by placeholders, drops the password hash and disables the user. */
export async function replaceUserPersonalData(
  db: Queryable,
  id: number,
  placeholders: { email: string; name: string },
): Promise<UserAccount> {
  const { rows } = await db.query<UserAccount>(
    `UPDATE users SET email = $2, name = $3, password_hash = NULL, erased_at = now(),
       disabled_at = COALESCE(disabled_at, now()), updated_at = now()
     WHERE id = $1 RETURNING ${ACCOUNT_COLUMNS}`,
    [id, placeholders.email, placeholders.name],
  );
  return rows[0]!;
}

export interface UserListing extends UserAccount {
  hasPassword: boolean;
  createdAt: string;
}

export async function listUsers(db: Queryable): Promise<UserListing[]> {
  const { rows } = await db.query<UserListing>(
    `SELECT ${ACCOUNT_COLUMNS}, password_hash IS NOT NULL AS "hasPassword", created_at AS "createdAt"
     FROM users ORDER BY id`,
  );
  return rows;
}
