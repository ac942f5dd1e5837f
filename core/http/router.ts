import { createRequire } from 'node:module';
import type KoaRouter from '@koa/router';

/**
 * @koa/router's CommonJS build. Its ES module build imports `http`, and an ES import of a built-in
 * module reads every export: Node 24's `node:http` has getters (WebSocket, MessageEvent, …) that
 * load Node's bundled undici, 14–25 ms of start-up on the 2-core bench machine. The gateway uses
 * this one build everywhere, so there is one `Router` class.
 */
export const Router = createRequire(import.meta.url)('@koa/router') as typeof KoaRouter;
export type Router = KoaRouter;
