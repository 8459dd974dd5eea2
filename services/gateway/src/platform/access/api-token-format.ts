import { createHash, randomBytes } from 'node:crypto';
import { crc32 } from 'node:zlib';

/**
 * API tokens look like `<prefix>_ext_<secret><checksum>`: 32 base62 characters of secret
 * (190 bits) and a 6-character CRC32 checksum over everything before it. The checksum lets the
 * gateway refuse a mistyped or made-up token without reading the database, and lets secret
 * scanners recognise a real token.
 */
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const SECRET_LENGTH = 32;
const CHECKSUM_LENGTH = 6;
/** How much of a token is kept in clear, to tell tokens apart in a list. */
const DISPLAY_SECRET_CHARS = 4;

export interface IssuedToken {
  token: string;
  hash: string;
  /** `rl_ext_AbCd`: the service prefix and the first characters of the secret. */
  displayPrefix: string;
}

export class ApiTokenFormat {
  private readonly pattern: RegExp;

  constructor(private readonly servicePrefix: string) {
    if (!/^[a-z][a-z0-9]{0,15}$/.test(servicePrefix)) {
      throw new Error(`API token prefix "${servicePrefix}" must be 1-16 lowercase letters and digits`);
    }
    this.pattern = new RegExp(`^${servicePrefix}_ext_[0-9A-Za-z]{${SECRET_LENGTH + CHECKSUM_LENGTH}}$`);
  }

  issue(): IssuedToken {
    const head = `${this.servicePrefix}_ext_${randomBase62(SECRET_LENGTH)}`;
    const token = head + checksum(head);
    return { token, hash: hashApiToken(token), displayPrefix: head.slice(0, head.length - SECRET_LENGTH + DISPLAY_SECRET_CHARS) };
  }

  /** True when the token has the right shape and checksum; says nothing of whether it exists. */
  isWellFormed(token: string): boolean {
    if (!this.pattern.test(token)) return false;
    const head = token.slice(0, -CHECKSUM_LENGTH);
    return checksum(head) === token.slice(-CHECKSUM_LENGTH);
  }
}

/** What is stored and looked up: the token itself never reaches the database. */
export function hashApiToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

function checksum(text: string): string {
  let value = crc32(text);
  let out = '';
  for (let i = 0; i < CHECKSUM_LENGTH; i++) {
    out = BASE62[value % 62] + out;
    value = Math.floor(value / 62);
  }
  return out;
}

function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    // Rejection sampling keeps every character equally likely (256 is not a multiple of 62).
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248 && out.length < length) out += BASE62[byte % 62];
    }
  }
  return out;
}
