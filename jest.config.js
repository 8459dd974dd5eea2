import { availableParallelism } from 'node:os';
import preset from './jest.preset.js';

// One run over the whole workspace. Unit specs are pure; int-specs talk to the real
// PostgreSQL and NATS named by TEST_DATABASE_URL / TEST_NATS_URL, isolated per run.
export default {
  ...preset,
  rootDir: '.',
  testMatch: ['<rootDir>/{libs,services,launcher,e2e,console}/**/*.{spec,int-spec,e2e-spec}.ts'],
  testTimeout: 30000,
  // The cluster suite (three NATS nodes, two replicas of every service: 17 processes) runs alone,
  // after `npm test`, as its own CI step (`.ci/run`, `npm run test:cluster`): beside another suite
  // on two cores it would measure CPU starvation, not failover.
  testPathIgnorePatterns: process.env.CLUSTER_TESTS === '1' ? ['/node_modules/'] : ['/node_modules/', '<rootDir>/e2e/cluster\\.e2e-spec\\.ts$'],
  // Most files wait on services, sockets and timers rather than compute, so two at a time on
  // two cores took the suite from 1,058 s to 446 s (jest's default there is one, in band).
  maxWorkers: Math.max(2, availableParallelism() - 1),
  reporters: ['default', '<rootDir>/tools/jest-summary-reporter.cjs'],
};
