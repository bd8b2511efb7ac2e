// Lint rules for the JS layer, the inspector, the tests and the benchmarks (npm test runs
// `eslint .`; errors fail it). The recommended set, plus what this code base keeps to.
import js from '@eslint/js'
import globals from 'globals'

export default [
  { ignores: ['dist/', 'build*/', 'node_modules/', 'tests/artifacts/', 'bench/results/'] },
  js.configs.recommended,
  {
    languageOptions: {
      ecmaVersion: 2024,
      sourceType: 'module',
      globals: { ...globals.browser, ...globals.node },
    },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      'no-unused-vars': ['error', { args: 'after-used', argsIgnorePattern: '^_', varsIgnorePattern: '^_$',
        destructuredArrayIgnorePattern: '^_', ignoreRestSiblings: true, caughtErrors: 'none' }],
      'no-var': 'error',
      'prefer-const': ['error', { destructuring: 'all' }],
      eqeqeq: ['error', 'always', { null: 'ignore' }],
      'no-throw-literal': 'error',
      'no-implicit-coercion': ['error', { allow: ['!!', '+'] }],
      'no-shadow-restricted-names': 'error',
      'no-useless-concat': 'error',
      'no-constant-binary-expression': 'error',
    },
  },
]
