// Whatever went wrong with a request, as a person reads it: an RFC 9457 problem's title and detail
// (and its field errors), a session that expired, a rate limit, or no connection at all.
import { OrderpayProblem, OrderpayResponseError, type Problem } from '@orderpay/client';
import { retryAfterSeconds } from './api.ts';

export interface Failure {
  kind: 'problem' | 'expired' | 'rate-limited' | 'offline' | 'unexpected';
  title: string;
  detail: string;
  status?: number;
  code?: string;
  /** Field errors of a problem: which parameter or member, and what is wrong with it. */
  errors?: { where?: string; detail: string }[];
  problem?: Problem;
  requestId?: string;
}

export function describeFailure(error: unknown): Failure {
  if (error instanceof OrderpayProblem) {
    const { problem } = error;
    if (error.status === 401) {
      return {
        kind: 'expired',
        status: 401,
        code: problem.code,
        title: 'Your session has expired',
        detail: 'Sign in again to go on.',
        problem,
      };
    }
    const base = {
      status: error.status,
      code: problem.code,
      title: problem.title,
      detail: problem.detail,
      problem,
      requestId: problem.requestId,
      errors: problem.errors?.map((e) => ({ where: e.pointer ?? e.parameter, detail: e.detail })),
    };
    if (error.status === 429) {
      const seconds = retryAfterSeconds(error.response);
      return { ...base, kind: 'rate-limited', detail: `${problem.detail} Wait ${seconds ?? 'a few'} seconds, then try again.` };
    }
    return { ...base, kind: 'problem' };
  }
  if (error instanceof OrderpayResponseError) {
    return { kind: 'unexpected', status: error.status, title: `The server answered ${error.status}`, detail: error.message };
  }
  if (error instanceof TypeError) {
    return {
      kind: 'offline',
      title: 'No connection',
      detail: 'The server could not be reached. Check your connection; nothing was changed by this attempt unless it says so later.',
    };
  }
  return { kind: 'unexpected', title: 'Something went wrong', detail: error instanceof Error ? error.message : String(error) };
}
