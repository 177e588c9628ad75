// Password and client-secret hashing with scrypt (node:crypto). A hash carries its own parameters
// (`scrypt$N$r$p$salt$hash`, base64url), so stronger parameters later do not strand old hashes.
import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

/** N = 2^15, r = 8, p = 1: 32 MiB and roughly 100 ms per hash on one core (docs/decisions/0024-passwords-scrypt.md). */
export const SCRYPT_PARAMS = { N: 2 ** 15, r: 8, p: 1 } as const;
const SALT_BYTES = 16;
const KEY_BYTES = 32;
/** Refuse stored parameters that would take more than this much memory: a bad row must not stall the process. */
const MAX_MEMORY_BYTES = 128 * 1024 * 1024;

export const PASSWORD_MIN_LENGTH = 8;
export const PASSWORD_MAX_LENGTH = 1024;

/**
 * A well-formed hash of no known password, with the current parameters. When a login names an
 * unknown user (or one without a password), verify against this anyway, so that an unknown email
 * and a wrong password take the same time:
 *   `await verifyPassword(user?.passwordHash ?? DUMMY_PASSWORD_HASH, password)`
 * and check the user afterwards. A unit test keeps its parameters equal to SCRYPT_PARAMS.
 */
export const DUMMY_PASSWORD_HASH = 'scrypt$32768$8$1$WU70n5XkZ0Mpsc_hUMqH0A$j4qLuJn-XqDiJU8geyEDmJcZPx-nm3YP2XHMfU_9ZMU';

interface ScryptHash {
  N: number;
  r: number;
  p: number;
  salt: Buffer;
  hash: Buffer;
}

function deriveKey(secret: string, salt: Buffer, keyLength: number, params: { N: number; r: number; p: number }): Promise<Buffer> {
  // maxmem must exceed 128·N·r, which is exactly Node's 32 MiB default at our parameters.
  const options: ScryptOptions = { ...params, maxmem: 2 * 128 * params.N * params.r };
  // NFC, so the same password typed on systems that compose characters differently still matches.
  return new Promise((resolve, reject) =>
    scrypt(secret.normalize('NFC'), salt, keyLength, options, (error, key) => (error ? reject(error) : resolve(key))),
  );
}

const BASE64URL = /^[A-Za-z0-9_-]+$/;

function parseHash(encoded: string): ScryptHash | undefined {
  const parts = encoded.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return undefined;
  const [, n, r, p, salt, hash] = parts as [string, string, string, string, string, string];
  if (![n, r, p].every((v) => /^[1-9]\d{0,8}$/.test(v))) return undefined;
  const params = { N: Number(n), r: Number(r), p: Number(p) };
  const isPowerOfTwo = (params.N & (params.N - 1)) === 0 && params.N > 1;
  if (!isPowerOfTwo || params.p > 16 || 128 * params.N * params.r > MAX_MEMORY_BYTES) return undefined;
  if (!BASE64URL.test(salt) || !BASE64URL.test(hash)) return undefined;
  const parsed = { ...params, salt: Buffer.from(salt, 'base64url'), hash: Buffer.from(hash, 'base64url') };
  if (parsed.salt.length < 8 || parsed.hash.length < 16 || parsed.hash.length > 64) return undefined;
  return parsed;
}

export async function hashPassword(plain: string): Promise<string> {
  const salt = randomBytes(SALT_BYTES);
  const key = await deriveKey(plain, salt, KEY_BYTES, SCRYPT_PARAMS);
  const { N, r, p } = SCRYPT_PARAMS;
  return ['scrypt', N, r, p, salt.toString('base64url'), key.toString('base64url')].join('$');
}

/** True when plain matches; false on a mismatch and on a malformed or unsupported hash. */
export async function verifyPassword(encoded: string, plain: string): Promise<boolean> {
  const parsed = parseHash(encoded);
  if (!parsed) return false;
  const key = await deriveKey(plain, parsed.salt, parsed.hash.length, parsed);
  return timingSafeEqual(key, parsed.hash);
}

/** Why a new password is refused, or undefined when it is acceptable. */
export function checkPasswordPolicy(plain: string): string | undefined {
  const length = [...plain].length;
  if (length < PASSWORD_MIN_LENGTH) return `password must be at least ${PASSWORD_MIN_LENGTH} characters`;
  if (length > PASSWORD_MAX_LENGTH) return `password must be at most ${PASSWORD_MAX_LENGTH} characters`;
  return undefined;
}

// Client secrets are random (32 bytes), so the slow hash is more than they need; one scheme for
// both keeps a single verified code path, and a token request costs one scrypt.
export const hashClientSecret = hashPassword;
export const verifyClientSecret = verifyPassword;
