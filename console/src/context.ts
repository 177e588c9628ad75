// What every page of the console reaches: the settings, the session, the API client and the
// connection's state.
import type { OrderpayClient } from '@orderpay/client';
import { createContext, useContext, useSyncExternalStore } from 'react';
import type { Connection, ConnectionState } from './api/connection.ts';
import type { Session, SessionState } from './auth/session.ts';
import type { ConsoleSettings } from './settings.ts';

export interface ConsoleServices {
  settings: ConsoleSettings;
  session: Session;
  api: OrderpayClient;
  connection: Connection;
}

export const ConsoleContext = createContext<ConsoleServices | null>(null);

export function useConsole(): ConsoleServices {
  const services = useContext(ConsoleContext);
  if (!services) throw new Error('useConsole outside the console');
  return services;
}

export function useSession(): SessionState {
  const { session } = useConsole();
  return useSyncExternalStore(session.subscribe, session.getSnapshot);
}

export function useConnection(): ConnectionState {
  const { connection } = useConsole();
  return useSyncExternalStore(connection.subscribe, connection.getSnapshot);
}
