// freePort: a port below the kernel's ephemeral range, free to bind right after.
import t from 'tap';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { freePort } from '../../helpers/free-port.js';

void t.test('ports come from below the ephemeral range and can be bound', async (t) => {
  const ephemeralStart = Number(
    readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0],
  );
  const ports = await Promise.all(Array.from({ length: 20 }, () => freePort()));
  for (const port of ports) {
    t.ok(
      port >= 10_000 && port < ephemeralStart,
      `${port} is below ${ephemeralStart}, where no outgoing connection takes it`,
    );
    await new Promise<void>((resolve, reject) => {
      const server = createServer();
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => server.close(() => resolve()));
    });
  }
});
