// `orderpay users create | list`: accounts that sign in at the authorization server.
import { checkPasswordPolicy, hashPassword } from '../auth/passwords.ts';
import { loadConfig } from '../config.ts';
import { isUniqueViolation } from '../db/sqlstate.ts';
import { insertUser, listUsers, type Role, type UserListing } from '../users/users.store.ts';
import { parseCommandLine, takeWord, UsageError, withMigratedDatabase, type Output } from './command.ts';
import { emailKey } from '../core/email.ts';
import { PASSWORD_OPTIONS, readNewPassword } from './password-input.ts';

export const USERS_USAGE = `  users create               add a user who can sign in
      --email <email>        unique, case-insensitively
      --password-stdin       read the password (8 characters or more; stored as an
                             scrypt hash) from standard input; on a terminal, without
                             it, the password is asked for and not echoed
      --password <password>  deprecated: visible to other users (ps) and in history
      --name <name>          default: the part of the email before @
      --role customer|staff  default customer
  users list                 every user (never password hashes)`;

const OPTIONS = {
  email: { type: 'string' },
  ...PASSWORD_OPTIONS,
  name: { type: 'string' },
  role: { type: 'string' },
} as const;

const ROLES: readonly Role[] = ['customer', 'staff'];
const EMAIL = /^[^\s@]+@[^\s@]+$/;

const CREATE_USAGE = 'usage: orderpay users create --email E [--password-stdin] [--name N] [--role customer|staff]';

interface NewUser {
  email: string;
  name: string;
  role: Role;
}

/** Everything but the password, checked before the password is asked for. */
function readNewUser(values: { email?: string; name?: string; role?: string }): NewUser {
  const { email } = values;
  if (!email) throw new UsageError(CREATE_USAGE);
  if (!EMAIL.test(email) || email.length > 320) throw new UsageError(`--email "${email}" is not an email address`);
  if (emailKey(email) === undefined)
    throw new UsageError(`--email "${email}": account emails are ASCII (internationalised addresses are refused)`);
  const role = values.role ?? 'customer';
  if (!(ROLES as readonly string[]).includes(role)) throw new UsageError(`--role must be customer or staff, got "${role}"`);
  const name = (values.name ?? email.split('@')[0]!).trim();
  if (!name || name.length > 200) throw new UsageError('--name must be 1–200 characters');
  return { email, name, role: role as Role };
}

async function createUser(argv: string[], out: Output): Promise<void> {
  const values = parseCommandLine(argv, OPTIONS);
  const input = readNewUser(values);
  const config = loadConfig();
  const password = await readNewPassword(values, out.warn);
  const refused = checkPasswordPolicy(password);
  if (refused) throw new UsageError(refused);
  const passwordHash = await hashPassword(password);
  const user = await withMigratedDatabase(config, async (db) => {
    try {
      return await insertUser(db, { email: input.email, name: input.name, role: input.role, passwordHash });
    } catch (error) {
      if (isUniqueViolation(error, 'users_email_key')) throw new UsageError(`a user with email ${input.email} already exists`);
      throw error;
    }
  });
  out.print(`Created ${user.role} ${user.email} (id ${user.id})`, { ...user });
}

/** One row per user under a header; the PASSWORD column says whether the user can sign in with one. */
function formatUserTable(users: readonly UserListing[]): string {
  const emailWidth = Math.max('EMAIL'.length, ...users.map((u) => u.email.length));
  const row = (id: string, role: string, password: string, email: string, name: string) =>
    `${id.padStart(5)}  ${role.padEnd(8)}  ${password.padEnd(8)}  ${email.padEnd(emailWidth)}  ${name}`;
  const rows = users.map((u) => row(String(u.id), u.role, u.hasPassword ? 'set' : 'not set', u.email, u.name));
  return [row('ID', 'ROLE', 'PASSWORD', 'EMAIL', 'NAME'), ...rows].join('\n');
}

async function printUsers(argv: string[], out: Output): Promise<void> {
  parseCommandLine(argv, {});
  const users = await withMigratedDatabase(loadConfig(), listUsers);
  out.print(users.length ? formatUserTable(users) : 'No users', { users });
}

/** argv: what follows `users`. */
export async function runUsersCommand(argv: string[], out: Output): Promise<void> {
  const { word, rest } = takeWord(argv);
  if (word === 'create') return createUser(rest, out);
  if (word === 'list') return printUsers(rest, out);
  throw new UsageError(`${CREATE_USAGE} | orderpay users list`);
}
