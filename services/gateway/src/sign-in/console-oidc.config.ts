import { IsOptional, IsString, Matches, MinLength, ValidateBy, ValidateIf, type ValidationOptions } from 'class-validator';
import { IsCidrList } from '@runline/runtime';

const TOGETHER = 'CONSOLE_OIDC_ISSUER, CONSOLE_OIDC_CLIENT_ID and CONSOLE_OIDC_CLIENT_SECRET must be set together';

/** Whether any of the three variables that turn OpenID Connect sign-in on is set. */
const oidcWanted = (config: ConsoleOidcConfig) =>
  config.CONSOLE_OIDC_ISSUER !== undefined || config.CONSOLE_OIDC_CLIENT_ID !== undefined || config.CONSOLE_OIDC_CLIENT_SECRET !== undefined;

/** An https URL without query or fragment, when set (whether it must be set is checked apart, with its own message). */
const IsIssuerUrl = (options?: ValidationOptions) =>
  ValidateBy({ name: 'isIssuerUrl', validator: { validate: (value: unknown) => value === undefined || (typeof value === 'string' && /^https:\/\/[^\s/?#]+(\/[^\s?#]*)?$/.test(value)) } }, options);

/**
 * Console sign-in with an OpenID Connect provider, validated once at boot beside GatewayConfig
 * (which checks the formats of the variables shared with it). Off unless the three
 * CONSOLE_OIDC_* variables are set; setting only some of them fails the boot.
 */
export class ConsoleOidcConfig {
  /** The provider's issuer identifier; its discovery document is at `/.well-known/openid-configuration` below it. */
  @ValidateIf(oidcWanted)
  @IsString({ message: TOGETHER })
  @IsIssuerUrl({ message: 'CONSOLE_OIDC_ISSUER must be an https URL without a query or fragment' })
  CONSOLE_OIDC_ISSUER?: string;

  @ValidateIf(oidcWanted)
  @IsString({ message: TOGETHER })
  CONSOLE_OIDC_CLIENT_ID?: string;

  /** The confidential client's secret (sent with HTTP Basic to the token endpoint). */
  @ValidateIf(oidcWanted)
  @IsString({ message: TOGETHER })
  CONSOLE_OIDC_CLIENT_SECRET?: string;

  /**
   * The claim whose value is the Runline user id (the `userId` of memberships): `sub` by
   * default; `email` lets an owner add members by address (only a verified address is taken).
   */
  @IsOptional()
  @Matches(/^[A-Za-z0-9_.:-]{1,64}$/, { message: 'CONSOLE_OIDC_USER_CLAIM must be a claim name such as sub or email' })
  CONSOLE_OIDC_USER_CLAIM: string = 'sub';

  /** Scopes asked for; must include `openid`. */
  @IsOptional()
  @Matches(/^(?:[\x21\x23-\x5B\x5D-\x7E]+ )*[\x21\x23-\x5B\x5D-\x7E]+$/, { message: 'CONSOLE_OIDC_SCOPES must be scope names separated by single spaces' })
  @Matches(/(?:^| )openid(?: |$)/, { message: 'CONSOLE_OIDC_SCOPES must include openid' })
  CONSOLE_OIDC_SCOPES: string = 'openid email profile';

  /** The redirect URI registered at the provider is built from it, so it must be fixed. */
  @ValidateIf(oidcWanted)
  @IsString({ message: 'PUBLIC_BASE_URL must be set when CONSOLE_OIDC_ISSUER is: the redirect URI registered at the provider is PUBLIC_BASE_URL/console/oidc/callback' })
  PUBLIC_BASE_URL?: string;

  /**
   * Signs the console JWTs it issues. A deployment that verifies console JWTs only with
   * CONSOLE_JWT_PUBLIC_KEY has no key to sign with, so OpenID Connect sign-in needs this too.
   */
  @ValidateIf(oidcWanted)
  @IsString({ message: 'CONSOLE_JWT_SECRET must be set when CONSOLE_OIDC_ISSUER is: it signs the console tokens of users signed in with OpenID Connect' })
  CONSOLE_JWT_SECRET?: string;

  /** Seals the short-lived sign-in cookie. */
  @IsString()
  @MinLength(16)
  SECRETS_KEY!: string;

  /** Ranges the outbound guard lets the provider calls reach besides public addresses (tests: 127.0.0.0/8). */
  @IsOptional()
  @IsCidrList()
  OUTBOUND_ALLOWED_CIDRS?: string;

  get enabled(): boolean {
    return this.CONSOLE_OIDC_ISSUER !== undefined;
  }
}
