/**
 * Files Edifice serves as they are (the docs and map pages and the packages they load), read
 * once at start: GET and HEAD answer them, other methods 405.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import type { TemplatedApp } from 'uWebSockets.js';
import { finish, type HttpContext } from './context.ts';
import { refuseOtherMethods } from './methods.ts';
import type { Reply } from './reply.ts';

/** The folder of an installed npm package. */
export function packageDir(name: string): string {
  return dirname(createRequire(import.meta.url).resolve(`${name}/package.json`));
}

/** A file's bytes as a 200 of `contentType`, cacheable for `maxAgeS` seconds. */
export function fileReply(path: string, contentType: string, maxAgeS: number): Reply {
  return { status: 200, headers: { 'Content-Type': contentType, 'Cache-Control': `public, max-age=${maxAgeS}` }, body: readFileSync(path) };
}

/** Serves `reply` (or what `answer` makes at each request) on `pattern`, logged as `route`. */
export function serveStatic(app: TemplatedApp, ctx: HttpContext, pattern: string, route: string, answer: Reply | (() => Reply)): void {
  const reply = typeof answer === 'function' ? answer : () => answer;
  app.get(pattern, (res, req) => finish(ctx, res, route, 'GET', req.getUrl(), performance.now(), reply()));
  app.head(pattern, (res, req) => finish(ctx, res, route, 'HEAD', req.getUrl(), performance.now(), reply()));
  refuseOtherMethods(app, ctx, pattern, route, ['GET', 'HEAD'], false);
}
