// What the console tells about its connection to the API, beside whatever page is open: offline
// (the browser says so, or a request failed to reach the server), or waiting out a rate limit.

export interface ConnectionState {
  offline: boolean;
  /** Seconds a rate-limited request waits before it is sent again; null when none waits. */
  rateLimitedFor: number | null;
}

export class Connection {
  private state: ConnectionState = { offline: typeof navigator !== 'undefined' && navigator.onLine === false, rateLimitedFor: null };
  private readonly listeners = new Set<() => void>();

  constructor() {
    window.addEventListener('offline', () => this.update({ offline: true }));
    window.addEventListener('online', () => this.update({ offline: false }));
  }

  subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };

  getSnapshot = (): ConnectionState => this.state;

  update(change: Partial<ConnectionState>): void {
    const next = { ...this.state, ...change };
    if (next.offline === this.state.offline && next.rateLimitedFor === this.state.rateLimitedFor) return;
    this.state = next;
    for (const listener of this.listeners) listener();
  }
}
