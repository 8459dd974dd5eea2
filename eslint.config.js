// @ts-check
/**
 * Lint for the whole monorepo: `npx eslint .`
 *
 * Architecture rules (STYLE.md, "What we take" 1), by the tags in each project's project.json:
 * - a lib (`type:lib`) depends only on libs;
 * - a service (`type:service`) depends only on libs, so services never import each other;
 * - the launcher (`type:launcher`) depends on services and libs;
 * - `@runline/testing` (`scope:testing`) is imported by test files only;
 * - a lib is imported only through its public index, `@runline/<name>`: never deep
 *   (`@runline/bus/src/x`) and never by a relative path that leaves the importing project.
 * - in the gateway, a feature folder uses another only through its index.ts, platform/ uses no
 *   feature, and a handler (`*.handler.ts`) imports nothing of HTTP.
 * - persistence is raw SQL in repositories (docs/architecture.md, "Persistence: one habit"): in
 *   services/ and libs/, outside migrations, nothing of TypeORM's entity layer (decorators,
 *   `Repository`, find operators, `getRepository`, query builders, @nestjs/typeorm).
 * `tools/check-boundaries.sh` proves these rules still report violations.
 */
import nxPlugin from '@nx/eslint-plugin';
import { createProjectGraphAsync } from '@nx/devkit';
import { defineConfig, globalIgnores } from 'eslint/config';
import tseslint from 'typescript-eslint';

// `@nx/enforce-module-boundaries` reads only the project graph Nx has cached on disk. Without a
// cache (a fresh clone) it prints a warning and checks nothing; a stale cache has stale tags.
// Building the graph here keeps `npx eslint .` self-sufficient: Nx reuses the cache when nothing
// changed, and a broken workspace fails the lint instead of passing it unchecked.
await createProjectGraphAsync({ exitOnError: true });

// The plugin's typings predate ESLint 9's (eslintrc-style configs, the old RuleContext); the
// object itself is a valid flat-config plugin.
const nx = /** @type {import('eslint').ESLint.Plugin} */ (/** @type {unknown} */ (nxPlugin));

// Test code: specs anywhere, plus helpers under a project's `test/` folder (never built).
const testFiles = ['**/*.spec.ts', '**/*.int-spec.ts', '**/*.e2e-spec.ts', '**/test/**/*.ts', 'e2e/**/*.ts', 'console/e2e/**/*.ts'];

// Code that belongs to no Nx project (benchmarks, scripts). The Nx rule skips such files.
const outsideProjects = ['bench/**/*.ts', 'tools/**/*.ts', 'deploy/**/*.ts', 'docs/**/*.ts'];

const deepImport = {
  group: ['@runline/*/**'],
  message: 'Import a Runline library only through its public index: `@runline/<name>`.',
};

const relativeIntoProject = {
  regex: '^(?:\\.\\./)+(?:libs|services|launcher)/',
  message: 'Import a library as `@runline/<name>`, not by a relative path into its folder.',
};

const testingOutsideTests = {
  name: '@runline/testing',
  message: '`@runline/testing` is for test code only (*.spec.ts, *.int-spec.ts, *.e2e-spec.ts, test/).',
};

// The gateway by feature (STYLE.md, "Round 3"): services/gateway/src/<feature>/ for each capability,
// and platform/ below them for what every feature shares. A feature uses another feature only
// through that feature's index.ts; platform/ uses no feature; a handler speaks no HTTP.
const gatewaySource = 'services/gateway/src';
const gatewayTests = [`${gatewaySource}/**/*.spec.ts`, `${gatewaySource}/**/*.int-spec.ts`];

const featureInternals = {
  regex: '^\\.\\./(?!platform/)[^/.][^/]*/(?!index\\.js$)',
  message: "A gateway feature uses another feature only through its index.ts (`../<feature>/index.js`), never its files; what several features share belongs in platform/.",
};

const platformUsesNoFeature = {
  regex: '^\\.\\./\\.\\./(?!config\\.js$)',
  message: 'The gateway\'s platform/ lies below every feature: it imports no feature (nor the module), only platform/ and config.ts.',
};

const httpInHandler = {
  regex: '(?:^|/)platform/http-[^/]+/',
  message: 'A handler speaks no HTTP: guards, pipes, filters and request types (platform/http-*) belong to controllers.',
};

const HANDLER_HTTP_MESSAGE = 'A handler speaks no HTTP: throw a DomainError and let the controller\'s filter answer; HTTP decorators belong to controllers.';
const nestHttpNames = [
  'Controller', 'Get', 'Post', 'Put', 'Patch', 'Delete', 'All', 'Head', 'Options', 'Body', 'Param', 'Query', 'Req', 'Request', 'Res',
  'Response', 'Headers', 'Header', 'Ip', 'HttpCode', 'Redirect', 'UseGuards', 'UseFilters', 'UsePipes', 'UseInterceptors', 'HttpException',
  'HttpStatus', 'ExecutionContext', 'CanActivate', 'ExceptionFilter', 'ArgumentsHost',
];
const handlerHttpPaths = [
  { name: '@nestjs/common', importNames: nestHttpNames, message: HANDLER_HTTP_MESSAGE },
  { name: 'fastify', message: HANDLER_HTTP_MESSAGE },
  { name: '@nestjs/platform-fastify', message: HANDLER_HTTP_MESSAGE },
];
const handlerHttpPatterns = [
  { group: ['@nestjs/common'], importNamePattern: 'Exception$', message: HANDLER_HTTP_MESSAGE },
  { group: ['@fastify/*'], message: HANDLER_HTTP_MESSAGE },
  httpInHandler,
];

// One persistence habit (docs/architecture.md, "Persistence: one habit"): a repository runs SQL
// through `DataSource`/`EntityManager.query`, where its locks, ON CONFLICT and SKIP LOCKED are
// read and reviewed. TypeORM's entity layer would hide them, so it is not used at all (the data
// source registers no entities). It is no-restricted-syntax rather than no-restricted-imports:
// the blocks below set no-restricted-imports per folder, and a later block's setting replaces an
// earlier one instead of adding to it.
const PERSISTENCE_MESSAGE = 'Persistence is raw SQL in a repository (`manager.query(sql, params)`), not TypeORM entities: see docs/architecture.md, "Persistence: one habit".';
const typeormEntityLayer = [
  'Entity', 'ViewEntity', 'ChildEntity', 'TableInheritance', 'EntitySchema', 'Column', 'PrimaryColumn', 'PrimaryGeneratedColumn',
  'CreateDateColumn', 'UpdateDateColumn', 'DeleteDateColumn', 'VersionColumn', 'ViewColumn', 'VirtualColumn', 'ObjectIdColumn', 'Generated',
  'OneToOne', 'OneToMany', 'ManyToOne', 'ManyToMany', 'JoinColumn', 'JoinTable', 'RelationId', 'Tree', 'TreeParent', 'TreeChildren',
  'Index', 'Unique', 'Check', 'Exclusion', 'EventSubscriber', 'EntitySubscriberInterface', 'BeforeInsert', 'AfterInsert', 'BeforeUpdate',
  'AfterUpdate', 'BeforeRemove', 'AfterRemove', 'AfterLoad', 'Repository', 'TreeRepository', 'MongoRepository', 'EntityRepository',
  'IsNull', 'Not', 'In', 'Any', 'Between', 'Equal', 'LessThan', 'LessThanOrEqual', 'MoreThan', 'MoreThanOrEqual', 'Like', 'ILike', 'Raw',
  'ArrayContains', 'ArrayContainedBy', 'ArrayOverlap', 'And', 'Or', 'FindOperator', 'FindOptionsWhere', 'FindOptionsOrder',
  'FindOptionsSelect', 'FindManyOptions', 'FindOneOptions', 'SelectQueryBuilder',
];
const entityLayerMethods = [
  'getRepository', 'getTreeRepository', 'getMongoRepository', 'withRepository', 'getCustomRepository', 'createQueryBuilder',
  'findOne', 'findOneBy', 'findOneOrFail', 'findOneByOrFail', 'findBy', 'findAndCount', 'findAndCountBy', 'countBy', 'existsBy', 'upsert',
  'softDelete', 'preload',
];
const persistenceSyntax = [
  { selector: `ImportDeclaration[source.value='typeorm'] ImportSpecifier[imported.name=/^(${typeormEntityLayer.join('|')})$/]`, message: PERSISTENCE_MESSAGE },
  { selector: "ImportDeclaration[source.value='typeorm'] ImportNamespaceSpecifier", message: PERSISTENCE_MESSAGE },
  { selector: "ImportDeclaration[source.value='@nestjs/typeorm']", message: PERSISTENCE_MESSAGE },
  { selector: `CallExpression[callee.property.name=/^(${entityLayerMethods.join('|')})$/]`, message: PERSISTENCE_MESSAGE },
];

const moduleBoundaries = {
  // Lib tests use @runline/testing and @runline/testing may build on libs (say, migrations from
  // @runline/db); Nx counts test files as project dependencies, so that reads as a cycle. Only
  // test files can import @runline/testing (see no-restricted-imports), so no runtime cycle hides
  // behind this exception.
  ignoredCircularDependencies: [['testing', 'tag:type:lib']],
  depConstraints: [
    { sourceTag: 'type:lib', onlyDependOnLibsWithTags: ['type:lib'] },
    // What each lib may use. Every lib's tests may also use lib:testing (no-restricted-imports
    // below keeps it out of code that ships). Contracts depend on nothing of ours: every
    // service and lib reads them, so they must not drag anything along.
    { sourceTag: 'lib:contracts', onlyDependOnLibsWithTags: [] },
    // The typed client is for programs outside Runline (and the e2e tests): nothing of ours.
    { sourceTag: 'lib:api-client', onlyDependOnLibsWithTags: [] },
    { sourceTag: 'lib:bus', onlyDependOnLibsWithTags: ['lib:testing'] },
    { sourceTag: 'lib:db', onlyDependOnLibsWithTags: ['lib:bus', 'lib:testing'] },
    { sourceTag: 'lib:engine', onlyDependOnLibsWithTags: ['lib:testing'] },
    { sourceTag: 'lib:observability', onlyDependOnLibsWithTags: ['lib:testing'] },
    { sourceTag: 'lib:outbound', onlyDependOnLibsWithTags: ['lib:testing'] },
    // The delivery signatures are a wire contract both the gateway and the webhook service read.
    { sourceTag: 'lib:signatures', onlyDependOnLibsWithTags: ['lib:testing'] },
    { sourceTag: 'lib:runtime', onlyDependOnLibsWithTags: ['lib:bus', 'lib:contracts', 'lib:db', 'lib:observability', 'lib:testing'] },
    { sourceTag: 'lib:testing', onlyDependOnLibsWithTags: ['lib:bus', 'lib:contracts', 'lib:db', 'lib:observability', 'lib:runtime', 'lib:testing'] },
    { sourceTag: 'type:service', onlyDependOnLibsWithTags: ['type:lib'] },
    { sourceTag: 'type:launcher', onlyDependOnLibsWithTags: ['type:service', 'type:lib'] },
    // System tests start several services and speak HTTP to them like a client.
    { sourceTag: 'type:e2e', onlyDependOnLibsWithTags: ['type:service', 'type:lib', 'type:launcher', 'type:example'] },
    // The web console's browser tests start the system like the e2e tests; the app itself
    // imports only the typed client (no-restricted-imports below).
    { sourceTag: 'type:console', onlyDependOnLibsWithTags: ['type:service', 'type:lib'] },
    // Examples show what a program outside Runline needs: the published contracts, nothing else.
    { sourceTag: 'type:example', onlyDependOnLibsWithTags: ['lib:contracts'] },
  ],
};

export default defineConfig(
  globalIgnores([
    '**/dist/',
    '**/node_modules/',
    '**/coverage/',
    '.nx/',
    '.runline/',
    'libs/contracts/src/gen/',
  ]),

  tseslint.configs.recommended,

  {
    name: 'runline/all',
    files: ['**/*.{ts,tsx,js,mjs,cjs}'],
    plugins: { '@nx': nx },
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': [
        'error',
        {
          argsIgnorePattern: '^_',
          caughtErrorsIgnorePattern: '^_',
          destructuredArrayIgnorePattern: '^_',
          ignoreRestSiblings: true,
        },
      ],
      '@nx/enforce-module-boundaries': ['error', moduleBoundaries],
      // Not notDependOnLibsWithTags: that check is transitive over the Nx graph, and the graph
      // includes test files, so any lib whose int-spec uses @runline/testing would taint every
      // service importing that lib. A direct import ban says exactly what we mean.
      'no-restricted-imports': [
        'error',
        { paths: [testingOutsideTests], patterns: [deepImport] },
      ],
    },
  },

  {
    name: 'runline/tests',
    files: testFiles,
    rules: {
      // A spec may test its own lib through the public index (`@runline/engine` inside
      // libs/engine), which proves the export exists; production code must not, as that is a
      // runtime import cycle through index.ts.
      // The console's browser tests start the same local stand-ins of outside servers (the
      // OpenID Connect provider, service processes) as the system's e2e tests: test support,
      // shared by test files only, so it is allowed across those two test folders.
      '@nx/enforce-module-boundaries': [
        'error',
        { ...moduleBoundaries, allowCircularSelfDependency: true, allow: ['../../e2e/support/*'] },
      ],
      'no-restricted-imports': ['error', { patterns: [deepImport] }],
    },
  },

  {
    // The console speaks only the console API, through the typed client: no other code of ours.
    name: 'runline/console-app',
    files: ['console/src/**/*.{ts,tsx}'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { regex: '^@runline/(?!api-client$)', message: 'The console imports only `@runline/api-client` of our code.' },
            { regex: '^(?:\\.\\./)+(?:libs|services|launcher)/', message: 'The console imports only `@runline/api-client` of our code.' },
          ],
        },
      ],
    },
  },

  {
    name: 'runline/gateway-features',
    files: [`${gatewaySource}/**/*.ts`],
    ignores: [`${gatewaySource}/platform/**`, ...testFiles],
    rules: { 'no-restricted-imports': ['error', { paths: [testingOutsideTests], patterns: [deepImport, featureInternals] }] },
  },
  {
    name: 'runline/gateway-feature-tests',
    files: gatewayTests,
    ignores: [`${gatewaySource}/platform/**`],
    rules: { 'no-restricted-imports': ['error', { patterns: [deepImport, featureInternals] }] },
  },
  {
    name: 'runline/gateway-platform',
    files: [`${gatewaySource}/platform/**/*.ts`],
    ignores: testFiles,
    rules: { 'no-restricted-imports': ['error', { paths: [testingOutsideTests], patterns: [deepImport, platformUsesNoFeature] }] },
  },
  {
    name: 'runline/gateway-platform-tests',
    files: gatewayTests.map((glob) => glob.replace(gatewaySource, `${gatewaySource}/platform`)),
    rules: { 'no-restricted-imports': ['error', { patterns: [deepImport, platformUsesNoFeature] }] },
  },
  {
    name: 'runline/gateway-handlers',
    files: [`${gatewaySource}/**/*.handler.ts`],
    rules: {
      'no-restricted-imports': [
        'error',
        { paths: [testingOutsideTests, ...handlerHttpPaths], patterns: [deepImport, featureInternals, ...handlerHttpPatterns] },
      ],
    },
  },

  {
    name: 'runline/persistence',
    files: ['services/**/*.ts', 'libs/**/*.ts'],
    ignores: ['**/migrations/**'],
    rules: { 'no-restricted-syntax': ['error', ...persistenceSyntax] },
  },

  {
    name: 'runline/outside-projects',
    files: outsideProjects,
    rules: {
      'no-restricted-imports': ['error', { patterns: [deepImport, relativeIntoProject] }],
    },
  },
);
