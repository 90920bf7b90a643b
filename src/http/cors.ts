/**
 * CORS, so that a web page can call the API from a browser. What needs no key (the /public
 * pages, /openapi.json, the docs page, the OGC API – Features documents) is open to any origin;
 * the rest of the base path (the authenticated API, and the country, removal and report
 * requests) to the origins of EDIFICE_CORS_ORIGINS only. Keys travel in the Authorization
 * header, never in cookies, so no credentials mode is offered.
 *
 * Applied to every route at once: each handler registered through `withCors` first reads the
 * request's Origin; a preflight (OPTIONS with Access-Control-Request-Method) that may pass is
 * answered 204 here, any other request gets its headers with whatever answers it. A preflight
 * that may not pass goes on to the route as before (404 or 405), without CORS headers.
 */
import type { HttpRequest, HttpResponse, TemplatedApp } from 'uWebSockets.js';
import { finish, type HttpContext } from './context.ts';
import { addResponseHeaders } from './response-headers.ts';

/** Headers of authenticated answers a page's script may read (spec 8). */
const EXPOSED = [
  'RateLimit-Limit',
  'RateLimit-Remaining',
  'RateLimit-Reset',
  'RateLimit-Policy',
  'RateLimit',
  'X-Daily-Quota-Limit',
  'X-Daily-Quota-Remaining',
  'X-Credits-Charged',
  'X-Credits-Remaining',
  'Retry-After',
  'ETag',
  'Allow',
].join(', ');
const ALLOWED_HEADERS = 'Authorization, Accept, Content-Type, If-None-Match';
const ALLOWED_METHODS = 'GET, HEAD, POST, OPTIONS';
const PREFLIGHT_MAX_AGE_S = '600';

export class CorsPolicy {
  private readonly origins: ReadonlySet<string>;

  constructor(
    private readonly basePath: string,
    origins: readonly string[],
  ) {
    this.origins = new Set(origins);
  }

  /** Paths any origin may read: what needs no key. */
  isOpen(path: string): boolean {
    const b = this.basePath;
    if (!path.startsWith(b)) return false;
    const rest = path.slice(b.length);
    return (
      rest === '' ||
      rest === '/' ||
      rest.startsWith('/public/') ||
      rest === '/openapi.json' ||
      rest === '/docs' ||
      rest.startsWith('/docs/') ||
      rest === '/conformance' ||
      rest === '/collections' ||
      /^\/collections\/[^/]+$/.test(rest)
    );
  }

  /** The CORS headers of an answer to `origin` at `path`, or undefined when it gets none. */
  headersFor(path: string, origin: string): Record<string, string> | undefined {
    if (this.isOpen(path)) return { 'Access-Control-Allow-Origin': '*', 'Access-Control-Expose-Headers': EXPOSED };
    if (path.startsWith(this.basePath) && this.origins.has(origin.toLowerCase())) {
      return { 'Access-Control-Allow-Origin': origin, Vary: 'Origin', 'Access-Control-Expose-Headers': EXPOSED };
    }
    return undefined;
  }
}

type Handler = (res: HttpResponse, req: HttpRequest) => void;
const METHODS = ['get', 'post', 'head', 'any', 'options', 'put', 'del', 'patch'] as const;

/** `app`, each of whose routes registered from now on answers CORS as `policy` says. */
export function withCors(app: TemplatedApp, ctx: HttpContext, policy: CorsPolicy): TemplatedApp {
  const wrap =
    (handler: Handler): Handler =>
    (res, req) => {
      const origin = req.getHeader('origin');
      if (origin !== '') {
        const path = req.getUrl();
        const headers = policy.headersFor(path, origin);
        if (headers) {
          if (req.getMethod() === 'options' && req.getHeader('access-control-request-method') !== '') {
            const t0 = performance.now();
            finish(ctx, res, 'preflight', 'OPTIONS', path, t0, {
              status: 204,
              headers: {
                ...headers,
                'Access-Control-Allow-Methods': ALLOWED_METHODS,
                'Access-Control-Allow-Headers': ALLOWED_HEADERS,
                'Access-Control-Max-Age': PREFLIGHT_MAX_AGE_S,
              },
              body: '',
            });
            return;
          }
          addResponseHeaders(res, headers);
        }
      }
      handler(res, req);
    };
  const target = app as unknown as Record<string, (pattern: string, handler: Handler) => TemplatedApp>;
  for (const method of METHODS) {
    const register = target[method].bind(app);
    target[method] = (pattern, handler) => register(pattern, wrap(handler));
  }
  return app;
}
