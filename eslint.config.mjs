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
      // Separate programs with their own package.json/tsconfig: azure-native has its own dependencies
      // (typechecked by tools/typecheck-examples.sh); consumerProgram compiles against the packed
      // package (test/e2e/installedPackage.test.ts), which does not exist before that test packs it.
      "examples/azure-native/**",
      "test/fixtures/consumerProgram/**",
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
