// Webhook endpoint use cases: registering, reading (with the backlog, counted at the read),
// replacing and deleting endpoints, and rotating their signing secrets. Staff users and service
// clients only; the edge checks the scopes.
import { LATEST_API_VERSION } from '../core/api-versions.ts';
import { DomainError } from '../core/errors.ts';
import { parseSortParam, planPage, toCollection, type Collection, type PageRequest } from '../core/paging.ts';
import type { Precondition } from '../core/precondition.ts';
import { isStaffOrService, type Principal } from '../core/principal.ts';
import type { Db, Queryable } from '../db/db.ts';
import { type EndpointBacklog, NO_BACKLOG, selectEndpointBacklogs } from './backlog.store.ts';
import {
  assertEnabledEvents,
  assertNotPinnedToRetired,
  disabledReasonAfter,
  isSameEndpoint,
  WEBHOOK_ENDPOINT_SORT_KEYS,
} from './endpoints.rules.ts';
import {
  deleteWebhookEndpoint as deleteEndpointRow,
  findWebhookEndpoint,
  insertWebhookEndpoint,
  rotateWebhookEndpointSecret,
  selectWebhookEndpoints,
  updateWebhookEndpoint,
  type WebhookEndpointFields,
  type WebhookEndpointRecord,
} from './endpoints.store.ts';
import { generateSigningSecret, type SecretBox } from './secrets.ts';
import { assertPublicHost, parseWebhookUrl, type UrlGuardOptions } from './url-guard.ts';

/**
 * What the endpoint use cases need besides the database: the secrets' box, the URL guard's options
 * and the API versions retired by now.
 */
export interface WebhookEndpointContext {
  secrets: SecretBox;
  guard: UrlGuardOptions;
  retiredVersions(): readonly number[];
}

/** An endpoint as the API shows it: its record and its backlog, counted when it was read. */
export interface WebhookEndpointWithBacklog extends WebhookEndpointRecord {
  backlog: EndpointBacklog;
}

/** Step: the endpoints with their backlogs, in one statement however many there are. */
async function withBacklogs(db: Queryable, endpoints: WebhookEndpointRecord[]): Promise<WebhookEndpointWithBacklog[]> {
  const backlogs = await selectEndpointBacklogs(
    db,
    endpoints.map((endpoint) => endpoint.id),
  );
  return endpoints.map((endpoint) => ({ ...endpoint, backlog: backlogs.get(endpoint.id) ?? NO_BACKLOG }));
}

const withBacklog = async (db: Queryable, endpoint: WebhookEndpointRecord) => (await withBacklogs(db, [endpoint]))[0]!;

/** Step: only staff users and service clients manage webhooks, whatever scopes a token carries. */
export function assertWebhookManager(principal: Principal): void {
  if (!isStaffOrService(principal)) throw new DomainError('AUTH_FORBIDDEN', 'Only staff and service clients manage webhook endpoints.');
}

export const endpointNotFound = (id: number) => new DomainError('WEBHOOK_ENDPOINT_NOT_FOUND', `Webhook endpoint ${id} does not exist.`);

/**
 * Step: the endpoint, or a 404; also when it is pinned to a later API version than shownTo, the
 * request's (docs/webhooks.md, "Versions").
 */
export async function loadWebhookEndpoint(db: Queryable, id: number, shownTo: number, lock = false): Promise<WebhookEndpointRecord> {
  const endpoint = await findWebhookEndpoint(db, id, shownTo, lock);
  if (!endpoint) throw endpointNotFound(id);
  return endpoint;
}

/** Step: the url as it will be called (normalised), once the guard has checked it and the addresses its host resolves to now. */
async function checkedUrl(text: string, guard: UrlGuardOptions): Promise<string> {
  const url = parseWebhookUrl(text, guard);
  await assertPublicHost(url, guard);
  return url.href;
}

/** Step: the settings a request gives, checked; DNS is asked before any transaction opens. */
async function checkedFields(fields: WebhookEndpointFields, guard: UrlGuardOptions): Promise<WebhookEndpointFields> {
  assertEnabledEvents(fields.enabledEvents, fields.apiVersion);
  return { ...fields, url: await checkedUrl(fields.url, guard) };
}

export async function getWebhookEndpoint(
  db: Queryable,
  principal: Principal,
  id: number,
  shownTo: number,
): Promise<WebhookEndpointWithBacklog> {
  assertWebhookManager(principal);
  return withBacklog(db, await loadWebhookEndpoint(db, id, shownTo));
}

export interface ListWebhookEndpointsCommand {
  disabled?: boolean;
  sort?: string;
  page: PageRequest;
  /** The request's API version: endpoints pinned to a later one are not listed. */
  shownTo: number;
}

export async function listWebhookEndpoints(
  db: Queryable,
  principal: Principal,
  command: ListWebhookEndpointsCommand,
): Promise<Collection<WebhookEndpointWithBacklog>> {
  assertWebhookManager(principal);
  const sort = parseSortParam(command.sort, WEBHOOK_ENDPOINT_SORT_KEYS, [{ field: 'id', descending: false }]);
  const filters = { disabled: command.disabled };
  const plan = planPage(command.page, 'webhook-endpoints', filters, sort);
  const page = toCollection(await selectWebhookEndpoints(db, { ...filters, shownTo: command.shownTo }, plan), plan);
  return { ...page, data: await withBacklogs(db, page.data) };
}

export type CreateWebhookEndpointCommand = Pick<WebhookEndpointFields, 'url' | 'enabledEvents'> & Partial<WebhookEndpointFields>;

/** A new endpoint and its signing secret: the one time the secret is seen outside its sealed column. */
export async function createWebhookEndpoint(
  db: Db,
  context: WebhookEndpointContext,
  principal: Principal,
  command: CreateWebhookEndpointCommand,
): Promise<{ endpoint: WebhookEndpointWithBacklog; secret: string }> {
  assertWebhookManager(principal);
  const requested: WebhookEndpointFields = {
    url: command.url,
    enabledEvents: command.enabledEvents,
    apiVersion: command.apiVersion ?? LATEST_API_VERSION,
    description: command.description ?? '',
    disabled: command.disabled ?? false,
  };
  assertNotPinnedToRetired(requested, undefined, context.retiredVersions());
  const fields = await checkedFields(requested, context.guard);
  const secret = generateSigningSecret();
  const disabledReason = disabledReasonAfter(undefined, fields.disabled);
  const endpoint = await insertWebhookEndpoint(db, { ...fields, disabledReason }, await context.secrets.seal(secret));
  // Nothing can be pending for an endpoint made a moment ago.
  return { endpoint: { ...endpoint, backlog: NO_BACKLOG }, secret };
}

export interface ReplaceWebhookEndpointCommand extends WebhookEndpointFields {
  id: number;
  /** The request's API version: an endpoint pinned to a later one is not there for it. */
  shownTo: number;
  precondition?: Precondition<WebhookEndpointRecord>;
}

export async function replaceWebhookEndpoint(
  db: Db,
  context: WebhookEndpointContext,
  principal: Principal,
  command: ReplaceWebhookEndpointCommand,
): Promise<WebhookEndpointWithBacklog> {
  assertWebhookManager(principal);
  const { id, precondition, shownTo, ...requested } = command;
  // A request for an endpoint that does not exist is a 404 before its body is judged (RFC 9110 §13.2.1).
  await loadWebhookEndpoint(db, id, shownTo);
  const fields = await checkedFields(requested, context.guard);
  const replaced = await db.transaction(async (tx) => {
    const endpoint = await loadWebhookEndpoint(tx, id, shownTo, true);
    // Against the locked row, before If-Match: a refusal the request would get without its
    // precondition comes first (RFC 9110 §13.2.1).
    assertNotPinnedToRetired(fields, endpoint, context.retiredVersions());
    precondition?.(endpoint);
    if (isSameEndpoint(endpoint, fields)) return endpoint;
    return updateWebhookEndpoint(tx, id, { ...fields, disabledReason: disabledReasonAfter(endpoint, fields.disabled) });
  });
  return withBacklog(db, replaced);
}

export interface DeleteWebhookEndpointCommand {
  id: number;
  shownTo: number;
  precondition?: Precondition<WebhookEndpointRecord>;
}

/** Deletes the endpoint with its secrets and delivery log; its pending deliveries are never sent. */
export async function deleteWebhookEndpoint(db: Db, principal: Principal, command: DeleteWebhookEndpointCommand): Promise<void> {
  assertWebhookManager(principal);
  await db.transaction(async (tx) => {
    const endpoint = await loadWebhookEndpoint(tx, command.id, command.shownTo, true);
    command.precondition?.(endpoint);
    await deleteEndpointRow(tx, command.id);
  });
}

/** A new signing secret, returned once; the one it replaces signs beside it for 24 hours. */
export async function rotateSigningSecret(
  db: Db,
  context: WebhookEndpointContext,
  principal: Principal,
  id: number,
  shownTo: number,
): Promise<{ endpoint: WebhookEndpointWithBacklog; secret: string }> {
  assertWebhookManager(principal);
  const secret = generateSigningSecret();
  const endpoint = await rotateWebhookEndpointSecret(db, id, await context.secrets.seal(secret), shownTo);
  if (!endpoint) throw endpointNotFound(id);
  return { endpoint: await withBacklog(db, endpoint), secret };
}
