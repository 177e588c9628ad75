// `orderpay users create | list | disable | enable | erase`: accounts that sign in at the
// authorization server, and operators' control of them (docs/decisions/0112-disabling-and-erasing.md).
import { disableUser, enableUser, eraseUser, type AccountChange } from '../auth/accounts.service.ts';
import { checkPasswordPolicy, hashPassword } from '../auth/passwords.ts';
import { loadConfig } from '../config.ts';
import type { Db } from '../db/db.ts';
import { isUniqueViolation } from '../db/sqlstate.ts';
import { userStatus } from '../users/users.rules.ts';
import { insertUser, listUsers, type Role, type UserAccount, type UserListing, type UserRef } from '../users/users.store.ts';
import { describeDatabase, parseCommandLine, takeWord, UsageError, withMigratedDatabase, type Output } from './command.ts';
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
  users list                 every user, active, disabled or erased (never password hashes)
  users disable              the user can no longer sign in: its sessions, grants and
      --email <email>        refresh tokens end, and the API refuses its access tokens
      --id <n>               (either one names the user)
  users enable               the user can sign in again; tokens from before stay refused
      --email <email> | --id <n>
  users erase                erase a user's personal data on request: email, name and
                             password hash replaced by placeholders, the user disabled
                             for good; its orders, payments and events are kept and
                             still name its id
      --email <email> | --id <n>
      --yes                  required: erasure cannot be undone`;

const OPTIONS = {
  email: { type: 'string' },
  ...PASSWORD_OPTIONS,
  name: { type: 'string' },
  role: { type: 'string' },
} as const;

const USER_REF_OPTIONS = {
  email: { type: 'string' },
  id: { type: 'string' },
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

/**
 * One row per user under a header: STATUS says whether the user may sign in (active) or not
 * (disabled, erased); PASSWORD whether it has one to sign in with.
 */
function formatUserTable(users: readonly UserListing[]): string {
  const emailWidth = Math.max('EMAIL'.length, ...users.map((u) => u.email.length));
  const row = (id: string, role: string, status: string, password: string, email: string, name: string) =>
    `${id.padStart(5)}  ${role.padEnd(8)}  ${status.padEnd(8)}  ${password.padEnd(8)}  ${email.padEnd(emailWidth)}  ${name}`;
  const rows = users.map((u) => row(String(u.id), u.role, userStatus(u), u.hasPassword ? 'set' : 'not set', u.email, u.name));
  return [row('ID', 'ROLE', 'STATUS', 'PASSWORD', 'EMAIL', 'NAME'), ...rows].join('\n');
}

/** A user in --json output: the account, its status, and since when it is disabled or erased. */
function toUserJson(user: UserAccount): Record<string, unknown> {
  const { id, email, name, role, disabledAt, erasedAt } = user;
  return { id, email, name, role, status: userStatus(user), disabledAt, erasedAt };
}

async function printUsers(argv: string[], out: Output): Promise<void> {
  parseCommandLine(argv, {});
  const users = await withMigratedDatabase(loadConfig(), listUsers);
  out.print(users.length ? formatUserTable(users) : 'No users', {
    users: users.map((u) => ({ ...toUserJson(u), hasPassword: u.hasPassword, createdAt: u.createdAt })),
  });
}

/** `--email E` or `--id N`, exactly one. */
function readUserRef(values: { email?: string; id?: string }, usage: string): UserRef {
  if ((values.email === undefined) === (values.id === undefined)) throw new UsageError(usage);
  if (values.email !== undefined) return { email: values.email };
  if (!/^[1-9]\d{0,15}$/.test(values.id!)) throw new UsageError(`--id must be a user id (a positive whole number), got "${values.id}"`);
  return { id: Number(values.id) };
}

const describeRef = (ref: UserRef) => ('id' in ref ? `id ${ref.id}` : `email ${ref.email}`);
const describeUser = (user: UserAccount) => `${user.role} ${user.email} (id ${user.id})`;

/** What each change says once it has been made, and when there was nothing to do. */
const ACCOUNT_COMMANDS = {
  disable: {
    change: disableUser,
    changed: (user: UserAccount, revokedGrants: number) =>
      `Disabled ${describeUser(user)}: it can no longer sign in; ${revokedGrants} grant${revokedGrants === 1 ? '' : 's'} ended with their refresh tokens and sessions, and the API refuses its access tokens (every process within about a second).`,
    unchanged: (user: UserAccount) => `${describeUser(user)} is already ${userStatus(user)}; nothing changed.`,
  },
  enable: {
    change: enableUser,
    changed: (user: UserAccount) =>
      `Enabled ${describeUser(user)}: it can sign in again. Tokens issued before it was disabled stay refused.`,
    unchanged: (user: UserAccount) => `${describeUser(user)} is already active; nothing changed.`,
  },
  erase: {
    change: eraseUser,
    changed: (user: UserAccount) =>
      `Erased user ${user.id}: email, name and password replaced by placeholders (${user.email}, "${user.name}"), disabled for good. Its orders, payments and events are kept and still name user ${user.id}.`,
    unchanged: (user: UserAccount) => `User ${user.id} is already erased; nothing changed.`,
  },
} satisfies Record<
  string,
  {
    change: (db: Db, ref: UserRef) => Promise<AccountChange>;
    changed: (user: UserAccount, revokedGrants: number) => string;
    unchanged: (user: UserAccount) => string;
  }
>;

async function changeAccount(command: keyof typeof ACCOUNT_COMMANDS, argv: string[], out: Output): Promise<void> {
  const erasing = command === 'erase';
  const values = parseCommandLine(argv, erasing ? { ...USER_REF_OPTIONS, yes: { type: 'boolean', default: false } } : USER_REF_OPTIONS);
  const ref = readUserRef(values, `usage: orderpay users ${command} (--email E | --id N)${erasing ? ' --yes' : ''}`);
  if (erasing && !('yes' in values && values.yes)) {
    throw new UsageError(
      "users erase replaces the user's email, name and password hash for good, and cannot be undone: add --yes to confirm",
    );
  }
  const config = loadConfig();
  const { change, changed, unchanged } = ACCOUNT_COMMANDS[command];
  const result = await withMigratedDatabase(config, (db) => change(db, ref));
  if (result.outcome === 'not-found') throw new UsageError(`no user with ${describeRef(ref)} in ${describeDatabase(config)}`);
  if (result.outcome === 'erased') {
    throw new UsageError(`user ${result.user.id} was erased: erasure cannot be undone, and an erased user cannot be enabled`);
  }
  const revokedGrants = result.outcome === 'changed' ? result.revokedGrants : 0;
  out.print(result.outcome === 'changed' ? changed(result.user, revokedGrants) : unchanged(result.user), {
    ...toUserJson(result.user),
    changed: result.outcome === 'changed',
    revokedGrants,
  });
}

/** argv: what follows `users`. */
export async function runUsersCommand(argv: string[], out: Output): Promise<void> {
  const { word, rest } = takeWord(argv);
  if (word === 'create') return createUser(rest, out);
  if (word === 'list') return printUsers(rest, out);
  if (word === 'disable' || word === 'enable' || word === 'erase') return changeAccount(word, rest, out);
  throw new UsageError(
    `${CREATE_USAGE} | orderpay users list | orderpay users disable|enable (--email E | --id N) | orderpay users erase (--email E | --id N) --yes`,
  );
}
