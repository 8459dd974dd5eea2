/**
 * Helpers for integration and end-to-end tests: a fresh database and a unique bus prefix per
 * run, so runs never see each other's data. Never imported by production code.
 */
export {
  createTestDatabase,
  testNatsUrl,
  testPostgresAdminUrl,
  uniqueBusPrefix,
  uniqueSuffix,
  type TestDatabase,
} from './infrastructure.js';
