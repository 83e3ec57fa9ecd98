// Lint for the whole project: typescript-eslint's type-aware recommended rules everywhere, and
// stricter ones on the product (resources/). Formatting is Prettier's job (.prettierrc.json).
import eslint from "@eslint/js";
import tseslint from "typescript-eslint";

export default tseslint.config(
  {
    ignores: [
      "dist/**",
      "node_modules/**",
      ".cache/**",
      ".pulumi/**",
      // Tool configuration (this file, .dependency-cruiser.cjs): plain JavaScript outside the TypeScript project.
      "**/*.mjs",
      "**/*.cjs",
      // A separate program with its own package.json/tsconfig and dependencies (typechecked by
      // tools/typecheck-examples.sh).
      "examples/azure-native/**",
    ],
  },
  eslint.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      // `typeof import("…")` stays allowed: it types the require() calls made inside functions.
      "@typescript-eslint/consistent-type-imports": ["error", { disallowTypeAnnotations: false }],
    },
  },
  {
    files: ["resources/**/*.ts"],
    rules: {
      "@typescript-eslint/no-non-null-assertion": "error",
      "@typescript-eslint/no-explicit-any": "error",
      // A file a reader does not have to scroll through (issue 9).
      "max-lines": ["error", { max: 250, skipBlankLines: false, skipComments: false }],
    },
  },
);
