// Builds the dashboard into dist/web, which the daemon serves. Run from the package root:
// `vite build --config web/vite.config.ts`.
import { fileURLToPath } from 'node:url';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

const webRoot = fileURLToPath(new URL('.', import.meta.url));

export default defineConfig({
  root: webRoot,
  // Relative asset URLs, so the bundle works whatever path the daemon mounts it under.
  base: './',
  plugins: [react()],
  build: {
    outDir: fileURLToPath(new URL('../dist/web', import.meta.url)),
    // The folder is outside web/, so Vite only empties it when told; it holds nothing but the bundle.
    emptyOutDir: true,
    // Kept for debugging a local tool in the browser; served only to the logged-in dashboard.
    sourcemap: true,
    // One chunk, mostly xterm.js and React (~630 kB, ~175 kB gzipped), loaded once from loopback.
    chunkSizeWarningLimit: 1024,
  },
});
