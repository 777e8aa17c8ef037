// Two gateway apps on one standalone Redis: shared entries, verdicts, fetch locks and purges.
import t from 'tap';
import { getRedis } from '../../helpers/redis.js';
import { sharedCacheTests } from '../../helpers/shared-scenarios.js';

sharedCacheTests(t, (t) => getRedis(t));
