// What every fault scenario shares: its seed (printed, and taken from ORDERPAY_FAULTS_SEED to
// replay a failure), its own PostgreSQL cluster for the file, the final verdict and its figures.
import assert from 'node:assert/strict';
import { randomInt } from 'node:crypto';
import path from 'node:path';
import { after } from 'node:test';
import { fileURLToPath } from 'node:url';
import { killRemaining, withTargetDatabase } from '../cli/orderpay-process.ts';
import { eventually, type insertWebhookEndpoint, type startReceiver, verifyDelivery } from '../helpers/webhooks.ts';
import { createRandom } from '../helpers/random.ts';
import { createLedger, mixedOperations, startLoad, type Ledger, type Load, type Random } from './clients.ts';
import { checkInvariants, type DatabaseFigures } from './invariants.ts';
import type { OrderpaySlot, prepareWorld, World } from './orderpay-fleet.ts';
import { startCluster, type PostgresCluster } from './postgres-cluster.ts';

const INTERRUPTIONS: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

export interface Seeded {
  seed: number;
  /** The generator of the operations. */
  random: Random;
  /** Another stream from the same seed, for one purpose (think times, fault moments), so streams do not shift each other. */
  stream(purpose: number): Random;
  /** How to run this file again with the same seed. */
  replay: string;
}

/** The seed of this file's run: ORDERPAY_FAULTS_SEED when set, otherwise a fresh one, printed either way. */
export function seedScenario(fileUrl: string): Seeded {
  const fromEnv = process.env.ORDERPAY_FAULTS_SEED;
  if (fromEnv !== undefined && !/^\d+$/.test(fromEnv)) throw new Error('ORDERPAY_FAULTS_SEED must be a non-negative integer');
  const seed = fromEnv === undefined ? randomInt(2 ** 31) : Number(fromEnv);
  const file = path.relative(process.cwd(), fileURLToPath(fileUrl));
  const replay = `ORDERPAY_FAULTS_SEED=${seed} sh scripts/node.sh --test ${file}`;
  console.log(`fault scenario ${file}: seed ${seed} (replay: ${replay})`);
  return { seed, random: createRandom(seed), stream: (purpose) => createRandom((seed + purpose * 0x9e3779b9) >>> 0), replay };
}

/**
 * The cluster of this file, started now and destroyed after its tests (processes first, so
 * nothing holds a connection to it), whatever the outcome.
 */
export async function clusterForFile(settings: Record<string, string | number> = {}): Promise<PostgresCluster> {
  const cluster = await startCluster(settings);
  const onSignal = (signal: NodeJS.Signals) => {
    // Interrupted (Ctrl-C): the SIGKILLs go out at once, the cluster goes, then the signal takes its course.
    void killRemaining();
    cluster.destroy();
    process.kill(process.pid, signal);
  };
  for (const signal of INTERRUPTIONS) process.once(signal, onSignal);
  after(async () => {
    for (const signal of INTERRUPTIONS) process.off(signal, onSignal);
    await killRemaining();
    cluster.destroy();
  });
  return cluster;
}

const MAX_PROBLEMS_SHOWN = 15;

export interface Figures {
  scenario: string;
  seed: number;
  requests: number;
  /** Operations with a 201 seen, and how many of the 201s were replays of a stored response. */
  created: number;
  replayed201s: number;
  unavailable503s: number;
  networkErrors: Record<string, number>;
  statuses: Record<string, number>;
  database: DatabaseFigures;
  /** When each fault happened, ms from the start of the load. */
  marks: Record<string, number>;
  [more: string]: unknown;
}

/**
 * Checks the invariants (reading the API totals from serverUrl), prints the figures, and fails
 * with every problem found and the command that replays the run.
 */
export async function assertInvariantsHeld(
  name: string,
  seeded: Seeded,
  world: World,
  ledger: Ledger,
  serverUrl: string,
  extra: Record<string, unknown> = {},
): Promise<Figures> {
  const { problems, figures: database } = await checkInvariants(world, ledger, serverUrl);
  const figures: Figures = {
    scenario: name,
    seed: seeded.seed,
    requests: ledger.requests,
    created: ledger.created.size,
    replayed201s: ledger.replayed201s,
    unavailable503s: ledger.unavailableAt.length,
    networkErrors: Object.fromEntries(ledger.networkErrorKinds),
    statuses: Object.fromEntries([...ledger.statuses].sort(([a], [b]) => a - b)),
    database,
    marks: Object.fromEntries(ledger.marks),
    ...extra,
  };
  console.log(`fault figures ${JSON.stringify(figures)}`);
  if (problems.length > 0) {
    const shown = problems.slice(0, MAX_PROBLEMS_SHOWN).map((problem) => `  - ${problem}`);
    if (problems.length > MAX_PROBLEMS_SHOWN) shown.push(`  … and ${problems.length - MAX_PROBLEMS_SHOWN} more`);
    assert.fail(`${name}: ${problems.length} broken invariants (replay: ${seeded.replay}):\n${shown.join('\n')}`);
  }
  return figures;
}

/** Fails with the replay command when a bound is exceeded; the measured value is in the message. */
export function assertWithin(what: string, measuredMs: number | undefined, boundMs: number, seeded: Seeded): void {
  assert.ok(
    measuredMs !== undefined && measuredMs <= boundMs,
    `${what}: ${measuredMs === undefined ? 'never' : `${measuredMs} ms`}, bound ${boundMs} ms (replay: ${seeded.replay})`,
  );
}

/**
 * Starts the slots, then the seeded mixed load over them (orders, payments with keys, reads):
 * what the clients were told (the ledger), how to reach the slots, and the load to stop.
 */
export async function startMixedLoad(
  seeded: Seeded,
  world: World,
  slots: OrderpaySlot[],
  options: { clients: number; keyPrefix: string; maxThinkMs: number },
): Promise<{ ledger: Ledger; clients: { servers: string[]; token: string; ledger: Ledger }; load: Load }> {
  await Promise.all(slots.map((slot) => slot.start()));
  const ledger = createLedger();
  const clients = { servers: slots.map((slot) => slot.url), token: world.token, ledger };
  const think = seeded.stream(1);
  const load = startLoad({
    ...clients,
    clients: options.clients,
    next: mixedOperations(seeded.random, world, { keyPrefix: `${options.keyPrefix}-${seeded.seed}` }),
    thinkMs: () => think.int(options.maxThinkMs),
  });
  return { ledger, clients, load };
}

/** Every event the load recorded reached the receiver, signed, and every delivery is recorded as succeeded. */
export async function assertEveryEventDelivered(
  world: Awaited<ReturnType<typeof prepareWorld>>,
  endpoint: Awaited<ReturnType<typeof insertWebhookEndpoint>>,
  receiver: Awaited<ReturnType<typeof startReceiver>>,
): Promise<void> {
  const pending = () =>
    withTargetDatabase(world.inspection, async (db) => {
      const { rows } = await db.query<{ n: number }>("SELECT count(*)::int AS n FROM webhook_deliveries WHERE state <> 'succeeded'");
      return rows[0]!.n;
    });
  // A delivery whose process lost its lease is sent again when the lease (60 s) runs out.
  await eventually(async () => (await pending()) === 0, 'every webhook delivery to succeed', 90_000);
  const eventIds = await withTargetDatabase(world.inspection, async (db) => {
    const { rows } = await db.query<{ id: string }>('SELECT id FROM events');
    return rows.map((row) => row.id);
  });
  assert.ok(eventIds.length > 0, 'the load recorded events');
  const delivered = new Set(receiver.requests.map((request) => String(verifyDelivery(endpoint.secret, request).id)));
  const missing = eventIds.filter((id) => !delivered.has(id));
  assert.deepEqual(missing, [], `${missing.length} of ${eventIds.length} events never delivered`);
}
