// The event log as the events suites read it: the events about one resource read back with SQL
// (by the resource's id inside the stored record, so other tests' events never count), the
// callers allowed to read the log, and the writes through the API that record events.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import type { Db } from '../../../src/db/db.ts';
import type { EventObjectType } from '../../../src/events/events.rules.ts';
import { ALL_SCOPES, type TestApp } from '../../helpers/app.ts';
import { createStaffToken } from '../../helpers/actors.ts';

export const JSON_TYPE = 'application/json; charset=utf-8';

export interface StoredEvent {
  id: string;
  type: string;
  seq: number;
  createdAt: string;
}

/**
 * The events whose object is of objectType and has field = value (by default the resource's id),
 * in the order they were recorded.
 */
export async function eventsAbout(db: Db, objectType: EventObjectType, value: number, field = 'id'): Promise<StoredEvent[]> {
  const { rows } = await db.query<StoredEvent>(
    `SELECT id, type, seq, created_at AS "createdAt" FROM events WHERE object_type = $1 AND object->>$2 = $3 ORDER BY seq`,
    [objectType, field, String(value)],
  );
  return rows;
}

/** The types of eventsAbout, in order. */
export async function eventTypesAbout(db: Db, objectType: EventObjectType, value: number, field = 'id'): Promise<string[]> {
  return (await eventsAbout(db, objectType, value, field)).map((e) => e.type);
}

/** A staff user's token that may read the event log (and do everything else). */
export function createEventReader(t: TestApp): Promise<string> {
  return createStaffToken(t, [...ALL_SCOPES, 'events:read']);
}

/** GET /v<version>/events/{id} as reader: 200 asserted, the event returned. */
export async function readEvent(t: TestApp, reader: string, id: string, version = 2): Promise<Record<string, unknown>> {
  const res = await t.request(reader, { method: 'GET', url: `/v${version}/events/${id}` });
  assert.equal(res.statusCode, 200, res.body);
  return res.json();
}

/** The one event of type about a resource, read through the API in version: asserts there is exactly one. */
export async function theEvent(
  t: TestApp,
  reader: string,
  objectType: EventObjectType,
  value: number,
  type: string,
  options: { field?: string; version?: number } = {},
): Promise<Record<string, unknown>> {
  const matching = (await eventsAbout(t.db, objectType, value, options.field)).filter((e) => e.type === type);
  assert.equal(matching.length, 1, `one ${type} event about ${objectType} ${value}`);
  return readEvent(t, reader, matching[0]!.id, options.version);
}

/** A request as one caller, through t.request (so the answer is also checked against the OpenAPI document). */
export function send(
  t: TestApp,
  token: string,
  method: 'POST' | 'PUT' | 'DELETE' | 'GET',
  url: string,
  payload?: unknown,
  headers: Record<string, string> = {},
): Promise<LightMyRequestResponse> {
  return t.request(token, { method, url, payload: payload as string, headers });
}

/** POST with a fresh Idempotency-Key (payments and refunds require one). */
export function postKeyed(
  t: TestApp,
  token: string,
  url: string,
  payload: unknown,
  key: string = randomUUID(),
): Promise<LightMyRequestResponse> {
  return send(t, token, 'POST', url, payload, { 'idempotency-key': key });
}

/** The database's clock, to the millisecond below: every event recorded after this is at or after it. */
export async function databaseNow(db: Db): Promise<string> {
  const { rows } = await db.query<{ now: string }>(`SELECT date_trunc('milliseconds', clock_timestamp()) AS now`);
  return rows[0]!.now;
}
