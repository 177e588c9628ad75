// Every scenario as the bench runs it: chosen by key, prepared once the servers run ((f)'s and (fr)'s tags,
// (ap)'s key and bound token, (g)'s cursors), checked, and laid out as columns, each a server under a
// request mix, that the rounds load in turn.
import type { Db } from '../src/db/db.ts';
import { conditionalRequests, isConditionalWorkload, prepareConditional, type ConditionalWorkload } from './conditional.ts';
import {
  DEEP_PAGE_COLUMNS,
  DEEP_PAGE_CONNECTIONS,
  DEEP_PAGE_TIMEOUT_SECONDS,
  deepPageLabel,
  deepPageColumns,
  deepPageResult,
  deepPageWorkloads,
  isDeepPageWorkload,
  prepareDeepPage,
  type DeepPageResult,
  type DeepPageWorkload,
} from './deep-pages.ts';
import { dpopColumns, isDpopWorkload, prepareDpop, type DpopIssuer, type DpopWorkload } from './dpop.ts';
import { withPrefix, type RequestMix, type RequestsPerRun } from './load.ts';
import { sampleOrdersWorkloads, verifyOrdersResponses, type OrdersWorkload } from './orders.ts';
import { paymentWorkloads, verifyPaymentResponses, type PaymentWorkload } from './payments.ts';
import type { Target } from './processes.ts';
import type { Aggregate, ScenarioResult } from './report.ts';

export type Workload = OrdersWorkload | ConditionalWorkload | DpopWorkload | DeepPageWorkload | PaymentWorkload;

export const isPaymentWorkload = (workload: Workload): workload is PaymentWorkload => 'paymentsPerRequest' in workload;
const isOrdersWorkload = (workload: Workload): workload is OrdersWorkload =>
  !isPaymentWorkload(workload) && !isConditionalWorkload(workload) && !isDpopWorkload(workload) && !isDeepPageWorkload(workload);

export const keyOf = (workload: Workload) => (isDeepPageWorkload(workload) ? workload.key : workload.scenario.key);

/** How logs and the memory table name the scenario. */
export const labelOf = (workload: Workload) =>
  isDeepPageWorkload(workload) ? deepPageLabel(workload) : `(${workload.scenario.key}) ${workload.scenario.title}`;

/**
 * The scenarios asked for, in order: the orders' a–c, av, bv, f, fr and ap, the deep pages (g), then
 * the payments' d, e, dw and dx.
 */
export async function chooseWorkloads(db: Db, scenarios: Set<string> | undefined): Promise<Workload[]> {
  const all: Workload[] = [...(await sampleOrdersWorkloads(db)), ...deepPageWorkloads(), ...paymentWorkloads()];
  const keys = [...new Set(all.map(keyOf))];
  const unknown = [...(scenarios ?? [])].filter((key) => !keys.includes(key));
  if (unknown.length) throw new Error(`BENCH_SCENARIOS: no scenario ${unknown.join(', ')} (known: ${keys.join(', ')}, and h)`);
  return all.filter((w) => !scenarios || scenarios.has(keyOf(w)));
}

/**
 * What needs the servers running: (f)'s and (fr)'s ETags (read once), (ap)'s token bound to a new key,
 * (g)'s cursors. targets: orderpay, then the baseline.
 */
export async function prepareWorkloads(
  workloads: Workload[],
  targets: Target[],
  { orders, dpop }: { orders: number; dpop: DpopIssuer },
): Promise<Workload[]> {
  const orderpay = targets[0]!;
  const prepared: Workload[] = [];
  // (f) and (fr) request the same paths: the tags read for one serve the other.
  let tagged: ConditionalWorkload | undefined;
  for (const workload of workloads) {
    if (isConditionalWorkload(workload)) {
      const etags = tagged?.paths === workload.paths ? tagged.etags : undefined;
      tagged = await prepareConditional({ ...workload, etags }, targets);
      prepared.push(tagged);
    } else if (isDpopWorkload(workload)) prepared.push(await prepareDpop(workload, orderpay, dpop));
    else if (isDeepPageWorkload(workload)) prepared.push(await prepareDeepPage(workload, orderpay, orders));
    else prepared.push(workload);
  }
  return prepared;
}

/**
 * The two columns of a scenario: orderpay and the baseline, or one of them under two prefixes —
 * (av) and (bv) orderpay under /v1 and /v2, (dw) and (dx) the baseline with the event and without.
 */
function sidesOf(workload: OrdersWorkload | PaymentWorkload, targets: Target[]): Target[] {
  return (
    workload.sides?.map((side) => {
      const target = targets[side.server === 'orderpay' ? 0 : 1]!;
      return { ...target, prefix: side.prefix, writesEvents: target.writesEvents || side.writesEvents === true };
    }) ?? targets
  );
}

export async function verifyResponses(db: Db, workloads: Workload[], targets: Target[]): Promise<void> {
  await verifyOrdersResponses(db, workloads.filter(isOrdersWorkload), (workload) => sidesOf(workload, targets));
  const payments = workloads.filter(isPaymentWorkload);
  if (payments.length)
    await verifyPaymentResponses(
      db,
      payments.map((workload) => ({ workload, sides: sidesOf(workload, targets) })),
      targets[0]!,
    );
}

/** One column of a scenario: a server under a request mix. */
export interface Column {
  /** How the log names it. */
  name: string;
  target: Target;
  /** The same for every run, or made anew for each ((ap)'s DPoP proofs). */
  requests: RequestMix | RequestsPerRun;
  /** When not the run's connections. */
  connections?: number;
  timeoutSeconds?: number;
  /** A measured run lasts at least this long (BENCH_SECONDS otherwise). */
  minSeconds?: number;
}

/** targets: orderpay, then the baseline. */
export function columnsOf(workload: Workload, targets: Target[]): Column[] {
  const orderpay = targets[0]!;
  if (isConditionalWorkload(workload)) {
    const [tagged, untagged] = conditionalRequests(workload);
    const target = targets[workload.side.server === 'orderpay' ? 0 : 1]!;
    return [
      { name: `${target.server.name} 304`, target, requests: tagged },
      { name: `${target.server.name} 200`, target, requests: untagged },
    ];
  }
  if (isDpopWorkload(workload)) {
    return dpopColumns(workload, orderpay).map(({ target, requests }, i) => ({
      name: `orderpay ${workload.scenario.labels![i]}`,
      target,
      requests,
    }));
  }
  if (isDeepPageWorkload(workload)) {
    return deepPageColumns(workload).map(({ requests, minSeconds }, i) => ({
      name: `orderpay ${DEEP_PAGE_COLUMNS[i]}`,
      target: orderpay,
      requests,
      connections: DEEP_PAGE_CONNECTIONS,
      timeoutSeconds: DEEP_PAGE_TIMEOUT_SECONDS,
      minSeconds,
    }));
  }
  return sidesOf(workload, targets).map((target) => ({
    name: `${target.server.name}${target.prefix ?? ''}`,
    target,
    requests: withPrefix(workload.requests, target.prefix),
  }));
}

/** The aggregates of each workload's columns as the report takes them. */
export function toResults(workloads: Workload[], columns: Aggregate[][]): { scenarios: ScenarioResult[]; deepPages: DeepPageResult[] } {
  const scenarios: ScenarioResult[] = [];
  const deepPages: DeepPageResult[] = [];
  workloads.forEach((workload, i) => {
    const [first, second] = columns[i]!;
    if (isDeepPageWorkload(workload)) deepPages.push(deepPageResult(workload, columns[i]!));
    else scenarios.push({ scenario: workload.scenario, orderpay: first!, baseline: second! });
  });
  return { scenarios, deepPages };
}
