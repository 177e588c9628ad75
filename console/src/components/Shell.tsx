// The frame of every page: a skip link, the banner with the navigation and who is signed in, the
// connection's state, the page in <main>, and the footer.
import { NavLink, Outlet } from 'react-router';
import { useConnection, useConsole, useSession } from '../context.ts';

function ConnectionBanner() {
  const { offline, rateLimitedFor } = useConnection();
  if (offline) {
    return (
      <p className="banner banner-offline" role="alert">
        You are offline, or the server cannot be reached. What you see may be out of date; changes wait until the connection is back.
      </p>
    );
  }
  if (rateLimitedFor !== null) {
    return (
      <p className="banner" role="status">
        Too many requests: waiting {rateLimitedFor} seconds, then trying again.
      </p>
    );
  }
  return null;
}

export function Shell() {
  const { session } = useConsole();
  const state = useSession();
  const staff = state.status === 'signed-in' && state.staff;
  return (
    <>
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <header className="container-fluid site-header">
        <nav aria-label="Console">
          <ul>
            <li>
              <strong>orderpay console</strong>
            </li>
          </ul>
          {staff ? (
            <ul>
              <li>
                <NavLink to="/" end>
                  Overview
                </NavLink>
              </li>
              <li>
                <NavLink to="/orders">Orders</NavLink>
              </li>
              <li>
                <NavLink to="/payments">Payments</NavLink>
              </li>
              <li>
                <NavLink to="/webhooks">Webhooks</NavLink>
              </li>
            </ul>
          ) : null}
          {state.status === 'signed-in' ? (
            <ul>
              <li className="muted">{state.tokens.email ?? 'Signed in'}</li>
              <li>
                <button type="button" className="secondary" onClick={() => void session.signOut()}>
                  Sign out
                </button>
              </li>
            </ul>
          ) : null}
        </nav>
      </header>
      <ConnectionBanner />
      <main id="main" className="container" tabIndex={-1}>
        <Outlet />
      </main>
      <footer className="container muted">
        <small>orderpay staff console · API v3</small>
      </footer>
    </>
  );
}
