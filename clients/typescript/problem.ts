// Refusals as errors a caller can throw and catch: the RFC 9457 problem orderpay answered, its
// `code` typed as the catalogue's codes (docs/errors.md), so a misspelt code does not compile.
import type { components } from './schema.ts';

/** An RFC 9457 problem body as orderpay sends it. */
export type Problem = components['schemas']['Problem'];

/**
 * A code of the error catalogue. Codes are added, never reused or retired, so one newer than this
 * client can arrive: it is the string the server sent, outside this union until the client is regenerated.
 */
export type ProblemCode = Problem['code'];

/** A non-2xx answer whose body is not a problem (from a proxy in front of orderpay, say). */
export class OrderpayResponseError extends Error {
  override name = 'OrderpayResponseError';
  readonly status: number;
  /** The body as read: parsed JSON, else its text. */
  readonly body: unknown;
  readonly response: Response;

  constructor(response: Response, body: unknown, message = `${response.status} ${response.statusText}`.trim()) {
    super(message);
    this.status = response.status;
    this.body = body;
    this.response = response;
  }
}

/** A refusal of orderpay: the problem body it answered, with its status and code. */
export class OrderpayProblem extends OrderpayResponseError {
  override name = 'OrderpayProblem';
  readonly code: ProblemCode;
  readonly problem: Problem;

  constructor(response: Response, problem: Problem) {
    super(response, problem, `${response.status} ${problem.code}: ${problem.detail}`);
    this.code = problem.code;
    this.problem = problem;
  }
}

// RFC 9457 §3: a problem is a JSON object; orderpay's always carry a `code` (docs/errors.md).
const isProblem = (body: unknown): body is Problem =>
  typeof body === 'object' && body !== null && typeof (body as { code?: unknown }).code === 'string';

/** The error a non-2xx answer stands for: an OrderpayProblem when its body is a problem. */
export function toResponseError(response: Response, body: unknown): OrderpayResponseError {
  return isProblem(body) ? new OrderpayProblem(response, body) : new OrderpayResponseError(response, body);
}

/** What an openapi-fetch call resolves to: the body of a 2xx answer, or the error of another. */
interface FetchResult {
  data?: unknown;
  error?: unknown;
  response: Response;
}

/** The data of the answer's 2xx branch (openapi-fetch types it `{ data, error?: never }`). */
type SuccessData<Result extends FetchResult> = Extract<Result, { error?: never }>['data'];

/**
 * The body of a 2xx answer; any other answer is thrown as an OrderpayProblem (or, when its body is
 * not a problem, an OrderpayResponseError): `const order = unwrap(await client.GET('/orders/{orderId}', …))`.
 */
export function unwrap<Result extends FetchResult>(result: Result): SuccessData<Result> {
  if (!result.response.ok) throw toResponseError(result.response, result.error);
  return result.data;
}
