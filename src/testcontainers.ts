import { randomUUID } from 'node:crypto';
import {
  AbstractStartedContainer,
  GenericContainer,
  getContainerRuntimeClient,
  type StartedTestContainer,
  Wait,
} from 'testcontainers';
import { type SandboxClient, sandboxClient } from './client/api-client.js';

/** The port the image serves on (its `VA_SANDBOX_PORT`). */
const PORT = 4580;
/** Where the image reads a config file from (`start --config`), in its volume. */
const CONFIG_PATH = '/data/va-sandbox.json';

/** The part of a config file (`config.schema.json`) this module reads itself; the rest goes to the container as is. */
interface Config {
  apiKeys?: string[];
  allowedHosts?: string[];
  [key: string]: unknown;
}

/**
 * The sandbox's container image for Testcontainers, like the `@testcontainers/*` modules: the port mapped, a wait
 * for `/health`, and the host Testcontainers reaches it by allowed through the Host guard.
 *
 *     const sandbox = await new VaSandboxContainer('va-sandbox').withApiKeys('sk_ci').start();
 *     await sandbox.client.vaPayments.create({ … });
 */
export class VaSandboxContainer extends GenericContainer {
  private apiKeys: string[] = [];
  private hubs: number[] = [];
  private config: Config | undefined;

  /** `image`: the sandbox's image, built from its Dockerfile (`docker build -t va-sandbox .`) or pulled. */
  constructor(image = 'va-sandbox') {
    super(image);
    this.withExposedPorts(PORT).withWaitStrategy(Wait.forHttp('/health', PORT)).withStartupTimeout(120_000);
  }

  /** The only API keys accepted (`VA_SANDBOX_API_KEYS`); the first is the one handed back. Default: any key. */
  withApiKeys(...keys: string[]): this {
    this.apiKeys = keys;
    return this;
  }

  /** The only payment hub ids accepted (`VA_SANDBOX_HUBS`). Default: any positive id. */
  withHubs(...ids: number[]): this {
    this.hubs = ids;
    return this;
  }

  /** A config file's content (`start --config`; its JSON Schema is the package's `config.schema.json`). */
  withConfig(config: Config): this {
    this.config = config;
    return this;
  }

  override async start(): Promise<StartedVaSandboxContainer> {
    const { host } = (await getContainerRuntimeClient()).info.containerRuntime;
    // A variable wins over the file: the file's allowed hosts go into the variable beside Testcontainers' host.
    const allowedHosts = [host, ...(this.config?.allowedHosts ?? [])];
    this.withEnvironment({ VA_SANDBOX_ALLOWED_HOSTS: allowedHosts.join(',') });
    if (this.apiKeys.length > 0) this.withEnvironment({ VA_SANDBOX_API_KEYS: this.apiKeys.join(',') });
    if (this.hubs.length > 0) this.withEnvironment({ VA_SANDBOX_HUBS: this.hubs.join(',') });
    if (this.config) this.withCopyContentToContainer([{ content: JSON.stringify(this.config), target: CONFIG_PATH }]);
    // Without keys any key works: a fresh one keeps this container's account apart, as `startSandbox` does.
    const apiKey = this.apiKeys[0] ?? this.config?.apiKeys?.[0] ?? `sk_test_${randomUUID()}`;
    return new StartedVaSandboxContainer(await super.start(), apiKey);
  }
}

/** A started sandbox container: where it answers, the API key to use, and the typed client of that key's account. */
export class StartedVaSandboxContainer extends AbstractStartedContainer {
  /** The base URL from this machine, e.g. `http://localhost:32768`. */
  readonly url: string;
  readonly client: SandboxClient;

  constructor(
    startedTestContainer: StartedTestContainer,
    readonly apiKey: string,
  ) {
    super(startedTestContainer);
    const host = this.getHost();
    this.url = `http://${host.includes(':') ? `[${host}]` : host}:${this.getMappedPort(PORT)}`;
    this.client = sandboxClient(this.url, apiKey);
  }
}
