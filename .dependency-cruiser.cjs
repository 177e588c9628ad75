// The layering of src/ and console/src, checked by `depcruise src console/src --config .dependency-cruiser.cjs` (part of `npm run check`).
// Paths are relative to the directory it runs in (the repository root), so every rule names `^src/...`.
// Layers, bottom up: core/ → db/ → http/ (the edge) and the domains (orders/ products/ payments/ users/) →
// flows/ auth/ jobs/ → cli/ and the entry points (main, app, config, cli, seed). Each rule's comment says why.

const DOMAIN_NAMES = 'orders|products|payments|users|events|webhooks';
const DOMAINS = `(${DOMAIN_NAMES})`;
// fastify itself, its plugins and fastify-plugin, wherever node_modules is found from the cruised directory.
const FASTIFY = '(^|/)node_modules/(fastify|fastify-plugin|@fastify/[^/]+)/';
// Packages and node built-ins that do I/O: none of them belongs in a pure rules file.
const IO_PACKAGES = '(^|/)node_modules/(pg|pg-[^/]+|@electric-sql/pglite)/';
const IO_BUILTINS = '^(node:)?(fs|fs/promises|child_process|net|http|https|http2|dgram)$';

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    // ── everywhere ─────────────────────────────────────────────────────────────────────────────
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'A cycle makes module load order matter and the layers meaningless: move the shared part down a layer.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'no-orphans',
      severity: 'error',
      comment: 'A module nothing imports is dead code (or a forgotten registration). Entry points are imported by bin/ or the tests.',
      from: {
        orphan: true,
        path: '^src/',
        pathNot: ['^src/(main|app|config|cli|seed)\\.ts$', '\\.sql$', '\\.d\\.ts$'],
      },
      to: {},
    },
    {
      name: 'not-to-dev-dep',
      severity: 'error',
      comment: 'src/ is what ships (package.json "files"); a devDependency is not installed with it. Type-only imports are erased.',
      from: { path: '^src/' },
      to: { dependencyTypes: ['npm-dev'], dependencyTypesNot: ['type-only'], pathNot: ['(^|/)node_modules/@types/'] },
    },
    {
      name: 'not-to-unresolvable',
      severity: 'error',
      comment: 'An import that does not resolve fails at run time; it also means the rules above could not see that edge.',
      from: {},
      to: { couldNotResolve: true },
    },
    {
      name: 'no-non-package-json',
      severity: 'error',
      comment: 'A package not in package.json works only while some other package happens to bring it in.',
      from: {},
      to: { dependencyTypes: ['npm-no-pkg', 'npm-unknown'] },
    },

    // ── console/ ───────────────────────────────────────────────────────────────────────────────
    {
      name: 'console-only-public-interfaces',
      severity: 'error',
      comment:
        'The staff console (console/src) is a browser app that uses only the public API, through @orderpay/client, and the authorization server: it imports nothing of the server, so it can do nothing an API client cannot.',
      from: { path: '^console/' },
      to: { path: '^(src|test|scripts|bench)/' },
    },
    {
      name: 'server-not-to-console',
      severity: 'error',
      comment: 'The server serves the console as built files (src/http/console-page.ts); it never imports its sources.',
      from: { path: '^src/' },
      to: { path: '^console/' },
    },

    // ── cli/ ───────────────────────────────────────────────────────────────────────────────────
    {
      name: 'cli-not-to-http',
      severity: 'error',
      comment: 'Commands run without a server: they use the domains and db/ directly, never the HTTP edge.',
      from: { path: '^src/cli/' },
      to: { path: '^src/http/' },
    },

    // ── core/ ──────────────────────────────────────────────────────────────────────────────────
    {
      name: 'core-only-core',
      severity: 'error',
      comment: 'core/ (principal, scopes, errors, paging, clock, money) is the bottom layer: everything may use it, so it uses nothing of src/ above it.',
      from: { path: '^src/core/' },
      to: { path: '^src/', pathNot: '^src/core/' },
    },
    {
      name: 'core-not-to-fastify',
      severity: 'error',
      comment: 'core/ is framework-free so that domains, flows, jobs and the CLI can use it without the HTTP stack.',
      from: { path: '^src/core/' },
      to: { path: FASTIFY },
    },

    // ── config ─────────────────────────────────────────────────────────────────────────────────
    {
      name: 'config-only-core',
      severity: 'error',
      comment: 'config.ts and its schema sit under db/, http/, auth/ and jobs/, which import it: it may use core/, nothing above.',
      from: { path: '^src/config(\\.schema)?\\.ts$' },
      to: { path: '^src/', pathNot: ['^src/core/', '^src/config(\\.schema)?\\.ts$'] },
    },

    // ── db/ ────────────────────────────────────────────────────────────────────────────────────
    {
      name: 'db-only-core-and-config',
      severity: 'error',
      comment: 'db/ is infrastructure under the domains: it may know core/ and config.ts, never the edge, a domain, flows/, auth/ or jobs/.',
      from: { path: '^src/db/' },
      to: { path: '^src/', pathNot: ['^src/(db|core)/', '^src/config\\.ts$'] },
    },

    // ── http/ ──────────────────────────────────────────────────────────────────────────────────
    {
      name: 'http-only-core-db-config',
      severity: 'error',
      comment:
        'http/ is the generic edge (problems, authentication, versioning, the idempotency header...): domains plug into it from their routes files, it never reaches into them. It runs keyed requests through idempotency/.',
      from: { path: '^src/http/' },
      to: { path: '^src/', pathNot: ['^src/(http|core|db|idempotency)/', '^src/config\\.ts$'] },
    },

    // ── idempotency/ ───────────────────────────────────────────────────────────────────────────
    {
      name: 'idempotency-only-core-db',
      severity: 'error',
      comment:
        'idempotency/ (keys, and the unit of work in phases) serves every entry: a route, a processor event, a job. It knows core/ and db/, never the edge, Fastify or a domain: each entry hands it the work.',
      from: { path: '^src/idempotency/' },
      to: { path: ['^src/', FASTIFY], pathNot: ['^src/(idempotency|core|db)/'] },
    },

    // ── domains: orders/ products/ payments/ users/ ────────────────────────────────────────────
    {
      name: 'domain-not-to-other-domain',
      severity: 'error',
      comment:
        'Domains are independent; work spanning two of them (an order paid, a refund) belongs in flows/. One exception: every domain records its changes through the events store (the outbox is written in the transaction of the change, src/events/).',
      from: { path: `^src/${DOMAINS}/` },
      to: { path: `^src/${DOMAINS}/`, pathNot: ['^src/$1/', '^src/events/events\\.(store|rules)\\.ts$'] },
    },
    {
      name: 'domain-logic-not-to-http',
      severity: 'error',
      comment: "A domain's service/store/processor must run outside a request (CLI, jobs, flows): only its routes, schemas and representation files know HTTP. (Rules files: see rules-are-pure.)",
      from: { path: `^src/${DOMAINS}/`, pathNot: '\\.(routes|schemas|representation|rules)\\.ts$' },
      to: { path: ['^src/http/', FASTIFY] },
    },
    {
      name: 'domain-not-to-upper-layers',
      severity: 'error',
      comment: 'flows/, jobs/, cli/ and the entry points use the domains, not the other way round. Only a routes file may call a flow (routes are the edge).',
      from: { path: `^src/${DOMAINS}/`, pathNot: '\\.routes\\.ts$' },
      to: { path: ['^src/(flows|jobs|cli)/', '^src/(main|app|cli|seed)\\.ts$'] },
    },
    {
      name: 'rules-are-pure',
      severity: 'error',
      comment: 'A *.rules.ts holds decisions as pure functions, tested without a database or a server: no db/, no http/, no Fastify, no database driver, no file system or network.',
      from: { path: '^src/(.+)/[^/]+\\.rules\\.ts$' },
      to: { path: ['^src/(db|http)/', FASTIFY, IO_PACKAGES, IO_BUILTINS], pathNot: '^src/$1/[^/]+\\.(rules|schemas)\\.ts$' },
    },
    {
      name: 'domain-rules-only-core',
      severity: 'error',
      comment: "Besides core/, a domain's *.rules.ts uses only its own domain's rules and schemas: not config.ts, auth/, flows/ or jobs/.",
      from: { path: `^src/${DOMAINS}/[^/]+\\.rules\\.ts$` },
      to: {
        path: '^src/',
        pathNot: [
          '^src/core/',
          '^src/$1/[^/]+\\.(rules|schemas)\\.ts$',
          // reported by rules-are-pure and domain-not-to-other-domain
          '^src/(db|http)/',
          `^src/${DOMAINS}/`,
        ],
      },
    },
    {
      name: 'store-not-to-http',
      severity: 'error',
      comment: 'A *.store.ts is SQL over a Db; HTTP concerns (collections, links, problems) are mapped at the edge, not in storage. (A domain\'s store: see domain-logic-not-to-http.)',
      from: { path: '^src/.+\\.store\\.ts$', pathNot: `^src/(http|${DOMAIN_NAMES})/` },
      to: { path: ['^src/http/', FASTIFY] },
    },

    // ── flows/ ─────────────────────────────────────────────────────────────────────────────────
    {
      name: 'flows-not-to-edge',
      severity: 'error',
      comment: 'flows/ spans domains below the edge, so a flow runs the same from a route, a job or the CLI: no http/, no Fastify, no routes.',
      from: { path: '^src/flows/' },
      to: { path: ['^src/http/', FASTIFY, '\\.routes\\.ts$'] },
    },
    {
      name: 'flows-only-domain-logic',
      severity: 'error',
      comment: "flows/ may use domains' service/rules/store files and payments' processor, core/ and db/; not schemas, representations, auth/ or jobs/.",
      from: { path: '^src/flows/' },
      to: {
        path: '^src/',
        pathNot: [
          '^src/(flows|core|db)/',
          `^src/${DOMAINS}/[^/]+\\.(service|rules|store)\\.ts$`,
          '^src/payments/processor\\.ts$',
          // reported by flows-not-to-edge
          '^src/http/',
          '\\.routes\\.ts$',
        ],
      },
    },

    // ── auth/ ──────────────────────────────────────────────────────────────────────────────────
    {
      name: 'auth-not-to-business-domains',
      severity: 'error',
      comment: 'The authorization server knows accounts (users/), not orders, products, payments or flows: it can be split off as its own server.',
      from: { path: '^src/auth/' },
      to: { path: '^src/(orders|products|payments|flows)/' },
    },
    {
      name: 'auth-only-core-db-http-users-config',
      severity: 'error',
      comment: 'auth/ may use core/, db/, http/, users/ and config.ts; not jobs/, cli/ or the entry points.',
      from: { path: '^src/auth/' },
      to: {
        path: '^src/',
        pathNot: [
          '^src/(auth|core|db|http|users)/',
          '^src/config\\.ts$',
          // reported by auth-not-to-business-domains
          '^src/(orders|products|payments|flows)/',
        ],
      },
    },

    // ── jobs/ ──────────────────────────────────────────────────────────────────────────────────
    {
      name: 'jobs-not-to-http',
      severity: 'error',
      comment: 'Background tasks run without a request: they never use the HTTP edge.',
      from: { path: '^src/jobs/' },
      to: { path: '^src/http/' },
    },
    {
      name: 'jobs-only-stores-services-core-db',
      severity: 'error',
      comment: "jobs/ may use core/, db/, config.ts, and the stores (domains', auth/'s, the idempotency store) and domain services whose rows they purge or complete; the scheduler gets everything else from the composition root.",
      from: { path: '^src/jobs/' },
      to: {
        path: '^src/',
        pathNot: [
          '^src/(jobs|core|db)/',
          '^src/config\\.ts$',
          `^src/${DOMAINS}/[^/]+\\.(service|store)\\.ts$`,
          // auth/'s storage: its stores and the oidc-provider adapter over oidc_payloads.
          '^src/auth/[^/]+\\.(store|adapter)\\.ts$',
          '^src/idempotency/idempotency\\.store\\.ts$',
          // reported by jobs-not-to-http
          '^src/http/',
        ],
      },
    },
  ],

  options: {
    // TypeScript 7 (the project's type checker) has no JavaScript compiler API, which dependency-cruiser's
    // TypeScript parser needs (it supports typescript < 7), so swc parses the .ts sources. swc reports
    // type-only imports too (as 'type-only'), so the layers hold for types as well. tsPreCompilationDeps
    // and tsConfig would only ask for the missing compiler (and warn); no tsconfig "paths" to honour.
    parser: 'swc',
    doNotFollow: { path: 'node_modules' },
    // Resolve as Node does: relative imports name their file with its .ts extension (`./x.ts`) and
    // resolve as written; packages through their "exports" (typebox has no "main").
    enhancedResolveOptions: {
      extensions: ['.ts', '.tsx', '.js'],
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default'],
    },
  },
};
