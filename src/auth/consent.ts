// What a consent grants and what it withholds: the scopes the provider says are missing, less the
// staff-only scopes for customers, recorded on the grant.
import type { Grant, Interaction } from 'oidc-provider';
import type { Queryable } from '../db/db.ts';
import { STAFF_ONLY_SCOPES } from '../core/scopes.ts';
import { findAccountRow } from './account.ts';

interface ConsentPromptDetails {
  missingOIDCScope?: string[];
  missingResourceScopes?: Record<string, string[]>;
  missingOIDCClaims?: string[];
}

interface ScopeSet {
  oidc: string[];
  resources: Record<string, string[]>;
}

/**
 * `withheld` holds the staff-only scopes a customer asked for: the provider lists API scopes among
 * the OIDC ones too, and keeps asking for any scope the grant has neither granted nor rejected.
 * `requested` is what the request asks for and the user may hold, granted before or not.
 */
interface ConsentScopes extends ScopeSet {
  withheld: ScopeSet;
  requested: string[];
}

export async function findConsentScopes(db: Queryable, details: Interaction): Promise<ConsentScopes> {
  const account = details.session?.accountId ? await findAccountRow(db, details.session.accountId) : undefined;
  const requested = typeof details.params.scope === 'string' ? details.params.scope.split(' ') : [];
  return splitConsentScopes(details.prompt.details as ConsentPromptDetails, requested, account?.role === 'staff');
}

function splitConsentScopes(missing: ConsentPromptDetails, requested: string[], staff: boolean): ConsentScopes {
  const allowed = (scope: string) => staff || !STAFF_ONLY_SCOPES.has(scope);
  const missingOidc = missing.missingOIDCScope ?? [];
  const missingResources = Object.entries(missing.missingResourceScopes ?? {});
  return {
    oidc: missingOidc.filter(allowed),
    resources: Object.fromEntries(missingResources.map(([resource, scopes]) => [resource, scopes.filter(allowed)])),
    withheld: {
      oidc: missingOidc.filter((s) => !allowed(s)),
      resources: Object.fromEntries(missingResources.map(([resource, scopes]) => [resource, scopes.filter((s) => !allowed(s))])),
    },
    requested: requested.filter(allowed),
  };
}

/**
 * The scopes the consent page lists, each once: those not granted yet; or, when consent is asked
 * again with nothing new (prompt=consent, as offline_access brings: src/auth/offline-access.ts),
 * everything the request asks for, rather than an empty list.
 */
export function listConsentScopes(scopes: ConsentScopes): string[] {
  const missing = [...new Set([...scopes.oidc, ...Object.values(scopes.resources).flat()])];
  return missing.length ? missing : scopes.requested;
}

/** Adds the granted scopes and the missing claims to the grant, and rejects the withheld scopes. */
export function recordConsent(grant: Grant, details: Interaction, scopes: ConsentScopes): void {
  if (scopes.oidc.length) grant.addOIDCScope(scopes.oidc.join(' '));
  const claims = (details.prompt.details as ConsentPromptDetails).missingOIDCClaims;
  if (claims?.length) grant.addOIDCClaims(claims);
  for (const [resource, granted] of Object.entries(scopes.resources))
    if (granted.length) grant.addResourceScope(resource, granted.join(' '));
  // Rejected, not just left out: otherwise the provider asks for consent again, forever.
  if (scopes.withheld.oidc.length) grant.rejectOIDCScope(scopes.withheld.oidc.join(' '));
  for (const [resource, withheld] of Object.entries(scopes.withheld.resources))
    if (withheld.length) grant.rejectResourceScope(resource, withheld.join(' '));
}
