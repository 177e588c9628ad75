// The key that signs paging cursors (src/core/cursor.ts), generated on first start and kept in the
// database (app_secrets), so every process of a deployment verifies the cursors any of them gave.
// Read once when the app is built: no request pays a round trip for it.
import { randomBytes } from 'node:crypto';
import type { Queryable } from './db.ts';

const NAME = 'cursor_key';

export async function ensureCursorKey(db: Queryable): Promise<Buffer> {
  // Two processes starting together: the first insert wins, both read the same value back.
  await db.query('INSERT INTO app_secrets (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING', [
    NAME,
    JSON.stringify(randomBytes(32).toString('base64url')),
  ]);
  const { rows } = await db.query<{ value: string }>('SELECT value FROM app_secrets WHERE name = $1', [NAME]);
  return Buffer.from(rows[0]!.value, 'base64url');
}
