// Types of redis-cluster.mjs.
export interface RedisClusterProcesses {
  /** The six nodes' ports (masters and replicas as `redis-cli --cluster create` chose). */
  ports: number[];
  nodes: { host: string; port: number }[];
  /** Three nodes as REDIS_CLUSTER_NODES takes them. */
  seeds: string;
  masters(): Promise<{ port: number; slots: string[] }[]>;
  masterOf(key: string): Promise<number | undefined>;
  kill(port: number): Promise<void>;
  failedOver(port: number, timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
}

export function startRedisCluster(options?: { nodeTimeoutMs?: number }): Promise<RedisClusterProcesses>;
export function redisCli(port: number, ...args: string[]): Promise<string>;
