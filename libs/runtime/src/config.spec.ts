import { Type } from 'class-transformer';
import { IsInt, IsString, Max, Min } from 'class-validator';
import { ConfigError, IsCidrList, loadConfig, parseCidrList } from './config.js';

class SampleConfig {
  @IsString()
  DATABASE_URL!: string;

  @Type(() => Number)
  @IsInt()
  @Min(0)
  @Max(65535)
  PORT: number = 3000;

  @IsCidrList()
  OUTBOUND_ALLOWED_CIDRS: string = '';
}

describe('loadConfig', () => {
  it('reads variables, converts numbers and keeps defaults', () => {
    const config = loadConfig(SampleConfig, { DATABASE_URL: 'postgres://x', PORT: '8080', OUTBOUND_ALLOWED_CIDRS: '127.0.0.0/8, ::1/128' });
    expect(config).toMatchObject({ DATABASE_URL: 'postgres://x', PORT: 8080, OUTBOUND_ALLOWED_CIDRS: '127.0.0.0/8, ::1/128' });
    expect(loadConfig(SampleConfig, { DATABASE_URL: 'postgres://x' }).PORT).toBe(3000);
  });

  it('fails naming every variable that is wrong', () => {
    let error: unknown;
    try {
      loadConfig(SampleConfig, { PORT: 'eighty', OUTBOUND_ALLOWED_CIDRS: '127.0.0.1' });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const message = (error as Error).message;
    expect(message).toMatch(/DATABASE_URL/);
    expect(message).toMatch(/PORT/);
    expect(message).toMatch(/OUTBOUND_ALLOWED_CIDRS must be a comma-separated list of CIDR ranges/);
  });

  it('treats an empty variable as unset', () => {
    expect(() => loadConfig(SampleConfig, { DATABASE_URL: '' })).toThrow(/DATABASE_URL/);
  });
});

describe('parseCidrList', () => {
  it('parses IPv4 and IPv6 ranges and refuses anything else', () => {
    expect(parseCidrList('')).toEqual([]);
    expect(parseCidrList('10.0.0.0/8,fd00::/8')).toHaveLength(2);
    expect(parseCidrList('10.0.0.0/8,nonsense')).toBeUndefined();
    expect(parseCidrList('10.0.0.0/33')).toBeUndefined();
  });
});
