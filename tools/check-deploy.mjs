// Renders every Kustomize overlay under deploy/kubernetes/overlays offline (`kubectl kustomize`,
// no cluster needed), validates each object against the Kubernetes API schemas
// (`kubernetes-models`), and checks the rules of the house that a schema cannot express. Then it
// breaks copies of the rendered objects on purpose and fails unless each break is caught, so a
// check that has stopped biting is noticed. Exit status 0 = all good, 1 = a finding.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';

const root = path.resolve(import.meta.dirname, '..');
const overlaysDir = path.join(root, 'deploy/kubernetes/overlays');

/** `kubernetes-models` keeps one module per API group and version: `apps/v1`, `v1` (core), … */
async function schemaValidate(object) {
  const module = await import(`kubernetes-models/${object.apiVersion}`).catch(() => undefined);
  const Model = module?.[object.kind];
  if (!Model) return [`${object.apiVersion} ${object.kind} is not a known Kubernetes kind`];
  try {
    new Model(object).validate();
    return [];
  } catch (error) {
    return [`does not match the ${object.apiVersion} ${object.kind} schema: ${error.message}`];
  }
}

const CLUSTER_SCOPED = new Set(['Namespace']);
const selects = (selector, labels) => Object.entries(selector?.matchLabels ?? {}).every(([key, value]) => labels?.[key] === value);
const nameOf = (object) => `${object.kind}/${object.metadata?.name}`;

/** The rules a schema cannot see: each is a sentence a reviewer would otherwise have to check. */
function houseRules(objects) {
  const findings = [];
  const of = (kind) => objects.filter((object) => object.kind === kind);
  const namespaces = of('Namespace');
  if (namespaces.length !== 1) findings.push(`expected one Namespace, found ${namespaces.length}`);
  const namespace = namespaces[0]?.metadata?.name;
  for (const object of objects) {
    if (!CLUSTER_SCOPED.has(object.kind) && object.metadata?.namespace !== namespace) findings.push(`${nameOf(object)} is not in namespace ${namespace}`);
  }

  const workloads = [...of('Deployment'), ...of('Job')];
  const images = new Set(workloads.flatMap((object) => object.spec.template.spec.containers.map((container) => container.image)));
  if (images.size !== 1) findings.push(`every workload runs the one image, found ${[...images].join(', ')}`);

  for (const deployment of of('Deployment')) {
    const name = nameOf(deployment);
    const podLabels = deployment.spec.template.metadata?.labels;
    if (deployment.spec.replicas !== undefined) findings.push(`${name} sets replicas; its HorizontalPodAutoscaler owns the count`);
    if (!of('PodDisruptionBudget').some((budget) => selects(budget.spec.selector, podLabels))) findings.push(`${name} has no PodDisruptionBudget`);
    const autoscaler = of('HorizontalPodAutoscaler').find((hpa) => hpa.spec.scaleTargetRef?.kind === 'Deployment' && hpa.spec.scaleTargetRef?.name === deployment.metadata.name);
    if (!autoscaler) findings.push(`${name} has no HorizontalPodAutoscaler`);
    else if (autoscaler.spec.minReplicas > autoscaler.spec.maxReplicas) findings.push(`${nameOf(autoscaler)}: minReplicas above maxReplicas`);
    for (const container of deployment.spec.template.spec.containers) {
      if (!container.readinessProbe || !container.livenessProbe) findings.push(`${name}: ${container.name} lacks a readiness or liveness probe`);
      if (!container.resources?.requests || !container.resources?.limits) findings.push(`${name}: ${container.name} lacks resource requests or limits`);
    }
    if (deployment.spec.template.spec.securityContext?.runAsNonRoot !== true) findings.push(`${name} may run as root`);
  }

  const services = new Set(of('Service').map((service) => service.metadata.name));
  const exposed = { '/v1': 'Prefix', '/console': 'Prefix', '/': 'Exact' };
  for (const ingress of of('Ingress')) {
    for (const rule of ingress.spec.rules ?? []) {
      for (const route of rule.http?.paths ?? []) {
        const where = `${nameOf(ingress)} ${route.pathType} ${route.path}`;
        if (exposed[route.path] !== route.pathType) findings.push(`${where}: only the public API (/v1) and the console (/console, and / exactly) are exposed`);
        if (!services.has(route.backend?.service?.name)) findings.push(`${where}: no Service ${route.backend?.service?.name}`);
      }
    }
  }

  const denyAll = of('NetworkPolicy').some(
    (policy) => Object.keys(policy.spec.podSelector ?? {}).length === 0 && ['Ingress', 'Egress'].every((type) => policy.spec.policyTypes?.includes(type)) && !policy.spec.ingress && !policy.spec.egress,
  );
  if (!denyAll) findings.push('no NetworkPolicy denies by default (empty podSelector, Ingress and Egress, no rules)');
  return findings;
}

async function check(objects) {
  const findings = [];
  for (const object of objects) for (const finding of await schemaValidate(object)) findings.push(`${nameOf(object)} ${finding}`);
  return [...findings, ...houseRules(objects)];
}

/** Deliberate breaks of a rendered overlay; each must produce the finding named beside it. */
const breaks = [
  ['a replica count that is not a number', 'must be integer', (objects) => (objects.find((o) => o.kind === 'HorizontalPodAutoscaler').spec.maxReplicas = 'six')],
  ['a Deployment without its PodDisruptionBudget', 'has no PodDisruptionBudget', (objects) => objects.splice(objects.findIndex((o) => o.kind === 'PodDisruptionBudget'), 1)],
  ['a Deployment without its HorizontalPodAutoscaler', 'has no HorizontalPodAutoscaler', (objects) => objects.splice(objects.findIndex((o) => o.kind === 'HorizontalPodAutoscaler'), 1)],
  [
    '/metrics on the ingress',
    'only the public API',
    (objects) =>
      objects.find((o) => o.kind === 'Ingress').spec.rules[0].http.paths.push({ path: '/metrics', pathType: 'Prefix', backend: { service: { name: 'runline-gateway', port: { name: 'http' } } } }),
  ],
  ['the whole gateway on the ingress', 'only the public API', (objects) => (objects.find((o) => o.kind === 'Ingress').spec.rules[0].http.paths.find((p) => p.path === '/').pathType = 'Prefix')],
  ['a second image', 'runs the one image', (objects) => (objects.find((o) => o.kind === 'Deployment').spec.template.spec.containers[0].image = 'other:1')],
  ['no default-deny policy', 'denies by default', (objects) => objects.splice(objects.findIndex((o) => o.kind === 'NetworkPolicy' && !o.spec.ingress && !o.spec.egress), 1)],
  ['an object outside the namespace', 'is not in namespace', (objects) => (objects.find((o) => o.kind === 'Service').metadata.namespace = 'default')],
  ['a fixed replica count', 'owns the count', (objects) => (objects.find((o) => o.kind === 'Deployment').spec.replicas = 3)],
];

function render(overlay) {
  try {
    return execFileSync('kubectl', ['kustomize', path.join(overlaysDir, overlay)], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (error) {
    if (error.code === 'ENOENT') throw new Error('kubectl is not installed: it renders the Kustomize overlays (kubectl kustomize), offline');
    throw new Error(`kubectl kustomize ${overlay} failed: ${error.stderr || error.message}`);
  }
}

let failed = false;
const overlays = readdirSync(overlaysDir).sort();
for (const overlay of overlays) {
  const documents = parseAllDocuments(render(overlay));
  const objects = documents.map((document) => document.toJS()).filter(Boolean);
  const findings = await check(objects);
  for (const finding of findings) console.error(`check-deploy: ${overlay}: ${finding}`);
  failed ||= findings.length > 0;
  const missed = [];
  for (const [what, expected, breakIt] of breaks) {
    const broken = structuredClone(objects);
    breakIt(broken);
    if (!(await check(broken)).some((finding) => finding.includes(expected))) missed.push(what);
  }
  for (const what of missed) console.error(`check-deploy: ${overlay}: a deliberate break went unnoticed: ${what}`);
  failed ||= missed.length > 0;
  const kinds = [...new Set(objects.map((object) => object.kind))].join(', ');
  if (findings.length === 0 && missed.length === 0) console.log(`check-deploy: ${overlay}: ${objects.length} objects valid (${kinds}); ${breaks.length} deliberate breaks caught`);
}

// The Grafana dashboard may only chart metrics the code defines: a renamed metric must not leave
// a panel silently empty. Histograms add _bucket, _count and _sum to their name.
const dashboardPath = path.join(root, 'deploy/grafana/runline.json');
const dashboard = JSON.parse(readFileSync(dashboardPath, 'utf8'));
const used = new Set(JSON.stringify(dashboard).match(/runline_[a-z_]+/g).map((name) => name.replace(/_(bucket|count|sum)$/, '')));
const defined = new Set(
  execFileSync('git', ['grep', '--untracked', '-h', '-o', '-E', "name: 'runline_[a-z_]+'", '--', 'services', 'libs'], { cwd: root, encoding: 'utf8' })
    .split('\n')
    .filter(Boolean)
    .map((line) => line.slice("name: '".length, -1)),
);
const undefinedMetrics = [...used].filter((name) => !defined.has(name));
for (const name of undefinedMetrics) console.error(`check-deploy: deploy/grafana/runline.json charts ${name}, which no service defines`);
failed ||= undefinedMetrics.length > 0;
if (undefinedMetrics.length === 0) console.log(`check-deploy: grafana dashboard: ${dashboard.panels.length} panels, ${used.size} metrics, each defined in the code`);
process.exit(failed ? 1 : 0);
