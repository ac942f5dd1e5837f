import type KoaRouter from '@koa/router';
import { requireDependency } from '../require.js';

/**
 * @koa/router's CommonJS build. Its ES module build imports `http`, and an ES import of a built-in
 * module reads every export: Node 24's `node:http` has getters (WebSocket, MessageEvent, …) that
 * load Node's bundled undici, 14–25 ms of start-up on the 2-core bench machine. The gateway uses
 * this one build everywhere, so there is one `Router` class.
 */
export const Router = requireDependency('@koa/router') as typeof KoaRouter;
export type Router = KoaRouter;
