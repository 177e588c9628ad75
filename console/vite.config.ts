// The console's build: React through Vite into dist/, served by orderpay under /console
// (src/http/console-page.ts). Every asset lands in dist/assets with its content's hash in its
// name, which is what lets the server cache them for a year; nothing is inlined into index.html,
// whose Content-Security-Policy allows no inline script or style.
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

export default defineConfig({
  base: '/console/',
  plugins: [react()],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    assetsDir: 'assets',
    // Never a data: URL for a small asset (an image or font inlined into CSS or a script).
    assetsInlineLimit: 0,
    // Modern browsers only: no module-preload polyfill.
    modulePreload: { polyfill: false },
    chunkSizeWarningLimit: 1024,
  },
});
