// The console's entry: read the server's settings, restore the session of this tab, render.
import '@picocss/pico/css/pico.min.css';
import './console.css';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { createBrowserRouter, RouterProvider } from 'react-router';
import { createApi } from './api/api.ts';
import { Connection } from './api/connection.ts';
import { Session } from './auth/session.ts';
import { Shell } from './components/Shell.tsx';
import { ConsoleContext } from './context.ts';
import { CallbackPage } from './pages/CallbackPage.tsx';
import { Gate } from './pages/Gate.tsx';
import { NotFoundPage } from './pages/NotFoundPage.tsx';
import { OrderPage } from './pages/OrderPage.tsx';
import { OrdersPage } from './pages/OrdersPage.tsx';
import { OverviewPage } from './pages/OverviewPage.tsx';
import { PaymentPage } from './pages/PaymentPage.tsx';
import { PaymentsPage } from './pages/PaymentsPage.tsx';
import { SignedOutPage } from './pages/SignedOutPage.tsx';
import { WebhookEndpointPage } from './pages/WebhookEndpointPage.tsx';
import { WebhooksPage } from './pages/WebhooksPage.tsx';
import { loadSettings } from './settings.ts';

const router = createBrowserRouter(
  [
    {
      path: '/',
      element: <Shell />,
      children: [
        { path: 'callback', element: <CallbackPage /> },
        { path: 'signed-out', element: <SignedOutPage /> },
        {
          element: <Gate />,
          children: [
            { index: true, element: <OverviewPage /> },
            { path: 'orders', element: <OrdersPage /> },
            { path: 'orders/:orderId', element: <OrderPage /> },
            { path: 'payments', element: <PaymentsPage /> },
            { path: 'payments/:paymentId', element: <PaymentPage /> },
            { path: 'webhooks', element: <WebhooksPage /> },
            { path: 'webhooks/:endpointId', element: <WebhookEndpointPage /> },
            { path: '*', element: <NotFoundPage /> },
          ],
        },
      ],
    },
  ],
  { basename: '/console' },
);

function showFatal(root: HTMLElement, message: string): void {
  const main = document.createElement('main');
  main.className = 'container';
  const heading = document.createElement('h1');
  heading.textContent = 'The console cannot start';
  const text = document.createElement('p');
  text.textContent = message;
  main.append(heading, text);
  root.replaceChildren(main);
}

async function start(): Promise<void> {
  const root = document.getElementById('root')!;
  let settings: Awaited<ReturnType<typeof loadSettings>>;
  try {
    settings = await loadSettings();
  } catch (error) {
    showFatal(root, error instanceof Error ? error.message : String(error));
    return;
  }
  if (!settings.signIn) {
    showFatal(
      root,
      'This server cannot sign the console in: its PUBLIC_URL must be https (or http on a loopback host). See docs/console.md.',
    );
    return;
  }
  const session = new Session(settings, settings.signIn);
  const connection = new Connection();
  const api = createApi(settings, session, connection);
  createRoot(root).render(
    <StrictMode>
      <ConsoleContext value={{ settings, session, api, connection }}>
        <RouterProvider router={router} />
      </ConsoleContext>
    </StrictMode>,
  );
}

void start();
