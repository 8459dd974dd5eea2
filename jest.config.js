import { availableParallelism } from 'node:os';
import preset from './jest.preset.js';

// One run over the whole workspace. Unit specs are pure; int-specs talk to the real
// PostgreSQL and NATS named by TEST_DATABASE_URL / TEST_NATS_URL, isolated per run.
export default {
  ...preset,
  rootDir: '.',
  testMatch: ['<rootDir>/{libs,services,launcher,e2e,console}/**/*.{spec,int-spec,e2e-spec}.ts'],
  testTimeout: 30000,
  // Most files wait on services, sockets and timers rather than compute, so two at a time on
  // two cores took the suite from 1,058 s to 446 s (jest's default there is one, in band).
  maxWorkers: Math.max(2, availableParallelism() - 1),
  reporters: ['default', '<rootDir>/tools/jest-summary-reporter.cjs'],
};
