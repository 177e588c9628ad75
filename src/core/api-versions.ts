// The API versions this server speaks, oldest first. The edge (src/http/versions/) renders each
// from the latest through the version changes; the authorization server pins clients to one.

export const API_VERSION_NUMBERS: readonly number[] = [1, 2, 3];

/** What the services speak and new client registrations are pinned to. */
export const LATEST_API_VERSION = 3;

/** Unversioned requests whose token names no pinned version (tokens not issued to a registered client). */
export const UNPINNED_API_VERSION = 1;

export function isApiVersion(version: number): boolean {
  return API_VERSION_NUMBERS.includes(version);
}

/**
 * The versions whose sunset has come at `now`: they answer 410, and webhook endpoints pinned to
 * them are disabled and cannot be enabled (docs/decisions/0117-webhook-endpoints-of-retired-versions.md).
 */
export function retiredApiVersions(deprecations: readonly { version: number; sunset: Date }[], now: Date): number[] {
  return deprecations.filter((d) => now.getTime() >= d.sunset.getTime()).map((d) => d.version);
}
