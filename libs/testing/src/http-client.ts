import jwt from 'jsonwebtoken';
import { TEST_CONSOLE_JWT_SECRET } from './test-system.js';

export interface HttpResult<T = Record<string, unknown>> {
  status: number;
  body: T;
  headers: Headers;
}

/** A console JWT as the identity provider would issue it. */
export function consoleJwt(userId: string, options: { roles?: string[]; secret?: string; expiresIn?: number } = {}): string {
  return jwt.sign({ sub: userId, roles: options.roles ?? [] }, options.secret ?? TEST_CONSOLE_JWT_SECRET, {
    algorithm: 'HS256',
    expiresIn: options.expiresIn ?? 3600,
  });
}

/** A minimal JSON HTTP client that speaks to the system as an outside program would. */
export class HttpClient {
  constructor(readonly baseUrl: string) {}

  async request<T = Record<string, unknown>>(
    method: string,
    path: string,
    options: { body?: unknown; rawBody?: string; headers?: Record<string, string>; bearer?: string } = {},
  ): Promise<HttpResult<T>> {
    const headers: Record<string, string> = { ...options.headers };
    if (options.bearer) headers.authorization = `Bearer ${options.bearer}`;
    let body: string | undefined = options.rawBody;
    if (options.body !== undefined) body = JSON.stringify(options.body);
    if (body !== undefined && !headers['content-type']) headers['content-type'] = 'application/json';
    const response = await fetch(this.baseUrl + path, { method, headers, body });
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      // leave non-JSON bodies as text
    }
    return { status: response.status, body: parsed as T, headers: response.headers };
  }

  get<T = Record<string, unknown>>(path: string, options?: Parameters<HttpClient['request']>[2]) {
    return this.request<T>('GET', path, options);
  }
  post<T = Record<string, unknown>>(path: string, body?: unknown, options: Parameters<HttpClient['request']>[2] = {}) {
    return this.request<T>('POST', path, { ...options, body });
  }
  put<T = Record<string, unknown>>(path: string, body?: unknown, options: Parameters<HttpClient['request']>[2] = {}) {
    return this.request<T>('PUT', path, { ...options, body });
  }
  patch<T = Record<string, unknown>>(path: string, body?: unknown, options: Parameters<HttpClient['request']>[2] = {}) {
    return this.request<T>('PATCH', path, { ...options, body });
  }
  delete<T = Record<string, unknown>>(path: string, options?: Parameters<HttpClient['request']>[2]) {
    return this.request<T>('DELETE', path, options);
  }
}
