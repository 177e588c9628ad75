// What the server tells the console at /console/config.json (src/http/console-page.ts): where to
// sign in, which API to call and in which version. Read once, before anything renders.

export interface ConsoleSignIn {
  clientId: string;
  redirectUri: string;
  postLogoutRedirectUri: string;
  scope: string;
}

export interface ConsoleSettings {
  issuer: string;
  apiUrl: string;
  apiVersion: number;
  /** Scopes only staff are granted: a token with none of them is a customer's. */
  staffScopes: string[];
  /** Null where this deployment cannot sign the console in (PUBLIC_URL on plain http off loopback). */
  signIn: ConsoleSignIn | null;
}

export async function loadSettings(): Promise<ConsoleSettings> {
  const response = await fetch(`${import.meta.env.BASE_URL}config.json`, { headers: { accept: 'application/json' } });
  if (!response.ok) throw new Error(`the console's settings could not be read (${response.status})`);
  return (await response.json()) as ConsoleSettings;
}
