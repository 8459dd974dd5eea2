import { availableParallelism } from 'node:os';
import preset from './jest.preset.js';

// One run over the whole workspace. Unit specs are pure; int-specs talk to the real
// PostgreSQL and NATS named by TEST_DATABASE_URL / TEST_NATS_URL, isolated per run.
export default {
  ...preset,
  rootDir: '.',
  testMatch: ['<rootDir>/{libs,services,launcher,e2e,console}/**/*.{spec,int-spec,e2e-spec}.ts'],
  testTimeout: 30000,
  // The fault and cluster suites (the services as processes of their own, killed and restarted;
  // the cluster's 17 processes) run alone, after `npm test`, as a CI step of their own (`.ci/run`,
  // `npm run test:labs`): their time limits (serving again within 10 s, runs within 10 s) are about
  // our recovery, and beside another suite on two cores they measured that suite's CPU instead.
  testPathIgnorePatterns: process.env.LAB_SUITES === '1' ? ['/node_modules/'] : ['/node_modules/', '<rootDir>/e2e/(faults|cluster)\\.e2e-spec\\.ts$'],
  // Most files wait on services, sockets and timers rather than compute, so two at a time on
  // two cores took the suite from 1,058 s to 446 s (jest's default there is one, in band).
  maxWorkers: Math.max(2, availableParallelism() - 1),
  reporters: ['default', '<rootDir>/tools/jest-summary-reporter.cjs'],
};
