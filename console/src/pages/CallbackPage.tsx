// /console/callback: where the authorization server sends the browser back with a code (or an
// error). The code is redeemed once; then on to the page the sign-in began from.
import { useEffect, useRef, useState } from 'react';
import { Link, useNavigate } from 'react-router';
import { SignInError } from '../auth/session.ts';
import { useConsole } from '../context.ts';

export function CallbackPage() {
  const { session } = useConsole();
  const navigate = useNavigate();
  const [failure, setFailure] = useState<string>();
  const started = useRef(false);
  useEffect(() => {
    // A code is good once (RFC 6749 §4.1.2): never redeemed twice, even when React runs effects twice.
    if (started.current) return;
    started.current = true;
    session.completeSignIn(new URL(window.location.href)).then(
      // returnTo is a path of the console's router (below /console), as the sign-in began from.
      (returnTo) => navigate(returnTo.startsWith('/') && !returnTo.startsWith('/callback') ? returnTo : '/', { replace: true }),
      (error: unknown) =>
        setFailure(
          error instanceof SignInError ? error.message : `Signing in failed: ${error instanceof Error ? error.message : String(error)}`,
        ),
    );
  }, [session, navigate]);
  if (!failure) return <p aria-busy="true">Signing in…</p>;
  return (
    <article>
      <h1>Signing in failed</h1>
      <p role="alert" className="failure">
        {failure}
      </p>
      <Link to="/">Back to the console</Link>
    </article>
  );
}
