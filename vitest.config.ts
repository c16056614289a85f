import { defineConfig } from "vitest/config";

// Two projects: unit tests beside their modules (no Docker), and scenarios (real
// containers, one shared lab per file set up in the scenario itself).
export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: "unit",
          include: ["lab/**/*.test.ts", "docker/**/*.test.ts"],
          testTimeout: 30_000,
        },
      },
      {
        test: {
          name: "scenarios",
          include: ["scenarios/**/*.scenario.ts"],
          // Scenarios share one Docker engine and a 2-core machine: run files one by one.
          fileParallelism: false,
          testTimeout: 300_000,
          hookTimeout: 600_000,
          env: { TESTCONTAINERS_RYUK_DISABLED: "true", TESTCONTAINERS_HOST_OVERRIDE: "localhost" },
        },
      },
    ],
  },
});
