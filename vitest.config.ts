import { defineConfig } from "vitest/config";

// Two projects: "unit" (beside their modules, no Docker) and "docker" (scenarios against real
// OpenClaw in containers, plus the lab's own tests that need an engine), one file at a time.
export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: "unit",
          include: ["lab/**/*.test.ts", "docker/**/*.test.ts", "scenarios/**/*.test.ts"],
          exclude: ["**/*.docker.test.ts", "**/node_modules/**"],
          testTimeout: 30_000,
          // Hooks start servers as child processes (the MCP servers, the scripted model): on a
          // machine busy with other work (a lab beside it holding its CPU share) two MCP servers
          // took more than vitest's default 10 s to start (2026-12-03), a fail of the machine.
          hookTimeout: 60_000,
          // A test's own stderr (the lab's progress lines from fixtures) is shown only when it
          // fails; each file's temporary files go in a folder removed when it is done.
          setupFiles: ["lab/testing/held-stderr.ts", "lab/testing/own-tmp.ts"],
        },
      },
      {
        test: {
          name: "docker",
          // Scenarios, and the lab's own tests that need a Docker engine.
          include: ["scenarios/**/*.scenario.ts", "lab/**/*.docker.test.ts"],
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
