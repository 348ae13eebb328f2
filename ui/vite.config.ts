import { defineConfig } from "vite";

// Relative asset paths; no remote content, nothing inlined that the CSP would refuse.
export default defineConfig({
  clearScreen: false,
  build: { outDir: "dist", emptyOutDir: true, target: "safari15", assetsInlineLimit: 0 },
});
