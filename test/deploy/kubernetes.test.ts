import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Deployment } from 'kubernetes-models/apps/v1';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2';
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { ConfigMap, Service } from 'kubernetes-models/v1';
import { parse, parseAllDocuments } from 'yaml';
import { loadConfig } from '../../src/config/load-config.ts';

const dir = fileURLToPath(new URL('../../deploy/kubernetes/', import.meta.url));
const dockerfile = readFileSync(new URL('../../Dockerfile', import.meta.url), 'utf8');

/** The kubernetes-models class that validates each kind against the Kubernetes API's schema. */
const MODELS: Record<string, { validate(data: unknown): void }> = {
  'apps/v1 Deployment': { validate: (data) => new Deployment(data as never).validate() },
  'v1 Service': { validate: (data) => new Service(data as never).validate() },
  'v1 ConfigMap': { validate: (data) => new ConfigMap(data as never).validate() },
  'policy/v1 PodDisruptionBudget': { validate: (data) => new PodDisruptionBudget(data as never).validate() },
  'autoscaling/v2 HorizontalPodAutoscaler': { validate: (data) => new HorizontalPodAutoscaler(data as never).validate() },
  'networking.k8s.io/v1 NetworkPolicy': { validate: (data) => new NetworkPolicy(data as never).validate() },
};

type Doc = Record<string, any>;

const kustomization = parse(readFileSync(join(dir, 'kustomization.yaml'), 'utf8')) as Doc;
const files = readdirSync(dir).filter((file) => /\.ya?ml$/.test(file) && file !== 'kustomization.yaml');
const manifests = files.map((file) => ({
  file,
  docs: parseAllDocuments(readFileSync(join(dir, file), 'utf8')).map((doc) => doc.toJS() as Doc),
}));
const all = manifests.flatMap(({ docs }) => docs);
const one = (kind: string): Doc => {
  const found = all.filter((doc) => doc.kind === kind);
  assert.equal(found.length, 1, `one ${kind}`);
  return found[0];
};

describe('the Kubernetes manifests (deploy/kubernetes, a kustomize base)', () => {
  it('the kustomization lists every manifest of the folder, and nothing else', () => {
    assert.equal(kustomization.kind, 'Kustomization');
    assert.deepEqual((kustomization.resources as string[]).toSorted(), files.toSorted());
  });

  for (const { file, docs } of manifests) {
    it(`${file}: every document is valid against the Kubernetes API schema of its kind`, () => {
      assert.ok(docs.length > 0);
      for (const doc of docs) {
        const model = MODELS[`${doc.apiVersion} ${doc.kind}`];
        assert.ok(model, `no model for ${doc.apiVersion} ${doc.kind}`);
        model.validate(doc);
      }
    });
  }

  it('holds a Deployment, a Service, a ConfigMap, a PodDisruptionBudget, an autoscaler and a NetworkPolicy', () => {
    const kinds = all.map((doc): string => doc.kind).toSorted();
    assert.deepEqual(
      kinds,
      Object.keys(MODELS)
        .map((key) => key.split(' ')[1])
        .toSorted(),
    );
  });

  it('probes readiness on GET /readyz and liveness on GET /healthz, at the port the image listens on', () => {
    const container = one('Deployment').spec.template.spec.containers[0];
    const portOf = (name: string) => container.ports.find((p: Doc) => p.name === name)?.containerPort;
    const imagePort = Number(/^ENV .*\bPORT=(\d+)/m.exec(dockerfile)?.[1]);
    assert.equal(container.readinessProbe.httpGet.path, '/readyz');
    assert.equal(container.livenessProbe.httpGet.path, '/healthz');
    assert.equal(container.startupProbe.httpGet.path, '/healthz');
    for (const probe of [container.readinessProbe, container.livenessProbe, container.startupProbe]) {
      assert.equal(portOf(probe.httpGet.port), imagePort);
    }
    // The readiness checks answer within 1 s (src/server/readiness.ts): the probe waits longer.
    assert.ok(container.readinessProbe.timeoutSeconds >= 2);
  });

  it('names and labels line up: the Service, the budget and the policy select its pods, the autoscaler targets it', () => {
    const deployment = one('Deployment');
    const podLabels = deployment.spec.template.metadata.labels;
    const selects = (selector: Record<string, string>) =>
      Object.entries(selector).every(([key, value]) => podLabels[key] === value) && Object.keys(selector).length > 0;
    assert.ok(selects(deployment.spec.selector.matchLabels), 'the Deployment selects its own pods');
    const service = one('Service');
    assert.ok(selects(service.spec.selector), 'Service');
    const containerPorts = deployment.spec.template.spec.containers[0].ports.map((p: Doc) => p.name);
    for (const port of service.spec.ports) assert.ok(containerPorts.includes(port.targetPort), `Service targetPort ${port.targetPort}`);
    assert.ok(selects(one('PodDisruptionBudget').spec.selector.matchLabels), 'PodDisruptionBudget');
    const policy = one('NetworkPolicy');
    assert.ok(selects(policy.spec.podSelector.matchLabels), 'NetworkPolicy');
    for (const rule of policy.spec.ingress) for (const port of rule.ports) assert.ok(containerPorts.includes(port.port));
    const target = one('HorizontalPodAutoscaler').spec.scaleTargetRef;
    assert.deepEqual(target, { apiVersion: deployment.apiVersion, kind: 'Deployment', name: deployment.metadata.name });
    // The autoscaler owns the count: a replicas field would reset it at every apply.
    assert.equal(deployment.spec.replicas, undefined);
    for (const doc of all) assert.equal(doc.metadata.labels['app.kubernetes.io/name'], podLabels['app.kubernetes.io/name']);
  });

  it('reads its config from the ConfigMap, which sluice loads, and its secrets from the Secret `sluice`', () => {
    const pod = one('Deployment').spec.template.spec;
    const container = pod.containers[0];
    const configVolume = pod.volumes.find((v: Doc) => v.configMap);
    assert.equal(configVolume.configMap.name, one('ConfigMap').metadata.name);
    const mount = container.volumeMounts.find((m: Doc) => m.name === configVolume.name);
    const configPath = container.env.find((e: Doc) => e.name === 'SLUICE_CONFIG').value;
    const [key, text] = Object.entries(one('ConfigMap').data)[0] as [string, string];
    assert.equal(configPath, `${mount.mountPath}/${key}`);
    assert.deepEqual(container.envFrom, [{ secretRef: { name: 'sluice' } }]);
    const tmp = mkdtempSync(join(tmpdir(), 'sluice-k8s-'));
    try {
      writeFileSync(join(tmp, key), text);
      loadConfig({ file: join(tmp, key), env: {} });
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  });

  it("runs as the image's non-root user on a read-only root filesystem, and stops within its grace period", () => {
    const pod = one('Deployment').spec.template.spec;
    const container = pod.containers[0];
    const imageUser = /^USER (\d+):(\d+)$/m.exec(dockerfile);
    assert.equal(pod.securityContext.runAsNonRoot, true);
    assert.equal(String(pod.securityContext.runAsUser), imageUser?.[1]);
    assert.equal(container.securityContext.readOnlyRootFilesystem, true);
    // Every path the image writes is a volume: the store's folder and the temporary one.
    assert.deepEqual(container.volumeMounts.map((m: Doc) => m.mountPath).toSorted(), ['/data', '/etc/sluice', '/tmp']);
    // The grace period covers the preStop pause, the drain and the ledger's last flush (their defaults).
    const defaults = loadConfig({ env: {} });
    const preStop = Number(container.lifecycle.preStop.exec.command.at(-1));
    const needed = preStop + defaults.server.drain_timeout_s + defaults.ledger.shutdown_flush_ms / 1000;
    assert.ok(pod.terminationGracePeriodSeconds > needed, `${pod.terminationGracePeriodSeconds} s > ${needed} s`);
  });

  it("the kustomization's image entry names the Deployment's image", () => {
    const image = one('Deployment').spec.template.spec.containers[0].image;
    assert.deepEqual(
      kustomization.images.map((entry: Doc) => entry.name),
      [image],
    );
  });
});
