// The shared-cache tests again, with both gateway apps on a real three-master Redis Cluster.
import t from 'tap';
import { randomBytes } from 'node:crypto';
import { startRedisCluster } from '../../helpers/redis-cluster.js';
import { sharedCacheTests } from '../../helpers/shared-scenarios.js';

const cluster = await startRedisCluster(t);

sharedCacheTests(t, () =>
  Promise.resolve({ nodes: cluster.nodes, keyPrefix: `test-${randomBytes(6).toString('hex')}` }),
);
