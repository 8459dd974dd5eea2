/**
 * Helpers for integration and end-to-end tests: a fresh database and a unique bus prefix per
 * run, so runs never see each other's data. Never imported by production code.
 */
export {
  createTestDatabase,
  queryDatabase,
  testNatsUrl,
  testPostgresAdminUrl,
  uniqueBusPrefix,
  uniqueSuffix,
  type TestDatabase,
} from './infrastructure.js';
export {
  startTestSystem,
  TEST_CONSOLE_JWT_SECRET,
  TEST_SECRETS_KEY,
  type TestSystem,
  type TestSystemOptions,
} from './test-system.js';
export { consoleJwt, HttpClient, type HttpResult } from './http-client.js';
export { deletePrefixedStreams } from './nats-cleanup.js';
export { FIXED_FUZZ_SEED, fuzzParameters, type FuzzParameters } from './fuzz-parameters.js';
