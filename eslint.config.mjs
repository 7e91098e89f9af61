// Lint and format in one pass, as Effect's own repositories do: typescript-eslint's recommended
// rules for correctness, and @effect/eslint-plugin's dprint rule for the layout (`npm run lint`;
// `npm run lint:fix` rewrites the layout).
import effect from "@effect/eslint-plugin"
import tseslint from "typescript-eslint"

export default tseslint.config(
  { ignores: ["dist/**", "node_modules/**", "src/a2a/schemas/**", "test/clients/**", "bench/results/**", "coverage/**"] },
  ...tseslint.configs.recommended,
  {
    files: ["**/*.ts", "**/*.mjs"],
    plugins: { "@effect": effect },
    rules: {
      // tsc checks unused names (noUnusedLocals, noUnusedParameters), with the `_` convention.
      "@typescript-eslint/no-unused-vars": "off",
      // `interface Task extends Schema.Schema.Type<typeof Task> {}`: Effect's opaque schema types.
      // A timer assigned after the closures that clear it are made.
      "prefer-const": ["error", { ignoreReadBeforeAssign: true }],
      "@typescript-eslint/no-empty-object-type": ["error", { allowInterfaces: "with-single-extends" }],
      "@effect/dprint": ["error", {
        config: {
          indentWidth: 2,
          lineWidth: 140,
          semiColons: "asi",
          quoteStyle: "alwaysDouble",
          trailingCommas: "never",
          operatorPosition: "maintain",
          "arrowFunction.useParentheses": "force"
        }
      }]
    }
  },
  {
    // Tests poke at shapes on purpose; src/ says why at each `any` (AnyCommand in src/cli/commandTree.ts).
    files: ["test/**"],
    rules: { "@typescript-eslint/no-explicit-any": "off" }
  }
)
