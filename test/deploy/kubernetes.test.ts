/**
 * deploy/kubernetes/ without a cluster: every manifest validated against the Kubernetes 1.33 schemas
 * (kubernetes-models 4.5.1) and the Prometheus Operator v0.65 CRD schemas (its
 * @kubernetes-models package), then the references between them that no schema sees, and the
 * PrometheusRule against its one source, config/prometheus/alerts.yml.
 */
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PrometheusRule } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/PrometheusRule';
import { ServiceMonitor } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/ServiceMonitor';
import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import { ConfigMap } from 'kubernetes-models/v1/ConfigMap';
import { Secret } from 'kubernetes-models/v1/Secret';
import { Service } from 'kubernetes-models/v1/Service';
import { parse, parseAllDocuments } from 'yaml';
import { defaultRawConfig, mergeConfig, validateConfig } from '../../src/config/load.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const dir = join(root, 'deploy/kubernetes');

/** The parts of a pod spec the references below read. */
interface Container {
  ports: Array<{ name: string; containerPort: number }>;
  env: Array<{
    name: string;
    value?: string;
    valueFrom?: { secretKeyRef?: { name: string; key: string } };
  }>;
  volumeMounts: Array<{ name: string; mountPath: string }>;
  readinessProbe: { periodSeconds: number; failureThreshold: number };
  livenessProbe: unknown;
  securityContext: unknown;
  resources: { requests: { cpu?: string; memory?: string }; limits: { memory?: string } };
}
interface PodSpec {
  containers: Container[];
  volumes: Array<{ name: string; configMap?: { name: string } }>;
  terminationGracePeriodSeconds: number;
  securityContext: unknown;
}
type ServicePort = { name: string; targetPort: string };

/** A manifest as parsed: what the references below read. */
type Manifest = {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string> };
  [field: string]: any;
};

/** The model (schema and validator) for each kind the base may hold; any other kind fails the test. */
const MODELS: Record<string, (value: any) => { validate(): void }> = {
  'apps/v1 Deployment': (value) => new Deployment(value),
  'autoscaling/v2 HorizontalPodAutoscaler': (value) => new HorizontalPodAutoscaler(value),
  'policy/v1 PodDisruptionBudget': (value) => new PodDisruptionBudget(value),
  'v1 ConfigMap': (value) => new ConfigMap(value),
  'v1 Secret': (value) => new Secret(value),
  'v1 Service': (value) => new Service(value),
  'monitoring.coreos.com/v1 ServiceMonitor': (value) => new ServiceMonitor(value),
  'monitoring.coreos.com/v1 PrometheusRule': (value) => new PrometheusRule(value),
};

const kustomization = parse(readFileSync(join(dir, 'kustomization.yaml'), 'utf8')) as {
  resources: string[];
};
const manifests: Array<{ file: string; doc: Manifest }> = kustomization.resources.flatMap((file) =>
  parseAllDocuments(readFileSync(join(dir, file), 'utf8')).map((doc) => ({
    file,
    doc: doc.toJS() as Manifest,
  })),
);
const one = (kind: string, name?: string): Manifest => {
  const found = manifests.filter(
    ({ doc }) => doc.kind === kind && (name === undefined || doc.metadata.name === name),
  );
  if (found.length !== 1)
    throw new Error(`expected one ${kind} ${name ?? ''}, found ${found.length}`);
  return found[0]!.doc;
};
const matches = (
  selector: Record<string, string>,
  labels: Record<string, string> | undefined,
): boolean => Object.entries(selector).every(([key, value]) => labels?.[key] === value);

void t.test('the kustomization lists every manifest in the directory, and nothing else', (t) => {
  const files = readdirSync(dir).filter(
    (file) => file.endsWith('.yaml') && file !== 'kustomization.yaml',
  );
  t.same([...kustomization.resources].sort(), files.sort());
  t.end();
});

void t.test('every manifest is valid against the schema of its apiVersion and kind', (t) => {
  t.ok(manifests.length >= 9, `${manifests.length} manifests`);
  for (const { file, doc } of manifests) {
    const model = MODELS[`${doc.apiVersion} ${doc.kind}`];
    if (model === undefined) {
      t.fail(`${file}: no schema for ${doc.apiVersion} ${doc.kind}`);
      continue;
    }
    t.doesNotThrow(() => model(doc).validate(), `${file}: ${doc.kind} ${doc.metadata.name}`);
    t.equal(
      doc.metadata.labels?.['app.kubernetes.io/name'],
      'recordings-gateway',
      `${file}: labelled`,
    );
  }
  t.end();
});

void t.test('the validator is live: it rejects a wrong type and a bad duration', (t) => {
  const deployment = structuredClone(one('Deployment'));
  deployment['spec'].template.spec.containers[0].ports[0].containerPort = 'eighty';
  t.throws(() => new Deployment(deployment).validate(), /containerPort must be integer/);
  const rule = structuredClone(one('PrometheusRule'));
  rule['spec'].groups[0].rules[0].for = 'two minutes';
  t.throws(() => new PrometheusRule(rule as never).validate(), /for must match pattern/);
  t.end();
});

void t.test(
  'the ConfigMap is a valid gateway config, and the pod fits its drain and its ports',
  (t) => {
    const deployment = one('Deployment');
    const pod = deployment['spec'].template.spec as PodSpec;
    const container = pod.containers[0]!;
    const env = new Map(container.env.map((entry) => [entry.name, entry]));
    const configMap = one('ConfigMap');
    const mount = container.volumeMounts.find(
      (m) =>
        pod.volumes.find((v) => v.name === m.name)?.configMap?.name === configMap.metadata.name,
    );
    if (mount === undefined) throw new Error('the ConfigMap is not mounted');
    const [fileName, text] = Object.entries(configMap['data'] as Record<string, string>)[0]!;
    t.equal(
      env.get('GATEWAY_CONFIG')?.value,
      `${mount.mountPath}/${fileName}`,
      'GATEWAY_CONFIG names the mounted file',
    );

    // The gateway's own validation, as at start-up in the pod (env values that are literal).
    const config = validateConfig(
      mergeConfig(mergeConfig(defaultRawConfig(), parse(text) as Record<string, unknown>), {
        admin: { host: env.get('ADMIN_HOST')?.value },
      }),
    );
    t.equal(config.admin.host, '0.0.0.0', 'the admin listener is bound so the kubelet reaches it');
    const ports = new Map(container.ports.map((port) => [port.name, port.containerPort]));
    t.equal(ports.get('http'), config.server.port, 'container port http is server.port');
    t.equal(ports.get('admin'), config.admin.port, 'container port admin is admin.port');
    t.ok(
      pod.terminationGracePeriodSeconds * 1000 >
        config.server.drainDelay + config.server.shutdownGrace,
      `terminationGracePeriodSeconds ${pod.terminationGracePeriodSeconds}s covers drainDelay ${config.server.drainDelay} ms + shutdownGrace ${config.server.shutdownGrace} ms`,
    );

    t.match(container.readinessProbe, { httpGet: { path: '/readyz', port: 'admin' } });
    t.match(container.livenessProbe, { httpGet: { path: '/healthz', port: 'admin' } });
    // A readiness probe that needs several failures would keep a draining pod in rotation longer than drainDelay.
    t.ok(
      container.readinessProbe.periodSeconds * container.readinessProbe.failureThreshold * 1000 <=
        config.server.drainDelay,
      'readiness notices the drain within drainDelay',
    );

    const secret = one('Secret');
    const tokenRef = env.get('ADMIN_TOKEN')?.valueFrom?.secretKeyRef;
    t.equal(tokenRef?.name, secret.metadata.name, 'ADMIN_TOKEN comes from the Secret');
    const stringData = secret['stringData'] as Record<string, string>;
    t.ok(tokenRef !== undefined && tokenRef.key in stringData, 'under a key the Secret has');
    t.match(stringData[tokenRef?.key ?? ''], /replace-me/, 'a placeholder, plainly named so');

    t.match(pod.securityContext, {
      runAsNonRoot: true,
      seccompProfile: { type: 'RuntimeDefault' },
    });
    t.match(container.securityContext, {
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ['ALL'] },
    });
    t.ok(
      container.resources.requests.cpu &&
        container.resources.requests.memory &&
        container.resources.limits.memory,
      'resources set',
    );
    t.end();
  },
);

void t.test(
  'selectors and port names line up across Deployment, Services, PDB, HPA and ServiceMonitor',
  (t) => {
    const deployment = one('Deployment');
    const podLabels = deployment['spec'].template.metadata.labels as Record<string, string>;
    const container = (deployment['spec'].template.spec as PodSpec).containers[0]!;
    const portNames = new Set(container.ports.map((port) => port.name));
    t.ok(
      matches(deployment['spec'].selector.matchLabels, podLabels),
      'the Deployment selects its pods',
    );

    const pub = one('Service', 'recordings-gateway');
    const admin = one('Service', 'recordings-gateway-admin');
    for (const service of [pub, admin]) {
      t.ok(
        matches(service['spec'].selector, podLabels),
        `${service.metadata.name} selects the pods`,
      );
      for (const port of service['spec'].ports as ServicePort[])
        t.ok(
          portNames.has(port.targetPort),
          `${service.metadata.name} targets container port ${port.targetPort}`,
        );
    }
    t.same(
      (pub['spec'].ports as ServicePort[]).map((port) => port.targetPort),
      ['http'],
      'the public Service exposes only the public listener',
    );
    t.equal(
      admin['spec'].clusterIP,
      'None',
      'the admin Service is headless (no load-balanced address)',
    );

    const pdb = one('PodDisruptionBudget');
    t.ok(matches(pdb['spec'].selector.matchLabels, podLabels), 'the PDB covers the pods');
    const hpa = one('HorizontalPodAutoscaler');
    t.match(hpa['spec'].scaleTargetRef, { kind: 'Deployment', name: deployment.metadata.name });
    t.ok(
      hpa['spec'].minReplicas > pdb['spec'].maxUnavailable,
      'the PDB can let a pod go while one still serves',
    );
    t.notOk('replicas' in deployment['spec'], 'the HPA owns the replica count');

    const monitor = one('ServiceMonitor');
    const selected = manifests.filter(
      ({ doc }) =>
        doc.kind === 'Service' &&
        matches(monitor['spec'].selector.matchLabels, doc.metadata.labels),
    );
    t.same(
      selected.map(({ doc }) => doc.metadata.name),
      ['recordings-gateway-admin'],
      'the ServiceMonitor scrapes the admin Service only',
    );
    t.same(
      (monitor['spec'].endpoints as Array<{ port: string; path: string }>).map((e) => [
        e.port,
        e.path,
      ]),
      [['admin', '/metrics']],
    );
    // RecgwDown selects job="recordings-gateway": the job is the value of the jobLabel on the Service.
    t.equal(
      admin.metadata.labels?.[monitor['spec'].jobLabel],
      'recordings-gateway',
      'the scrape job is named as the alert rules expect',
    );
    t.end();
  },
);

void t.test('the PrometheusRule is exactly what the generator makes from alerts.yml', (t) => {
  const generated = spawnSync(
    process.execPath,
    [join(dir, 'generate-prometheus-rule.mjs'), '--stdout'],
    { encoding: 'utf8' },
  );
  t.equal(generated.status, 0, generated.stderr);
  t.equal(
    readFileSync(join(dir, 'prometheus-rule.yaml'), 'utf8'),
    generated.stdout,
    'prometheus-rule.yaml is current (run npm run gen:k8s)',
  );
  const alerts = parse(readFileSync(join(root, 'config/prometheus/alerts.yml'), 'utf8')) as {
    groups: unknown;
  };
  t.same(one('PrometheusRule')['spec'].groups, alerts.groups, 'same groups, same rules');
  t.end();
});
