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

/** The password hash of a user, for sign-in only. */
export async function findUserCredentials(db: Queryable, email: string): Promise<{ id: number; passwordHash: string | null } | undefined> {
  const key = emailKey(email);
  if (key === undefined) return undefined;
  const { rows } = await db.query<{ id: number; passwordHash: string | null }>(
    'SELECT id, password_hash AS "passwordHash" FROM users WHERE lower(email) = $1',
    [key],
  );
  return rows[0];
}

export interface UserListing extends User {
  hasPassword: boolean;
  createdAt: string;
}

export async function listUsers(db: Queryable): Promise<UserListing[]> {
  const { rows } = await db.query<UserListing>(
    `SELECT id, email, name, role, password_hash IS NOT NULL AS "hasPassword", created_at AS "createdAt"
     FROM users ORDER BY id`,
  );
  return rows;
}
