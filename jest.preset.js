// Shared Jest settings: native ESM (Nest 12 ships ESM only) compiled by ts-jest, which keeps
// decorator metadata for Nest's dependency injection. Run with --experimental-vm-modules.
import { createDefaultEsmPreset } from 'ts-jest';

const libs = ['api-client', 'contracts', 'bus', 'db', 'engine', 'observability', 'outbound', 'runtime', 'signatures', 'testing'];
const services = ['gateway', 'invocation', 'scheduler', 'polling', 'dead-letter', 'callback', 'webhook'];

export default {
  ...createDefaultEsmPreset({ tsconfig: '<rootDir>/tsconfig.spec.json' }),
  testEnvironment: 'node',
  moduleNameMapper: {
    '^(\\.{1,2}/.*)\\.js$': '$1',
    ...Object.fromEntries(libs.map((lib) => [`^@runline/${lib}$`, `<rootDir>/libs/${lib}/src/index.ts`])),
    ...Object.fromEntries(services.map((name) => [`^@runline/${name}-service$`, `<rootDir>/services/${name}/src/index.ts`])),
    '^@runline/invocation-subscriber-example$': '<rootDir>/examples/invocation-subscriber/invocation-subscriber.ts',
  },
};
