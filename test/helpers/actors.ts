// Who calls the API in a test: a new customer, staff member or service client with its access
// token, and the plain GET a test makes as one of them.
import type { LightMyRequestResponse } from 'fastify';
import type { TestApp } from './app.ts';
import { createUser } from './factories.ts';

type Scopes = Parameters<TestApp['token']>[0]['scopes'];

/** A new customer and a token for them (every scope unless narrowed). */
export async function createCustomer(t: TestApp, scopes?: Scopes) {
  const user = await createUser(t.db);
  return { user, token: await t.token({ userId: user.id, scopes }) };
}

/** A token for a new staff user (every scope unless narrowed). */
export async function createStaffToken(t: TestApp, scopes?: Scopes): Promise<string> {
  const staff = await createUser(t.db, 'staff');
  return t.token({ userId: staff.id, staff: true, scopes });
}

/** A token for a service client: its own subject, no user behind it. */
export function createServiceToken(t: TestApp, scopes: Scopes): Promise<string> {
  return t.token({ service: true, scopes });
}

/** GET through t.request (so the response is also checked against the OpenAPI document). */
export function get(
  t: TestApp,
  token: string | undefined,
  url: string,
  headers: Record<string, string> = {},
): Promise<LightMyRequestResponse> {
  return t.request(token, { method: 'GET', url, headers });
}
