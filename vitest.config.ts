import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // The heavy suites run apart, in `npm run test:stress` (vitest.stress.config.ts).
    exclude: ["test/stress/**", "**/node_modules/**"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Spawned CLIs and in-process peers share two cores; keep file parallelism modest.
    maxWorkers: 2,
    minWorkers: 1
  }
})
