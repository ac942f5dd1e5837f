// ESLint flat config (kept in .ci/ so the top level stays as the layout prescribes).
import tseslint from 'typescript-eslint';

/**
 * Tests: may import the conformance kit, fakes and `test/` helpers. A provider's fake and conformance
 * subject are not exempt: the types and helpers they need are part of the toolkit behind `core/spec`.
 */
export const SCAFFOLDING = ['**/*.test.ts', '**/__fixtures__/**'];

/**
 * Plugin code reaches the core only through the toolkit, `core/spec` (its index) or the toolkit of
 * its audience (`core/spec/provider/index.js`, `core/spec/guardrail/index.js`, `core/spec/sink/index.js`), and shares code
 * through `plugins/shared`: anything else of the project (other core modules, `test/`, `config/`)
 * is refused. Import specifiers are relative, so the patterns match them from any depth.
 */
export const PLUGIN_IMPORTS = {
  patterns: [
    {
      regex: '^(?:\\.\\./)+(?:core/(?!spec/(?:provider/|guardrail/|sink/)?index\\.js$)|test/|config/|bench/|examples/)',
      message: 'Plugin code imports only core/spec (its index, the plugin toolkit) and plugins/shared. The toolkits by audience, core/spec/provider/index.js, core/spec/guardrail/index.js and core/spec/sink/index.js, are the same toolkit.',
    },
  ],
};

/** The core and the configuration types never depend on a plugin: plugins depend on them. */
export const CORE_IMPORTS = {
  patterns: [
    {
      regex: '^(?:\\.\\./)+plugins/',
      message: 'core/ and config/ never import plugins/: extend the contract in core/spec instead.',
    },
  ],
};

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', '**/__fixtures__/**'] },
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-non-null-assertion': 'off',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    files: ['plugins/**/*.ts', 'examples/provider/**/*.ts', 'examples/ndjson-provider/**/*.ts'],
    ignores: [...SCAFFOLDING, 'examples/provider/gateway.config.ts', 'examples/ndjson-provider/gateway.config.ts'],
    rules: { 'no-restricted-imports': ['error', PLUGIN_IMPORTS] },
  },
  {
    files: ['core/**/*.ts', 'config/**/*.ts'],
    ignores: SCAFFOLDING,
    rules: { 'no-restricted-imports': ['error', CORE_IMPORTS] },
  },
);
