// `orderpay users create | list`: accounts that sign in at the authorization server.
import { checkPasswordPolicy, hashPassword } from '../auth/passwords.ts';
import { loadConfig } from '../config.ts';
import { isUniqueViolation } from '../db/sqlstate.ts';
import { insertUser, listUsers, type Role } from '../users/users.store.ts';
import { parseCommandLine, takeWord, UsageError, withMigratedDatabase, type Output } from './command.ts';
import { emailKey } from '../core/email.ts';

export const USERS_USAGE = `  users create               add a user who can sign in
      --email <email>        unique, case-insensitively
      --password <password>  at least 8 characters; stored as an scrypt hash
      --name <name>          default: the part of the email before @
      --role customer|staff  default customer
  users list                 every user (never password hashes)`;

const OPTIONS = {
  email: { type: 'string' },
  password: { type: 'string' },
  name: { type: 'string' },
  role: { type: 'string' },
} as const;

const ROLES: readonly Role[] = ['customer', 'staff'];
const EMAIL = /^[^\s@]+@[^\s@]+$/;

interface NewUser {
  email: string;
  name: string;
  role: Role;
  password: string;
}

function readNewUser(values: { email?: string; password?: string; name?: string; role?: string }): NewUser {
  const { email, password } = values;
  if (!email || !password) throw new UsageError('usage: orderpay users create --email E --password P [--name N] [--role customer|staff]');
  if (!EMAIL.test(email) || email.length > 320) throw new UsageError(`--email "${email}" is not an email address`);
  if (emailKey(email) === undefined)
    throw new UsageError(`--email "${email}": account emails are ASCII (internationalised addresses are refused)`);
  const role = values.role ?? 'customer';
  if (!(ROLES as readonly string[]).includes(role)) throw new UsageError(`--role must be customer or staff, got "${role}"`);
  const refused = checkPasswordPolicy(password);
  if (refused) throw new UsageError(refused);
  const name = (values.name ?? email.split('@')[0]!).trim();
  if (!name || name.length > 200) throw new UsageError('--name must be 1–200 characters');
  return { email, name, role: role as Role, password };
}

async function createUser(argv: string[], out: Output): Promise<void> {
  const input = readNewUser(parseCommandLine(argv, OPTIONS));
  const config = loadConfig();
  const passwordHash = await hashPassword(input.password);
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

async function printUsers(argv: string[], out: Output): Promise<void> {
  parseCommandLine(argv, {});
  const users = await withMigratedDatabase(loadConfig(), listUsers);
  const lines = users.map(
    (u) => `${String(u.id).padStart(5)}  ${u.role.padEnd(8)}  ${u.email}  ${u.name}${u.hasPassword ? '' : '  (no password)'}`,
  );
  out.print(lines.length ? lines.join('\n') : 'No users', { users });
}

/** argv: what follows `users`. */
export async function runUsersCommand(argv: string[], out: Output): Promise<void> {
  const { word, rest } = takeWord(argv);
  if (word === 'create') return createUser(rest, out);
  if (word === 'list') return printUsers(rest, out);
  throw new UsageError('usage: orderpay users create --email E --password P [--name N] [--role customer|staff] | orderpay users list');
}
