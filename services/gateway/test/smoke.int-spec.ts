import { gatewayService } from '@runline/gateway-service';
import { invocationService } from '@runline/invocation-service';
import { consoleJwt, HttpClient, startTestSystem, type TestSystem } from '@runline/testing';

describe('smoke', () => {
  let system: TestSystem;
  let http: HttpClient;
  beforeAll(async () => {
    system = await startTestSystem([gatewayService, invocationService]);
    http = new HttpClient(system.url('gateway'));
  });
  afterAll(() => system?.stop());

  it('creates an org and answers health', async () => {
    expect((await http.get('/health/ready')).status).toBe(200);
    const jwt = consoleJwt('alice');
    const org = await http.post('/v1/orgs', { name: 'Acme' }, { bearer: jwt });
    expect(org.status).toBe(201);
    const project = await http.post(`/v1/orgs/${org.body.orgId}/projects`, { name: 'Bot', type: 'CHATBOT' }, { bearer: jwt });
    expect(project.status).toBe(201);
    const token = await http.post(`/v1/orgs/${org.body.orgId}/projects/${project.body.projectId}/api-tokens`, { name: 't', scopes: ['flow:trigger'] }, { bearer: jwt });
    expect(token.status).toBe(201);
    const inv = await http.get(`/v1/orgs/${org.body.orgId}/external-invocations/00000000-0000-0000-0000-000000000000`, { bearer: token.body.token as string });
    expect(inv).toMatchObject({ status: 404, body: { error: 'Invocation not found' } });
  });
});
