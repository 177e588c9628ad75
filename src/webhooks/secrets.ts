// Webhook signing secrets: generated as Standard Webhooks has them (`whsec_` and base64 of 24
// random bytes), shown once, and stored encrypted (AES-256-GCM): orderpay must sign with them, so
// they cannot be hashed. The key comes from ORDERPAY_WEBHOOKS_SECRET_KEY, or, when that is unset,
// is generated once and kept in the database (docs/webhooks.md "Safety" says what that protects).
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { Queryable } from '../db/db.ts';

const SECRET_PREFIX = 'whsec_';
const SEALED_PREFIX = 'v1.';

export function generateSigningSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(24).toString('base64')}`;
}

/** The HMAC key a secret stands for (Standard Webhooks: the base64 after the prefix). */
export function signingKey(secret: string): Buffer {
  return Buffer.from(secret.slice(SECRET_PREFIX.length), 'base64');
}

export interface SecretBox {
  seal(secret: string): Promise<string>;
  open(sealed: string): Promise<string>;
}

/** The key from the configuration, or the one kept in app_secrets (the first process to start makes it). */
async function loadKey(db: Queryable, configured: string | undefined): Promise<Buffer> {
  if (configured !== undefined) return Buffer.from(configured, 'base64');
  await db.query('INSERT INTO app_secrets (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING', [
    'webhook_secret_key',
    JSON.stringify(randomBytes(32).toString('base64')),
  ]);
  const { rows } = await db.query<{ value: string }>('SELECT value FROM app_secrets WHERE name = $1', ['webhook_secret_key']);
  return Buffer.from(rows[0]!.value, 'base64');
}

/** Seals and opens secrets with the key, read once on first use. */
export function createSecretBox(db: Queryable, configuredKey: string | undefined): SecretBox {
  let key: Promise<Buffer> | undefined;
  const keyOnce = () => {
    key ??= loadKey(db, configuredKey).catch((error: unknown) => {
      key = undefined;
      throw error;
    });
    return key;
  };
  return {
    async seal(secret) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', await keyOnce(), iv);
      const sealed = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
      return `${SEALED_PREFIX}${[iv, cipher.getAuthTag(), sealed].map((b) => b.toString('base64url')).join('.')}`;
    },
    async open(sealed) {
      const [iv, tag, data] = sealed
        .slice(SEALED_PREFIX.length)
        .split('.')
        .map((part) => Buffer.from(part, 'base64url'));
      const decipher = createDecipheriv('aes-256-gcm', await keyOnce(), iv!);
      decipher.setAuthTag(tag!);
      return Buffer.concat([decipher.update(data!), decipher.final()]).toString('utf8');
    },
  };
}
