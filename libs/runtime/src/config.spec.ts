import { Type } from 'class-transformer';
import { IsInt, IsString, Max, Min } from 'class-validator';
import { ConfigError, IsCidrList, IsNatsUrl, IsStreamReplicas, loadConfig, parseCidrList } from './config.js';

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

class BusConfig {
  @IsNatsUrl()
  NATS_URL: string = 'nats://127.0.0.1:4222';

  @IsStreamReplicas()
  BUS_STREAM_REPLICAS: number = 1;
}

describe('the bus variables', () => {
  it('NATS_URL: one server or a comma-separated list of them', () => {
    expect(loadConfig(BusConfig, { NATS_URL: 'nats://a:4222' }).NATS_URL).toBe('nats://a:4222');
    expect(loadConfig(BusConfig, { NATS_URL: 'nats://a:4222,nats://b:4222, tls://c:4222' }).NATS_URL).toBe('nats://a:4222,nats://b:4222, tls://c:4222');
    for (const wrong of ['a:4222', 'nats://a:4222,b:4222', 'nats://a:4222,,nats://b:4222', 'nats://a:4222,']) {
      expect(() => loadConfig(BusConfig, { NATS_URL: wrong })).toThrow(/NATS_URL: must be a nats:\/\/ URL or a comma-separated list of them/);
    }
  });

  it('BUS_STREAM_REPLICAS: 1 by default, 1 to 5, named when wrong', () => {
    expect(loadConfig(BusConfig, {}).BUS_STREAM_REPLICAS).toBe(1);
    expect(loadConfig(BusConfig, { BUS_STREAM_REPLICAS: '3' }).BUS_STREAM_REPLICAS).toBe(3);
    for (const wrong of ['0', '6', '2.5', 'three']) {
      expect(() => loadConfig(BusConfig, { BUS_STREAM_REPLICAS: wrong })).toThrow(/BUS_STREAM_REPLICAS: /);
    }
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
