// The provider of the moment. Signing keys live in the database: when another process rotates them
// (orderpay keys rotate), this one notices within keyCheckIntervalMs and rebuilds its provider with
// the new key set, so every process signs with the new key and publishes both.
import type Provider from 'oidc-provider';
import type { Config } from '../config.ts';
import type { Clock } from '../core/clock.ts';
import type { Db } from '../db/db.ts';
import type { ClientMetadata } from './clients.rules.ts';
import { listSigningJwks } from './keys.store.ts';
import { createProvider } from './provider.ts';

export interface RotatingProvider {
  /** The provider, rebuilt first when the signing keys changed (checked at most every keyCheckIntervalMs). */
  current(): Promise<Provider>;
  /** The provider as last built, without a check (the interaction pages follow whatever /oauth last used). */
  latest(): Provider;
  /** The request handler of the latest provider, built once per provider. */
  callback(): ReturnType<Provider['callback']>;
}

interface RotatingProviderOptions {
  config: Config;
  db: Db;
  cookieKeys: string[];
  keyCheckIntervalMs: number;
  staticClients?: ClientMetadata[];
  /** The clock a rotated client secret's grace is judged by. */
  now?: Clock;
}

export async function createRotatingProvider({
  config,
  db,
  cookieKeys,
  keyCheckIntervalMs,
  staticClients,
  now,
}: RotatingProviderOptions): Promise<RotatingProvider> {
  let signing = await listSigningJwks(db);
  let provider: Provider = createProvider({ config, db, signingKeys: signing.keys, cookieKeys, staticClients, now });
  let callback = provider.callback();
  let checkedAt = Date.now();

  return {
    async current() {
      if (Date.now() - checkedAt < keyCheckIntervalMs) return provider;
      checkedAt = Date.now();
      const latest = await listSigningJwks(db);
      if (latest.fingerprint !== signing.fingerprint) {
        signing = latest;
        provider = createProvider({ config, db, signingKeys: latest.keys, cookieKeys, staticClients, now });
        callback = provider.callback();
      }
      return provider;
    },
    latest: () => provider,
    callback: () => callback,
  };
}
