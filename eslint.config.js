// Lint: typescript-eslint's type-aware recommended rules over every TypeScript file the build compiles
// (src, test, bench), after Prettier has formatted them (`npm run lint` runs both; .ci/run runs it).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'native/build/', 'bench/results/', '.hive-bash/'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      // `_` names what a destructuring leaves out on purpose.
      '@typescript-eslint/no-unused-vars': ['error', { varsIgnorePattern: '^_', argsIgnorePattern: '^_' }],
    },
  },
  {
    files: ['src/**/*.ts'],
    rules: {
      // A function reads as named steps: past about 60 lines, split it into the steps it has.
      'max-lines-per-function': ['error', { max: 60, skipBlankLines: true, skipComments: true }],
    },
  },
  {
    files: ['test/**/*.ts', 'bench/**/*.ts'],
    rules: {
      // node:test's test() and describe() return promises the runner awaits itself.
      '@typescript-eslint/no-floating-promises': [
        'error',
        {
          allowForKnownSafeCalls: [
            { from: 'package', package: 'node:test', name: ['test', 'describe', 'it', 'suite', 'before', 'after'] },
          ],
        },
      ],
      // Tests and benchmarks read the daemon's answers as parsed JSON (any) and check them (assertions,
      // a bench's own checks): those are the type check. In src these rules hold.
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      // A failed assertion's message shows lists of pids as they are.
      '@typescript-eslint/restrict-template-expressions': ['error', { allowArray: true, allowNumber: true }],
    },
  },
  { files: ['**/*.js'], ...tseslint.configs.disableTypeChecked },
  // native/install.js and prebuild.js: plain Node scripts, run before (or without) the TypeScript build.
  { files: ['native/*.js'], languageOptions: { globals: { console: 'readonly', process: 'readonly' } } },
);
