import { availableParallelism } from 'node:os';
import preset from './jest.preset.js';

// One run over the whole workspace. Unit specs are pure; int-specs talk to the real
// PostgreSQL and NATS named by TEST_DATABASE_URL / TEST_NATS_URL, isolated per run.
export default {
  ...preset,
  rootDir: '.',
  testMatch: ['<rootDir>/{libs,services,launcher,e2e,console}/**/*.{spec,int-spec,e2e-spec}.ts'],
  testTimeout: 30000,
  // The cluster suite (three NATS nodes, two replicas of every service) is not yet steady enough
  // to gate CI: of four runs at CI size on 2 cores, one passed (a rolling restart missed 1-4 polls
  // under load; once a NATS node kill delayed 24 callbacks past 10 s in a consumer). It runs with
  // `npm run faults` and `npm run test:cluster` (CLUSTER_TESTS=1) until those are fixed (issue 29).
  testPathIgnorePatterns: process.env.CLUSTER_TESTS === '1' ? ['/node_modules/'] : ['/node_modules/', '<rootDir>/e2e/cluster\\.e2e-spec\\.ts$'],
  // Most files wait on services, sockets and timers rather than compute, so two at a time on
  // two cores took the suite from 1,058 s to 446 s (jest's default there is one, in band).
  maxWorkers: Math.max(2, availableParallelism() - 1),
  reporters: ['default', '<rootDir>/tools/jest-summary-reporter.cjs'],
};
