/**
 * Methods a route does not take: 405 Method Not Allowed with an Allow header, in the route's own
 * error format (flat under /public), instead of the 404 a catch-all would give. Registered after a
 * route's own methods, which uWebSockets.js matches first.
 */
import type { TemplatedApp } from 'uWebSockets.js';
import { ApiError } from '../api/index.ts';
import { finish, type HttpContext } from './context.ts';
import { errorReply, publicErrorReply } from './reply.ts';

export function refuseOtherMethods(
  app: TemplatedApp,
  ctx: HttpContext,
  pattern: string,
  route: string,
  allow: readonly string[],
  flat: boolean,
): void {
  const allowed = allow.join(', ');
  app.any(pattern, (res, req) => {
    const t0 = performance.now();
    const method = req.getMethod().toUpperCase();
    const err = new ApiError('method_not_allowed', `${method} is not allowed here; use ${allowed}.`);
    const reply = flat
      ? publicErrorReply(err, { Allow: allowed })
      : errorReply(err, 'json', { Allow: allowed, 'Cache-Control': 'no-store' });
    finish(ctx, res, route, method, req.getUrl(), t0, reply);
  });
}
