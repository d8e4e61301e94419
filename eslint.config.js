// Lint rules follow the house style in shared/design.md: no `any`, no floating promises,
// no console in library code (the CLI and scripts are the only places that print). The layer rule
// of src/ is dependency-cruiser's (.dependency-cruiser.mjs, run by scripts/check-layers.mjs).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'dist-check/**', 'node_modules/**', 'coverage/**', 'test-artifacts/**', 'bench/tmp/**', 'bench/results/**', '.scratch/**', 'test/agent-clis/**'] },
  js.configs.recommended,
  ...tseslint.configs.strictTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      'no-console': 'error',
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/restrict-template-expressions': ['error', { allowNumber: true, allowBoolean: true }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-confusing-void-expression': 'off',
      '@typescript-eslint/no-unnecessary-condition': ['error', { allowConstantLoopConditions: true }],
      'no-control-regex': 'off',
    },
  },
  {
    // Surfaces that talk to a human, and tooling scripts, may print.
    files: ['src/cli/**', 'bench/**', 'scripts/**', 'test/**'],
    rules: { 'no-console': 'off' },
  },
  {
    files: ['**/*.test.ts', 'test/**'],
    rules: {
      '@typescript-eslint/no-non-null-assertion': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      // Test helpers cast wire results to the shape a test expects.
      '@typescript-eslint/no-unnecessary-type-parameters': 'off',
    },
  },
  {
    // The dashboard speaks the wire: it may import the shared vocabulary and the protocol's types,
    // and the one pure module it renders with (ANSI colours as spans).
    files: ['web/src/**/*.ts', 'web/src/**/*.tsx'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ regex: '^(\\.\\./)+src/(?!contract/|protocol/|output/ansi-spans\\.js$)', message: 'web/ may import only src/contract and src/protocol (type-only), and src/output/ansi-spans.' }] }],
    },
  },
  {
    files: ['eslint.config.js'],
    ...tseslint.configs.disableTypeChecked,
  },
  {
    // Plain JavaScript that runs at install time, before TypeScript is there.
    files: ['scripts/**/*.mjs', '.dependency-cruiser.mjs'],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: { parserOptions: { projectService: false, project: null }, globals: { process: 'readonly', console: 'readonly' } },
  },
);
