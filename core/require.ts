import { createRequire } from 'node:module';

/**
 * CommonJS `require` for the gateway's dependencies and Node's built-ins, where an ES `import`
 * would cost start-up (docs/architecture.md, docs/performance.md "Fifth pass" and "Sixth pass"):
 * - a package loaded on first use, synchronously (axios, Ajv, pg, prom-client's process metrics);
 * - a module from inside a package rather than its index (undici's `Pool`, prom-client's classes);
 * - a module whose ES namespace is costly to build (`node:http`: its getters load Node's bundled
 *   undici; @koa/router's ES build imports it).
 * Packages resolve from here as from any core module.
 */
export const requireDependency = createRequire(import.meta.url);
