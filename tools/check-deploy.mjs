// Renders every Kustomize overlay under deploy/kubernetes/overlays offline (`kubectl kustomize`,
// no cluster needed), validates each object against the Kubernetes API schemas
// (`kubernetes-models`; the CloudNativePG Cluster against the fields of its CRD that Runline
// uses, below), and checks the rules of the house that a schema cannot express: the NetworkPolicies
// let through what each pod needs, the NATS cluster's routes, NATS_URL and BUS_STREAM_REPLICAS
// agree, and so on. Every optional component (deploy/kubernetes/components) is rendered through
// the overlays that use it; a component no overlay uses is a finding. Then it breaks copies of
// the rendered objects on purpose and fails unless each break is caught, so a check that has
// stopped biting is noticed. Exit status 0 = all good, 1 = a finding.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import Ajv from 'ajv';
import ipaddr from 'ipaddr.js';
import { parseAllDocuments } from 'yaml';

const root = path.resolve(import.meta.dirname, '..');
const overlaysDir = path.join(root, 'deploy/kubernetes/overlays');
const componentsDir = path.join(root, 'deploy/kubernetes/components');

// ---------------------------------------------------------------------------------------------
// Schemas

/**
 * The CloudNativePG `Cluster`, as far as Runline's component uses it: the field names and types
 * of the `postgresql.cnpg.io/v1` CRD of CloudNativePG 1.30.0 (config/crd/bases/
 * postgresql.cnpg.io_clusters.yaml). `spec` may hold any field the CRD knows (a misspelt one is a
 * finding); the fields the component sets are checked in depth, including the values the CRD
 * leaves to the operator's webhook (podAntiAffinityType, a DNS-1035 name). The npm package
 * `@kubernetes-models/cloudnative-pg` would validate every field; when it is installed, it runs
 * as well (schemaValidate).
 */
const CNPG_SPEC_FIELDS = [
  'affinity', 'backup', 'bootstrap', 'certificates', 'description', 'enablePDB', 'enableSuperuserAccess', 'env', 'envFrom',
  'ephemeralVolumeSource', 'ephemeralVolumesSizeLimit', 'externalClusters', 'failoverDelay', 'imageCatalogRef', 'imageName',
  'imagePullPolicy', 'imagePullSecrets', 'inheritedMetadata', 'instances', 'livenessProbeTimeout', 'logLevel', 'managed',
  'maxSyncReplicas', 'minSyncReplicas', 'monitoring', 'nodeMaintenanceWindow', 'plugins', 'podSecurityContext', 'podSelectorRefs',
  'postgresGID', 'postgresUID', 'postgresql', 'primaryLease', 'primaryUpdateMethod', 'primaryUpdateStrategy', 'priorityClassName', 'probes',
  'projectedVolumeTemplate', 'replica', 'replicationSlots', 'resources', 'schedulerName', 'seccompProfile', 'securityContext',
  'serviceAccountName', 'serviceAccountTemplate', 'smartShutdownTimeout', 'startDelay', 'stopDelay', 'storage', 'superuserSecret',
  'switchoverDelay', 'tablespaces', 'topologySpreadConstraints', 'walStorage',
];
const quantity = { anyOf: [{ type: 'integer', minimum: 0 }, { type: 'string', pattern: '^[0-9]+(\\.[0-9]+)?(m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei)?$' }] };
const resourceList = { type: 'object', propertyNames: { enum: ['cpu', 'memory', 'ephemeral-storage', 'hugepages-2Mi', 'hugepages-1Gi'] }, additionalProperties: quantity };
const storageConfiguration = {
  type: 'object',
  additionalProperties: false,
  properties: { size: { type: 'string', pattern: '^[0-9]+(Ki|Mi|Gi|Ti|Pi|Ei)$' }, storageClass: { type: 'string', minLength: 1 }, resizeInUseVolumes: { type: 'boolean' }, pvcTemplate: { type: 'object' } },
};
const CNPG_CLUSTER_SCHEMA = {
  type: 'object',
  required: ['apiVersion', 'kind', 'metadata', 'spec'],
  properties: {
    apiVersion: { const: 'postgresql.cnpg.io/v1' },
    kind: { const: 'Cluster' },
    metadata: { type: 'object', required: ['name'], properties: { name: { type: 'string', maxLength: 50, pattern: '^[a-z]([-a-z0-9]*[a-z0-9])?$' } } },
    spec: {
      type: 'object',
      required: ['instances'],
      propertyNames: { enum: CNPG_SPEC_FIELDS },
      properties: {
        instances: { type: 'integer', minimum: 1 },
        imageName: { type: 'string', minLength: 1 },
        primaryUpdateStrategy: { enum: ['unsupervised', 'supervised'] },
        primaryUpdateMethod: { enum: ['switchover', 'restart'] },
        enableSuperuserAccess: { type: 'boolean' },
        enablePDB: { type: 'boolean' },
        bootstrap: {
          type: 'object',
          additionalProperties: false,
          maxProperties: 1,
          properties: {
            initdb: {
              type: 'object',
              propertyNames: {
                enum: [
                  'builtinLocale', 'dataChecksums', 'database', 'encoding', 'icuLocale', 'icuRules', 'import', 'locale', 'localeCType', 'localeCollate',
                  'localeProvider', 'options', 'owner', 'postInitApplicationSQL', 'postInitApplicationSQLRefs', 'postInitSQL', 'postInitSQLRefs',
                  'postInitTemplateSQL', 'postInitTemplateSQLRefs', 'secret', 'walSegmentSize',
                ],
              },
              properties: {
                database: { type: 'string', minLength: 1 },
                owner: { type: 'string', minLength: 1 },
                secret: { type: 'object', required: ['name'], additionalProperties: false, properties: { name: { type: 'string', minLength: 1 } } },
                dataChecksums: { type: 'boolean' },
                encoding: { type: 'string' },
              },
            },
            recovery: { type: 'object' },
            pg_basebackup: { type: 'object' },
          },
        },
        postgresql: {
          type: 'object',
          propertyNames: {
            enum: ['enableAlterSystem', 'extensions', 'ldap', 'parameters', 'pg_hba', 'pg_ident', 'promotionTimeout', 'shared_preload_libraries', 'syncReplicaElectionConstraint', 'synchronous'],
          },
          properties: {
            parameters: { type: 'object', additionalProperties: { type: 'string' } },
            synchronous: {
              type: 'object',
              required: ['method', 'number'],
              additionalProperties: false,
              properties: {
                method: { enum: ['any', 'first'] },
                number: { type: 'integer', minimum: 1 },
                dataDurability: { enum: ['required', 'preferred'] },
                failoverQuorum: { type: 'boolean' },
                maxStandbyNamesFromCluster: { type: 'integer' },
                standbyNamesPre: { type: 'array', items: { type: 'string' } },
                standbyNamesPost: { type: 'array', items: { type: 'string' } },
                podFailureDomainKeys: { type: 'array', items: { type: 'string' } },
                nodeFailureDomainKeys: { type: 'array', items: { type: 'string' } },
              },
            },
          },
        },
        affinity: {
          type: 'object',
          additionalProperties: false,
          properties: {
            enablePodAntiAffinity: { type: 'boolean' },
            topologyKey: { type: 'string', minLength: 1 },
            podAntiAffinityType: { enum: ['preferred', 'required'] },
            nodeSelector: { type: 'object', additionalProperties: { type: 'string' } },
            tolerations: { type: 'array', items: { type: 'object' } },
            nodeAffinity: { type: 'object' },
            additionalPodAffinity: { type: 'object' },
            additionalPodAntiAffinity: { type: 'object' },
          },
        },
        resources: { type: 'object', additionalProperties: false, properties: { requests: resourceList, limits: resourceList, claims: { type: 'array' } } },
        storage: storageConfiguration,
        walStorage: storageConfiguration,
      },
    },
  },
};
const ajv = new Ajv({ allErrors: true, strict: true });
const CUSTOM_SCHEMAS = { 'postgresql.cnpg.io/v1 Cluster': ajv.compile(CNPG_CLUSTER_SCHEMA) };

/**
 * `kubernetes-models` keeps one module per API group and version: `apps/v1`, `v1` (core), …; the
 * CRD packages of the same project (`@kubernetes-models/<name>`) follow the same layout.
 */
async function schemaValidate(object) {
  const findings = [];
  const custom = CUSTOM_SCHEMAS[`${object.apiVersion} ${object.kind}`];
  if (custom && !custom(object)) {
    const messages = custom.errors
      .filter((e) => e.propertyName === undefined) // the inner half of a propertyNames error; the outer half names the field
      .map((e) => (e.keyword === 'propertyNames' ? `${e.instancePath} has a field the CRD does not know: ${e.params.propertyName}` : `${e.instancePath || '/'} ${e.message}`));
    findings.push(`does not match the ${object.apiVersion} ${object.kind} schema: ${messages.join('; ')}`);
  }
  const modules = [`kubernetes-models/${object.apiVersion}`, ...(object.apiVersion?.startsWith('postgresql.cnpg.io/') ? [`@kubernetes-models/cloudnative-pg/${object.apiVersion}`] : [])];
  for (const name of modules) {
    const Model = (await import(name).catch(() => undefined))?.[object.kind];
    if (!Model) continue;
    try {
      new Model(object).validate();
    } catch (error) {
      findings.push(`does not match the ${object.apiVersion} ${object.kind} schema: ${error.message}`);
    }
    return findings;
  }
  if (!custom) findings.push(`${object.apiVersion} ${object.kind} is not a known Kubernetes kind`);
  return findings;
}

// ---------------------------------------------------------------------------------------------
// Pods and NetworkPolicies

const CLUSTER_SCOPED = new Set(['Namespace']);
const nameOf = (object) => `${object.kind}/${object.metadata?.name}`;
const ofKind = (objects, kind) => objects.filter((object) => object.kind === kind);
const runlineConfig = (objects) => objects.find((o) => o.kind === 'ConfigMap' && o.metadata?.name === 'runline-config')?.data ?? {};

/** A label selector (matchLabels and matchExpressions) against a set of labels. */
function selects(selector, labels = {}) {
  if (!selector) return false;
  const byLabel = Object.entries(selector.matchLabels ?? {}).every(([key, value]) => labels[key] === value);
  const byExpression = (selector.matchExpressions ?? []).every(({ key, operator, values = [] }) => {
    const present = Object.hasOwn(labels, key);
    if (operator === 'In') return present && values.includes(labels[key]);
    if (operator === 'NotIn') return !present || !values.includes(labels[key]);
    if (operator === 'Exists') return present;
    if (operator === 'DoesNotExist') return !present;
    return false;
  });
  return byLabel && byExpression;
}

/**
 * Every pod the render will make: the templates of Deployments, StatefulSets and Jobs, and the
 * instances of a CloudNativePG Cluster (the operator labels them cnpg.io/cluster=<name>). Named
 * container ports are kept so a policy's named port can be resolved.
 */
function podsOf(objects) {
  const pods = [];
  for (const owner of objects.filter((o) => ['Deployment', 'StatefulSet', 'Job'].includes(o.kind))) {
    const template = owner.spec?.template;
    const ports = Object.fromEntries((template?.spec?.containers ?? []).flatMap((c) => (c.ports ?? []).filter((p) => p.name).map((p) => [p.name, p.containerPort])));
    pods.push({ name: nameOf(owner), owner, labels: template?.metadata?.labels ?? {}, ports });
  }
  for (const cluster of ofKind(objects, 'Cluster')) {
    pods.push({ name: nameOf(cluster), owner: cluster, labels: { 'cnpg.io/cluster': cluster.metadata.name }, ports: {} });
  }
  return pods;
}

const typesOf = (policy) => policy.spec?.policyTypes ?? ['Ingress', ...(policy.spec?.egress ? ['Egress'] : [])];
const policiesFor = (objects, pod, type) => ofKind(objects, 'NetworkPolicy').filter((p) => typesOf(p).includes(type) && selects(p.spec.podSelector, pod.labels));
const portMatches = (ports, port, namedPorts = {}) =>
  !ports?.length ||
  ports.some((entry) => {
    if (entry.port === undefined) return true;
    const number = typeof entry.port === 'string' ? namedPorts[entry.port] : entry.port;
    return number === port || (entry.endPort !== undefined && number <= port && port <= entry.endPort);
  });

/** Does an ipBlock peer hold `address` (an IP) or a whole range `cidr`, outside its exceptions? */
function blockHolds(block, { address, cidr }) {
  const [net, bits] = cidr ? ipaddr.parseCIDR(cidr) : [ipaddr.parse(address), address.includes(':') ? 128 : 32];
  const [blockNet, blockBits] = ipaddr.parseCIDR(block.cidr);
  if (net.kind() !== blockNet.kind() || bits < blockBits || !net.match(blockNet, blockBits)) return false;
  return !(block.except ?? []).some((except) => {
    const [exceptNet, exceptBits] = ipaddr.parseCIDR(except);
    return exceptNet.kind() === net.kind() && (net.match(exceptNet, exceptBits) || exceptNet.match(net, bits));
  });
}

/** A peer (`from` / `to` entry) against a pod of the render (same namespace, whose labels are `namespaceLabels`). */
function peerHoldsPod(peer, pod, namespaceLabels) {
  if (peer.ipBlock) return false;
  if (peer.namespaceSelector && !selects(peer.namespaceSelector, namespaceLabels)) return false;
  return peer.podSelector ? selects(peer.podSelector, pod.labels) : true;
}
/**
 * A peer against pods outside the render, in another namespace: `{labels}` (pods with these
 * labels) or `{}` (any pods), in `namespace` or, without it, in whichever namespace the policy
 * names (an overlay may move the ingress controller or the operator).
 */
const peerHoldsForeignPod = (peer, source) =>
  !peer.ipBlock &&
  !!peer.namespaceSelector &&
  (source.namespace === undefined || selects(peer.namespaceSelector, { 'kubernetes.io/metadata.name': source.namespace })) &&
  (!peer.podSelector || source.labels === undefined || selects(peer.podSelector, source.labels));

/**
 * May `pod` open a connection to port `port` of `destination`? `destination`: a pod of the
 * render, `{address}` (an IP outside the cluster), `{cidr}` (every address of a range), or
 * nothing (anywhere). True when no policy restricts the pod's egress.
 */
function egressAllows(objects, pod, port, destination) {
  const policies = policiesFor(objects, pod, 'Egress');
  if (policies.length === 0) return true;
  const namespaceLabels = namespaceLabelsOf(objects);
  return policies.some((policy) =>
    (policy.spec.egress ?? []).some((rule) => {
      if (port !== undefined && !portMatches(rule.ports, port, destination?.ports)) return false;
      // A range is let through by a rule that names it (on any ports), or by one open to every
      // address on every port; not by the DNS or database rule, open to every address on one port.
      if (!rule.to?.length) return !destination?.cidr || !rule.ports?.length;
      if (!destination) return true;
      if (destination.labels) return rule.to.some((peer) => peerHoldsPod(peer, destination, namespaceLabels));
      return rule.to.some((peer) => peer.ipBlock && blockHolds(peer.ipBlock, destination));
    }),
  );
}

/** May `source` (a pod of the render, or `{namespace, labels}` outside it) connect to port `port` of `pod`? */
function ingressAllows(objects, pod, port, source) {
  const policies = policiesFor(objects, pod, 'Ingress');
  if (policies.length === 0) return true;
  const namespaceLabels = namespaceLabelsOf(objects);
  return policies.some((policy) =>
    (policy.spec.ingress ?? []).some(
      (rule) =>
        portMatches(rule.ports, port, pod.ports) &&
        (!rule.from?.length || rule.from.some((peer) => (source.owner ? peerHoldsPod(peer, source, namespaceLabels) : peerHoldsForeignPod(peer, source)))),
    ),
  );
}

function namespaceLabelsOf(objects) {
  const namespace = ofKind(objects, 'Namespace')[0];
  return { ...(namespace?.metadata?.labels ?? {}), 'kubernetes.io/metadata.name': namespace?.metadata?.name };
}

// ---------------------------------------------------------------------------------------------
// House rules

/** An example of a public address: customers' endpoints and providers' APIs are on such. */
const PUBLIC_ADDRESS = '1.1.1.1';
const defaultPort = (url) => Number(url.port) || { 'https:': 443, 'http:': 80, 'nats:': 4222, 'tls:': 4222 }[url.protocol];

/** The rules a schema cannot see: each is a sentence a reviewer would otherwise have to check. */
function houseRules(objects) {
  const findings = [];
  const of = (kind) => ofKind(objects, kind);
  const namespaces = of('Namespace');
  if (namespaces.length !== 1) findings.push(`expected one Namespace, found ${namespaces.length}`);
  const namespace = namespaces[0]?.metadata?.name;
  for (const object of objects) {
    if (!CLUSTER_SCOPED.has(object.kind) && object.metadata?.namespace !== namespace) findings.push(`${nameOf(object)} is not in namespace ${namespace}`);
  }

  const workloads = [...of('Deployment'), ...of('Job')];
  const images = new Set(workloads.flatMap((object) => object.spec.template.spec.containers.map((container) => container.image)));
  if (images.size !== 1) findings.push(`every workload runs the one image, found ${[...images].join(', ')}`);

  const hasBudget = (podLabels) => of('PodDisruptionBudget').some((budget) => selects(budget.spec.selector, podLabels));
  const podRules = (owner) => {
    const name = nameOf(owner);
    const spec = owner.spec.template.spec;
    for (const container of spec.containers) {
      if (!container.readinessProbe || !container.livenessProbe) findings.push(`${name}: ${container.name} lacks a readiness or liveness probe`);
      if (!container.resources?.requests || !container.resources?.limits) findings.push(`${name}: ${container.name} lacks resource requests or limits`);
    }
    if (spec.securityContext?.runAsNonRoot !== true) findings.push(`${name} may run as root`);
  };
  for (const deployment of of('Deployment')) {
    const name = nameOf(deployment);
    if (deployment.spec.replicas !== undefined) findings.push(`${name} sets replicas; its HorizontalPodAutoscaler owns the count`);
    if (!hasBudget(deployment.spec.template.metadata?.labels)) findings.push(`${name} has no PodDisruptionBudget`);
    const autoscaler = of('HorizontalPodAutoscaler').find((hpa) => hpa.spec.scaleTargetRef?.kind === 'Deployment' && hpa.spec.scaleTargetRef?.name === deployment.metadata.name);
    if (!autoscaler) findings.push(`${name} has no HorizontalPodAutoscaler`);
    else if (autoscaler.spec.minReplicas > autoscaler.spec.maxReplicas) findings.push(`${nameOf(autoscaler)}: minReplicas above maxReplicas`);
    podRules(deployment);
  }

  // StatefulSets (the NATS component): a budget, a headless Service for their pods' names, a
  // volume per pod that is mounted, and an image pinned to a version.
  for (const set of of('StatefulSet')) {
    const name = nameOf(set);
    const podLabels = set.spec.template.metadata?.labels;
    if (!hasBudget(podLabels)) findings.push(`${name} has no PodDisruptionBudget`);
    podRules(set);
    const headless = of('Service').find((service) => service.metadata.name === set.spec.serviceName);
    if (!headless || headless.spec.clusterIP !== 'None' || !selects({ matchLabels: headless.spec.selector }, podLabels)) {
      findings.push(`${name}: serviceName ${set.spec.serviceName} is not a headless Service selecting its pods`);
    }
    const mounted = new Set(set.spec.template.spec.containers.flatMap((container) => (container.volumeMounts ?? []).map((mount) => mount.name)));
    for (const claim of set.spec.volumeClaimTemplates ?? []) if (!mounted.has(claim.metadata.name)) findings.push(`${name}: volume claim ${claim.metadata.name} is mounted nowhere`);
    for (const container of set.spec.template.spec.containers) {
      const tag = /^[^@]+:([^:/@]+)(@sha256:[0-9a-f]{64})?$/.exec(container.image ?? '')?.[1];
      if (!tag || tag === 'latest' || !/\d/.test(tag)) findings.push(`${name}: ${container.name}'s image ${container.image} is not pinned to a version`);
    }
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

  // NetworkPolicies: deny by default, every policy selects some pod, and each way in or out that
  // a pod needs is open.
  const denyAll = of('NetworkPolicy').some(
    (policy) => Object.keys(policy.spec.podSelector ?? {}).length === 0 && ['Ingress', 'Egress'].every((type) => policy.spec.policyTypes?.includes(type)) && !policy.spec.ingress && !policy.spec.egress,
  );
  if (!denyAll) findings.push('no NetworkPolicy denies by default (empty podSelector, Ingress and Egress, no rules)');
  const pods = podsOf(objects);
  for (const policy of of('NetworkPolicy')) {
    if (!pods.some((pod) => selects(policy.spec.podSelector, pod.labels))) findings.push(`${nameOf(policy)} selects no pod of the render`);
  }
  findings.push(...connectionRules(objects, pods));
  findings.push(...natsRules(objects));
  findings.push(...postgresRules(objects, pods));
  return findings;
}

/** The ways in and out each pod needs, against the NetworkPolicies. */
function connectionRules(objects, pods) {
  const findings = [];
  const config = runlineConfig(objects);
  const runline = pods.filter((pod) => pod.labels['app.kubernetes.io/name'] === 'runline');
  const component = (...names) => runline.filter((pod) => names.includes(pod.labels['app.kubernetes.io/component']));
  const needOut = (list, port, destination, why) => {
    for (const pod of list) {
      if (!egressAllows(objects, pod, port, destination)) {
        const where = destination?.address ? `a public address (${destination.address})` : destination?.cidr ? `the range ${destination.cidr}` : 'any address';
        findings.push(`${pod.name} cannot reach ${where}${port === undefined ? '' : ` on port ${port}`}: no egress rule (${why})`);
      }
    }
  };
  const needIn = (pod, port, sources, why) => {
    for (const source of sources) {
      if (!ingressAllows(objects, pod, port, source)) findings.push(`${source.name} cannot reach ${pod.name} on port ${port}: no ingress rule (${why})`);
    }
  };

  // Every Runline pod: DNS, PostgreSQL, and each NATS server of NATS_URL.
  needOut(runline, 53, undefined, 'DNS');
  needOut(runline, 5432, undefined, 'PostgreSQL');
  for (const server of (config.NATS_URL ?? '').split(',').map((s) => s.trim()).filter(Boolean)) {
    const url = URL.canParse(server) ? new URL(server) : undefined;
    if (!url) findings.push(`NATS_URL: ${server} is not a URL`);
    else needOut(runline, defaultPort(url), undefined, `NATS_URL ${server}`);
  }
  // Customers' endpoints (any port, public addresses) and the providers' APIs (https).
  needOut(component('invocation', 'polling', 'callback'), 8443, { address: PUBLIC_ADDRESS }, "customers' endpoints: http nodes, polls, callbacks");
  needOut(component('webhook'), 443, { address: PUBLIC_ADDRESS }, "the providers' APIs: managed subscriptions");
  // What the optional settings name.
  if (config.OTEL_EXPORTER_OTLP_ENDPOINT) {
    const url = URL.canParse(config.OTEL_EXPORTER_OTLP_ENDPOINT) ? new URL(config.OTEL_EXPORTER_OTLP_ENDPOINT) : undefined;
    if (!url) findings.push(`OTEL_EXPORTER_OTLP_ENDPOINT ${config.OTEL_EXPORTER_OTLP_ENDPOINT} is not a URL`);
    else needOut(runline, defaultPort(url), undefined, `OTEL_EXPORTER_OTLP_ENDPOINT ${url.href}`);
  }
  if (config.CONSOLE_OIDC_ISSUER) {
    const url = URL.canParse(config.CONSOLE_OIDC_ISSUER) ? new URL(config.CONSOLE_OIDC_ISSUER) : undefined;
    if (url?.protocol !== 'https:') findings.push(`CONSOLE_OIDC_ISSUER ${config.CONSOLE_OIDC_ISSUER} is not an https URL`);
    else needOut(component('gateway'), defaultPort(url), undefined, `CONSOLE_OIDC_ISSUER ${url.href}`);
  }
  for (const cidr of (config.OUTBOUND_ALLOWED_CIDRS ?? '').split(',').map((s) => s.trim()).filter(Boolean)) {
    if (!ipaddr.isValidCIDR(cidr)) findings.push(`OUTBOUND_ALLOWED_CIDRS: ${cidr} is not a CIDR range`);
    else needOut(component('invocation', 'polling', 'callback'), undefined, { cidr }, `OUTBOUND_ALLOWED_CIDRS ${cidr}`);
  }

  // In: the gateway from the ingress controller, /metrics from Prometheus, each from whichever
  // namespace the policies name (the overlay's to choose). The gateway's way in is a policy of
  // its own: the one that lets Prometheus reach every service must not be what admits clients.
  const elsewhere = (name) => ({ name });
  const services = runline.filter((p) => p.owner.kind === 'Deployment');
  for (const pod of component('gateway')) {
    const others = services.filter((other) => other !== pod);
    const own = ofKind(objects, 'NetworkPolicy').filter((p) => selects(p.spec.podSelector, pod.labels) && !others.some((other) => selects(p.spec.podSelector, other.labels)));
    const admitted = own.some((p) =>
      (p.spec.ingress ?? []).some((rule) => portMatches(rule.ports, 3000, pod.ports) && (!rule.from?.length || rule.from.some((peer) => peerHoldsForeignPod(peer, {})))),
    );
    if (!admitted) findings.push(`the ingress controller (another namespace) cannot reach ${pod.name} on port 3000: no ingress rule of the gateway's own (the public API and the console)`);
  }
  for (const pod of services) needIn(pod, 3000, [elsewhere('Prometheus (another namespace)')], '/metrics');
  return findings;
}

/** The NATS cluster of components/nats: its routes, NATS_URL, BUS_STREAM_REPLICAS and its NetworkPolicy agree. */
function natsRules(objects) {
  const findings = [];
  const config = runlineConfig(objects);
  const configMaps = ofKind(objects, 'ConfigMap').filter((o) => o.data?.['nats.conf']);
  const sets = ofKind(objects, 'StatefulSet').filter((set) => set.spec.template.spec.volumes?.some((v) => configMaps.some((cm) => cm.metadata.name === v.configMap?.name)));
  const replicasWanted = config.BUS_STREAM_REPLICAS;
  if (replicasWanted !== undefined && !/^[1-5]$/.test(replicasWanted)) findings.push(`BUS_STREAM_REPLICAS ${replicasWanted} is not 1 to 5`);
  if (sets.length === 0) return findings;
  if (sets.length > 1) findings.push(`one NATS StatefulSet expected, found ${sets.length}`);
  const set = sets[0];
  const name = nameOf(set);
  const servers = set.spec.replicas ?? 1;
  const volume = set.spec.template.spec.volumes.find((v) => configMaps.some((cm) => cm.metadata.name === v.configMap?.name));
  const conf = configMaps.find((cm) => cm.metadata.name === volume.configMap.name).data['nats.conf'].replace(/#.*$/gm, '');
  const container = set.spec.template.spec.containers[0];
  const port = (portName) => container.ports?.find((p) => p.name === portName)?.containerPort;
  const headless = set.spec.serviceName;

  // Routes: one per pod, through the headless Service, on the cluster port.
  const routes = /routes\s*[:=]?\s*\[([^\]]*)\]/.exec(conf)?.[1].split(/[\s,]+/).filter(Boolean) ?? [];
  const expected = Array.from({ length: servers }, (_, i) => `nats://${set.metadata.name}-${i}.${headless}:${port('cluster')}`);
  if (routes.join(' ') !== expected.join(' ')) findings.push(`${name}: nats.conf routes name ${routes.join(', ') || 'nothing'}; its ${servers} pods need ${expected.join(', ')}`);
  if (!/jetstream\s*[:=]?\s*\{[^}]*\bsync_interval\s*[:=]\s*["']?always\b/.test(conf)) findings.push(`${name}: nats.conf does not set JetStream's sync_interval: always`);
  const serverName = /\bserver_name\s*[:=]\s*\$([A-Za-z_]+)/.exec(conf)?.[1];
  const env = Object.fromEntries((container.env ?? []).map((e) => [e.name, e]));
  const fromPodName = (variable, depth = 0) => env[variable]?.valueFrom?.fieldRef?.fieldPath === 'metadata.name' || (depth < 3 && /^\$\(([A-Za-z_]+)\)$/.test(env[variable]?.value ?? '') && fromPodName(/^\$\(([A-Za-z_]+)\)$/.exec(env[variable].value)[1], depth + 1));
  if (!serverName || !fromPodName(serverName)) findings.push(`${name}: nats.conf's server_name is not the pod's name (JetStream needs a stable, unique name per server)`);
  const listens = {
    port: Number(/^\s*port\s*[:=]\s*(\d+)/m.exec(conf)?.[1]), // the first: the top-level one, before any block
    http_port: Number(/^\s*http_port\s*[:=]\s*(\d+)/m.exec(conf)?.[1]),
    'cluster.port': Number(/\bcluster\s*[:=]?\s*\{[^}]*?\bport\s*[:=]\s*(\d+)/.exec(conf)?.[1]),
  };
  for (const [key, portName] of [['port', 'nats'], ['http_port', 'monitor'], ['cluster.port', 'cluster']]) {
    if (listens[key] !== port(portName)) findings.push(`${name}: nats.conf's ${key} ${listens[key]} is not the container's port ${portName} (${port(portName)})`);
  }

  // NATS_URL: the pods by name, or a Service in front of them, on the client port.
  const clientServices = new Set(ofKind(objects, 'Service').filter((s) => selects({ matchLabels: s.spec.selector }, set.spec.template.metadata.labels)).map((s) => s.metadata.name));
  for (const server of (config.NATS_URL ?? '').split(',').map((s) => s.trim()).filter(Boolean)) {
    const url = URL.canParse(server) ? new URL(server) : undefined;
    const [first, second] = url?.hostname.split('.') ?? [];
    const pod = new RegExp(`^${set.metadata.name}-(\\d+)$`).exec(first ?? '');
    const known = pod ? Number(pod[1]) < servers && second === headless : clientServices.has(first);
    if (!known || defaultPort(url) !== port('nats')) findings.push(`NATS_URL names ${server}, which is no server of ${name} on its client port ${port('nats')}`);
  }
  if (replicasWanted !== undefined && Number(replicasWanted) > servers) findings.push(`BUS_STREAM_REPLICAS ${replicasWanted} is more than the ${servers} NATS servers of ${name}`);

  // The servers reach each other on the cluster port; clients reach them on the client port.
  const pods = podsOf(objects);
  const natsPod = pods.find((pod) => pod.owner === set);
  if (!egressAllows(objects, natsPod, port('cluster'), natsPod) || !ingressAllows(objects, natsPod, port('cluster'), natsPod)) findings.push(`${name}: its servers cannot reach each other on the cluster port ${port('cluster')}`);
  for (const client of pods.filter((pod) => pod.labels['app.kubernetes.io/name'] === 'runline')) {
    if (!egressAllows(objects, client, port('nats'), natsPod) || !ingressAllows(objects, natsPod, port('nats'), client)) findings.push(`${client.name} cannot reach ${name} on its client port ${port('nats')}`);
  }
  return findings;
}

/** The CloudNativePG Cluster of components/cloudnative-pg and what Runline's pods need of it. */
function postgresRules(objects, pods) {
  const findings = [];
  for (const cluster of ofKind(objects, 'Cluster')) {
    const name = nameOf(cluster);
    const spec = cluster.spec ?? {};
    if (!(spec.instances >= 2)) findings.push(`${name}: ${spec.instances} instance(s), no standby to fail over to`);
    const synchronous = spec.postgresql?.synchronous;
    if (synchronous && synchronous.number >= spec.instances) findings.push(`${name}: ${synchronous.number} synchronous standbys need more than ${spec.instances} instances`);
    const initdb = spec.bootstrap?.initdb;
    if (!initdb?.database || !initdb?.owner || !initdb?.secret?.name) findings.push(`${name}: bootstrap.initdb must name the database, its owner and the owner's Secret`);
    // The services verify the server against the Cluster's CA: every Runline pod mounts it.
    const ca = `${cluster.metadata.name}-ca`;
    for (const pod of pods.filter((p) => p.labels['app.kubernetes.io/name'] === 'runline')) {
      const spec = pod.owner.spec.template.spec;
      const volume = spec.volumes?.find((v) => v.secret?.secretName === ca);
      const mounted = volume && spec.containers.every((container) => container.volumeMounts?.some((mount) => mount.name === volume.name));
      if (!mounted) findings.push(`${pod.name} does not mount the Secret ${ca} (DATABASE_URL's sslrootcert)`);
      if (volume?.secret.items && volume.secret.items.some((item) => item.key !== 'ca.crt')) findings.push(`${pod.name} mounts more of ${ca} than ca.crt`);
    }
    // Its pods: the operator and each other in; the API server and each other out; Runline's pods in.
    const instance = pods.find((pod) => pod.owner === cluster);
    // The operator's pods carry this label whichever way it is installed; its namespace is the
    // overlay's to choose (cnpg-system by default).
    const operator = { name: 'the CloudNativePG operator', labels: { 'app.kubernetes.io/name': 'cloudnative-pg' } };
    for (const port of [8000, 5432]) {
      if (!ingressAllows(objects, instance, port, operator)) findings.push(`${operator.name} cannot reach ${name} on port ${port}`);
      if (!ingressAllows(objects, instance, port, instance) || !egressAllows(objects, instance, port, instance)) findings.push(`the instances of ${name} cannot reach each other on port ${port}`);
    }
    if (!egressAllows(objects, instance, 443) && !egressAllows(objects, instance, 6443)) findings.push(`the instances of ${name} cannot reach the Kubernetes API server (443 or 6443)`);
    for (const client of pods.filter((p) => p.labels['app.kubernetes.io/name'] === 'runline')) {
      if (!egressAllows(objects, client, 5432, instance) || !ingressAllows(objects, instance, 5432, client)) findings.push(`${client.name} cannot reach ${name} on port 5432`);
    }
  }
  return findings;
}

async function check(objects) {
  const findings = [];
  for (const object of objects) for (const finding of await schemaValidate(object)) findings.push(`${nameOf(object)} ${finding}`);
  return [...findings, ...houseRules(objects)];
}

// ---------------------------------------------------------------------------------------------
// Deliberate breaks

const find = (objects, kind, name) => objects.find((o) => o.kind === kind && (name === undefined || o.metadata?.name === name));
const has = (kind, name) => (objects) => !!find(objects, kind, name);
const hasSetting = (key) => (objects) => runlineConfig(objects)[key] !== undefined;
const remove = (objects, kind, name) => objects.splice(objects.findIndex((o) => o.kind === kind && o.metadata?.name === name), 1);
const natsConfigMap = (objects) => objects.find((o) => o.kind === 'ConfigMap' && o.data?.['nats.conf']);

/** Deliberate breaks of a rendered overlay; each must produce the finding named beside it, in every overlay it applies to. */
const breaks = [
  { what: 'a replica count that is not a number', expected: 'must be integer', breakIt: (objects) => (find(objects, 'HorizontalPodAutoscaler').spec.maxReplicas = 'six') },
  { what: 'a Deployment without its PodDisruptionBudget', expected: 'Deployment/runline-gateway has no PodDisruptionBudget', breakIt: (objects) => remove(objects, 'PodDisruptionBudget', 'runline-gateway') },
  { what: 'a Deployment without its HorizontalPodAutoscaler', expected: 'has no HorizontalPodAutoscaler', breakIt: (objects) => objects.splice(objects.findIndex((o) => o.kind === 'HorizontalPodAutoscaler'), 1) },
  {
    what: '/metrics on the ingress',
    expected: 'only the public API',
    breakIt: (objects) => find(objects, 'Ingress').spec.rules[0].http.paths.push({ path: '/metrics', pathType: 'Prefix', backend: { service: { name: 'runline-gateway', port: { name: 'http' } } } }),
  },
  { what: 'the whole gateway on the ingress', expected: 'only the public API', breakIt: (objects) => (find(objects, 'Ingress').spec.rules[0].http.paths.find((p) => p.path === '/').pathType = 'Prefix') },
  { what: 'a second image', expected: 'runs the one image', breakIt: (objects) => (find(objects, 'Deployment').spec.template.spec.containers[0].image = 'other:1') },
  { what: 'no default-deny policy', expected: 'denies by default', breakIt: (objects) => remove(objects, 'NetworkPolicy', 'runline-default-deny') },
  { what: 'an object outside the namespace', expected: 'is not in namespace', breakIt: (objects) => (find(objects, 'Service').metadata.namespace = 'default') },
  { what: 'a fixed replica count', expected: 'owns the count', breakIt: (objects) => (find(objects, 'Deployment').spec.replicas = 3) },
  {
    what: 'a NetworkPolicy that selects nothing (a misspelt label)',
    expected: 'NetworkPolicy/runline-provider-egress selects no pod',
    breakIt: (objects) => (find(objects, 'NetworkPolicy', 'runline-provider-egress').spec.podSelector.matchLabels['app.kubernetes.io/component'] = 'webhooks'),
  },
  { what: "the webhook service without its way to the providers' APIs", expected: "providers' APIs", breakIt: (objects) => remove(objects, 'NetworkPolicy', 'runline-provider-egress') },
  { what: 'the gateway closed to the ingress controller', expected: 'the ingress controller (another namespace) cannot reach', breakIt: (objects) => remove(objects, 'NetworkPolicy', 'runline-gateway-ingress') },
  { what: "customers' endpoints blocked", expected: "customers' endpoints", breakIt: (objects) => remove(objects, 'NetworkPolicy', 'runline-customer-egress') },
  { what: 'PostgreSQL blocked for every pod', expected: 'on port 5432: no egress rule (PostgreSQL)', breakIt: (objects) => find(objects, 'NetworkPolicy', 'runline-infrastructure-egress').spec.egress[1].ports.shift() },
  // components/nats
  { what: 'a StatefulSet without its PodDisruptionBudget', expected: 'StatefulSet/nats has no PodDisruptionBudget', applies: has('StatefulSet', 'nats'), breakIt: (objects) => remove(objects, 'PodDisruptionBudget', 'nats') },
  { what: 'NATS servers that do not match the routes', expected: 'nats.conf routes name', applies: has('StatefulSet', 'nats'), breakIt: (objects) => (find(objects, 'StatefulSet', 'nats').spec.replicas = 5) },
  {
    what: 'JetStream without sync_interval: always',
    expected: 'sync_interval: always',
    applies: has('StatefulSet', 'nats'),
    breakIt: (objects) => {
      const cm = natsConfigMap(objects);
      cm.data['nats.conf'] = cm.data['nats.conf'].replace(/^\s*sync_interval:.*$/m, '');
    },
  },
  { what: 'a NATS image without a version', expected: 'is not pinned', applies: has('StatefulSet', 'nats'), breakIt: (objects) => (find(objects, 'StatefulSet', 'nats').spec.template.spec.containers[0].image = 'nats:latest') },
  {
    what: 'BUS_STREAM_REPLICAS above the NATS servers',
    expected: 'BUS_STREAM_REPLICAS 5 is more than',
    applies: (objects) => has('StatefulSet', 'nats')(objects) && hasSetting('BUS_STREAM_REPLICAS')(objects),
    breakIt: (objects) => (runlineConfig(objects).BUS_STREAM_REPLICAS = '5'),
  },
  {
    what: 'NATS_URL naming a server that does not exist',
    expected: 'NATS_URL names nats://nats-3',
    applies: has('StatefulSet', 'nats'),
    breakIt: (objects) => (runlineConfig(objects).NATS_URL = runlineConfig(objects).NATS_URL.replace('nats-2.', 'nats-3.')),
  },
  { what: 'NATS without its NetworkPolicy', expected: 'cannot reach StatefulSet/nats on its client port', applies: has('NetworkPolicy', 'nats'), breakIt: (objects) => remove(objects, 'NetworkPolicy', 'nats') },
  // components/cloudnative-pg
  { what: 'a Cluster whose instances is not a number', expected: 'Cluster/runline-pg does not match', applies: has('Cluster'), breakIt: (objects) => (find(objects, 'Cluster').spec.instances = 'three') },
  { what: 'a misspelt Cluster field', expected: 'does not know: instnaces', applies: has('Cluster'), breakIt: (objects) => (find(objects, 'Cluster').spec.instnaces = 3) },
  { what: 'a Cluster with one instance', expected: 'no standby', applies: has('Cluster'), breakIt: (objects) => (find(objects, 'Cluster').spec.instances = 1) },
  {
    what: 'a service without the PostgreSQL CA',
    expected: 'does not mount the Secret runline-pg-ca',
    applies: has('Cluster'),
    breakIt: (objects) => {
      const spec = find(objects, 'Deployment', 'runline-invocation').spec.template.spec;
      spec.volumes = spec.volumes.filter((v) => v.name !== 'postgres-ca');
    },
  },
  { what: 'PostgreSQL without its NetworkPolicy', expected: 'the CloudNativePG operator cannot reach Cluster/runline-pg', applies: has('NetworkPolicy', 'runline-pg'), breakIt: (objects) => remove(objects, 'NetworkPolicy', 'runline-pg') },
  // components/egress-*
  {
    what: 'an OTLP endpoint on a port the NetworkPolicy does not open',
    expected: 'OTEL_EXPORTER_OTLP_ENDPOINT',
    applies: hasSetting('OTEL_EXPORTER_OTLP_ENDPOINT'),
    breakIt: (objects) => (runlineConfig(objects).OTEL_EXPORTER_OTLP_ENDPOINT = runlineConfig(objects).OTEL_EXPORTER_OTLP_ENDPOINT.replace(':4318', ':4317')),
  },
  { what: "an OIDC issuer without the gateway's way out", expected: 'CONSOLE_OIDC_ISSUER', applies: hasSetting('CONSOLE_OIDC_ISSUER'), breakIt: (objects) => remove(objects, 'NetworkPolicy', 'runline-gateway-oidc-egress') },
  {
    what: 'a private range the NetworkPolicy does not let through',
    expected: 'OUTBOUND_ALLOWED_CIDRS 192.168.50.0/24',
    applies: hasSetting('OUTBOUND_ALLOWED_CIDRS'),
    breakIt: (objects) => (runlineConfig(objects).OUTBOUND_ALLOWED_CIDRS += ',192.168.50.0/24'),
  },
];

// ---------------------------------------------------------------------------------------------
// Run

function render(directory) {
  try {
    return execFileSync('kubectl', ['kustomize', directory], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (error) {
    if (error.code === 'ENOENT') throw new Error('kubectl is not installed: it renders the Kustomize overlays (kubectl kustomize), offline');
    throw new Error(`kubectl kustomize ${path.relative(root, directory)} failed: ${error.stderr || error.message}`);
  }
}

/** The components an overlay uses, through the overlays it builds on (resources: ../prod). */
function componentsOf(directory, seen = new Set()) {
  if (seen.has(directory)) return [];
  seen.add(directory);
  const file = ['kustomization.yaml', 'kustomization.yml', 'Kustomization'].map((name) => path.join(directory, name)).find((candidate) => {
    try {
      readFileSync(candidate);
      return true;
    } catch {
      return false;
    }
  });
  if (!file) return [];
  const kustomization = parseAllDocuments(readFileSync(file, 'utf8'))[0].toJS() ?? {};
  const own = (kustomization.components ?? []).map((entry) => path.resolve(directory, entry));
  const inherited = (kustomization.resources ?? []).map((entry) => path.resolve(directory, entry)).flatMap((entry) => componentsOf(entry, seen));
  return [...own, ...inherited];
}

let failed = false;
const overlays = readdirSync(overlaysDir).sort();
const breaksApplied = new Set();
const componentsUsed = new Set();
for (const overlay of overlays) {
  for (const component of componentsOf(path.join(overlaysDir, overlay))) componentsUsed.add(path.relative(componentsDir, component));
  const documents = parseAllDocuments(render(path.join(overlaysDir, overlay)));
  const objects = documents.map((document) => document.toJS()).filter(Boolean);
  const findings = await check(objects);
  for (const finding of findings) console.error(`check-deploy: ${overlay}: ${finding}`);
  failed ||= findings.length > 0;
  const missed = [];
  let applied = 0;
  for (const { what, expected, applies = () => true, breakIt } of breaks) {
    if (!applies(objects)) continue;
    applied += 1;
    breaksApplied.add(what);
    const broken = structuredClone(objects);
    breakIt(broken);
    if (!(await check(broken)).some((finding) => finding.includes(expected))) missed.push(what);
  }
  for (const what of missed) console.error(`check-deploy: ${overlay}: a deliberate break went unnoticed: ${what}`);
  failed ||= missed.length > 0;
  const kinds = [...new Set(objects.map((object) => object.kind))].join(', ');
  if (findings.length === 0 && missed.length === 0) console.log(`check-deploy: ${overlay}: ${objects.length} objects valid (${kinds}); ${applied} deliberate breaks caught`);
}
// Each component is rendered through some overlay, and each break bit somewhere.
for (const component of readdirSync(componentsDir).sort()) {
  if (!componentsUsed.has(component)) {
    console.error(`check-deploy: deploy/kubernetes/components/${component} is used by no overlay, so nothing renders or checks it`);
    failed = true;
  }
}
for (const { what } of breaks) {
  if (!breaksApplied.has(what)) {
    console.error(`check-deploy: no overlay has what the deliberate break "${what}" needs, so it was never tried`);
    failed = true;
  }
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
