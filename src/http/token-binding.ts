// RFC 9449 §7: an access token against the scheme it came under and the key it is bound to. A
// DPoP-bound token (cnf.jkt) passes only as `Authorization: DPoP` with a valid proof by that key on
// this request, whose jti no process has seen; an unbound token only as Bearer. Shared by the API
// (./authenticate.ts) and /oauth/userinfo (src/auth/userinfo.routes.ts).
import type { FastifyRequest } from 'fastify';
import type { Clock } from '../core/clock.ts';
import { DpopProofRejectedError, expectedHtu, verifyDpopProof } from './dpop.ts';
import type { DpopReplayStore } from './dpop-replay.ts';

/** RFC 9449 §7.1/§7.2: why the token and its proof are refused; error is the challenge's. */
export class TokenBindingRefusal extends Error {
  readonly error: 'invalid_token' | 'invalid_dpop_proof';
  readonly description: string;

  constructor(error: 'invalid_token' | 'invalid_dpop_proof', description: string) {
    super(`${error}: ${description}`);
    this.error = error;
    this.description = description;
  }
}

/** The error_description of a bound token sent as Bearer. */
export const BOUND_TOKEN_AS_BEARER = 'the token is bound to a DPoP key (cnf.jkt): send it as Authorization: DPoP with a DPoP proof';

/** The error_description of an unbound token sent under the DPoP scheme. */
export const UNBOUND_TOKEN_AS_DPOP = 'the token is not bound to a DPoP key: send it as Authorization: Bearer';

/** RFC 9449 §7.2: a bound token is never a bearer token, or a stolen one would work anywhere. */
export function refuseBoundBearer(jkt: string | undefined): void {
  if (jkt !== undefined) throw new TokenBindingRefusal('invalid_token', BOUND_TOKEN_AS_BEARER);
}

export interface DpopCheck {
  /**
   * For a token sent as `Authorization: DPoP`: resolves when it is bound (cnf.jkt) and the request
   * carries a valid proof by that key; TokenBindingRefusal otherwise. Rejects with the store's own
   * error when the proof's jti cannot be recorded.
   */
  confirm(request: FastifyRequest, token: string, jkt: string | undefined): Promise<void>;
}

/** rawHeaders alternates names and values: the values of the DPoP fields. */
function dpopHeaderValues(rawHeaders: readonly string[]): string[] {
  const values: string[] = [];
  for (let i = 0; i < rawHeaders.length; i += 2) if (rawHeaders[i]!.toLowerCase() === 'dpop') values.push(rawHeaders[i + 1]!);
  return values;
}

/** §4.3 item 1: exactly one DPoP field. */
function readProof(request: FastifyRequest): string {
  const values = dpopHeaderValues(request.raw.rawHeaders);
  if (values.length === 0) throw new TokenBindingRefusal('invalid_dpop_proof', 'no DPoP proof was sent (DPoP header)');
  if (values.length > 1) throw new TokenBindingRefusal('invalid_dpop_proof', 'several DPoP headers were sent');
  return values[0]!;
}

export function createDpopCheck({ publicUrl, replays, now }: { publicUrl: string; replays: DpopReplayStore; now: Clock }): DpopCheck {
  async function confirmProof(request: FastifyRequest, token: string, jkt: string): Promise<void> {
    const proof = readProof(request);
    const expected = {
      method: request.method,
      url: expectedHtu(publicUrl, request.url),
      accessToken: token,
      jkt,
      nowSeconds: now().getTime() / 1000,
    };
    let checked: Awaited<ReturnType<typeof verifyDpopProof>>;
    try {
      checked = await verifyDpopProof(proof, expected);
    } catch (error) {
      if (error instanceof DpopProofRejectedError) throw new TokenBindingRefusal('invalid_dpop_proof', error.description);
      throw error;
    }
    // Last: a proof that fails another check does not use up its jti.
    if (!(await replays.recordFirstUse(jkt, checked.jti, checked.iat))) {
      throw new TokenBindingRefusal('invalid_dpop_proof', 'the DPoP proof was used before (jti)');
    }
  }

  return {
    async confirm(request, token, jkt) {
      // §7.2 lets the server refuse it: a client that sends a proof expects a binding to be checked.
      if (jkt === undefined) throw new TokenBindingRefusal('invalid_token', UNBOUND_TOKEN_AS_DPOP);
      await confirmProof(request, token, jkt);
    },
  };
}
