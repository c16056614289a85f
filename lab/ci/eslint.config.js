// Lint run by `npm run typecheck` (eslint --config lab/ci/eslint.config.js) (make typecheck, make test, the pull-request workflow): only the
// rules that catch what the type checker cannot and that once took the lab down. A promise
// nobody awaits and nobody handles ends the whole process on Node 24 when it rejects (a full
// `make lab` died that way); lab/core/escapes.ts charges such an error to its scenario at run time,
// this finds it before.
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["**/node_modules/**", ".lab/**"] },
  {
    files: ["**/*.ts"],
    languageOptions: {
      parser: tseslint.parser,
      parserOptions: { projectService: true, tsconfigRootDir: new URL("../..", import.meta.url).pathname },
    },
    plugins: { "@typescript-eslint": tseslint.plugin },
    // Directives for rules this config does not run are not problems.
    linterOptions: { reportUnusedDisableDirectives: "off" },
    rules: {
      "@typescript-eslint/no-floating-promises": "error",
      "@typescript-eslint/no-misused-promises": ["error", { checksVoidReturn: false }],
    },
  },
);
