import { Controller, Get, Inject, Query, Req, Res } from '@nestjs/common';
import type { Logger } from '@runline/observability';
import { LOGGER } from '@runline/runtime';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ConsoleSignIn, SignInError, SIGN_IN_ERRORS } from './console-sign-in.js';

/**
 * The web console's sign-in routes, for a browser (no credential; not part of the published
 * API). With OpenID Connect off, config.json says so and the other routes answer 404.
 */
@Controller('console')
export class ConsoleSignInController {
  constructor(
    @Inject(ConsoleSignIn) private readonly signIn: ConsoleSignIn,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  /** What the console needs to know before anyone signs in. */
  @Get('config.json')
  config(@Res({ passthrough: true }) reply: FastifyReply): { oidc: boolean } {
    void reply.header('cache-control', 'no-store');
    return { oidc: this.signIn.enabled };
  }

  @Get('oidc/login')
  async login(@Res() reply: FastifyReply): Promise<void> {
    if (!this.signIn.enabled) return notFound(reply);
    try {
      const started = await this.signIn.start();
      return redirect(reply.header('set-cookie', started.setCookie), started.location);
    } catch (error) {
      return this.failed(reply, error);
    }
  }

  /** The redirect URI registered at the provider. */
  @Get('oidc/callback')
  async callback(@Req() request: FastifyRequest, @Query() query: Record<string, string | undefined>, @Res() reply: FastifyReply): Promise<void> {
    if (!this.signIn.enabled) return notFound(reply);
    // One use only: whatever happens next, the pending sign-in is spent.
    void reply.header('set-cookie', this.signIn.clearCookie());
    try {
      const token = await this.signIn.finish(singleValues(query), request.headers.cookie);
      // In the fragment, which the browser never sends to a server or puts in a Referer.
      return redirect(reply, `${this.signIn.publicUrl('console/')}#token=${encodeURIComponent(token)}`);
    } catch (error) {
      return this.failed(reply, error);
    }
  }

  /**
   * Sign-out's second half (the console forgets its token first): ends the session at the
   * provider when it offers RP-initiated logout, which then sends the browser back to the console.
   */
  @Get('oidc/logout')
  async logout(@Res() reply: FastifyReply): Promise<void> {
    if (!this.signIn.enabled) return notFound(reply);
    return redirect(reply, await this.signIn.signOutLocation());
  }

  private failed(reply: FastifyReply, error: unknown): void {
    // The expected failures were logged where they happened; this is a fault of ours or the library's.
    if (!(error instanceof SignInError)) this.logger.error({ name: (error as Error).name, message: (error as Error).message }, 'console sign-in failed unexpectedly');
    const message = error instanceof SignInError ? error.message : SIGN_IN_ERRORS.failed;
    return redirect(reply, `${this.signIn.publicUrl('console/')}#signin-error=${encodeURIComponent(message)}`);
  }
}

function redirect(reply: FastifyReply, location: string): void {
  void reply.header('cache-control', 'no-store').header('referrer-policy', 'no-referrer').redirect(location, 302);
}

function notFound(reply: FastifyReply): void {
  void reply.status(404).send({ error: 'OpenID Connect sign-in is not configured' });
}

/** A parameter given twice is refused by the library's checks; keep the first, as it would be read. */
function singleValues(query: Record<string, string | string[] | undefined>): Record<string, string | undefined> {
  return Object.fromEntries(Object.entries(query).map(([name, value]) => [name, Array.isArray(value) ? value[0] : value]));
}
