// Two app instances (two processes of a deployment) over one store share one budget: in the
// database (two connections to one PostgreSQL database; on PGlite, two apps over the one embedded
// database) and in Redis (one key prefix).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { buildApp } from '../../../src/app.ts';
import type { RateLimitsConfig } from '../../../src/config.ts';
import { createDatabase } from '../../../src/db/create-database.ts';
import type { Db } from '../../../src/db/db.ts';
import { createCustomer } from '../../helpers/actors.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { DB_OPTIONS } from '../../helpers/db.ts';
import { assertMatchesOpenApi } from '../../helpers/openapi.ts';
import { dropRedisKeys } from '../../helpers/redis.ts';
import { expectFields, expectRateLimited, frozenClock, STORES } from './rate-limits.ts';

/** Large enough that the database store leases hits in blocks (of up to 10). */
const LEASED_READS = 1000;
const LARGEST_BLOCK = 10;

for (const store of STORES) {
  for (const reads of [4, LEASED_READS]) {
    describe(`two instances counting in ${store.name} share one budget of ${reads} reads`, () => {
      let t: TestApp;
      let second: FastifyInstance;
      let secondDb: Db | undefined;
      const limits: RateLimitsConfig = store.limits({ reads, writes: 5, payments: 5 });
      before(async () => {
        t = await startTestApp({ rateLimits: limits }, undefined, { rateLimitNow: frozenClock });
        // A second connection to the same PostgreSQL database, as another process would open.
        secondDb = t.databaseUrl ? await createDatabase({ databaseUrl: t.databaseUrl, dataDir: '', db: DB_OPTIONS }) : undefined;
        second = await buildApp(t.config, secondDb ?? t.db, { logger: false, rateLimitNow: frozenClock });
        await second.ready();
      });
      after(async () => {
        await second.close();
        await secondDb?.close();
        await t.close();
        await dropRedisKeys(limits.redisKeyPrefix);
      });

      const readOn = async (app: FastifyInstance, token: string): Promise<LightMyRequestResponse> => {
        const res = await app.inject({ method: 'GET', url: '/orders/999999999', headers: { authorization: `Bearer ${token}` } });
        assertMatchesOpenApi(app, 'GET', '/orders/999999999', res);
        return res;
      };

      if (reads === 4) {
        test('requests to either instance count down the same budget; then both refuse', async () => {
          const { token } = await createCustomer(t);
          for (let left = reads - 1; left >= 0; left--) {
            const res = await readOn(left % 2 ? t.app : second, token);
            assert.equal(res.statusCode, 404, res.body);
            expectFields(res, 'reads', reads, left);
          }
          expectRateLimited(await readOn(t.app, token), 'reads', reads, '/orders/999999999');
          expectRateLimited(await readOn(second, token), 'reads', reads, '/orders/999999999');
        });
      } else {
        test('the two never admit more than the budget together, nor refuse before its last block', async () => {
          const { token } = await createCustomer(t);
          const statuses: number[] = [];
          for (let i = 0; i < reads + 20; i++) statuses.push((await readOn(i % 2 ? t.app : second, token)).statusCode);
          assert.deepEqual([...new Set(statuses)].sort(), [404, 429]);
          assert.equal(statuses.filter((s) => s === 404).length, reads, 'exactly the budget was admitted');
          const firstRefusal = statuses.indexOf(429);
          // The hits one instance leased and has not used are the other's early refusals: one block at most.
          const earliest = store.name === 'Redis' ? reads : reads - (LARGEST_BLOCK - 1);
          assert.ok(firstRefusal >= earliest, `first 429 at request ${firstRefusal + 1}`);
        });
      }
    });
  }
}
