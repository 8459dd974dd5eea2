import { gatewayService } from '@runline/gateway-service';
import { invocationService } from '@runline/invocation-service';
import { HttpClient, startTestSystem, type TestSystem } from '@runline/testing';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import { createPublishedProject, issueToken, type ProjectFixture } from './gateway-fixtures.js';
import { startCallbackProcess } from './support/callback-process.js';
import { selfSignedCertificate, startHttpsReceiver, type HttpsReceiver, type ReceivedCallback, type TestCertificate } from './support/https-receiver.js';
import { eventually } from './support/lifecycle-support.js';
import type { RunningProcess } from './support/processes.js';

type Json = Record<string, unknown>;

/**
 * The Standard Webhooks secret for a callback secret, as README "Callbacks" documents it: our
 * signing key is the secret's UTF-8 bytes, and the reference library takes a key as `whsec_` +
 * base64 of its bytes. The only mapping a receiver needs, whatever the secret looks like.
 */
const standardSecret = (secret: string) => `whsec_${Buffer.from(secret, 'utf8').toString('base64')}`;

/** What the reference library's verify() needs: the raw body as sent, and the three headers. */
const standardHeaders = (request: ReceivedCallback) => ({
  'webhook-id': String(request.headers['webhook-id']),
  'webhook-timestamp': String(request.headers['webhook-timestamp']),
  'webhook-signature': String(request.headers['webhook-signature']),
});

/** The error the reference library throws, or undefined when it verified. */
function refusal(secret: string, payload: string | Buffer, headers: Record<string, string>): string | undefined {
  try {
    new Webhook(secret).verify(payload, headers);
    return undefined;
  } catch (error) {
    if (!(error instanceof WebhookVerificationError)) throw error;
    return error.message;
  }
}

/**
 * Real callback deliveries (the callback service as deployed, its own process, over HTTPS to a
 * local receiver) checked with `standardwebhooks`, the Standard Webhooks reference library, as a
 * receiver would: `new Webhook(secret).verify(body, headers)`.
 */
describe('callbacks verified with the Standard Webhooks reference library', () => {
  let system: TestSystem;
  let http: HttpClient;
  let certificate: TestCertificate;
  let receiver: HttpsReceiver;
  let callback: RunningProcess;
  let project: ProjectFixture;
  let token: string;
  let path = 0;
  const nextPath = () => `/standard/${++path}`;

  const callbackOf = async (secret: string, replies?: (call: number) => { status: number }, count = 1) => {
    const hook = nextPath();
    if (replies) receiver.on(hook, replies);
    const answer = await http.post<{ invocationId: string }>(
      `/v1/orgs/${project.orgId}/automations/${project.projectId}/trigger-async`,
      { payload: { orderId: 'sw-1', note: 'prix: 12 €' }, webhookUrl: `${receiver.url}${hook}`, webhookSecret: secret },
      { bearer: token },
    );
    expect(answer.status).toBe(202);
    const requests = await eventually(`${count} callback(s) on ${hook}`, async () => (receiver.at(hook).length >= count ? receiver.at(hook) : undefined), 20_000);
    return { invocationId: answer.body.invocationId, requests };
  };

  beforeAll(async () => {
    certificate = await selfSignedCertificate();
    receiver = await startHttpsReceiver(certificate);
    system = await startTestSystem([gatewayService, invocationService], { environment: { OUTBOUND_ALLOWED_CIDRS: '127.0.0.0/8' } });
    callback = await startCallbackProcess(system, certificate.caFile);
    http = new HttpClient(system.url('gateway'));
    project = await createPublishedProject(http, 'AUTOMATION', {
      schemaVersion: 1,
      workflow: {
        trigger: { externalEnabled: true, key: 'external_event' },
        start: 'n1',
        nodes: { n1: { type: 'return', value: "{ 'ok': true, 'orderId': payload.orderId, 'note': payload.note }" } },
      },
    });
    token = (await issueToken(http, project, ['automation:trigger'])).token;
  }, 60_000);

  afterAll(async () => {
    await callback?.stop();
    await system?.stop();
    await receiver?.close();
    await certificate?.remove();
  });

  it('verify(body, headers) accepts a real callback with whsec_ + base64 of the secret, and returns the body', async () => {
    const secret = 'cb-secret-ascii-0001';
    const { invocationId, requests } = await callbackOf(secret);
    const request = requests[0]!;
    const verified = new Webhook(standardSecret(secret)).verify(request.raw.toString('utf8'), standardHeaders(request)) as Json;
    expect(verified).toEqual(JSON.parse(request.raw.toString('utf8')));
    expect(verified).toMatchObject({ invocationId, status: 'SUCCEEDED', result: { ok: true, orderId: 'sw-1', note: 'prix: 12 €' } });
    // The library's header checks hold on what we send: an id, Unix seconds now, a v1 signature.
    expect(request.headers['webhook-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(request.headers['webhook-timestamp']).toMatch(/^[0-9]{10}$/);
    expect(request.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
  });

  it('the mapping is the UTF-8 bytes of any secret: non-ASCII, and one that itself looks like whsec_', async () => {
    const lookalike = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
    for (const secret of ['clé secrète ✓ 🔑 0123456789', lookalike]) {
      const [request] = (await callbackOf(secret)).requests;
      expect({ secret, refused: refusal(standardSecret(secret), request!.raw, standardHeaders(request!)) }).toEqual({ secret, refused: undefined });
    }
    // A secret that looks like a Standard Webhooks secret is still used as text, not decoded:
    // given to the library as it is, it does not verify. README says so.
    const [request] = (await callbackOf(lookalike)).requests;
    expect(refusal(lookalike, request!.raw, standardHeaders(request!))).toBe('No matching signature found');
  });

  it('every attempt of a retried callback verifies with its own timestamp; the webhook-id stays', async () => {
    const secret = 'cb-secret-retried-02';
    const { requests } = await callbackOf(secret, (call) => ({ status: call < 3 ? 500 : 200 }), 3);
    expect(requests).toHaveLength(3);
    for (const request of requests) expect(refusal(standardSecret(secret), request.raw, standardHeaders(request))).toBeUndefined();
    expect(new Set(requests.map((request) => request.headers['webhook-id'])).size).toBe(1);
  });

  it('the library refuses a real callback with another secret, a changed body, id or timestamp, or a missing signature', async () => {
    const secret = 'cb-secret-tamper-003';
    const [request] = (await callbackOf(secret)).requests;
    const headers = standardHeaders(request!);
    const raw = request!.raw.toString('utf8');
    expect(refusal(standardSecret(secret), raw, headers)).toBeUndefined();
    expect(refusal(standardSecret(`${secret}x`), raw, headers)).toBe('No matching signature found');
    expect(refusal(standardSecret(secret), raw.replace('SUCCEEDED', 'SUCCEEDEd'), headers)).toBe('No matching signature found');
    expect(refusal(standardSecret(secret), raw, { ...headers, 'webhook-id': `${headers['webhook-id']}0` })).toBe('No matching signature found');
    expect(refusal(standardSecret(secret), raw, { ...headers, 'webhook-timestamp': String(Number(headers['webhook-timestamp']) - 1) })).toBe(
      'No matching signature found',
    );
    expect(refusal(standardSecret(secret), raw, { ...headers, 'webhook-timestamp': String(Number(headers['webhook-timestamp']) - 600) })).toBe(
      'Message timestamp too old',
    );
    const { 'webhook-signature': _signature, ...unsigned } = headers;
    expect(refusal(standardSecret(secret), raw, unsigned)).toBe('Missing required headers');
  });
});
