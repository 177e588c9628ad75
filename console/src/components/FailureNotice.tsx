// A failed request where it happened: the problem's title and detail, its field errors, and the
// request id to quote; a session that expired offers to sign in again.
import { useLocation } from 'react-router';
import type { Failure } from '../api/failure.ts';
import { useConsole } from '../context.ts';

export function FailureNotice({ failure, onRetry }: { failure: Failure; onRetry?: () => void }) {
  const { session } = useConsole();
  const location = useLocation();
  return (
    <div className="failure" role="alert">
      <p>
        <strong>{failure.title}</strong>
        {failure.status ? <span className="muted"> ({failure.status})</span> : null}
      </p>
      <p>{failure.detail}</p>
      {failure.errors?.length ? (
        <ul>
          {failure.errors.map((error) => (
            <li key={`${error.where}:${error.detail}`}>
              {error.where ? <code>{error.where}</code> : null} {error.detail}
            </li>
          ))}
        </ul>
      ) : null}
      {failure.requestId ? <p className="muted">Request id {failure.requestId}</p> : null}
      {failure.kind === 'expired' ? (
        <button type="button" onClick={() => void session.startSignIn(location.pathname + location.search)}>
          Sign in again
        </button>
      ) : null}
      {onRetry && failure.kind !== 'expired' ? (
        <button type="button" className="secondary" onClick={onRetry}>
          Try again
        </button>
      ) : null}
    </div>
  );
}

/** What an action came to, where it was asked for: what it did, or the problem that stopped it. */
export function ActionOutcome({ notice, failure }: { notice: string | undefined; failure: Failure | undefined }) {
  return (
    <>
      {notice ? (
        <p role="status" className="success">
          {notice}
        </p>
      ) : null}
      {failure ? <FailureNotice failure={failure} /> : null}
    </>
  );
}
